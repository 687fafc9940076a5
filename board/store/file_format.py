"""What a board's files are called and how their documents read, for every reader of them: the
file store, the importer (``board.store.postgres.transfer``) and ``board hook``
(``board.claude.hooks.where``). Standard library and board's light modules only: the hook
must never load the task model.

Two shapes of board: board's own ``<workspace>/.tasks/task_<id>.json``, and a Claude Code task
list ``<list>/<id>.json`` with board's own files in ``<list>/.board/``. Claude Code rewrites
whole task files and keeps only its own top-level fields, so board's extra fields travel under
``metadata.board``; its statuses are pending/in_progress/completed, and board's finer status is
kept in ``metadata.board.status``, shown to Claude Code as the nearest of its three. If Claude
Code later changes the top-level status, its change wins.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from board import json_bounds
from board.disk import confine

# Only for annotations, which are never evaluated: ``board hook`` starts faster without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: board's own folder in a workspace, and in a Claude Code task list.
TASKS_DIR = ".tasks"
CLAUDE_STATE_DIR = ".board"
#: A task file in board's own ``.tasks/`` folder, and in a Claude Code task list.
TASK_FILE = re.compile(r"task_([A-Za-z0-9][A-Za-z0-9_-]{0,63})\.json")
CLAUDE_TASK_FILE = re.compile(r"([A-Za-z0-9][A-Za-z0-9_-]{0,63})\.json")
#: Files of a Claude Code task list beside its tasks: the highest id ever issued, the lock.
#: The board's settings on this machine (``board.config``), in its local folder.
SETTINGS_FILE = "board.toml"
HIGH_WATER_MARK = ".highwatermark"
LIST_LOCK = ".lock"
#: In board's own folder (``.tasks/``, or ``.board/`` in a Claude Code list): the change log,
#: the history line a writer is about to append (empty once it has been appended), and the
#: folder deleted tasks are kept in.
HISTORY = "history.jsonl"
PENDING_HISTORY = ".history-pending.json"
ARCHIVE_DIR = "archive"
#: A task's tokens (``board.claude.transcripts``), a log per task in this folder.
TASK_TOKENS = "tokens"
#: The most of a task file any reader reads.
MAX_TASK_FILE_BYTES = 1024 * 1024

#: Where board keeps its fields in a Claude Code task's metadata, and where it keeps them
#: when the task's own ``metadata.board`` is a user's value that is not an object.
BOARD_KEY = "board"
BOARD_KEY_BESIDE_USERS = "boardTask"
#: Fields Claude Code keeps at the top level of a task file.
CLAUDE_FIELDS = ("id", "subject", "description", "activeForm", "status", "owner", "blocks", "blockedBy", "metadata")
#: board's own fields of a task, which it keeps under ``metadata.board`` in a Claude Code list
#: (``tests/core/test_claude_lists.py`` holds it to the task model). A top-level field that is
#: neither Claude Code's known ones nor board's is Claude Code's too (a later version's): it
#: stays at the top level.
BOARD_FIELDS = frozenset((
    "answer", "askedAt", "budget", "completedAt", "createdAt", "error", "files", "integerIds", "labels", "lease", "parent",
    "policy", "priority", "progress", "question", "startedAt", "toolCalls", "updatedAt", "version",
))
#: How each board status is shown to Claude Code, which knows only three.
CLAUDE_STATUS = {
    "pending": "pending",
    "in_progress": "in_progress",
    "blocked": "in_progress",
    "paused": "in_progress",
    "waiting": "in_progress",
    "failed": "in_progress",  # keeps Claude Code agents from picking it up as new work
    "completed": "completed",
    # Not "completed": Claude Code would then unblock the dependents that board keeps waiting
    # (a cancelled blocker is not done work). Shown as taken, both agree nothing may start.
    "cancelled": "in_progress",
}


def database_state_dir(url: str, environ: Mapping[str, str] = os.environ) -> Path:
    """This machine's files of a board kept in a database (active work, logs, call logs), when
    the workspace has no ``.tasks/`` of its own: one folder per database under the user's state
    directory, ``$XDG_STATE_HOME/board/<database>-<hash of its URL>`` (``~/.local/state`` when
    unset), never in whatever folder a command runs in."""
    from urllib.parse import urlsplit

    base = environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    try:
        name = urlsplit(url).path.lstrip("/") if "://" in url else ""
    except ValueError:
        name = ""
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", name)[:40].strip("-") or "database"
    import hashlib  # here: every command imports this module, few name a database's folder

    return Path(base) / "board" / f"{name}-{hashlib.sha256(url.encode()).hexdigest()[:12]}"


def task_file_name(task_id: str, *, claude: bool) -> str:
    """The name of a task's file: ``task_<id>.json`` in ``.tasks/``, ``<id>.json`` in a Claude Code list."""
    return f"{task_id}.json" if claude else f"task_{task_id}.json"


def next_integer_id(existing: set[str], floor: int = 0) -> str:
    """One above the highest numeric id among ``existing`` and ``floor``."""
    highest = max((int(t) for t in existing if t.isdigit()), default=0)
    return str(max(highest, floor) + 1)


def looks_like_claude_list(directory: Path) -> bool:
    """A directory of ``<id>.json`` files, a ``.highwatermark`` or a ``.lock``, and no ``.tasks/``."""
    if (directory / TASKS_DIR).is_dir() or not directory.is_dir():
        return False
    if (directory / HIGH_WATER_MARK).exists() or (directory / LIST_LOCK).exists():
        return True
    return any(CLAUDE_TASK_FILE.fullmatch(p.name) for p in directory.glob("*.json"))


