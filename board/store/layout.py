"""Where a board keeps its files and how a task is encoded in them.

The store talks to a ``Layout`` only, so a second on-disk layout (Claude Code's task lists)
plugs in without touching the store's callers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
import os
from pathlib import Path
from typing import Protocol

from board.errors import InvalidTaskFile
from board.model import Task, dump_task, parse_task
from board.disk.confine import confine
from board.store.file_format import TASK_FILE, TASKS_DIR, looks_like_claude_list, next_integer_id, task_file_name, task_files_in, task_id_in
from board.store.lock import BoardLock


class BoardPlace(Protocol):
    """Where a board is, as every backend names it: the workspace, the folder of this machine's
    files for it, where a task lives (a file, or a row named as a path) and back."""

    @property
    def name(self) -> str: ...
    #: The project directory the tasks' ``files`` are relative to.
    @property
    def workspace(self) -> Path: ...
    #: The directory holding the task files (a database board: its ``.tasks/`` all the same).
    @property
    def tasks_dir(self) -> Path: ...
    #: The directory for board's own files (history, agents, toolcalls, checkpoints, alerts...).
    @property
    def state_dir(self) -> Path: ...
    def task_path(self, task_id: str) -> Path: ...
    def task_id_for(self, path: Path) -> str | None: ...
    #: Whether a blocker with no task file counts as completed (see ``TaskGraph``).
    def missing_blocker_done(self, task_id: str) -> bool: ...
    def exists(self) -> bool: ...


class Layout(BoardPlace, Protocol):
    """The on-disk shape of one board."""

    name: str
    #: The project directory the tasks' ``files`` are relative to.
    workspace: Path
    #: The directory holding the task files.
    tasks_dir: Path
    #: The directory for board's own files (history, agents, toolcalls, checkpoints, alerts...).
    state_dir: Path
    #: Whether replaced versions may stay in ``tasks_dir`` as spares to write over (``SparePool``).
    keeps_spares: bool

    def task_path(self, task_id: str) -> Path: ...
    #: ``task_path`` as the string ``task_files`` gives: a read of thousands of named tasks
    #: builds no ``Path`` for each.
    def task_key(self, task_id: str) -> str: ...
    def task_id_for(self, path: Path) -> str | None: ...
    #: (id, path) of every task file. Paths are strings: listing a 10,000-task board is on the
    #: path of every load and rescan, and ``Path`` objects cost more than the rest of it.
    def task_files(self) -> Iterator[tuple[str, str]]: ...
    #: ``compact``: made small in memory (``board.model.lean``), for a task an index will hold.
    def decode(self, raw: bytes, path: Path | str, task_id: str | None = None, *, compact: bool = True) -> Task: ...
    def encode(self, task: Task) -> bytes: ...
    def lock(self) -> AbstractContextManager[object]: ...
    def next_id(self, existing: set[str]) -> str: ...
    def note_id_issued(self, task_id: str) -> None: ...
    #: Whether a blocker with no task file counts as completed (see ``TaskGraph``).
    def missing_blocker_done(self, task_id: str) -> bool: ...
    def exists(self) -> bool: ...
    #: Raise unless the lock taken by ``lock()`` is still held (a lock others can break).
    def confirm_lock(self) -> None: ...
    def create(self) -> None: ...


class TasksDirLayout:
    """board's own layout: ``<workspace>/.tasks/task_<id>.json`` plus its state files."""

    name = "tasks-dir"
    keeps_spares = True
    _FILE = TASK_FILE

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.tasks_dir = workspace / TASKS_DIR
        self.state_dir = self.tasks_dir
        confine(self.tasks_dir)
        self._lock = BoardLock(self.tasks_dir / ".lock")

    def task_path(self, task_id: str) -> Path:
        return self.tasks_dir / task_file_name(task_id, claude=False)

    def task_key(self, task_id: str) -> str:
        return os.path.join(self.tasks_dir, task_file_name(task_id, claude=False))

    def task_id_for(self, path: Path) -> str | None:
        return task_id_in(path, self.tasks_dir, self._FILE)

    def task_files(self) -> Iterator[tuple[str, str]]:
        """(id, path) of every task file, from one directory listing."""
        return task_files_in(self.tasks_dir, self._FILE)

    def decode(self, raw: bytes, path: Path | str, task_id: str | None = None, *, compact: bool = True) -> Task:
        task = parse_task(raw, path, compact=compact)
        expected = task_id or self.task_id_for(Path(path))
        if expected is not None and task.id != expected:
            raise InvalidTaskFile(str(path), f"id {task.id!r} does not match the file name (expected {expected!r})")
        return task

    def encode(self, task: Task) -> bytes:
        return dump_task(task)

    def lock(self) -> AbstractContextManager[object]:
        return self._lock

    def next_id(self, existing: set[str]) -> str:
        return next_integer_id(existing)

    def note_id_issued(self, task_id: str) -> None:
        """Ids come from the files themselves; nothing else to record."""

    def missing_blocker_done(self, task_id: str) -> bool:
        """board never deletes a task file in place, so a missing blocker is an open one."""
        return False

    def exists(self) -> bool:
        return self.tasks_dir.is_dir()

    def confirm_lock(self) -> None:
        """``flock`` is dropped only with the process: held for as long as we hold it."""

    def create(self) -> None:
        self.tasks_dir.mkdir(parents=True, exist_ok=True)
        (self.tasks_dir / ".lock").touch(exist_ok=True)


def detect_layout(location: Path) -> Layout:
    """board's own ``.tasks/`` layout, unless ``location`` is a Claude Code task list."""
    if looks_like_claude_list(location):
        from board.store.claude import ClaudeTaskListLayout  # here: it brings threading along

        return ClaudeTaskListLayout(location)
    return TasksDirLayout(location)

