"""What the parts of ``FileStore`` share: one typed state, made in one place, and the methods one
part calls on another, declared here so that each part is checked against them.

The parts (``index``, ``writes``, ``claims``, ``repair``, ``toolcalls``) each add one job's
methods to ``FileBoard``; ``FileStore`` is all of them together.
"""

from __future__ import annotations

from abc import abstractmethod
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from board.records import NamedTuple
from board.errors import InvalidTaskFile
from board.graph import TaskGraph
from board.model import Task, utcnow
from board.disk.atomic import SharedDirectorySync, SparePool, Stamp, TempFile
from board.store.base import ChangeSet, Clock, Store
from board.store.file_format import HISTORY, PENDING_HISTORY
from board.store.files.intents import ClaimIntents
from board.store.files.notices import FileNoticeJournal
from board.store.files.side import FileAgentRecords, FileAlertBoard, FileCheckpointBook, FileReservationBook
from board.store.history import HistoryLog, PendingNote, RecentHistory
from board.store.layout import Layout

if TYPE_CHECKING:
    from board.store.files.mirror import RemovedMirror


# Named tuples, not dataclasses, here and in the records a one-task command builds: importing
# ``dataclasses`` brings ``inspect`` with it, 6 ms of such a command's start.
def keep_logged(versions: dict[str, int], crcs: dict[str, str], task_id: str, version: int, crc: str | None) -> None:
    """A history line's version, and the checksum of the file it wrote (None: the line names
    none), kept when it is the task's highest so far; at the same version the later line counts,
    as one pass over the log reads them."""
    if version >= versions.get(task_id, -1):
        versions[task_id] = version
        if crc is not None:
            crcs[task_id] = crc
        else:
            crcs.pop(task_id, None)


class PreparedWrite(NamedTuple):
    """A write worked out ahead of publishing it: the new version, its bytes, its history line."""

    task: Task
    path: Path
    data: bytes
    record: dict[str, Any]


class FileBoard(Store):
    """A board kept in files, and this process's knowledge of them."""

    layout: Layout
    agent_records: FileAgentRecords
    reservation_book: FileReservationBook
    checkpoint_book: FileCheckpointBook
    alert_board: FileAlertBoard

    def __init__(self, layout: Layout, *, clock: Clock = utcnow, actor: str = "board") -> None:
        self.layout = layout
        super().__init__(clock=clock, actor=actor)
        #: How far this store has read the history log.
        self._history_offset = 0
        #: The task files a first read a page at a time has yet to read (``read_more``), from
        #: ``_unread_at`` on.
        self._unread: list[tuple[str, str]] = []
        self._unread_at = 0
        #: The stat of each task file as last read, keyed by str(path): cheaper than Path in hot loops.
        self._file_stamps: dict[str, Stamp] = {}
        #: Task id -> its file, as Path and as str.
        self._paths: dict[str, tuple[Path, str]] = {}
        #: Each tool-call log read for ``touching_calls``: (inode, bytes read, calls naming files).
        self._touching_logs: dict[Path, tuple[int, int, list[dict[str, Any]]]] = {}
        #: Whether the index of ready tasks was seen written (``writes._keeps_ready_index``).
        self._ready_index_seen = False
        #: The tool-call logs' names while a whole read lists them once (``_logs_listed_once``).
        self._logs_listed: frozenset[str] | None = None
        #: Each task as this store last knew it accounted for by history (its own writes, lines
        #: it read, or first sight): what an outside edit is measured against.
        self._logged: dict[str, Task] = {}
        #: The highest version history records for each task, and the checksum of the file
        #: that version wrote; read from the log on first need.
        self._max_logged: dict[str, int] | None = None
        self._logged_crc: dict[str, str] = {}
        #: The tasks ``_max_logged`` answers for when a store reading only some tasks looked
        #: them up one by one (``_logged_version``); None: every task, from one pass.
        self._logged_scope: set[str] | None = None
        #: Checksum of each task file as last read under the lock (``_fresh``).
        self._read_crc: dict[str, str] = {}
        self._history = HistoryLog(layout.state_dir / HISTORY)
        self._pending = PendingNote(layout.state_dir / PENDING_HISTORY)
        self._intents = ClaimIntents(layout.state_dir / ".claiming")
        #: A Claude Code list's copies of its tasks, for when Claude Code deletes their files.
        self._mirror: RemovedMirror | None = None
        if layout.name == "claude-code":
            from board.store.files.mirror import RemovedMirror  # here: board's own layout has none

            self._mirror = RemovedMirror(layout.state_dir)
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
        self.notice_journal = FileNoticeJournal(layout.state_dir)

    def _new_graph(self) -> TaskGraph:
        return TaskGraph(missing_blocker_done=self.layout.missing_blocker_done)

    def _file_of(self, task_id: str) -> tuple[Path, str]:
        """A task's file as Path and as str, remembered: building paths showed in claim profiles."""
        known = self._paths.get(task_id)
        if known is None:
            path = self.layout.task_path(task_id)
            known = self._paths[task_id] = (path, str(path))
        return known

    # -- what one part provides for the others ------------------------------------------------

    @abstractmethod
    def _read_path(self, path: Path, task_id: str | None = None, key: str | None = None) -> tuple[Task | InvalidTaskFile, Stamp] | None:
        """One task file read and decoded (``index``); None when it is gone."""

    @abstractmethod
    def _read_into_index(self, path: Path, task_id: str | None = None) -> ChangeSet:
        """Re-read one path into the index (``index``)."""

    @abstractmethod
    def _mirror_completed(self, task: Task, raw: bytes | None = None) -> None:
        """Keep a copy of a completed task, for when Claude Code deletes its file (``index``)."""

    @abstractmethod
    def _removed_by_claude_code(self, task_id: str, known: Task | None) -> Task | None:
        """The task as kept once Claude Code deleted its file; None if it leaves the board (``index``)."""

    @abstractmethod
    def _newly_logged(self) -> dict[str, list[dict[str, Any]]] | None:
        """The history records appended since the last look, by task (``index``)."""

    @abstractmethod
    def _count_logged_calls(self, task: Task) -> Task:
        """The task with the calls its log holds beyond what its file counted (``toolcalls``)."""

    @abstractmethod
    def _keeps_ready_index(self) -> bool:
        """Whether claims here go by the index of ready tasks (``writes``)."""

    @abstractmethod
    def refresh_parents(self) -> bool:
        """Rebuild the index of sub-tasks' parents from the whole board when it differs (``writes``)."""

    @abstractmethod
    def refresh_ready(self) -> bool:
        """Rebuild the index of ready tasks from the whole board when it differs (``writes``)."""

    @abstractmethod
    def _logs_listed_once(self) -> AbstractContextManager[None]:
        """While many task files are read, the tool-call logs listed once (``toolcalls``)."""

    @abstractmethod
    def _prepare(self, old: Task | None, new: Task, op: str, actor: str | None, extra: dict[str, Any] | None = None) -> PreparedWrite:
        """A write worked out ahead of publishing it (``writes``)."""

    @abstractmethod
    def _publish(self, prepared: PreparedWrite, temp: TempFile) -> Task:
        """Under the lock: a prepared write put in place, logged and indexed (``writes``)."""

    @abstractmethod
    def outside_edit(self, task: Task, checksum: str | None = None) -> dict[str, Any] | None:
        """What an outside writer changed in ``task`` that history does not account for (``writes``)."""
