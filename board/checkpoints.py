"""Checkpoints: a task's state, git HEAD and file hashes, so work can resume and drift be seen.

Each carries a SHA-256 ``checksum`` of its own content; a checkpoint whose checksum does not
match is corrupt and is never used to resume. Retention keeps the first, the last, and at most
``KEEP`` per task. The store keeps them by task and sequence number (``store.checkpoint_book``,
``board.store.side.CheckpointBook``; in a board's files, ``checkpoints/<id>/<seq>.json``).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from board.errors import BoardError
from board.model import task_to_dict
from board.store import Store
from board.disk.atomic import SpecialFile, open_regular
from board.store.side import CheckpointBook, UnreadableRecord

KEEP = 20
_HASH_CHUNK = 1 << 20


class CorruptCheckpoint(BoardError):
    pass


@dataclass(frozen=True)
class Checkpoint:
    seq: int
    task: str
    created_at: str
    actor: str
    reason: str
    note: str
    git_head: str | None
    file_hashes: dict[str, str | None]
    document: dict[str, Any]
    checksum: str
    #: Where the store keeps it, for a person to find it (a file store: the file's path).
    where: str = field(default="", compare=False)

    def content(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "task": self.task,
            "createdAt": self.created_at,
            "actor": self.actor,
            "reason": self.reason,
            "note": self.note,
            "gitHead": self.git_head,
            "fileHashes": self.file_hashes,
            "document": self.document,
        }


def checksum_of(content: dict[str, Any]) -> str:
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def hash_file(path: Path) -> str | None:
    """SHA-256 of a file's bytes, or None when it does not exist (or is not a regular file)."""
    digest = hashlib.sha256()
    try:
        # A workspace file may be a link (followed) but never a FIFO or device (it would hang).
        with os.fdopen(open_regular(path, follow=True), "rb") as handle:
            while chunk := handle.read(_HASH_CHUNK):
                digest.update(chunk)
    except (FileNotFoundError, NotADirectoryError, SpecialFile):
        return None
    return digest.hexdigest()


def hash_files(workspace: Path, paths: list[str]) -> dict[str, str | None]:
    return {p: hash_file(workspace / p) for p in paths}


def write_checkpoint(store: Store, task_id: str, *, reason: str, note: str = "", actor: str | None = None) -> Checkpoint:
    """Record the task as it is now; called on claim, on coordinator status changes, on request."""
    task = store.get(task_id)
    workspace = store.layout.workspace
    book = store.checkpoint_book
    # git and file hashing are slow (a subprocess, reading files): do them before taking the
    # board lock, which every writer of the board waits on. Only the sequence number needs it.
    from board import gitstate  # loaded by what writes or resumes one, not by a reader (the dashboard)

    git_head = gitstate.head(workspace)
    file_hashes = hash_files(workspace, task.files)
    with store.transaction():
        seq = book.next_seq(task_id)
        content = {
            "seq": seq,
            "task": task_id,
            "createdAt": store.clock().isoformat().replace("+00:00", "Z"),
            "actor": actor or store.actor,
            "reason": reason,
            "note": note,
            "gitHead": git_head,
            "fileHashes": file_hashes,
            "document": task_to_dict(task),
        }
        book.write(task_id, seq, {**content, "checksum": checksum_of(content)})
        _prune(book, task_id)
    return read_checkpoint(book, task_id, seq)


def _prune(book: CheckpointBook, task_id: str) -> None:
    numbers = book.sequence_numbers(task_id)
    if len(numbers) <= KEEP:
        return
    # Keep the first (how the task began) and the newest KEEP - 1.
    for seq in numbers[1 : len(numbers) - (KEEP - 1)]:
        book.delete(task_id, seq)


def read_checkpoint(book: CheckpointBook, task_id: str, seq: int) -> Checkpoint:
    """One checkpoint, its checksum verified (``CorruptCheckpoint`` otherwise)."""
    try:
        data = book.read(task_id, seq)
    except UnreadableRecord as error:
        raise CorruptCheckpoint(f"checkpoint {error.where} is unreadable ({error.problem})") from None
    try:
        content = {key: data[key] for key in ("seq", "task", "createdAt", "actor", "reason", "note", "gitHead", "fileHashes", "document")}
        stored = data["checksum"]
    except (KeyError, TypeError) as error:
        raise CorruptCheckpoint(f"checkpoint {book.where(task_id, seq)} is unreadable ({error.__class__.__name__}: {error})") from None
    if checksum_of(content) != stored:
        raise CorruptCheckpoint(f"checkpoint {book.where(task_id, seq)} is corrupt: its checksum does not match its content")
    return Checkpoint(
        seq=content["seq"],
        task=content["task"],
        created_at=content["createdAt"],
        actor=content["actor"],
        reason=content["reason"],
        note=content["note"],
        git_head=content["gitHead"],
        file_hashes=dict(content["fileHashes"]),
        document=content["document"],
        checksum=stored,
        where=book.where(task_id, seq),
    )


