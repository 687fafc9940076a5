"""A board kept in files: ``<workspace>/.tasks/`` (board's own layout) or a Claude Code task list.

``FileStore`` is ``Store`` (the rules, ``board.store.base``) on files, put together from one
module per job over one typed state (``state.FileBoard``): ``index`` reads files into the
index, ``writes`` is the write protocol, ``claims`` takes tasks, ``repair`` is ``board check``,
``toolcalls`` counts logged calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from board.errors import BoardError
from board.model import validate_id
from board.disk import confine
from board.store.base import BoardNews, Store
from board.store.files.claims import FileClaims
from board.store.files.index import FileIndex
from board.store.files.repair import FileRepair
from board.store.files.side import FileAlertBoard
from board.store.files.toolcalls import FileToolCalls
from board.store.files.writes import FileWrites
from board.store.layout import detect_layout
from board.store.lifetime_lock import LifetimeLock

if TYPE_CHECKING:
    import threading


class FileStore(FileIndex, FileWrites, FileClaims, FileRepair, FileToolCalls):
    """One board on disk plus this process's index of it."""

    def follow(self, *, stop: threading.Event, every: float = 2.0, guard: AbstractContextManager[object] | None = None) -> Iterator[BoardNews]:
        # Imported here: the folder watch (ctypes, inotify) is for the few processes that follow.
        from board.store.files.follow import FileFollower

        return FileFollower(self, stop=stop, every=every, guard=guard).batches()

    def lifetime_lock(self, name: str) -> LifetimeLock:
        """A lock on ``.<name>.lock`` in the board's folder (the coordinator's: ``.coordinator.lock``)."""
        return LifetimeLock(self.local_dir / f".{validate_id(name)}.lock")

    def alert_board_of_its_own(self) -> FileAlertBoard:
        return FileAlertBoard(self.layout.state_dir)  # a file read whole each time: nothing to share

    @classmethod
    def open(cls, location: Path | str, *, create: bool = False, whole: bool = True, **kwargs: Any) -> Store:
        """Open the board at ``location``: a workspace with ``.tasks/``, or a Claude Code task list.

        ``whole=False`` reads no task file until a task is asked for, for a command about one
        task: ``get``, ``mutate``, ``update``, ``release`` and ``record_toolcall`` then read that
        task's file alone (every rule of a write still applies: they concern the task itself and
        the history log). Whatever needs the rest of the board (``tasks``, a status move, links,
        claims, heartbeats, checks) reads the whole board first. ``graph`` holds only what was
        read: derived views (readiness, waves, progress from sub-tasks) need a whole store.
        """
        layout = detect_layout(Path(location).expanduser().resolve())
        if not layout.exists():
            if not create:
                raise BoardError(f"no board in {location}: run 'board init' there or pass --workspace")
            layout.create()
        confine.make_folders(layout.state_dir)
        store = cls(layout, **kwargs)
        if whole:
            store.load()
        else:
            store._history_offset = store._history.end()
            store._partial = True
        return store

    def close(self) -> None:
        """Delete this store's spare files now rather than when it is collected or the process
        exits, and close the files it keeps open. The store stays usable."""
        self._spares.close()
        self._history.close()

    def _read_one(self, task_id: str) -> None:
        self.read_files([(task_id, self._file_of(task_id)[1])])
