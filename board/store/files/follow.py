"""Following a board in files: a watcher on its folder, the changed files read again, and a
reconcile for the events an operating system loses (``Store.follow``).

Every batch of file events comes back to the reader, wanted or not, and so does a quiet
period: a filter in the watcher would restart its timeout on every unwanted event, and a worker
polling for work makes a temp file many times a second, so the reader's period would not hold.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from board.errors import BoardError
from board.disk.atomic import Stamp, stat_stamp
from board.disk.watch import LOST, FolderWatch, Unavailable
from board.store.base import BoardNews, ChangeSet

if TYPE_CHECKING:
    from board.store.files.state import FileBoard

#: A batch closes after this much quiet (at most ``DEBOUNCE_MS`` after its first event): a
#: change reaches its reader within a few milliseconds.
DEBOUNCE_MS = 30
STEP_MS = 4
#: Every file is stat'ed again this often, whatever the folder says (see ``_reconcile``)...
FULL_RESCAN_SECONDS = 60.0
#: ... or less often on a board so large that doing so would take more than this share of a
#: core: on 30,000 tasks one look at every file costs 0.1 to 0.2 s, and once a minute it was
#: most of what an idle dashboard spent. What it looks for is what no event told of.
FULL_RESCAN_SHARE = 0.001
#: How often a board folder that is gone is looked for again.
MISSING_POLL_SECONDS = 0.25
#: board's own files beside the tasks, by the table a database board keeps the same in.
_SIDE_FOLDERS = {"agents": "agents", "toolcalls": "tool_calls", "reservations": "reservations", "checkpoints": "checkpoints"}
_SIDE_FILES = {"alerts.json": "alerts"}


class FileFollower:
    """``Store.follow`` for one ``FileBoard``."""

    def __init__(self, store: FileBoard, *, stop: threading.Event, every: float, guard: AbstractContextManager[object] | None) -> None:
        self.store = store
        self.stop = stop
        self.every = every
        self.guard: AbstractContextManager[object] = guard if guard is not None else nullcontext()
        self._folder_seen: Stamp | None = stat_stamp(store.layout.tasks_dir)
        # The first batch, once the watch is up, reconciles and stats every file: what was
        # written after the reader read the board and before the watch began was announced to
        # no one.
        self._caught_up = False
        self._full_rescan_at = float("-inf")
        self._full_rescan_every = FULL_RESCAN_SECONDS
        self._reconciled_at = time.monotonic()
        #: Events arrived since the last reconcile.
        self._heard = False
        #: The inotify watch being read, for a stop to wake.
        self._watch: FolderWatch | None = None

    def batches(self) -> Iterator[BoardNews]:
        tasks_dir = self.store.layout.tasks_dir
        threading.Thread(target=self._wake_on_stop, name="follower-stop", daemon=True).start()
        while not self.stop.is_set():
            if not tasks_dir.is_dir():
                # The board is gone (deleted, or not made yet): say so, then wait for it.
                yield self._read([], reconcile=True)
                while not self.stop.is_set() and not tasks_dir.is_dir():
                    self.stop.wait(MISSING_POLL_SECONDS)
                continue
            watched = stat_stamp(tasks_dir)
            try:
                for changed in self._changes(tasks_dir):
                    if self.stop.is_set():
                        return
                    now = stat_stamp(tasks_dir)
                    replaced = now is None or watched is None or now[2] != watched[2]  # another inode
                    if LOST in changed:
                        self._full_rescan_at = float("-inf")  # the kernel dropped events: look at everything
                    reconcile = not self._caught_up or replaced or LOST in changed or time.monotonic() - self._reconciled_at >= self.every
                    yield self._read([Path(path) for path in changed if path != LOST], reconcile=reconcile)
                    if replaced:
                        break  # watch the new folder (or wait for one)
            except (FileNotFoundError, OSError, RuntimeError):
                # The folder vanished under the operating system's watcher: reconcile, start again.
                yield self._read([], reconcile=True)
                self.stop.wait(MISSING_POLL_SECONDS)

    def _changes(self, tasks_dir: Path) -> Iterator[set[str]]:
        """Batches of changed paths under the folder, and an empty one every ``every`` seconds
        with nothing changed: from inotify, blocking between changes, where Linux offers it;
        else from watchfiles, which looks every few milliseconds."""
        try:
            watch = FolderWatch(tasks_dir)
        except Unavailable:
            watch = None
        if watch is not None:
            self._watch = watch
            try:
                if not self._caught_up:
                    yield set()  # watching now: catch up with what came before (``_reconcile``)
                yield from watch.changes(timeout=self.every, debounce=DEBOUNCE_MS / 1000, quiet=STEP_MS / 1000, stop=self.stop)
            finally:
                self._watch = None
                watch.close()
            return
        import watchfiles  # only a follower without inotify pays for loading it

        for changes in watchfiles.watch(
            tasks_dir,
            watch_filter=None,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            rust_timeout=max(1, int(self.every * 1000)),
            yield_on_timeout=True,
            stop_event=self.stop,
            raise_interrupt=False,
        ):
            yield {path for _, path in changes}

    def _wake_on_stop(self) -> None:
        """Blocked until the follower is stopped, then wakes its watch at once."""
        self.stop.wait()
        watch = self._watch
        if watch is not None:
            watch.wake()

    def _read(self, changed: list[Path], *, reconcile: bool) -> BoardNews:
        store, layout = self.store, self.store.layout
        news = BoardNews(paths=set(changed))
        task_paths: set[Path] = set()
        side_paths: set[Path] = set()
        for path in changed:
            task_id = layout.task_id_for(path)
            if task_id is not None:
                task_paths.add(path)
                news.named.add(task_id)
            elif not path.name.startswith(".") and not path.name.endswith(".tmp"):
                kind = _side_kind(path, layout.state_dir)
                if kind is not None:
                    news.side.add(kind)
                    side_paths.add(path)
        self._heard = self._heard or bool(changed)
        try:
            with self.guard:
                # A tool call is a line in its task's log, not a write of the task file: the
                # task is read again, its counts including its log.
                news.changes = store.reread(task_paths | store.logged_task_paths(side_paths))
                if reconcile:
                    news.changes.merge(self._reconcile())
        except (BoardError, OSError):
            # A board being rewritten under us (its folder replaced, a file half there): the
            # next batch stats every file again, which reads whatever this one missed.
            self._reconciled_at = self._full_rescan_at = float("-inf")
        return news

    def _reconcile(self) -> ChangeSet:
        """Stat every file only when events may have been lost: the folder changed (a rename, a
        new or deleted file moves its mtime) while no event came, it was replaced, or
        ``FULL_RESCAN_SECONDS`` passed (longer on a large board: ``FULL_RESCAN_SHARE``); at
        30,000 tasks that stat is most of an idle reader's cost. Writes through a store are
        caught up from history."""
        self._reconciled_at = time.monotonic()
        self._caught_up = True
        folder = stat_stamp(self.store.layout.tasks_dir)
        unheard = folder != self._folder_seen and not self._heard
        replaced = folder is None or self._folder_seen is None or folder[2] != self._folder_seen[2]
        self._folder_seen, self._heard = folder, False
        changes = self.store.sync()
        if unheard or replaced or time.monotonic() - self._full_rescan_at >= self._full_rescan_every:
            self._full_rescan_at, spent = time.monotonic(), time.thread_time()
            changes.merge(self.store.rescan())
            self._full_rescan_every = max(FULL_RESCAN_SECONDS, (time.thread_time() - spent) / FULL_RESCAN_SHARE)
        return changes


def _side_kind(path: Path, state_dir: Path) -> str | None:
    """Which of board's own kinds of record ``path`` holds, if any."""
    if path.parent == state_dir:
        return _SIDE_FILES.get(path.name)
    parts = path.relative_to(state_dir).parts if path.is_relative_to(state_dir) else ()
    return _SIDE_FOLDERS.get(parts[0]) if len(parts) > 1 else None


