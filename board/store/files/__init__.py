"""A board kept in files: ``<workspace>/.tasks/`` (board's own layout) or a Claude Code task list.

``FileStore`` is ``Store`` (the rules, ``board.store.base``) on files, put together from one
module per job: ``index`` reads files into the index, ``writes`` is the write protocol,
``claims`` takes tasks, ``repair`` is ``board check``, ``toolcalls`` counts logged calls.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from board.errors import BoardError, TaskNotFound
from board.graph import TaskGraph
from board.model import Task, utcnow, validate_id
from board.store import confine
from board.store.atomic import SharedDirectorySync, SparePool, Stamp, TempFile
from board.store.history import HistoryLog
from board.store.layout import Layout, detect_layout
from board.store.base import Clock

from board.store.base import Store
from board.store.history import RecentHistory
from board.store.files.claims import ClaimIntents, FileClaims
from board.store.files.index import FileIndex
from board.store.files.repair import FileRepair
from board.store.files.side import FileAgentRecords, FileAlertBoard, FileCheckpointBook, FileReservationBook
from board.store.files.toolcalls import FileToolCalls
from board.store.files.writes import PENDING_HISTORY, FileWrites, PendingNote


class FileStore(FileIndex, FileWrites, FileClaims, FileRepair, FileToolCalls, Store):
    """One board on disk plus this process's index of it."""

    layout: Layout

    def __init__(self, layout: Layout, *, clock: Clock = utcnow, actor: str = "board") -> None:
        self.layout = layout
        super().__init__(clock=clock, actor=actor)
        self._history_offset = 0
        self._file_stamps: dict[str, Stamp] = {}  # keyed by str(path): cheaper than Path in hot loops
        self._paths: dict[str, tuple[Path, str]] = {}  # task id -> its file, as Path and as str
        #: Each tool-call log read for ``touching_calls``: (inode, bytes read, calls naming files).
        self._touching_logs: dict[Path, tuple[int, int, list[dict[str, Any]]]] = {}
        #: Each task as this store last knew it accounted for by history (its own writes, lines
        #: it read, or first sight): what an outside edit is measured against.
        self._logged: dict[str, Task] = {}
        #: The highest version history records for each task, and the checksum of the file
        #: that version wrote; read from the log on first need.
        self._max_logged: dict[str, int] | None = None
        self._logged_crc: dict[str, str] = {}
        #: Checksum of each task file as last read under the lock (``_fresh``).
        self._read_crc: dict[str, str] = {}
        self._history = HistoryLog(layout.state_dir / "history.jsonl")
        self._pending = PendingNote(layout.state_dir / PENDING_HISTORY)
        self._intents = ClaimIntents(layout.state_dir / ".claiming")
        self._spares = SparePool(layout.tasks_dir, enabled=layout.keeps_spares)
        #: While this store holds the write lock: the temp file made for its first write, and the
        #: directories whose renames still need an fsync.
        self._temp: TempFile | None = None
        self._unsynced: set[Path] = set()
        self._last_rename = 0
        self._directory_sync = SharedDirectorySync(layout.state_dir / ".synced")
        self._lock_depth = 0
        self._recent: dict[frozenset[str], RecentHistory] = {}
        self.agent_records = FileAgentRecords(layout.state_dir)
        self.reservation_book = FileReservationBook(layout.state_dir)
        self.checkpoint_book = FileCheckpointBook(layout.state_dir)
        self.alert_board = FileAlertBoard(layout.state_dir)

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

    def _new_graph(self) -> TaskGraph:
        return TaskGraph(missing_blocker_done=self.layout.missing_blocker_done)

    def close(self) -> None:
        """Delete this store's spare files now rather than when it is collected or the process
        exits, and close the files it keeps open. The store stays usable."""
        self._spares.close()
        self._history.close()

    @property
    def history_path(self) -> Path:
        return self._history.path

    def get(self, task_id: str) -> Task:
        task = self.graph.tasks.get(task_id)
        if task is None and self._partial:
            try:
                validate_id(task_id)  # it names a file
            except ValueError:
                raise TaskNotFound(task_id) from None
            self.read_files([(task_id, self._file_of(task_id)[1])])
            task = self.graph.tasks.get(task_id)
        if task is None:
            reason = self.invalid.get(str(self.layout.task_path(task_id)))
            if reason is not None:
                raise BoardError(f"task {task_id} cannot be read: {self.layout.task_path(task_id)}: {reason}")
            raise TaskNotFound(task_id)
        return task

    def _file_of(self, task_id: str) -> tuple[Path, str]:
        """A task's file as Path and as str, remembered: building paths showed in claim profiles."""
        known = self._paths.get(task_id)
        if known is None:
            path = self.layout.task_path(task_id)
            known = self._paths[task_id] = (path, str(path))
        return known
