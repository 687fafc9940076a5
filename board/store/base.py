"""The board's rules, written once for every place a board is kept.

``Store`` is what everything above the store uses (the action layer, the coordinator, the
alerts, the dashboard, the command line, the MCP server): the index of tasks (``tasks``,
``graph``, ``get``), every change by its rules (create, update, set_status, start, claim,
heartbeat, release, delete, restore, link...), history and tool calls, and ``transaction``
for several changes that must see one state. None of them knows where the board is kept.

The rules (the status machine, fencing, compare-and-set, readiness, cycles, what a status
move sets) live here. A backend supplies a handful of primitives, each marked below:
hold the board exclusively (``_write_lock``), read one task as it is now (``_fresh``), write a
new version with its history line (``_commit``), catch up with other writers (``sync``),
claim, archive, and append tool calls. ``board.store.files`` keeps a board in ``.tasks/``
(or a Claude Code task list).

Long on purpose: the rules and the protocol every backend implements are one contract, read
together; split, each half would be checked without the other.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from board.records import NamedTuple
from board.errors import BoardError, BoardUnavailable, GraphError, Option, LeaseHeld, NotReady, StaleLease, TaskNotFound, VersionConflict
from board.graph import TaskGraph, removed_by_claude_code, sorted_ids
from board.model import Lease, Priority, Seen, Task, checked_budget, draft_of, by_policy, live_lease_holder, task_from_dict, utcnow, validate_id, with_limits
from board.status import Status, check_transition
from board.store.leases import DEFAULT_LEASE_SECONDS
from board.text import shortened
from board.toolcall_log import call_record, check_tool_name
from contextlib import AbstractContextManager

if TYPE_CHECKING:
    import threading

    from board.store.layout import BoardPlace

Clock = Callable[[], datetime]


# Plain classes, not dataclasses: every command imports this module, and ``dataclasses`` (with
# ``inspect``) cost a one-task command a tenth of its start.
class ChangeSet:
    """What a refresh found: ids whose task changed or vanished, and files that went bad or good."""

    __slots__ = ("changed", "removed", "invalid")

    def __init__(self, changed: set[str] | None = None, removed: set[str] | None = None, invalid: set[str] | None = None) -> None:
        self.changed: set[str] = set() if changed is None else changed
        self.removed: set[str] = set() if removed is None else removed
        self.invalid: set[str] = set() if invalid is None else invalid

    def __bool__(self) -> bool:
        return bool(self.changed or self.removed or self.invalid)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChangeSet):
            return NotImplemented
        return (self.changed, self.removed, self.invalid) == (other.changed, other.removed, other.invalid)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        return f"ChangeSet(changed={self.changed!r}, removed={self.removed!r}, invalid={self.invalid!r})"

    def merge(self, other: ChangeSet) -> None:
        self.changed |= other.changed
        self.removed |= other.removed
        self.invalid |= other.invalid


class BoardNews:
    """One batch of what happened on a followed board (``Store.follow``), already read into the
    store's index. An empty one says only that time passed."""

    def __init__(
        self, changes: ChangeSet | None = None, named: set[str] | None = None, side: set[str] | None = None, paths: set[Path] | None = None,
        whole: bool = False, lost: str | None = None, back: bool = False,
    ) -> None:
        #: What the index took in: tasks changed or gone, stored tasks gone bad or good.
        self.changes = ChangeSet() if changes is None else changes
        #: The tasks the board says were written, whoever wrote them (this process included).
        self.named: set[str] = set() if named is None else named
        #: What changed beside the tasks, by table: agents, alerts, reservations, checkpoints, tool_calls.
        self.side: set[str] = set() if side is None else side
        #: The files that changed, for a board kept in files (task files and board's own).
        self.paths: set[Path] = set() if paths is None else paths
        #: The whole board was read again (it came back, or was replaced wholesale).
        self.whole = whole
        #: Why the board is out of reach (the index stays as it was); None while it is reachable.
        self.lost = lost
        #: It was out of reach and is back; the whole board was read again.
        self.back = back

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BoardNews):
            return NotImplemented
        return vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "BoardNews(" + ", ".join(f"{name}={value!r}" for name, value in vars(self).items()) + ")"


class HeldLock(Protocol):
    """A lock one process holds for as long as it lives (``Store.lifetime_lock``)."""

    @property
    def path(self) -> Path | str:
        """Where the lock is, for messages."""
        ...

    def acquire(self) -> bool:
        """Take it (again, if held already); False when another process holds it."""
        ...

    def release(self) -> None: ...

    def keep_heard(self, stop: threading.Event, every: float) -> object:
        """Until ``stop``, let others tell a holder still alive from one cut off, where they can."""
        ...

    def held_elsewhere(self, *, heard_within: float | None = None) -> bool | None:
        """Does another process hold it now (a probe: takes nothing)? With ``heard_within``, only
        a holder heard from that recently counts (see ``keep_heard``). None: cannot tell (a
        database out of reach); never a guess that nobody does."""
        ...


class Problem(NamedTuple):
    """A broken file or a broken rule in the files on disk, for ``board check`` and alerts."""

    kind: str
    where: str
    message: str
    tasks: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "where": self.where, "message": self.message, "tasks": list(self.tasks)}


def _check_fence(task: Task, token: int) -> None:
    """A write made with a lease token is refused once that lease is gone. The message names
    the holder, never the current token: a refusal must not hand out the key."""
    if task.lease is None:
        raise StaleLease(f"your lease token for task {task.id} is stale: the task is {task.status} and leased to no one; stop working on it")
    if task.lease.token != token:
        raise StaleLease(f"your lease token for task {task.id} is stale: {task.lease.owner} holds it under a newer lease; stop working on it")


def _lease_held(task: Task, what: str = "change its status, progress or owner") -> LeaseHeld:
    assert task.lease is not None
    until = task.lease.expires_at.astimezone(UTC).strftime("%H:%M:%S")
    return LeaseHeld(
        f"task {task.id} is held by {task.lease.owner} (lease until {until} UTC): only its holder, "
        f"with its lease token, may {what}; a person can override with ", Option("force", flag=True, person_only=True),
    )


#: What only a lease's holder may change while the lease lives.
def _fenced_change(current: Task, draft: Task) -> bool:
    return current.status != draft.status or current.progress != draft.progress or current.owner != draft.owner


