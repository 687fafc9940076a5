"""A board's side state in files (``board.store.side`` says what each kind holds), exactly as
board has always kept it in the state directory (``.tasks/``, or a Claude Code list's ``.board/``):

- ``agents/<name>.json``: one agent record; ``agents/.<name>.lock``: the name's lifetime lock;
- ``reservations/<sha256(path)[:16]>.json``: the holders of one reserved path;
- ``checkpoints/<task>/<seq:06d>.json``: one checkpoint;
- ``alerts.json``: the current alerts, ``{"alerts": [...]}``.

Every write is whole or absent (``write_atomic``); no read follows a link or blocks on a FIFO.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from board import json_bounds
from board.names import validate_id
from board.store.side import MODES, Reservation
from board.disk import confine
from board.disk.atomic import Stamp, read_regular, stat_stamp, write_atomic, write_json_atomic
from board.store.lifetime_lock import LifetimeLock, held_elsewhere
from board.store.side import UnreadableRecord
from board.times import iso, parse_time
from board.toolcall_log import count_agent_calls

AGENTS_DIR = "agents"
RESERVATIONS_DIR = "reservations"
CHECKPOINTS_DIR = "checkpoints"
ALERTS_FILE = "alerts.json"


def _json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object a small regular file holds; None when it cannot be read as one."""
    try:
        data = json_bounds.loads(read_regular(path))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class FileAgentRecords:
    """``AgentRecords`` in ``agents/``: a record per ``<name>.json``, a name lock per ``.<name>.lock``."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.directory = state_dir / AGENTS_DIR

    def path(self, name: str) -> Path:
        return self.directory / f"{validate_id(name)}.json"

    def read(self, name: str) -> dict[str, Any] | None:
        try:
            path = self.path(name)
        except ValueError:
            return None
        return _json_object(path)

    def read_all(self) -> list[dict[str, Any]]:
        if not self.directory.is_dir():
            return []
        return [record for path in sorted(self.directory.glob("*.json")) if (record := _json_object(path)) is not None]

    def write(self, name: str, record: Mapping[str, Any]) -> None:
        path = self.path(name)
        confine.make_folders(self.directory)
        # A record says when its agent was last heard from: after a crash, the one before is
        # as good, so the rename is not made durable (a heartbeat's fsync of the folder).
        write_atomic(path, (json.dumps(record, indent=2) + "\n").encode(), lasting=False)

    def logged_calls(self, name: str) -> tuple[int, str | None] | None:
        return count_agent_calls(self.state_dir, name)

    def _lock_path(self, name: str) -> Path:
        return self.directory / f".{validate_id(name)}.lock"

    def name_lock(self, name: str) -> LifetimeLock:
        path = self._lock_path(name)
        confine.make_folders(self.directory)
        return LifetimeLock(path)

    def name_in_use(self, name: str) -> bool:
        return held_elsewhere(self._lock_path(name))


def reservation_file(state_dir: Path, path: str) -> Path:
    """The file holding the holders of workspace path ``path``."""
    import hashlib  # here: every command imports this module, few need the digest

    digest = hashlib.sha256(path.encode("utf-8")).hexdigest()[:16]
    return state_dir / RESERVATIONS_DIR / f"{digest}.json"


def read_holders(file: Path) -> list[Reservation]:
    """Every holder a reservation file names (expired ones included); unreadable files hold nothing.

    Its top level is the spec's shape ``{path, owner, task, mode, expiresAt}`` for the first
    holder, so a reader that knows only that shape still sees who holds it; ``holders`` lists
    every holder (several readers may share a file). A file with no ``holders`` is that shape
    alone, written by another tool.
    """
    data = _json_object(file)
    if data is None or not isinstance(data.get("path"), str):
        return []
    entries = data.get("holders")
    if not isinstance(entries, list):
        entries = [data]
    holders = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        expires = parse_time(entry.get("expiresAt"))
        owner, task, mode = entry.get("owner"), entry.get("task"), entry.get("mode", "write")
        if expires is None or not isinstance(owner, str) or not owner or task is None or mode not in MODES:
            continue
        holders.append(Reservation(data["path"], owner, str(task), mode, expires, parse_time(entry.get("acquiredAt"))))
    return holders


class FileReservationBook:
    """``ReservationBook`` in ``reservations/``: one file per reserved path."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.directory = state_dir / RESERVATIONS_DIR

    def holders(self, path: str) -> list[Reservation]:
        return read_holders(reservation_file(self.state_dir, path))

    def all_holders(self) -> list[Reservation]:
        if not self.directory.is_dir():
            return []
        return [holder for file in sorted(self.directory.glob("*.json")) for holder in read_holders(file)]

    def replace(self, path: str, holders: Sequence[Reservation]) -> None:
        file = reservation_file(self.state_dir, path)
        if not holders:
            confine.unlink(file, missing_ok=True)
            return
        first = holders[0]
        confine.make_folders(self.directory)
        write_json_atomic(
            file,
            {"path": path, "owner": first.owner, "task": first.task, "mode": first.mode, "expiresAt": iso(first.expires_at), "holders": [h.to_dict() for h in holders]},
        )