def list_checkpoints(book: CheckpointBook, task_id: str) -> list[int]:
    """The task's checkpoints by sequence number, oldest first (corrupt ones included)."""
    return book.sequence_numbers(task_id)


def latest_checkpoint(book: CheckpointBook, task_id: str) -> Checkpoint | None:
    """The newest checkpoint whose checksum holds (a corrupt newer one is skipped)."""
    for seq in reversed(book.sequence_numbers(task_id)):
        try:
            return read_checkpoint(book, task_id, seq)
        except CorruptCheckpoint:
            continue
    return None


def changed_since(checkpoint: Checkpoint, workspace: Path) -> dict[str, tuple[str | None, str | None]]:
    """Files whose hash differs from the checkpoint's: path -> (then, now)."""
    now = hash_files(workspace, list(checkpoint.file_hashes))
    return {p: (checkpoint.file_hashes[p], now[p]) for p in checkpoint.file_hashes if checkpoint.file_hashes[p] != now[p]}


def created_at(checkpoint: Checkpoint) -> datetime:
    return datetime.fromisoformat(checkpoint.created_at.replace("Z", "+00:00"))


#: Task fields worth naming when they changed since a checkpoint.
COMPARED = ("status", "owner", "progress", "subject", "priority", "blockedBy", "files", "error")


def checkpoint_json(checkpoint: Checkpoint) -> dict[str, Any]:
    """A checkpoint as ``board checkpoint --json`` and MCP's ``checkpoint`` give it."""
    return {**checkpoint.content(), "checksum": checkpoint.checksum, "path": checkpoint.where}


def checkpoint_rows(book: CheckpointBook, task_id: str) -> list[dict[str, Any]]:
    """A task's checkpoints, oldest first: each as ``checkpoint_json`` with ``valid`` true, or a
    corrupt one as its ``path``, ``valid`` false and the ``problem``."""
    rows: list[dict[str, Any]] = []
    for seq in list_checkpoints(book, task_id):
        try:
            checkpoint = read_checkpoint(book, task_id, seq)
        except CorruptCheckpoint as error:
            rows.append({"path": book.where(task_id, seq), "valid": False, "problem": str(error)})
            continue
        rows.append({**checkpoint_json(checkpoint), "valid": True})
    return rows


@dataclass(frozen=True)
class Resumed:
    """Where a task was left (its checkpoint) and what changed since."""

    checkpoint: Checkpoint
    #: Files whose hash changed: path -> (then, now), None for a file that was not there.
    files: dict[str, tuple[str | None, str | None]]
    head_now: str | None
    #: Task fields (``COMPARED``) that changed: key -> [then, now].
    fields: dict[str, list[Any]]

    def to_dict(self) -> dict[str, Any]:
        """As ``board resume --json`` and MCP's ``resume`` give it."""
        return {
            "checkpoint": checkpoint_json(self.checkpoint),
            "changedFiles": {path: {"then": then, "now": current} for path, (then, current) in self.files.items()},
            "gitHead": {"then": self.checkpoint.git_head, "now": self.head_now},
            "changedFields": self.fields,
        }


def resume_from(store: Store, task_id: str, seq: int | None = None) -> Resumed:
    """The task's newest checkpoint (or checkpoint ``seq``) and what changed since: refused
    when there is none, or when it is corrupt."""
    from board.errors import Command, Option

    task = store.get(task_id)
    numbers = list_checkpoints(store.checkpoint_book, task_id)
    listing = Command("checkpoint", (("id", task_id),), (Option("list", flag=True),))
    if seq is not None:
        numbers = [n for n in numbers if n == seq]
        if not numbers:
            raise BoardError(f"#{task_id} has no checkpoint {seq}; see ", listing)
    if not numbers:
        raise BoardError(f"#{task_id} has no checkpoint to resume from; write one with ", Command("checkpoint", (("id", task_id),), (Option("note", metavar="..."),)))
    try:
        checkpoint = read_checkpoint(store.checkpoint_book, task_id, numbers[-1])
    except CorruptCheckpoint as error:
        raise BoardError(f"{error}; refusing to resume from it (pick an older one with ", Option("seq", metavar="SEQ"), ", see ", listing, ")") from None
    now = task_to_dict(task)
    fields = {key: [checkpoint.document.get(key), now.get(key)] for key in COMPARED if checkpoint.document.get(key) != now.get(key)}
    workspace = store.layout.workspace
    from board import gitstate

    return Resumed(checkpoint, changed_since(checkpoint, workspace), gitstate.head(workspace), fields)