# -- documents ------------------------------------------------------------------------------


def from_claude(data: Mapping[str, Any]) -> dict[str, Any]:
    """A Claude Code task document as a board task document."""
    metadata = dict(data.get("metadata") or {})
    # A user's own non-object ``metadata.board`` stays theirs; board's fields are then kept
    # under ``metadata.boardTask`` instead.
    key = BOARD_KEY if isinstance(metadata.get(BOARD_KEY), dict) or BOARD_KEY_BESIDE_USERS not in metadata else BOARD_KEY_BESIDE_USERS
    extra = metadata.pop(key) if isinstance(metadata.get(key), dict) else {}
    doc = {key: value for key, value in data.items() if key != "metadata"}
    stored_status = extra.pop("status", None)
    # Keep board's finer status only while Claude Code has not changed the coarse one.
    if isinstance(stored_status, str) and CLAUDE_STATUS.get(stored_status) == doc.get("status", "pending"):
        doc["status"] = stored_status
    if doc.get("owner") is None:
        doc["owner"] = ""
    doc.update(extra)
    doc["metadata"] = metadata
    return doc


def to_claude(data: dict[str, Any]) -> dict[str, Any]:
    """A board task document as Claude Code expects it, board's own fields under
    ``metadata.board``, any other field where Claude Code put it."""
    data = dict(data)
    status = str(data.get("status", "pending"))
    out = {key: data.pop(key) for key in CLAUDE_FIELDS if key in data}
    out.update({key: data.pop(key) for key in list(data) if key not in BOARD_FIELDS})
    out["status"] = CLAUDE_STATUS[status]
    board_fields = {"status": status, **data}
    metadata = dict(out.get("metadata", {}))
    users_own = BOARD_KEY in metadata and not isinstance(metadata[BOARD_KEY], dict)
    metadata[BOARD_KEY_BESIDE_USERS if users_own else BOARD_KEY] = board_fields
    out["metadata"] = metadata
    return out


def read_task_document(path: Path) -> dict[str, Any] | None:
    """A task file's JSON object, opened without following a link; None when it cannot be
    read as one (gone, not a regular file, not JSON)."""
    try:
        with open(path, "rb", opener=confine.opener) as handle:
            data = json_bounds.loads(handle.read(MAX_TASK_FILE_BYTES))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def status_and_owner(data: Mapping[str, Any], *, claude: bool) -> tuple[str, str]:
    """(status, owner) a task document says, as board reads them (a Claude Code task's
    finer status from its metadata)."""
    if claude:
        data = from_claude(data)
    return str(data.get("status", "pending")), str(data.get("owner") or "")


# -- the history line a writer is about to append ---------------------------------------------


def pending_note(history_size: int, line: bytes) -> bytes:
    """``PENDING_HISTORY``'s content: the history line (``json_line``, its newline dropped)
    and how long the log was when it was to be appended."""
    return b'{"historySize":%d,"record":%s}' % (history_size, line.rstrip())


class PendingLine:
    """A ``pending_note`` read back: the history record, the log's size when it was to be
    appended, and the task and version it logs."""

    __slots__ = ("record", "history_size", "task_id", "version")

    def __init__(self, record: dict[str, Any], history_size: int, task_id: str, version: int) -> None:
        self.record = record
        self.history_size = history_size
        self.task_id = task_id
        self.version = version


def read_pending_note(raw: bytes) -> PendingLine | None:
    """A ``pending_note``; None for a torn or empty one (its writer died before touching the
    task file)."""
    try:
        note = json_bounds.loads(raw)
        record, history_size = note["record"], int(note["historySize"])
        task_id, version = str(record["task"]), int(record["version"])
    except (ValueError, KeyError, TypeError):
        return None
    return PendingLine(record, history_size, task_id, version) if isinstance(record, dict) else None


def task_id_in(path: Path, folder: Path, pattern: re.Pattern[str]) -> str | None:
    """The id of the task file ``path`` is, if it is one (named by ``pattern``, right in ``folder``)."""
    match = pattern.fullmatch(path.name)
    return match.group(1) if match and path.parent == folder else None


def task_files_in(folder: Path, pattern: re.Pattern[str]) -> Iterator[tuple[str, str]]:
    """(id, path) of every task file in ``folder``, from one directory listing."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    directory = str(folder)
    for name in names:
        match = pattern.fullmatch(name)
        if match:
            yield match.group(1), os.path.join(directory, name)


def find_board(start: Path) -> Path:
    """The workspace whose board ``start`` is in, found upward as git finds ``.git``: ``start``
    when it holds ``.tasks/`` or is a Claude Code task list, else the nearest parent holding
    ``.tasks/``; else ``start`` itself, so that the error names where the person is."""
    start = start.resolve()
    if looks_like_claude_list(start):
        return start
    for directory in (start, *start.parents):
        if (directory / TASKS_DIR).is_dir():
            return directory
    return start


def task_tokens_path(state_dir: Path, task_id: str) -> Path:
    """The log of the tokens the messages sent for ``task_id`` spent (``TASK_TOKENS``)."""
    return state_dir / TASK_TOKENS / f"{task_id}.jsonl"