class FileCheckpointBook:
    """``CheckpointBook`` in ``checkpoints/<task>/``: one ``<seq:06d>.json`` per checkpoint (any
    file whose name is a number counts, so ``7.json`` is checkpoint 7)."""

    def __init__(self, state_dir: Path) -> None:
        self.directory = state_dir / CHECKPOINTS_DIR

    def task_directory(self, task_id: str) -> Path:
        return self.directory / validate_id(task_id)

    def _files(self, task_id: str) -> list[tuple[int, Path]]:
        directory = self.task_directory(task_id)
        if not directory.is_dir():
            return []
        return sorted((int(path.stem), path) for path in directory.glob("*.json") if path.stem.isdigit())

    def path(self, task_id: str, seq: int) -> Path:
        """The checkpoint's file: ``<seq:06d>.json``, or another name giving that number."""
        path = self.task_directory(task_id) / f"{seq:06d}.json"
        if path.exists():
            return path
        return next((found for number, found in self._files(task_id) if number == seq), path)

    def sequence_numbers(self, task_id: str) -> list[int]:
        return [seq for seq, _ in self._files(task_id)]

    def tasks(self) -> set[str]:
        # One listing instead of a stat per task: most tasks have no checkpoint.
        try:
            return set(os.listdir(self.directory))
        except OSError:
            return set()

    def next_seq(self, task_id: str) -> int:
        numbers = self.sequence_numbers(task_id)
        return numbers[-1] + 1 if numbers else 1

    def read(self, task_id: str, seq: int) -> dict[str, Any]:
        path = self.path(task_id, seq)
        try:
            data = json_bounds.loads(read_regular(path))
        except (OSError, ValueError) as error:
            raise UnreadableRecord(str(path), f"{error.__class__.__name__}: {error}") from None
        if not isinstance(data, dict):
            raise UnreadableRecord(str(path), f"TypeError: it holds a JSON {type(data).__name__}, not an object")
        return data

    def write(self, task_id: str, seq: int, record: Mapping[str, Any]) -> None:
        directory = self.task_directory(task_id)
        confine.make_folders(directory)
        write_atomic(directory / f"{seq:06d}.json", (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))

    def delete(self, task_id: str, seq: int) -> None:
        confine.unlink(self.path(task_id, seq), missing_ok=True)

    def where(self, task_id: str, seq: int) -> str:
        return str(self.path(task_id, seq))


def alerts_document(records: Sequence[Mapping[str, Any]]) -> bytes:
    return (json.dumps({"alerts": list(records)}, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


class FileAlertBoard:
    """``AlertBoard`` in ``alerts.json``, written only when what it says changes."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / ALERTS_FILE

    def read(self) -> list[dict[str, Any]]:
        data = _json_object(self.path)
        entries = data.get("alerts") if data is not None else None
        return [entry for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []

    def replace(self, records: Sequence[Mapping[str, Any]]) -> bool:
        data = alerts_document(records)
        try:
            if read_regular(self.path) == data:
                return False
        except OSError:
            pass
        write_atomic(self.path, data)
        return True

    def stamp(self) -> Stamp | None:
        return stat_stamp(self.path)
