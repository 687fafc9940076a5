"""Which tasks are in progress, by whom, on which files: ``active.json`` in the board's folder.

``board hook`` asks two questions on an agent's tool calls that would otherwise mean reading
every task file: "which task is this agent working on?" and "is this file held by another
agent's task?". The store answers them ahead of time: whenever it writes a task that enters,
leaves or changes while ``in_progress``, it updates this small file; and a coordinator that
sees the whole board puts right what outside writers changed.

Writers change it under a lock of its own (``.active.lock``), not the board's: a database board
has no local board lock, and agents on one machine claim at the same moment, each adding its
task; unlocked, one's read-modify-write would drop the other's entry. Readers take no lock:
the file is replaced whole, so they see one version or the next.

Standard library only, for the hook's sake.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

# Only for annotations, which are never evaluated: ``board hook`` starts faster without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FILE_NAME = "active.json"
LOCK_NAME = ".active.lock"


def active_path(state_dir: Path) -> Path:
    return state_dir / FILE_NAME


def read_active(state_dir: Path) -> dict[str, dict[str, Any]]:
    """task id -> {"owner", "files"} for every task in progress; {} when unknown or unreadable."""
    try:
        with open(active_path(state_dir), "rb") as handle:
            data = json.loads(handle.read(1024 * 1024))
    except (OSError, ValueError):
        return {}
    tasks = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(tasks, dict):
        return {}
    return {str(k): v for k, v in tasks.items() if isinstance(v, dict)}


def entry_for(status: str, owner: str, files: Iterable[str]) -> dict[str, Any] | None:
    """What the index holds for a task: something only while it is in progress."""
    if status != "in_progress":
        return None
    return {"owner": owner, "files": list(files)}


@contextmanager
def _writing(state_dir: Path) -> Iterator[None]:
    """Hold the index's lock: one writer at a time, on this machine."""
    fd = os.open(state_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def write_active(state_dir: Path, tasks: Mapping[str, dict[str, Any]], *, lock: bool = True) -> None:
    """Replace the index whole (a rebuild from the whole board). ``lock=False`` only for a
    board no one else can see yet (an export being put together)."""
    if not lock:
        _write(state_dir, tasks)
        return
    with _writing(state_dir):
        _write(state_dir, tasks)


def _write(state_dir: Path, tasks: Mapping[str, dict[str, Any]]) -> None:
    data = json.dumps({"tasks": dict(sorted(tasks.items()))}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    replace_file(active_path(state_dir), data)


def replace_file(path: Path, data: bytes) -> None:
    """Replace a small file whole (a temp file renamed over it), with no fsync: for what is
    derived or rewritten often (this index, the hook's registry records), where ``write_atomic``
    of ``board.store.atomic`` would cost the hook its imports and a disk flush."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(temp, path)


def note_task(state_dir: Path, task_id: str, entry: dict[str, Any] | None) -> None:
    """Set (or, with None, drop) one task's entry, if it changed."""
    with _writing(state_dir):
        tasks = read_active(state_dir)
        if tasks.get(task_id) == entry:
            return
        if entry is None:
            tasks.pop(task_id, None)
        else:
            tasks[task_id] = entry
        _write(state_dir, tasks)