def _cycle_through(graph: TaskGraph, edges: list[tuple[str, str]], task_id: str, blocker_id: str) -> list[str] | None:
    """The cycle that (task_id blockedBy blocker_id) would close, following the written edges
    and ``edges``, which are about to be written; None if there is none."""
    if task_id == blocker_id:
        return [task_id, task_id]
    new: dict[str, list[str]] = {}
    for task, blocker in edges:
        new.setdefault(task, []).append(blocker)
    path = graph.path_between(blocker_id, task_id, also=new)
    return None if path is None else [task_id, *path]


def _refuse_if_holding(agent: str, held: Sequence[Task], max_held: int) -> None:
    """A claim refused: ``agent`` holds ``max_held`` tasks (``held``) already."""
    if len(held) >= max_held:
        raise BoardError(f"agent {agent} already holds {', '.join('#' + t.id for t in held)}; finish or release it first")


def _check_agent(agent: str) -> None:
    try:
        validate_id(agent)
    except ValueError:
        raise BoardError(f"'{shortened(str(agent))}' is not a valid agent name (letters, digits, '_' or '-', at most 64)") from None


def _status(value: Status | str) -> Status:
    try:
        return Status(value)
    except ValueError:
        raise BoardError(f"unknown status '{shortened(str(value))}'; use one of {', '.join(s.value for s in Status)}") from None


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def database_url(workspace: Path) -> str | None:
    """The PostgreSQL database holding the workspace's board: ``$BOARD_DB`` (which ``--db``
    sets), else ``[store] url`` in its ``.tasks/board.toml``; None for a board in files."""
    return os.environ.get("BOARD_DB") or stored_database_url(workspace.expanduser())


def stored_database_url(workspace: Path) -> str | None:
    """``[store] url`` in the workspace's ``.tasks/board.toml``: its board is in that database.
    (Unlike ``database_url``, ``$BOARD_DB`` does not count: an import names where it writes.)
    Read only when a regular file (a FIFO planted there is never waited on), as every command
    asks this first."""
    from board.disk.confine import read_if_regular

    raw = read_if_regular(workspace / ".tasks" / "board.toml", 1024 * 1024)
    if raw is None:
        return None
    import tomllib  # only a board with settings pays for reading them

    try:
        store = tomllib.loads(raw.decode("utf-8")).get("store")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None  # 'board check' and the settings' own loading say what is wrong
    url = store.get("url") if isinstance(store, dict) else None
    return url if isinstance(url, str) and url else None


#: Opens a workspace's board where it is kept (``Store.open``); ``use_opener`` sets it.
_opener: Callable[..., Store] | None = None


def use_opener(opener: Callable[..., Store]) -> None:
    """Make ``opener`` the one ``Store.open`` calls (``board.store.opening`` does, once loaded)."""
    global _opener
    _opener = opener


