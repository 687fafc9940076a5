"""Watch a board's ``.tasks/`` directory and report changed paths in small batches.

watchfiles' defaults (1.6 s debounce) suit reloading a web server, not a live board: here a
batch closes after ``step_ms`` of quiet (at most ``debounce_ms`` after its first event), so a
change reaches the screen within a few milliseconds. Events can still be missed (an overflowed
inotify queue, a directory deleted and recreated), so every ``reconcile_seconds`` the batch asks
its reader for a full reconcile (``Store.rescan()``), which compares file stamps.

Textual-free: the dashboard runs this in a thread worker, the coordinator can use it too.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from watchfiles import Change, watch

#: Files outside the task documents whose changes a viewer cares about.
SIDE_FILES = frozenset({"alerts.json", "board.toml", "history.jsonl"})


@dataclass
class WatchBatch:
    """One batch of changes: task files to re-read, other board files, and whether to reconcile."""

    task_paths: set[Path] = field(default_factory=set)
    #: Changed non-task files: ``agents/*.json``, ``alerts.json``, ``board.toml``, ``history.jsonl``,
    #: ``toolcalls/*.jsonl``.
    side_paths: set[Path] = field(default_factory=set)
    #: Time for a full rescan: periodic, or the directory vanished or came back.
    reconcile: bool = False

    def __bool__(self) -> bool:
        return bool(self.task_paths or self.side_paths or self.reconcile)


def _is_task_file(path: Path, tasks_dir: Path) -> bool:
    return path.parent == tasks_dir and path.name.startswith("task_") and path.name.endswith(".json")


def _is_side_file(path: Path, state_dir: Path) -> bool:
    if path.parent == state_dir:
        return path.name in SIDE_FILES
    if path.parent.parent == state_dir and path.parent.name in ("agents", "toolcalls"):
        return not path.name.startswith(".")
    return False


def _inode(directory: Path) -> int | None:
    try:
        return os.stat(directory).st_ino
    except OSError:
        return None


class BoardWatcher:
    """Yield ``WatchBatch`` objects for one ``.tasks/`` directory until ``stop()`` is called."""

    def __init__(
        self,
        tasks_dir: Path,
        *,
        is_task_file: Callable[[Path], bool] | None = None,
        state_dir: Path | None = None,
        debounce_ms: int = 40,
        step_ms: int = 4,
        reconcile_seconds: float = 2.0,
        missing_poll_seconds: float = 0.25,
    ) -> None:
        self.tasks_dir = Path(tasks_dir)
        #: Layouts differ (``task_<id>.json`` in ``.tasks/``, ``<id>.json`` in a Claude Code list),
        #: so the store's layout says which files are tasks and where board's own files live.
        self.is_task_file = is_task_file or (lambda path: _is_task_file(path, self.tasks_dir))
        self.state_dir = Path(state_dir) if state_dir is not None else self.tasks_dir
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.reconcile_seconds = reconcile_seconds
        self.missing_poll_seconds = missing_poll_seconds
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _accept(self, change: Change, raw_path: str) -> bool:
        path = Path(raw_path)
        return self.is_task_file(path) or _is_side_file(path, self.state_dir)

    def batches(self) -> Iterator[WatchBatch]:
        while not self._stop.is_set():
            inode = _inode(self.tasks_dir)
            if inode is None:
                # The board is gone (deleted, or not created yet): say so once, then wait for it.
                yield WatchBatch(reconcile=True)
                while not self._stop.is_set() and _inode(self.tasks_dir) is None:
                    self._stop.wait(self.missing_poll_seconds)
                yield WatchBatch(reconcile=True)
                continue
            yield from self._watch_directory(inode)

    def _watch_directory(self, inode: int) -> Iterator[WatchBatch]:
        last_reconcile = time.monotonic()
        try:
            for changes in watch(
                self.tasks_dir,
                watch_filter=self._accept,
                debounce=self.debounce_ms,
                step=self.step_ms,
                stop_event=self._stop,
                rust_timeout=max(1, int(self.reconcile_seconds * 1000)),
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                batch = WatchBatch()
                for _change, raw_path in changes:
                    path = Path(raw_path)
                    if self.is_task_file(path):
                        batch.task_paths.add(path)
                    else:
                        batch.side_paths.add(path)
                now = time.monotonic()
                replaced = _inode(self.tasks_dir) != inode
                if replaced or now - last_reconcile >= self.reconcile_seconds:
                    batch.reconcile = True
                    last_reconcile = now
                if batch:
                    yield batch
                if replaced:
                    return  # watch the new directory (or wait for one)
        except (FileNotFoundError, OSError, RuntimeError):
            # The directory vanished under the OS watcher; reconcile and start again.
            yield WatchBatch(reconcile=True)
            self._stop.wait(self.missing_poll_seconds)
