"""What a board keeps beside its tasks, each kind behind one small storage interface.

A store owns one object of each kind (``Store.agent_records``, ``Store.reservation_book``,
``Store.checkpoint_book``, ``Store.alert_board``). They store and fetch, nothing more: the rules
stay with the modules that use them. ``board.agents`` decides what a registry record says,
``board.reservations`` who may hold a file, ``board.checkpoints`` what a checkpoint holds and
which to keep, ``board.alerts`` which alerts hold.

Each maps to one table of the PostgreSQL schema (``board.store.postgres.migrations``):
``agents`` (one row per agent), ``reservations`` (one row per holder of a path), ``checkpoints``
(one row per checkpoint), ``alerts`` (one row per alert). ``board.store.files.side`` keeps them
in files under the board's state directory, as board always has.

Several reads and writes that must see one state (``reserve`` checks who holds a file, then
writes) run inside ``store.transaction()``. No method here takes the board lock: it is the
caller's to hold, so a method costs the same inside a transaction and out of it.

Per machine, not per board: ``Store.local_dir`` is the folder for what belongs to this machine
and workspace (``board.toml``, git's remembered state, the coordinator's lock, logs).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from board.records import NamedTuple
from board.errors import BoardError
from board.status import FINISHED
from board.times import iso

if TYPE_CHECKING:
    from board.model import Task

MODES = ("write", "read")


class Reservation(NamedTuple):
    path: str
    owner: str
    task: str
    mode: str
    expires_at: datetime
    acquired_at: datetime | None = None

    def live(self, now: datetime, tasks: Mapping[str, Task] | None = None) -> bool:
        """Unexpired, and (when the tasks are known) held for a task that still exists and is unfinished."""
        if self.expires_at <= now:
            return False
        if tasks is None:
            return True
        task = tasks.get(self.task)
        return task is not None and task.status not in FINISHED

    def excludes(self, agent: str, mode: str) -> bool:
        """Whether this holding stops ``agent`` from holding the same file in ``mode``."""
        return self.owner != agent and (mode == "write" or self.mode == "write")

    def describe(self) -> str:
        doing = "writing" if self.mode == "write" else "reading"
        return f"{self.path} is reserved for {doing} by {self.owner} for task #{self.task} until {iso(self.expires_at.replace(microsecond=0))}"

    def to_dict(self) -> dict[str, Any]:
        data = {"owner": self.owner, "task": self.task, "mode": self.mode, "expiresAt": iso(self.expires_at)}
        if self.acquired_at is not None:
            data["acquiredAt"] = iso(self.acquired_at)
        return data


class UnreadableRecord(BoardError):
    """A stored record that cannot be read as one (a file store's file gone bad)."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        #: Where the record is kept, for a person to find it (a file's path, a row's key).
        self.where = where
        #: What is wrong with it, in a few words.
        self.problem = problem


class NameLock(Protocol):
    """An agent name held by one live process: taken by ``acquire``, given back by ``release``
    or by the process's end, however it ends (a file lock; a session's advisory lock)."""

    def acquire(self) -> bool:
        """Take the name (again, if this holds it already); False when another holder has it."""
        ...

    def release(self) -> None: ...


class AgentRecords(Protocol):
    """The agent registry: one JSON record per agent name (``board.agent_record.AgentRecord`` dumped),
    and which names live processes hold. Table ``agents`` (name, record)."""

    def read(self, name: str) -> dict[str, Any] | None:
        """The record stored under ``name``; None when there is none or it cannot be read."""
        ...

    def read_all(self) -> list[dict[str, Any]]:
        """Every readable record (unreadable ones are skipped), in a stable order."""
        ...

    def write(self, name: str, record: Mapping[str, Any]) -> None:
        """Store ``record`` under ``name``, replacing what was there."""
        ...

    def logged_calls(self, name: str) -> tuple[int, str | None] | None:
        """How many tool calls are logged under the agent's name and the time of the last (ISO
        text); None when none was ever logged. Table ``tool_calls`` by ``agent``."""
        ...

    def name_lock(self, name: str) -> NameLock:
        """The lock a process holds on an agent name while it works under it. Leases and tokens
        are per name: two live processes under one name would both pass every fence and run the
        same task at once; holding this makes the name one process's."""
        ...

    def name_in_use(self, name: str) -> bool:
        """Does a ``name_lock`` hold ``name`` now (one of this process's too)? A probe: it takes
        nothing, so a process starting under that name at that instant never gives up for it."""
        ...


class ReservationBook(Protocol):
    """File reservations: every holder of every reserved workspace path, expired ones included
    until the next write drops them. Table ``reservations`` (one row per holder)."""

    def holders(self, path: str) -> list[Reservation]:
        """Every holder recorded for ``path`` (a workspace path, normalised), first holder first."""
        ...

    def all_holders(self) -> list[Reservation]:
        """Every holder of every path, the holders of one path together."""
        ...

    def replace(self, path: str, holders: Sequence[Reservation]) -> None:
        """Make ``holders`` the holders of ``path``, in that order; none frees the path."""
        ...


class CheckpointBook(Protocol):
    """Checkpoints: one JSON record per (task, sequence number). Table ``checkpoints``."""

    def sequence_numbers(self, task_id: str) -> list[int]:
        """The task's checkpoints, oldest first; empty when it has none."""
        ...

    def tasks(self) -> set[str]:
        """Tasks that have (or had) checkpoints: a superset of those that have one now."""
        ...

    def next_seq(self, task_id: str) -> int:
        """A sequence number above every checkpoint the task has; run it and the ``write`` that
        uses it inside one ``store.transaction()``, so that no two writers get the same."""
        ...

    def read(self, task_id: str, seq: int) -> dict[str, Any]:
        """One checkpoint's record; ``UnreadableRecord`` when it is gone or cannot be read."""
        ...

    def write(self, task_id: str, seq: int, record: Mapping[str, Any]) -> None: ...

    def delete(self, task_id: str, seq: int) -> None:
        """Drop one checkpoint (gone already is fine)."""
        ...

    def where(self, task_id: str, seq: int) -> str:
        """Where a checkpoint is kept, for a person to find it: a file's path, a row's key."""
        ...


class AlertBoard(Protocol):
    """The current alerts (``board.alerts.Alert.to_dict()`` records), replaced as a whole by
    whoever evaluates them (the coordinator, ``board alerts``). Table ``alerts`` (key, record)."""

    def read(self) -> list[dict[str, Any]]:
        """The records last stored, in the order they were given (board gives them worst first,
        ``Alert.sort_key``); none when there are none or they cannot be read."""
        ...

    def replace(self, records: Sequence[Mapping[str, Any]]) -> bool:
        """Make ``records`` the current alerts, unless they already are; True when it wrote."""
        ...

    def stamp(self) -> Hashable | None:
        """Something cheap that changes whenever the alerts are replaced; None while no alerts
        were ever stored. A reader polls it to skip reading what it already read."""
        ...


class NoticeJournal(Protocol):
    """The board's record of what was told (``Store.notice_journal``; ``board.notify`` tells)."""

    def take(self, key: str, now: datetime, again_after: timedelta | None) -> bool:
        """Record ``key`` as told now, unless it was told already (within ``again_after`` of
        now, when given). True when this caller took it and so must tell it; atomic across
        processes and machines."""
        ...