class Store(ABC):
    """A board and this process's index of it. ``Store.open`` picks where it is kept."""

    def __init__(self, *, clock: Clock = utcnow, actor: str = "board") -> None:
        self.clock = clock
        self.actor = actor
        self.graph = self._new_graph()
        #: Stored tasks that failed to parse or validate: where -> one-line reason.
        self.invalid: dict[str, str] = {}
        #: True while the index holds only the tasks asked for (``open(..., whole=False)``).
        self._partial = False

    @classmethod
    def open(cls, location: Path | str, *, db: str | None = None, create: bool = False, whole: bool = True, **kwargs: Any) -> Store:
        """Open the board of the workspace at ``location`` wherever it is kept: by the opener
        the module that knows every backend gave (``use_opener``), which the package loads with
        ``Store``. The rules never import the backends built on them."""
        if _opener is None:
            raise RuntimeError("import Store from board.store, which knows where boards are kept")
        return _opener(location, db=db, create=create, whole=whole, **kwargs)

    def _new_graph(self) -> TaskGraph:
        return TaskGraph()

    def _ensure_whole(self) -> None:
        """Read the whole board if only some of its tasks were read so far."""
        if self._partial:
            self.load()

    @property
    def tasks(self) -> dict[str, Task]:
        self._ensure_whole()
        return self.graph.tasks

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Hold the board lock across several changes, with the index read fresh under it:
        what is checked inside cannot be changed by another writer before it is written."""
        with self._write_lock():
            self.sync()
            yield

    # -- changing a task -----------------------------------------------------------------------

    def mutate(
        self,
        task_id: str,
        change: Callable[[Task], None],
        *,
        op: str,
        actor: str | None = None,
        expected_version: int | Seen | None = None,
        token: int | None = None,
        force: bool = False,
    ) -> Task:
        """Apply ``change`` to a fresh copy of the task under the lock (compare-and-set on
        ``expected_version``: a version number, or what a person saw of the task).

        Fenced for every writer: under a live lease, a change to the status, progress or owner
        needs the lease's token, or ``force`` (a person overriding the holder; history says so).
        """
        with self._write_lock():
            self.sync()
            current = self._fresh(task_id)
            if isinstance(expected_version, Seen):
                moved = expected_version.differs(current)
                if moved is not None:
                    self._log(task_id, current.version, actor, "conflict", {}, {"expected": expected_version.status})
                    raise VersionConflict(f"task {task_id} changed since you pressed the key ({moved}); nothing was done")
            elif expected_version is not None and current.version != expected_version:
                self._log(task_id, current.version, actor, "conflict", {}, {"expected": expected_version})
                raise VersionConflict(
                    f"task {task_id} changed underneath you: you expected version {expected_version}, it is at {current.version}; re-read and try again"
                )
            if token is not None:
                try:
                    _check_fence(current, token)
                except StaleLease as stale:
                    # A late write (a worker back from an outage, a result its lease no longer
                    # covers) stays on record: history says who tried what, and why not.
                    self._log(task_id, current.version, actor, "refused", {}, {"attempted": op, "token": token, "reason": str(stale)})
                    raise
            draft = draft_of(current)
            change(draft)
            if draft == current:
                return current
            forced = token is None and self._needs_token(current, draft, force)
            return self._commit(current, draft, op, actor, {"forced": True} if forced else None)

    def lease_is_live(self, task: Task) -> bool:
        """Whether an agent holds ``task`` right now: in progress, under a lease not yet expired."""
        if task.status != Status.IN_PROGRESS or task.lease is None:
            return False  # decided without reading the clock (tests count its readings)
        return live_lease_holder(task, self.clock()) is not None

    def _needs_token(self, current: Task, draft: Task, force: bool) -> bool:
        """Refuse a tokenless change to what the lease holder owns; True when ``force`` let it pass."""
        if not _fenced_change(current, draft) or not self.lease_is_live(current):
            return False
        if force:
            return True
        raise _lease_held(current)

    def create(
        self,
        subject: str,
        *,
        description: str = "",
        active_form: str = "",
        blocked_by: Iterable[str] = (),
        blocks: Iterable[str] = (),
        priority: Priority | str = Priority.MEDIUM,
        parent: str | None = None,
        files: Iterable[str] = (),
        labels: Iterable[str] = (),
        owner: str = "",
        metadata: dict[str, Any] | None = None,
        task_id: str | None = None,
        actor: str | None = None,
        budget: Mapping[str, Any] | None = None,
        status: Status | str = Status.PENDING,
    ) -> Task:
        """Make a task. ``status`` may be completed or cancelled for work already done or
        dropped elsewhere (a plan or another board brought over): it is recorded as made so,
        with no invented start or work in its history."""
        self._ensure_whole()
        status = _status(status)
        if status not in (Status.PENDING, Status.COMPLETED, Status.CANCELLED):
            raise BoardError(f"a task is made pending, completed or cancelled, not {status}")
        limits = with_limits(None, checked_budget(budget)) if budget is not None else None
        blocked_by = [validate_id(b) for b in blocked_by]
        blocks = [validate_id(b) for b in blocks]
        with self._write_lock():
            self.sync()
            for ref in [*blocked_by, *blocks, *([parent] if parent else [])]:
                if ref not in self.graph.tasks:
                    self._fresh(ref)  # raises TaskNotFound naming it
            if task_id is None:
                task_id = self._new_task_id()
            elif self._on_board(validate_id(task_id)):
                raise BoardError(f"task {task_id} already exists")
            overlap = set(blocked_by) & set(blocks)
            if overlap:
                raise GraphError(f"a task cannot both block and be blocked by #{sorted_ids(overlap)[0]} (that is a cycle)")
            for dependent in blocks:
                # new -> blocks dependent; blocked_by -> new; a cycle needs dependent to reach a blocker
                for blocker in blocked_by:
                    path = self.graph.path_between(blocker, dependent)
                    if path is not None:
                        cycle = [dependent, task_id, *path]
                        raise GraphError("refused: that would create a dependency cycle " + " -> ".join(f"#{t}" for t in cycle))
            task = task_from_dict(
                {
                    "id": task_id,
                    "subject": subject,
                    "description": description,
                    "activeForm": active_form,
                    "blockedBy": blocked_by,
                    "blocks": blocks,
                    "priority": str(priority),
                    "parent": parent,
                    "files": list(files),
                    "labels": list(labels),
                    "owner": owner,
                    "metadata": metadata or {},
                    "budget": limits.model_dump() if limits is not None else None,
                    "status": str(status),
                },
                f"new task '{shortened(str(subject))}'",
            )
            # A board whose files give ids as integers (seed 001's) gets integer ids from board too.
            task.integer_ids = task.id.isdigit() and any(t.integer_ids for t in self.graph.tasks.values())
            if status == Status.COMPLETED:
                task.completed_at, task.progress = self.clock(), 100
            created = self._commit(None, task, "create", actor)
            self._note_id_issued(created.id)
            for blocker in blocked_by:
                self._link_side(blocker, "blocks", created.id, actor)
            for dependent in blocks:
                self._link_side(dependent, "blocked_by", created.id, actor)
            return created

    # -- dependencies --------------------------------------------------------------------------

    def _link_side(self, task_id: str, side: str, other: str, actor: str | None, *, add: bool = True) -> None:
        current = self._fresh(task_id)
        ids: list[str] = list(getattr(current, side))
        if (other in ids) == add:
            return
        draft = draft_of(current)
        setattr(draft, side, [*ids, other] if add else [i for i in ids if i != other])
        self._commit(current, draft, "link" if add else "unlink", actor)

    def add_dependency(self, task_id: str, blocker_id: str, *, actor: str | None = None) -> Task:
        """Record that ``task_id`` is blocked by ``blocker_id``, on both sides."""
        return self.link([(task_id, blocker_id)], actor=actor)[-1]

    def check_links(self, edges: Iterable[tuple[str, str]]) -> None:
        """Refuse, before anything is written, dependency edges (task, blocker) naming a missing
        task or closing a cycle, each edge judged with the ones before it added."""
        edges = list(edges)
        if edges:
            self._ensure_whole()
        added: list[tuple[str, str]] = []
        for task_id, blocker_id in edges:
            for ref in (task_id, blocker_id):
                if ref not in self.graph.tasks:
                    self._fresh(ref)  # raises TaskNotFound naming it
            cycle = _cycle_through(self.graph, added, task_id, blocker_id)
            if cycle is not None:
                raise GraphError("refused: that would create a dependency cycle " + " -> ".join(f"#{t}" for t in cycle))
            added.append((task_id, blocker_id))

    def link(self, edges: Iterable[tuple[str, str]], *, actor: str | None = None) -> list[Task]:
        """Add dependency edges (task, blocker) on both sides: all of them, or none."""
        self._ensure_whole()
        edges = list(edges)
        with self._write_lock():
            self.sync()
            for task_id, blocker_id in edges:
                self._fresh(task_id)
                self._fresh(blocker_id)
            self.check_links(edges)
            for task_id, blocker_id in edges:
                self._link_side(task_id, "blocked_by", blocker_id, actor)
                self._link_side(blocker_id, "blocks", task_id, actor)
            return [self.graph.tasks[task_id] for task_id, _ in edges]

    def remove_dependency(self, task_id: str, blocker_id: str, *, actor: str | None = None) -> Task:
        self._ensure_whole()
        with self._write_lock():
            self.sync()
            self._link_side(task_id, "blocked_by", blocker_id, actor, add=False)
            if blocker_id in self.graph.tasks:
                self._link_side(blocker_id, "blocks", task_id, actor, add=False)
            return self.graph.tasks[task_id]

    # -- fields and status ---------------------------------------------------------------------

    #: Plain fields ``update`` (and a status move, in the same write) may set.
    PLAIN_FIELDS = frozenset({"subject", "description", "active_form", "owner", "priority", "parent", "files", "labels", "progress", "error", "metadata", "question", "answer", "budget"})

    def update(self, task_id: str, *, actor: str | None = None, expected_version: int | Seen | None = None, token: int | None = None, force: bool = False, **fields: Any) -> Task:
        """Change plain fields (subject, description, owner, priority, progress, files, metadata...)."""
        fields = self._checked_fields(fields)
        return self.mutate(task_id, lambda task: self._apply_fields(task, fields), op="update", actor=actor, expected_version=expected_version, token=token, force=force)

    def _checked_fields(self, fields: Mapping[str, Any] | None) -> dict[str, Any]:
        fields = dict(fields or {})
        if "parent" in fields:
            self._ensure_whole()  # a new parent is checked against every ancestor
        unknown = set(fields) - self.PLAIN_FIELDS
        if unknown:
            raise BoardError(f"cannot set {', '.join(sorted(unknown))} with update (status and dependencies have their own commands)")
        if "budget" in fields:
            fields["budget"] = checked_budget(fields["budget"])
        if "priority" in fields:
            try:
                fields["priority"] = Priority(fields["priority"])
            except ValueError:
                raise BoardError(f"unknown priority '{shortened(str(fields['priority']))}'; use one of {', '.join(p.value for p in Priority)}") from None
        return fields

    def _apply_fields(self, task: Task, fields: Mapping[str, Any]) -> None:
        parent = fields.get("parent")
        if parent is not None:
            if parent == task.id:
                raise GraphError(f"task {task.id} cannot be its own parent")
            if parent not in self.graph.tasks:
                self._fresh(parent)  # raises TaskNotFound naming it
            above, seen = parent, set()
            while above is not None and above not in seen:
                if above == task.id:
                    raise GraphError(f"refused: #{parent} is already below #{task.id}, so it cannot be its parent")
                seen.add(above)
                above = self.graph.tasks[above].parent if above in self.graph.tasks else None
        for name, value in fields.items():
            if name == "budget":
                value = with_limits(task.budget, value)
            setattr(task, name, value)

    def set_status(
        self,
        task_id: str,
        status: Status | str,
        *,
        actor: str | None = None,
        expected_version: int | Seen | None = None,
        token: int | None = None,
        error: str | None = None,
        reason: str | None = None,
        force: bool = False,
        owner: str | None = None,
        lease_seconds: float | None = None,
        fields: Mapping[str, Any] | None = None,
    ) -> Task:
        """Move a task along the status machine; illegal moves are refused with the allowed ones.

        ``owner`` and ``lease_seconds`` apply to a move into ``in_progress`` (see ``_apply_status``);
        ``fields`` are plain fields set in the same write.
        """
        self._ensure_whole()
        target = _status(status)
        fields = self._checked_fields(fields)

        def change(task: Task) -> None:
            if target == Status.IN_PROGRESS and task.status == Status.PENDING:
                self._refresh_blockers(task)
            self._apply_fields(task, {k: v for k, v in fields.items() if k != "owner"})
            self._apply_status(task, target, error=error, owner=owner or fields.get("owner"), lease_seconds=lease_seconds)
            if "progress" in fields and target != Status.COMPLETED:
                task.progress = fields["progress"]

        op = f"status:{target}" if reason is None else f"status:{target} ({reason})"
        return self.mutate(task_id, change, op=op, actor=actor, expected_version=expected_version, token=token, force=force)

    def _refresh_blockers(self, task: Task) -> None:
        """Under the lock, before a start: read the blockers from disk, so a person or an agent
        never starts a task on an index that missed an outside writer's change to them."""
        for blocker in task.blocked_by:
            try:
                self._fresh(blocker)
            except TaskNotFound:
                continue
            except BoardError:
                continue  # an unreadable blocker file stays as the index knew it

    def apply_status(self, task: Task, target: Status, *, error: str | None = None) -> None:
        """Apply a status change to a draft inside ``mutate`` (for writes that change more)."""
        self._apply_status(task, target, error=error)

    def _apply_status(
        self, task: Task, target: Status, *, error: str | None = None, owner: str | None = None, lease_seconds: float | None = None, ready_known: bool = False
    ) -> None:
        """Every status change goes through here: the transition table, readiness, an owner for
        work in progress, and each status's side effects, in one place no writer can skip.
        ``ready_known``: the store established readiness itself (a database's claim picks only
        ready tasks, under their row lock)."""
        check_transition(task.status, target)
        self._enter_status(task, target, error=error, owner=owner, lease_seconds=lease_seconds, ready_known=ready_known)

    def _enter_status(
        self, task: Task, target: Status, *, error: str | None = None, owner: str | None = None, lease_seconds: float | None = None, ready_known: bool = False
    ) -> None:
        now = self.clock()
        if task.policy is not None and not task.policy.settled:
            task.policy.settled = True  # the status is no longer the policy's doing
        if target == Status.IN_PROGRESS:
            if task.status == Status.PENDING and not ready_known:
                why = self.graph.why_not_ready(task)
                if why:
                    raise NotReady(f"task {task.id} is not ready: {why}")
            owner = owner or task.owner
            if not owner:
                raise BoardError(f"task {task.id} needs an owner to be in progress: say who works on it (", Option("owner", metavar="NAME"), ")")
            task.owner = owner
            task.started_at = task.started_at or now
            task.error = None
            if lease_seconds is not None:
                token = task.version + 1
                asked = task.lease if task.status == Status.WAITING else None
                if asked is not None and asked.owner == owner:
                    token = asked.token  # answered: the agent that asked goes on with the lease it held
                task.lease = Lease(owner=owner, token=token, expires_at=now + timedelta(seconds=lease_seconds), seconds=lease_seconds)
            else:
                task.lease = None  # a person's work: theirs until they change it
        elif target == Status.WAITING and task.lease is not None:
            pass  # kept, not renewed, while a person answers: the task goes back to the same holder
        else:
            task.lease = None
        task.status = target
        if target == Status.COMPLETED:
            task.completed_at = now
            task.progress = 100
            task.error = None
        elif target == Status.PENDING:
            task.owner = ""
            task.error = None
            task.completed_at = None
            task.started_at = None  # the next start is a new one: its age counts from then
        elif target == Status.FAILED:
            task.error = error or task.error or "failed"
        if target == Status.WAITING:
            task.asked_at = now
            task.answer = None  # a new question; the last one's answer is in history

    # -- deleting ------------------------------------------------------------------------------

    def delete(self, task_id: str, *, actor: str | None = None, token: int | None = None, force: bool = False, expected_version: int | Seen | None = None) -> Task:
        """Move a task to the archive, from where ``restore`` brings it back. Every other task's
        reference to it goes with it (each unlink in history), so nothing waits on a task that
        is gone; a live lease fences a delete like any change to the task."""
        self._ensure_whole()
        with self._write_lock():
            self.sync()
            removed = self.removed_by_claude_code(task_id)
            if removed is not None:
                # Claude Code deleted its file already: nothing waits on it; it leaves the board.
                self._archive(removed, actor, False)
                return removed
            current = self._fresh(task_id)
            if isinstance(expected_version, Seen) and expected_version.differs(current):
                raise VersionConflict(f"task {task_id} changed since you pressed the key ({expected_version.differs(current)}); nothing was done")
            if isinstance(expected_version, int) and current.version != expected_version:
                raise VersionConflict(f"task {task_id} changed underneath you: you expected version {expected_version}, it is at {current.version}")
            forced = False
            if token is not None:
                _check_fence(current, token)
            elif self.lease_is_live(current):
                if not force:
                    raise _lease_held(current, "delete it")
                forced = True
            waiting = sorted_ids(self.graph.dependents(task_id) | {d for d in current.blocks if d in self.graph.tasks})
            children = sorted_ids(child.id for child in self.graph.children(task_id))
            if (waiting or children) and not force:
                parts = []
                if waiting:
                    parts.append(f"{', '.join('#' + t for t in waiting)} {'waits' if len(waiting) == 1 else 'wait'} on it")
                if children:
                    parts.append(f"{', '.join('#' + t for t in children)} {'is its sub-task' if len(children) == 1 else 'are its sub-tasks'}")
                raise BoardError(
                    f"task {task_id} is not deleted: {' and '.join(parts)}; a person can delete it anyway with ", Option("force", flag=True, person_only=True),
                    " (those links are dropped on both sides)",
                )
            for dependent in sorted_ids(self.graph.dependents(task_id) | {d for d in current.blocks if d in self.graph.tasks}):
                if self._writable(dependent):
                    self._link_side(dependent, "blocked_by", task_id, actor, add=False)
            for blocker in current.blocked_by:
                if self._writable(blocker):
                    self._link_side(blocker, "blocks", task_id, actor, add=False)
            for child in self.graph.children(task_id):
                fresh = self._fresh(child.id)
                draft = draft_of(fresh)
                draft.parent = None
                self._commit(fresh, draft, "unlink", actor)
            current = self._fresh(task_id)
            self._archive(current, actor, forced)
            return current

    def restore(self, task_id: str, *, actor: str | None = None) -> Task:
        """Bring a deleted task back from the archive (or a task Claude Code deleted from its
        list back into it, as board kept it), with the dependencies it had on tasks that
        still exist (unless one would now close a cycle). A task deleted while in progress comes
        back to the queue: whoever held it has stopped."""
        self._ensure_whole()
        with self._write_lock():
            self.sync()
            if self._on_board(validate_id(task_id)):
                raise BoardError(f"task {task_id} is on the board; only a deleted task can be restored")
            task = self._read_archived(task_id)
            draft = draft_of(task)
            if draft.status == Status.IN_PROGRESS:
                self._enter_status(draft, Status.PENDING)
            draft.lease = None
            # An edge to a task Claude Code deleted stays as written: Claude Code counts it done.
            draft.blocked_by = [b for b in task.blocked_by if self._deleted_by_claude_code(b) or (b in self.graph.tasks and self.graph.path_between(b, task_id) is None)]
            draft.blocks = [
                d for d in task.blocks
                if self._deleted_by_claude_code(d)
                or (d in self.graph.tasks and d not in draft.blocked_by and not any(self.graph.path_between(b, d) for b in draft.blocked_by))
            ]
            if draft.parent is not None and draft.parent not in self.graph.tasks:
                draft.parent = None
            restored = self._commit(None, draft, "restore", actor)
            for blocker in restored.blocked_by:
                if self._writable(blocker):
                    self._link_side(blocker, "blocks", task_id, actor)
            for dependent in restored.blocks:
                if self._writable(dependent):
                    self._link_side(dependent, "blocked_by", task_id, actor)
            self._drop_archived(task_id)
            return self.graph.tasks[task_id]

    def removed_by_claude_code(self, task_id: str) -> Task | None:
        """The task, if Claude Code deleted its file from its list and board keeps it as it last
        was (shown and counted, never changed but by ``restore`` or ``delete``); None otherwise.
        Only a board kept in a Claude Code list has such tasks (``board.store.files.mirror``)."""
        task = self.graph.tasks.get(task_id)
        return task if task is not None and removed_by_claude_code(task) else None

    def _deleted_by_claude_code(self, task_id: str) -> bool:
        return self.removed_by_claude_code(task_id) is not None

    def _writable(self, task_id: str) -> bool:
        """Whether a task is on the board and may be written (not one Claude Code deleted)."""
        task = self.graph.tasks.get(task_id)
        return task is not None and not removed_by_claude_code(task)

    def undo_policy(self, task_id: str, *, actor: str | None = None, lease_seconds: float = DEFAULT_LEASE_SECONDS, expected_version: int | Seen | None = None) -> Task:
        """Take back the status a policy set: the task returns to progress for the agent that
        held it (with a fresh lease, so it comes back to the queue if that agent is gone) and
        the progress it had. The one move allowed out of ``completed``, and only this way."""
        self._ensure_whole()

        def change(task: Task) -> None:
            mark = task.policy
            if mark is None or not by_policy(task):
                raise BoardError(f"task {task_id} is {task.status} by a person or its agent, not by a policy; there is nothing to undo")
            started = sorted_ids(d for d in self.graph.dependents(task_id) if self.graph.tasks[d].status != Status.PENDING)
            if task.status == Status.COMPLETED and started:
                raise BoardError(
                    f"cannot undo the completion of task {task_id}: " + ", ".join(f"#{d}" for d in started) + " already started on it"
                )
            progress = mark.progress
            task.completed_at = None
            leased = mark.owner and mark.leased  # a person's task comes back theirs, with no lease to run out
            self._enter_status(task, Status.IN_PROGRESS, owner=mark.owner or self.actor, lease_seconds=lease_seconds if leased else None)
            task.progress = progress

        return self.mutate(task_id, change, op="undo policy", actor=actor, expected_version=expected_version, force=True)

    # -- claims and leases ---------------------------------------------------------------------

    def _check_holding(self, agent: str, max_held: int | None) -> None:
        if max_held is not None:
            _refuse_if_holding(agent, self.held_by(agent), max_held)

    def claim_task(self, task_id: str, agent: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS, actor: str | None = None) -> Task:
        """Give one specific ready task to ``agent``, with a lease it must renew (assignment)."""
        _check_agent(agent)
        return self.start(task_id, agent, lease_seconds=lease_seconds, actor=actor or agent, op="claim")

    def start(
        self,
        task_id: str,
        owner: str,
        *,
        lease_seconds: float | None = None,
        actor: str | None = None,
        expected_version: int | Seen | None = None,
        op: str = "status:in_progress",
        force: bool = False,
        fields: Mapping[str, Any] | None = None,
    ) -> Task:
        """Put a task in progress for ``owner``: a ready pending task, or resume a paused, blocked
        or waiting one. With ``lease_seconds`` the owner must heartbeat (an agent); without, the
        task stays theirs until they change it (a person)."""
        self._ensure_whole()
        fields = self._checked_fields(fields)

        def change(task: Task) -> None:
            if task.status == Status.PENDING:
                self._refresh_blockers(task)
            self._apply_fields(task, {k: v for k, v in fields.items() if k != "owner"})
            self._apply_status(task, Status.IN_PROGRESS, owner=owner, lease_seconds=lease_seconds)

        return self.mutate(task_id, change, op=op, actor=actor, expected_version=expected_version, force=force)

    def _claim_locked(self, task: Task, agent: str, lease_seconds: float, actor: str | None) -> Task:
        return self._commit(task, self._claimed(task, agent, lease_seconds), "claim", actor or agent)

    def _claimed(self, task: Task, agent: str, lease_seconds: float) -> Task:
        """A draft of ``task`` claimed by ``agent``, with a lease."""
        draft = draft_of(task)
        self._apply_status(draft, Status.IN_PROGRESS, owner=agent, lease_seconds=lease_seconds)
        return draft

    def held_by(self, agent: str) -> list[Task]:
        self._ensure_whole()
        return [t for t in self.graph.tasks.values() if t.status == Status.IN_PROGRESS and t.owner == agent and not removed_by_claude_code(t)]

    def heartbeat(self, agent: str, *, lease_seconds: float | None = None) -> list[Task]:
        """Renew every lease ``agent`` holds, each by its own length (or by ``lease_seconds``,
        which becomes the lease's new length); returns the renewed tasks."""
        _check_agent(agent)
        # A store opened for one command reads only the tasks the board's index of work in
        # progress says the agent holds; each is read fresh and checked under the lock.
        held = self._held_by(agent) if self._partial else None
        if held is None:
            self._ensure_whole()
        renewed = []
        with self._write_lock():
            self.sync()
            if held is None:
                held = [t.id for t in self.graph.tasks.values() if t.lease is not None and t.lease.owner == agent and not removed_by_claude_code(t)]
            for task_id in held:
                try:
                    fresh = self._fresh(task_id)
                except BoardUnavailable:
                    raise  # the board itself (its database) failed the read: nothing was renewed
                except BoardError:  # gone, its file broken, or deleted by Claude Code: nothing to renew
                    continue
                if fresh.lease is None or fresh.lease.owner != agent or fresh.status != Status.IN_PROGRESS or removed_by_claude_code(fresh):
                    continue
                renewed.append(self._commit(fresh, self._renewed(fresh, lease_seconds), "heartbeat", agent))
        return renewed

    def read_around(self, *task_ids: str) -> None:
        """Read into the index the tasks named and what the rules need to judge them (their
        blockers, their sub-tasks down the tree), from indexes where the store keeps them, else
        the whole board. A task named that is not on the board is left out."""
        self._ensure_whole()

    def read_ready(self) -> list[str] | None:
        """Read into the index the tasks an index kept in step with the store's writes holds
        for ready, with what the rules need to judge them (``read_around``), for a command that
        lists them without reading the board; their ids, each still to be judged by the rules
        (the index may hold one no longer ready). None where the store keeps no such index."""
        return None

    def _held_by(self, agent: str) -> list[str] | None:
        """The tasks ``agent`` holds, from an index kept in step with every write, without
        reading the board; None where the store keeps no such index."""
        return None

    def renew_lease(self, task_id: str, token: int, *, actor: str | None = None, unexpired: bool = False, lease_seconds: float | None = None) -> Task:
        """Extend one lease by its own length, fenced on the token: ``StaleLease`` once the
        task moved on to another holder (or out of progress). With ``unexpired``, also once
        the lease ran out, taken back or not: a task about to be started must not run on a
        lease the coordinator may already be reclaiming. ``lease_seconds`` becomes the
        lease's new length."""

        def change(task: Task) -> None:
            assert task.lease is not None  # the fence check ran first
            if unexpired and task.lease.expires_at <= self.clock():
                raise StaleLease(f"the lease on task {task_id} ran out at {_iso(task.lease.expires_at.replace(microsecond=0))}")
            renewed = self._renewed(task, lease_seconds)
            task.lease = renewed.lease

        return self.mutate(task_id, change, op="heartbeat", actor=actor, token=token)

    def _renewed(self, task: Task, lease_seconds: float | None) -> Task:
        draft = draft_of(task)
        assert draft.lease is not None
        seconds = lease_seconds or draft.lease.seconds or DEFAULT_LEASE_SECONDS
        draft.lease.expires_at = self.clock() + timedelta(seconds=seconds)
        draft.lease.seconds = seconds
        return draft

    def release(
        self, task_id: str, *, actor: str | None = None, token: int | None = None, reason: str = "released", force: bool = False,
        fields: Mapping[str, Any] | None = None, expected_version: int | Seen | None = None,
    ) -> Task:
        """Give an in-progress task back to the pool (owner cleared, lease dropped)."""
        fields = self._checked_fields(fields)

        def change(task: Task) -> None:
            if task.status != Status.IN_PROGRESS:
                raise BoardError(f"task {task_id} is {task.status}, not in_progress; only a task being worked on can be released")
            self._apply_fields(task, {k: v for k, v in fields.items() if k != "owner"})
            self._apply_status(task, Status.PENDING)

        return self.mutate(task_id, change, op=f"release ({reason})", actor=actor, token=token, force=force, expected_version=expected_version)

    def reclaim_expired(self, *, actor: str = "coordinator", margin: timedelta = timedelta(0)) -> list[Task]:
        """Take back in-progress tasks whose lease ran out ``margin`` ago (time for a holder cut
        off from the board to have stopped its work); history records who went silent."""
        self._ensure_whole()
        reclaimed = []
        with self._write_lock():
            self.sync()
            now = self.clock() - margin
            for task in list(self.graph.tasks.values()):
                if task.status != Status.IN_PROGRESS or task.lease is None or task.lease.expires_at > now or removed_by_claude_code(task):
                    continue
                fresh = self._fresh(task.id)
                if fresh.status != Status.IN_PROGRESS or fresh.lease is None or fresh.lease.expires_at > now:
                    continue
                draft = draft_of(fresh)
                silent = fresh.lease.owner
                self._apply_status(draft, Status.PENDING)
                reclaimed.append(
                    self._commit(fresh, draft, "reclaim", actor, {"reason": f"lease of {silent} expired at {_iso(fresh.lease.expires_at.replace(microsecond=0))}"})
                )
        return reclaimed

    # -- repairs -------------------------------------------------------------------------------

    def repair_symmetry(self, *, actor: str | None = None) -> list[str]:
        """Write the missing side of one-sided edges; returns what was fixed.

        An edge present on either side is kept (it is the safer reading: the dependent waits),
        unless adding it would close a cycle, in which case it is reported, not written.
        """
        self._ensure_whole()
        fixed = []
        with self._write_lock():
            self.sync()
            self.rescan()
            for task in list(self.graph.tasks.values()):
                for blocker in task.blocked_by:
                    if blocker in self.graph.tasks and task.id not in self.graph.tasks[blocker].blocks:
                        self._link_side(blocker, "blocks", task.id, actor)
                        fixed.append(f"#{blocker} now lists #{task.id} in blocks")
                if task.status == Status.COMPLETED:
                    continue  # a completed blocker dropped from blockedBy: seed 001's unblocking, not a broken edge
                for dependent in task.blocks:
                    other = self.graph.tasks.get(dependent)
                    if other is not None and task.id not in other.blocked_by:
                        if self.graph.cycle_if_added(dependent, task.id) is None:
                            self._link_side(dependent, "blocked_by", task.id, actor)
                            fixed.append(f"#{dependent} now lists #{task.id} in blockedBy")
        return fixed

    # -- tool calls ----------------------------------------------------------------------------

    def record_toolcall(
        self,
        task_id: str,
        tool: str,
        *,
        ok: bool = True,
        ms: int | None = None,
        files: Iterable[str] = (),
        agent: str | None = None,
        token: int | None = None,
        progress: int | None = None,
    ) -> Task:
        """Count a tool call on the task (and, optionally, set its progress).

        The call is a line appended to the task's log, without the lock: readers count it
        (``_count_logged_calls``). A call made with a lease token is refused once that lease is
        gone, like any fenced write. Progress is a write of the task, which stores the counts.
        """
        if agent is not None:
            _check_agent(agent)
        check_tool_name(tool)
        if progress is not None and not 0 <= progress <= 100:
            raise BoardError(f"progress must be 0-100, not {progress}")
        current = self._fresh(task_id)
        if token is not None:
            _check_fence(current, token)
        record = call_record(ts=_iso(self.clock()), agent=agent or current.owner or self.actor, tool=tool, ok=ok, task=task_id, files=files, ms=ms)
        self._append_call(record)
        if progress is not None:
            # A write of the task: it stores the counts, this call's included.
            return self.mutate(task_id, lambda task: setattr(task, "progress", progress), op="toolcall", actor=agent, token=token)
        self._reread_ids([task_id])
        return self.get(task_id)

    # -- what a backend provides ------------------------------------------------------------
    # Each backend (board.store.files, board.store.postgres) implements these; a class that
    # leaves one out cannot be made.

    @abstractmethod
    def load(self) -> None:
        """Read the whole board from scratch into the index."""
        ...

    @abstractmethod
    def sync(self) -> ChangeSet:
        """Catch up with writes made since the last look, by any process."""
        ...

    @abstractmethod
    def rescan(self) -> ChangeSet:
        """Reconcile the index with the board, including writers that bypass the store."""
        ...

    @abstractmethod
    def reread(self, paths: Iterable[Path]) -> ChangeSet:
        """Re-read what a watcher saw change."""
        ...

    @abstractmethod
    def _reread_ids(self, task_ids: Iterable[str] | None) -> ChangeSet:
        """Re-read the named tasks into the index (None: every task, from scratch)."""
        ...

    def unreadable_tasks(self) -> dict[str, str]:
        """Tasks on the board whose file (or row) cannot be read, by id: why, for each."""
        found = {}
        for where, reason in self.invalid.items():
            task_id = self.layout.task_id_for(Path(where))
            if task_id is not None:
                found[task_id] = reason
        return found

    def get(self, task_id: str) -> Task:
        """The task as this store's index holds it; a store opened for part of the board reads it
        first. ``TaskNotFound`` when there is none, a ``BoardError`` saying why when its record
        cannot be read."""
        task = self.graph.tasks.get(task_id)
        if task is None and self._partial:
            try:
                validate_id(task_id)  # it names a file, or a row
            except ValueError:
                raise TaskNotFound(task_id) from None
            self._read_one(task_id)
            task = self.graph.tasks.get(task_id)
        if task is None:
            reason = self.invalid.get(str(self.layout.task_path(task_id)))
            if reason is not None:
                raise BoardError(f"task {task_id} cannot be read: {self.layout.task_path(task_id)}: {reason}")
            raise TaskNotFound(task_id)
        return task

    @abstractmethod
    def _read_one(self, task_id: str) -> None:
        """Read one task (a valid id) into the index, for a store opened for part of the board."""
        ...

    @abstractmethod
    def close(self) -> None:
        """Let go of what this store holds open; the store stays usable."""
        ...

    @abstractmethod
    def history(self, task_id: str | None = None) -> list[dict[str, Any]]:
        ...

    @abstractmethod
    def toolcalls(self, task_id: str) -> list[dict[str, Any]]:
        ...

    @abstractmethod
    def touching_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """Every logged tool call on a task that names files, as (task id, record), oldest first
        per task (the alert detectors' touches); each call reads on from the last, and the
        records already read are the same objects each time."""
        ...

    @abstractmethod
    def recent_history(self, ops: frozenset[str]) -> list[dict[str, Any]]:
        """The newest history lines whose ``op`` is one of ``ops``, oldest first (the alert
        detectors' claims, reclaims and conflicts); each call reads on from the last."""
        ...

    @abstractmethod
    def history_mark(self) -> int:
        """Where history ends now; ``history_since`` gives what was logged after it."""
        ...

    @abstractmethod
    def history_since(self, mark: int) -> tuple[list[dict[str, Any]], int]:
        """The history lines logged after ``mark``, and the mark to read on from."""
        ...

    @abstractmethod
    def claim(self, agent: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS, max_held: int | None = 1, actor: str | None = None) -> Task | None:
        """Atomically take the best ready task for ``agent`` (priority, then the longest
        remaining critical path, then id), or None when nothing is ready."""
        ...

    @abstractmethod
    def check(self) -> list[Problem]:
        """Everything stored that breaks the format or the dependency rules."""
        ...

    @abstractmethod
    def _write_lock(self, *, make_temp: bool = True) -> AbstractContextManager[None]:
        """Hold the board exclusively: no other writer changes it until this ends."""
        ...

    @abstractmethod
    def _fresh(self, task_id: str) -> Task:
        """The task as it is stored now, read under ``_write_lock``; ``TaskNotFound`` if gone."""
        ...

    @abstractmethod
    def _commit(self, old: Task | None, new: Task, op: str, actor: str | None, extra: dict[str, Any] | None = None) -> Task:
        """Write ``new`` as the next version of ``old`` (None: a new task) and its history line."""
        ...

    @abstractmethod
    def _log(self, task_id: str, version: int, actor: str | None, op: str, changes: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        """A history line that changes no task (a refused write, an outside edit)."""
        ...

    @abstractmethod
    def _on_board(self, task_id: str) -> bool:
        ...

    @abstractmethod
    def _new_task_id(self) -> str:
        """An id no task has or had (a deleted task's id is never reused)."""
        ...

    @abstractmethod
    def _note_id_issued(self, task_id: str) -> None:
        ...

    @abstractmethod
    def _archive(self, current: Task, actor: str | None, forced: bool) -> None:
        """Take the task off the board into the archive, and log its deletion."""
        ...

    @abstractmethod
    def _read_archived(self, task_id: str) -> Task:
        ...

    @abstractmethod
    def _drop_archived(self, task_id: str) -> None:
        ...

    @abstractmethod
    def _append_call(self, record: dict[str, Any]) -> None:
        """Log one tool call (``board.toolcall_log.call_record``) on its task and agent."""
        ...

    # -- where the board is, and what keeps other readers' work in step ------------------------

    #: Where the board is: its workspace, its folders, where a task is kept and back.
    layout: BoardPlace

    @property
    def state_dir(self) -> Path:
        """board's own files for this board (history, tool-call logs, agents...), or for a
        board kept elsewhere this machine's share of them (what ``board hook`` reads)."""
        return self.layout.state_dir

    @property
    def local_dir(self) -> Path:
        """This machine's files for the workspace (board.toml, git state, coordinator lock, logs)."""
        return self.layout.state_dir

    def read_files(self, files: Iterable[tuple[str, str]]) -> ChangeSet:
        """Read the named tasks, as (id, where) pairs as a board's files list them, into the
        index; a backend without files reads the tasks by id."""
        return self._reread_ids([task_id for task_id, _ in files])

    @abstractmethod
    def start_reading(self) -> None:
        """Begin reading the whole board a page at a time (``read_more``), for a reader that shows
        what it has read while it reads the rest (the dashboard)."""
        ...

    @abstractmethod
    def read_more(self, limit: int) -> tuple[ChangeSet, bool]:
        """The next ``limit`` tasks into the index, and whether the whole board is now read."""
        ...

    def kept_in(self) -> str:
        """Where the board is kept, in a few words for a title, when it is not in the
        workspace's own files ("" when it is)."""
        return ""

    def reread_tasks(self, task_ids: Iterable[str]) -> ChangeSet:
        """Re-read the named tasks into the index (what a follower heard changed)."""
        return self._reread_ids(task_ids)

    def reload(self) -> ChangeSet:
        """Read the whole board again (after a time in which changes went unheard)."""
        return self._reread_ids(None)

    def logged_task_paths(self, paths: Iterable[Path]) -> set[Path]:
        """The task files whose tool-call logs are among ``paths`` (a watcher's changed files);
        none where calls are not logged in files."""
        return set()

    @abstractmethod
    def sync_tool_calls(self) -> ChangeSet:
        """Re-read the tasks in progress whose logged calls moved (calls write no history)."""
        ...

    @abstractmethod
    def refresh_active(self) -> bool:
        """Rebuild ``active.json`` (who works on what, for ``board hook``) from the whole
        board when it differs; True if rewritten."""
        ...

    def remove_stray_temp_files(self) -> list[Path]:
        """Remove temp files no live writer can still be using; returns what was removed.
        A board that is not kept in files leaves none."""
        return []

    @abstractmethod
    def follow(self, *, stop: threading.Event, every: float = 2.0, guard: AbstractContextManager[object] | None = None) -> Iterator[BoardNews]:
        """Follow the board until ``stop`` is set: what any writer changes (in files, writers
        that bypass the store too) read into the index, under ``guard`` when given (the lock
        the store's other users take), and handed out in batches; one at least every
        ``every`` seconds, empty when nothing happened. Events a watcher may have missed are
        made up for by a reconcile; a board out of reach is said once, and read whole again
        when it is back."""
        ...

    @abstractmethod
    def lifetime_lock(self, name: str) -> HeldLock:
        """The lock called ``name`` on this board (``coordinator``: the one coordinator's),
        which one process at a time holds, for as long as it lives."""
        ...

    def serve_hooks(self) -> int:
        """Bring in what ``board hook`` on this machine left for a board it cannot write
        itself; returns the number of calls brought in. A board in files needs nothing: the
        hook writes beside it."""
        return 0

    # -- side state: what a board keeps beside its tasks (board.store.side) -----------------

    #: The agent registry and which agent names live processes hold.
    agent_records: AgentRecords
    #: File reservations, every holder of every reserved path.
    reservation_book: ReservationBook
    #: Checkpoints by task and sequence number.
    checkpoint_book: CheckpointBook
    #: The current alerts, replaced as a whole.
    alert_board: AlertBoard
    #: What was told a person (``board.notify``), each notice once.
    notice_journal: NoticeJournal

    @abstractmethod
    def alert_board_of_its_own(self) -> AlertBoard:
        """The alerts, for a thread that reads them beside the store's own users without its
        lock (a dashboard's alerts follower): on a connection of its own where there is one."""
        ...


# What the side-state attributes above are (kept at the end, beside them).
from board.store.side import AgentRecords, AlertBoard, CheckpointBook, NoticeJournal, ReservationBook  # noqa: E402
