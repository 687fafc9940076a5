"""Gather what the detectors need from a board, run them, and keep the board's alerts current.

``refresh_alerts`` is what the coordinator calls once per tick and what ``board alerts`` runs;
``read_alerts`` is for readers (the dashboard). The store keeps the current alerts
(``store.alert_board``; in a board's files, ``alerts.json``). Reading is incremental where it
can be (tool calls and history are append-only, file hashes are cached by stat), so a tick on a
quiet board costs a ``git status`` and a few stats.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from board.alerts.detectors import (
    ActiveTasks,
    BrokenHooks,
    CheckpointHashes,
    IdleMember,
    InvalidFile,
    Touch,
    active_tasks,
    detect_broken_hooks,
    detect_budgets,
    detect_silent_holders,
    SilentHolder,
    detect_dirty,
    detect_expired_leases,
    detect_external_changes,
    detect_failing_agents,
    detect_file_conflicts,
    detect_merge_conflicts,
    detect_force_push,
    detect_graph_problems,
    detect_idle_with_task,
    detect_invalid_files,
    detect_reservation_conflicts,
    detect_upstream_drift,
    detect_waiting,
    detect_write_conflicts,
    detect_cancelled_blockers,
    held_files,
)
from board.agent_record import AgentRecord
from board.agents import list_agents
from board.alerts.model import Alert
from board.budgets import BudgetState, SpendReader, budget_states
from board.checkpoints import hash_file, latest_checkpoint
from board.config import BoardSettings
from board.gitstate import GitState, GitUnavailable, gather_git_state, last_fetched_at
from board.graph import GraphProblem, TaskGraph
from board.model import Task
from board.status import Status
from board.reservations import Reservation, active_reservations
from board.store import Store
from board.store.layout import BoardPlace
from board.store.side import AgentRecords, AlertBoard, CheckpointBook, ReservationBook
from board.times import iso, parse_time
from board.workspace_files import workspace_file

#: History ops the detectors read; the rest of the log is skipped.
HISTORY_OPS = frozenset({"conflict", "reclaim", "claim"})
_RACY_SECONDS = 2.0


class BoardReading(Protocol):
    """What ``gather_inputs`` reads of a board: a ``Store``, or a copy of its index taken under
    the store's lock so the slow part runs without holding up the store's other users."""

    # Read-only: a store's are properties, and a copy's may be too.
    @property
    def layout(self) -> BoardPlace: ...
    @property
    def state_dir(self) -> Path: ...
    @property
    def tasks(self) -> Mapping[str, Task]: ...
    @property
    def invalid(self) -> Mapping[str, str]: ...
    @property
    def agent_records(self) -> AgentRecords: ...
    @property
    def reservation_book(self) -> ReservationBook: ...
    @property
    def checkpoint_book(self) -> CheckpointBook: ...
    @property
    def graph(self) -> TaskGraph: ...

    def recent_history(self, ops: frozenset[str]) -> list[dict[str, Any]]: ...

    def touching_calls(self) -> list[tuple[str, dict[str, Any]]]: ...


@dataclass
class AlertInputs:
    """Everything the detectors look at, as plain data."""

    tasks: Mapping[str, Task]
    graph_problems: list[GraphProblem] = field(default_factory=list)
    task_files: Mapping[str, str] = field(default_factory=dict)
    invalid: list[InvalidFile] = field(default_factory=list)
    reservations: list[Reservation] = field(default_factory=list)
    touches: list[Touch] = field(default_factory=list)
    git: GitState | None = None
    checkpoints: Mapping[str, CheckpointHashes] = field(default_factory=dict)
    current_hashes: Mapping[str, str | None] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    #: Claude Code team members working on the board that are idle now.
    idle_members: list[IdleMember] = field(default_factory=list)
    #: board's hooks in Claude Code's settings whose command cannot run.
    broken_hooks: list[BrokenHooks] = field(default_factory=list)
    #: Agents not heard from lately while a task is leased to them.
    silent_holders: list[SilentHolder] = field(default_factory=list)
    #: The registered agents by name (where an answer sends a waiting task depends on its owner's).
    agents: Mapping[str, AgentRecord] = field(default_factory=dict)
    #: What each active task with a budget, and each working agent with one, has spent.
    task_budgets: Mapping[str, BudgetState] = field(default_factory=dict)
    agent_budgets: Mapping[str, BudgetState] = field(default_factory=dict)


def detect_all(inputs: AlertInputs, *, now: datetime, settings: BoardSettings) -> list[Alert]:
    """Every detector over one set of inputs; one alert per key, worst first."""
    # Every detector looks at active tasks only; filtering once keeps a 10,000-task board cheap.
    tasks = ActiveTasks.of(inputs.tasks)
    holdings = held_files(tasks, inputs.touches, inputs.reservations)
    found = [
        *detect_file_conflicts(tasks, inputs.touches),
        *detect_merge_conflicts(inputs.tasks),
        *detect_reservation_conflicts(inputs.reservations, inputs.touches),
        *detect_write_conflicts(inputs.history, now, timedelta(seconds=settings.alerts.write_conflict_seconds)),
        *detect_upstream_drift(inputs.git, tasks, holdings),
        *detect_force_push(inputs.git, tasks),
        *detect_dirty(inputs.git, tasks, inputs.touches),
        *detect_external_changes(tasks, inputs.checkpoints, inputs.current_hashes, inputs.touches),
        *detect_expired_leases(inputs.history, now, timedelta(seconds=settings.lease.seconds * settings.alerts.reclaim_window_leases)),
        *detect_graph_problems(inputs.graph_problems, inputs.task_files),
        *detect_invalid_files(inputs.invalid),
        *detect_failing_agents(tasks, settings.alerts.failing_after),
        *detect_waiting(tasks, now, timedelta(seconds=settings.alerts.waiting_error_seconds), inputs.agents, settings.agent_stale_after),
        *detect_idle_with_task(tasks, inputs.idle_members),
        *detect_silent_holders(inputs.silent_holders, now),
        *detect_cancelled_blockers(inputs.tasks),
        *detect_broken_hooks(inputs.broken_hooks),
        *detect_budgets(inputs.task_budgets, inputs.agent_budgets, settings.budget.warn_at, pausing=settings.budget.pause),
    ]
    unique: dict[str, Alert] = {}
    for alert in found:
        unique.setdefault(alert.key, alert)
    return sorted(unique.values(), key=Alert.sort_key)


def gather_inputs(store: BoardReading, *, now: datetime, git: GitState | None = None, settings: BoardSettings | None = None) -> AlertInputs:
    """Read the board's files into ``AlertInputs`` (the store's index is used as it is).
    Budgets are read with ``settings`` (without, only the tasks' own, at board's prices)."""
    workspace = store.layout.workspace
    copied = getattr(store, "tasks_are_a_copy", False)
    tasks = store.tasks if copied and isinstance(store.tasks, dict) else dict(store.tasks)
    invalid = [
        InvalidFile(_relative(Path(path), workspace), reason, store.layout.task_id_for(Path(path)))
        for path, reason in store.invalid.items()
    ]
    unreadable = {item.task for item in invalid if item.task is not None}
    graph_problems = _GRAPH_PROBLEMS.problems(tasks, lambda: store.graph, unreadable, copied=True)
    named = {task_id for problem in graph_problems for task_id in problem.tasks}
    task_files = {task_id: _relative(store.layout.task_path(task_id), workspace) for task_id in named}
    touches = _TOUCHES.read(store.touching_calls(), workspace, set(tasks))
    checkpoints: dict[str, CheckpointHashes] = {}
    current: dict[str, str | None] = {}
    # One look at which tasks have checkpoints instead of one per active task: most have none.
    checkpointed = store.checkpoint_book.tasks()
    for task in active_tasks(tasks):
        if task.id not in checkpointed:
            continue
        checkpoint = latest_checkpoint(store.checkpoint_book, task.id)
        created = parse_time(checkpoint.created_at) if checkpoint else None
        if checkpoint is None or created is None:
            continue
        checkpoints[task.id] = CheckpointHashes(task.id, checkpoint.seq, created, dict(checkpoint.file_hashes))
        for path in checkpoint.file_hashes:
            if path not in current:
                current[path] = _HASHES.hash(workspace / path)
    settings = settings or BoardSettings()
    task_budgets, agent_budgets = read_budgets(store, tasks, settings)
    agents = list_agents(store.agent_records)  # read once: idle members and silent holders
    return AlertInputs(
        tasks=tasks,
        graph_problems=graph_problems,
        task_files=task_files,
        invalid=invalid,
        reservations=active_reservations(store.reservation_book, now, tasks),
        touches=touches,
        git=git,
        checkpoints=checkpoints,
        current_hashes=current,
        history=store.recent_history(HISTORY_OPS),
        idle_members=idle_team_members(store.layout, agents),
        broken_hooks=broken_hooks(workspace),
        task_budgets=task_budgets,
        agent_budgets=agent_budgets,
        silent_holders=silent_holders(tasks, agents, now, settings),
        agents={record.name: record for record in agents},
    )


def silent_holders(tasks: Mapping[str, Task], agents: list[AgentRecord], now: datetime, settings: BoardSettings) -> list[SilentHolder]:
    """Agents holding a task under a lease not yet taken back, not heard from within the
    board's stale time or stopped (an MCP server that ended keeps its agents' leases); and an agent with no record at all once
    its lease has run out (last heard: the task's last write), so that a lease nobody takes back
    is an alert whether or not a coordinator runs."""
    records = {r.name: r for r in agents}
    found = []
    for task in (t for t in tasks.values() if t.status == Status.IN_PROGRESS and t.lease is not None):
        assert task.lease is not None
        taken_back_at = task.lease.expires_at + settings.lease.reclaim_margin
        record = records.get(task.lease.owner)
        if record is None:
            if taken_back_at <= now:
                found.append(SilentHolder(task.lease.owner, task.id, task.updated_at or task.lease.expires_at, taken_back_at))
            continue
        if not record.stopped and now - record.heartbeat_at < settings.agent_stale_after:
            continue
        found.append(SilentHolder(record.name, task.id, record.heartbeat_at, taken_back_at, stopped=record.stopped))
    return found


def read_budgets(store: BoardReading, tasks: Mapping[str, Task], settings: BoardSettings) -> tuple[dict[str, BudgetState], dict[str, BudgetState]]:
    """The budget states of the board's tasks and agents (``board.budgets``), its token logs
    read again only where they changed since the last evaluation."""
    prices = settings.model_prices()
    reader = _SPEND.get(store.state_dir)
    if reader is None or reader.prices != prices:
        reader = _SPEND[store.state_dir] = SpendReader(store.state_dir, prices)
    return budget_states(tasks, reader, task_default=settings.budget.for_tasks(), agent_budget=settings.budget.for_agents())


#: One spend reader a board, kept between evaluations (a tick reads only the logs that grew).
_SPEND: dict[Path, SpendReader] = {}


def broken_hooks(workspace: Path) -> list[BrokenHooks]:
    from board.claude.hooks.install import installed_hooks

    return [BrokenHooks(str(h.settings), h.command, h.problem) for h in installed_hooks(workspace) if h.problem is not None]


def idle_team_members(layout: BoardPlace, records: list[AgentRecord]) -> list[IdleMember]:
    """The idle members of the Claude Code teams working on the board (none when no team does)."""
    from board.roster import Activity, board_teams, member_activity, member_record

    by_name = {r.name: r for r in records}
    idle = []
    for team in board_teams(layout.workspace, layout.tasks_dir, layout.name, records):
        for member in team.members:
            if member_activity(member, team, member_record(member, team, by_name)) == Activity.IDLE:
                idle.append(IdleMember(member.name, team.name, member.messageable))
    return idle


def evaluate_alerts(
    store: Store,
    *,
    now: datetime,
    settings: BoardSettings,
    previous: list[Alert] | None = None,
    git: GitState | None = None,
) -> list[Alert]:
    """The alerts that hold now; an alert already in ``previous`` keeps its ``since``.

    ``git`` is a snapshot from ``gather_git_state``; without one there are no git drift alerts
    (``drift.external_change`` compares checkpoint hashes and needs no git).
    """
    alerts = detect_all(gather_inputs(store, now=now, git=git, settings=settings), now=now, settings=settings)
    return carry_since(alerts, previous or [], now)


def carry_since(alerts: list[Alert], previous: list[Alert], now: datetime) -> list[Alert]:
    first_seen = {a.key: a.since for a in previous if a.since is not None}
    return [alert.with_since(first_seen.get(alert.key) or now) for alert in alerts]


def refresh_alerts(
    store: Store,
    *,
    now: datetime,
    settings: BoardSettings,
    fetch: bool | None = None,
    rescan: bool = True,
) -> list[Alert]:
    """Re-evaluate and store the alerts (only when they changed); the coordinator's tick.

    Git is fetched only with ``fetch=True`` or the ``git.fetch`` setting (then at most every
    ``git.fetch_interval_seconds``). When git fails or
    times out the drift alerts already on the board are kept rather than cleared. ``rescan``
    re-stats every task file to see files written behind the store's back (an editor, a
    broken tool); a caller whose file watcher already keeps the store current can skip it.
    """
    if rescan:
        store.rescan()
    previous = read_alerts(store.alert_board)
    git_failed = False
    try:
        git = gather_git_state(
            store.layout.workspace,
            store.local_dir,
            fetch=_fetch_due(store.local_dir, now, settings) if fetch is None else fetch,
            timeout=settings.git.timeout_seconds,
            now=iso(now),
        )
    except GitUnavailable:
        git, git_failed = None, True
    alerts = evaluate_alerts(store, now=now, settings=settings, previous=previous, git=git)
    if git_failed:
        kept = [a for a in previous if a.kind.startswith("drift.") and a.kind != "drift.external_change"]
        alerts = sorted([*alerts, *kept], key=Alert.sort_key)
    write_alerts(store.alert_board, alerts)
    return alerts


def _fetch_due(local_dir: Path, now: datetime, settings: BoardSettings) -> bool:
    if not settings.git.fetch:
        return False
    last = parse_time(last_fetched_at(local_dir))
    return last is None or not (timedelta(0) <= now - last < timedelta(seconds=settings.git.fetch_interval_seconds))


def write_alerts(board: AlertBoard, alerts: list[Alert]) -> bool:
    """Store ``alerts`` as the board's current alerts unless they already are; True when written."""
    return board.replace([a.to_dict() for a in alerts])


def read_alerts(board: AlertBoard) -> list[Alert]:
    """The alerts last stored; none when there are none or they cannot be read."""
    alerts = []
    for entry in board.read():
        try:
            alerts.append(Alert.from_dict(entry))
        except (KeyError, ValueError, TypeError, AttributeError):
            continue
    return alerts


def _relative(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


# -- incremental readers --------------------------------------------------------------------------


class _ToolcallTouches:
    """Touches from the tool calls the board logged (``store.touching_calls``), each record
    turned into touches once: the store hands back the same record objects every time."""

    def __init__(self) -> None:
        self._made: dict[int, tuple[dict[str, Any], list[Touch]]] = {}
        self._lock = threading.Lock()

    def read(self, calls: list[tuple[str, dict[str, Any]]], workspace: Path, task_ids: set[str]) -> list[Touch]:
        with self._lock:  # a coordinator thread and a dashboard worker may both evaluate
            touches: list[Touch] = []
            made: dict[int, tuple[dict[str, Any], list[Touch]]] = {}
            for task_id, record in calls:
                if task_id not in task_ids:
                    continue
                known = self._made.get(id(record))
                if known is None or known[0] is not record:
                    known = (record, _touches_of([record], task_id, workspace))
                made[id(record)] = known
                touches.extend(known[1])
            self._made = made  # only what is still handed out (an id is reused once its record is gone)
            return touches


def _touches_of(records: list[dict[str, Any]], task_id: str, workspace: Path) -> list[Touch]:
    found = []
    for record in records:
        files, agent, at = record.get("files"), record.get("agent"), parse_time(record.get("ts"))
        if not files or not isinstance(files, list) or not isinstance(agent, str) or at is None:
            continue
        for raw in files:
            path = workspace_file(workspace, raw)
            if path is not None:
                found.append(Touch(task_id, agent, path, at))
    return found


class _FileHashes:
    """SHA-256 of workspace files, recomputed only when a file's stat changes.

    Like git's "racy" entries: a file modified in the last ``_RACY_SECONDS`` is hashed every
    time, since a same-size rewrite within the filesystem's timestamp granularity leaves its
    stat unchanged.
    """

    def __init__(self) -> None:
        self._known: dict[Path, tuple[tuple[int, int, int], str | None]] = {}

    def hash(self, path: Path) -> str | None:
        try:
            info = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            self._known.pop(path, None)
            return None
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        cached = self._known.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        digest = hash_file(path)
        if time.time() - info.st_mtime > _RACY_SECONDS:
            self._known[path] = (stamp, digest)
        return digest


class _GraphProblemsCache:
    """``TaskGraph.problems()`` recomputed only when the board's dependency structure changed.

    Problems depend on each task's ``blockedBy``, ``blocks``, ``parent`` and whether it is
    completed alone, so progress,
    status and tool-call updates (nearly every change) reuse the last answer; the graph is asked
    for (and, from a snapshot, built) only when a recomputation is due. On a 10,000-task board
    this is most of the cost of an evaluation.
    """

    def __init__(self) -> None:
        self._tasks: dict[str, Task] = {}
        self._unreadable: set[str] = set()
        self._problems: list[GraphProblem] = []
        self._lock = threading.Lock()

    def problems(self, tasks: Mapping[str, Task], graph: Callable[[], TaskGraph], unreadable: Iterable[str] = (), *, copied: bool = False) -> list[GraphProblem]:
        """``copied``: ``tasks`` is a copy no one changes, kept as it is (not copied again)."""
        with self._lock:
            unreadable = set(unreadable)
            if not self._same_structure(tasks) or unreadable != self._unreadable:
                self._problems = graph().problems(unreadable)
            self._tasks, self._unreadable = tasks if copied and isinstance(tasks, dict) else dict(tasks), unreadable
            return list(self._problems)

    def _same_structure(self, tasks: Mapping[str, Task]) -> bool:
        if len(tasks) != len(self._tasks):
            return False
        for task_id, task in tasks.items():
            known = self._tasks.get(task_id)
            if known is task:
                continue
            if known is None or known.blocked_by != task.blocked_by or known.blocks != task.blocks or known.parent != task.parent:
                return False
            if (known.status == Status.COMPLETED) != (task.status == Status.COMPLETED):
                return False  # a completed blocker's one-sided edge is seed 001's unblocking, not a problem
        return True


_GRAPH_PROBLEMS = _GraphProblemsCache()
_TOUCHES = _ToolcallTouches()
_HASHES = _FileHashes()
