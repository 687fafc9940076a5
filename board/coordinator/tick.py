"""One coordinator tick: a deterministic function of the store, the agent registry and the clock.

A tick, in order:

1. reclaims in-progress tasks whose lease ran out (back to ``pending``, owner cleared; history
   says whose lease expired and when; the next claim gets a newer fencing token, so the silent
   holder's late writes are refused),
2. fires the seed 002 policies that ``board.toml`` turned on, and with ``[worktrees] merge =
   "auto"`` merges completed tasks' branches into their base, in dependency order,
3. assigns ready tasks to idle agents (registered, heartbeat fresh, not stopped, holding fewer
   than ``coordinator.max_tasks_per_agent``) in claim order: priority, then longest remaining
   critical path, then id,
4. writes a checkpoint for every status change it made, and
5. runs the alert detectors.

Everything it did comes back in a ``TickReport`` (for tests and the daemon's log). The tick
keeps no state between calls, so a coordinator that is killed and restarted carries on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from board import actions
from board.actions import Who
from board.agent_record import AgentRecord
from board.agents import AgentState, agent_state
from board.alerts import refresh_alerts
from board.checkpoints import write_checkpoint
from board.config import BoardSettings
from board.coordinator.processes import command_running, end_commands_of
from board.alerts.evaluate import read_budgets
from board.coordinator.policies import PolicyDecision, apply_policy, decide_budget, decide_policy
from board.errors import BoardError
from board.graph import TaskGraph, id_sort_key
from board.status import Status
from board.store import Store

COORDINATOR = "coordinator"

#: Orders ready task ids for assignment; the benchmark swaps in FIFO to compare.
AssignmentOrder = Callable[[TaskGraph, Iterable[str]], list[str]]


def critical_path_order(graph: TaskGraph, candidates: Iterable[str]) -> list[str]:
    """Priority, then longest remaining critical path, then id (SPEC section 6)."""
    return graph.claim_order(candidates)


@dataclass(frozen=True)
class Reclaim:
    task: str
    previous_owner: str
    reason: str
    #: When the lease ran out (None if unknown).
    expired_at: datetime | None = None
    #: The fencing token of the lease that ran out.
    token: int | None = None


@dataclass(frozen=True)
class Assignment:
    task: str
    agent: str
    token: int


@dataclass
class TickReport:
    """What one tick did."""

    now: datetime
    reclaimed: list[Reclaim] = field(default_factory=list)
    policies: list[PolicyDecision] = field(default_factory=list)
    assigned: list[Assignment] = field(default_factory=list)
    #: Completed tasks whose branch was merged (``[worktrees] merge = "auto"``), as lines.
    merged: list[str] = field(default_factory=list)
    #: Assignments the store refused (the task or agent changed under us), with why.
    refused: list[str] = field(default_factory=list)
    agent_states: dict[str, AgentState] = field(default_factory=dict)
    checkpoints: list[str] = field(default_factory=list)
    alerts: list[dict[str, Any]] = field(default_factory=list)
    #: False when the tick left the detectors for a later tick (``alerts`` is then empty).
    alerts_ran: bool = False

    @property
    def changed_anything(self) -> bool:
        return bool(self.reclaimed or self.policies or self.assigned or self.merged)

    @property
    def stale_agents(self) -> list[str]:
        return [name for name, state in self.agent_states.items() if state == AgentState.STALE]

    def lines(self) -> list[str]:
        """One line per action, for the coordinator's log."""
        out = [f"reclaimed #{r.task}: {r.reason}" for r in self.reclaimed]
        out += [f"#{p.task} -> {p.status}: {p.reason}" for p in self.policies]
        out += self.merged
        out += [f"assigned #{a.task} to {a.agent} (token {a.token})" for a in self.assigned]
        out += [f"not assigned: {why}" for why in self.refused]
        return out


def tick(
    store: Store,
    agents: Sequence[AgentRecord],
    settings: BoardSettings,
    now: datetime | None = None,
    *,
    order: AssignmentOrder = critical_path_order,
    checkpoints: bool = True,
    alerts: bool = True,
) -> TickReport:
    """Run one tick. ``now`` must be the store's clock reading (it defaults to it): leases are
    judged by the store's clock, agent heartbeats by ``now``.

    With ``alerts=False`` the detectors run only if this tick reclaimed a lease or fired a
    policy (the daemon uses it to keep a busy board from re-running them on every file event).
    """
    now = now or store.clock()
    report = TickReport(now=now)
    store.sync()
    store.sync_tool_calls()  # calls are logged, not written to task files: policies judge them
    store.refresh_active()  # what outside writers started or finished, for ``board hook``

    for reclaim in reclaim_expired_leases(store, settings.lease.reclaim_margin):
        report.reclaimed.append(reclaim)
        if reclaim.token is not None:
            # A command whose worker died may still run; the task is about to be handed out
            # again, and must not run twice at once. Newer leases' commands are left alone.
            end_commands_of(store.layout.workspace.resolve(), reclaim.task, up_to_token=reclaim.token)
        if checkpoints:
            _checkpoint(store, report, reclaim.task, "reclaim", reclaim.reason)

    for decision in _policy_decisions(store, settings):
        try:
            apply_policy(store, decision, now, actor=COORDINATOR)
        except BoardError as error:  # the worker finished it first: nothing to do
            report.refused.append(f"policy on #{decision.task}: {error}")
            continue
        report.policies.append(decision)
        if checkpoints:
            _checkpoint(store, report, decision.task, f"policy {decision.policy}", decision.reason)

    if settings.worktrees.merge == "auto":
        from board.worktrees.on_board import merge_completed

        merge_completed(store, now, actor=COORDINATOR, merged=report.merged, refused=report.refused, running=command_running(store.layout.workspace))

    report.agent_states = {a.name: agent_state(a, now, settings.agent_stale_after) for a in sorted(agents, key=lambda a: id_sort_key(a.name))}
    silent = _silent_agents(agents, report.reclaimed)
    live = [name for name, state in report.agent_states.items() if state != AgentState.STALE and name not in silent]
    for assignment in assign_ready_tasks(store, live, settings, order=order, refused=report.refused):
        report.assigned.append(assignment)
        if checkpoints:
            _checkpoint(store, report, assignment.task, "assign", f"assigned to {assignment.agent} by the coordinator")

    # A fresh reading: this tick's own writes are stamped after ``now`` and must count.
    if alerts or report.reclaimed or report.policies:
        report.alerts = run_alert_detectors(store, store.clock(), settings)
        report.alerts_ran = True
    return report


def reclaim_expired_leases(store: Store, margin: timedelta = timedelta(0)) -> list[Reclaim]:
    """Take back tasks whose lease ran out ``margin`` ago, with the reason the store logged."""
    holders = {t.id: t.lease.owner for t in store.tasks.values() if t.lease is not None}
    expiries = {t.id: t.lease.expires_at for t in store.tasks.values() if t.lease is not None}
    tokens = {t.id: t.lease.token for t in store.tasks.values() if t.lease is not None}
    now = store.clock() - margin
    if not any(t.status == Status.IN_PROGRESS and t.lease is not None and t.lease.expires_at <= now for t in store.tasks.values()):
        return []  # judged on the freshly synced index: no need to make every writer wait on the lock
    mark = store.history_mark()
    reclaimed = actions.reclaim_expired(store, Who(COORDINATOR), margin=margin)
    if not reclaimed:
        return []
    # One fact, one place: the reason is the one in the history line, read from where we began.
    records, _ = store.history_since(mark)
    reasons = {(str(r.get("task")), r.get("version")): str(r.get("reason", "")) for r in records if r.get("op") == "reclaim"}
    for record in records:
        lease_before = ((record.get("changes") or {}).get("lease") or [None])[0]
        if record.get("op") == "reclaim" and isinstance(lease_before, dict) and isinstance(lease_before.get("token"), int):
            tokens[str(record.get("task"))] = lease_before["token"]
    found = []
    for task in sorted(reclaimed, key=lambda t: id_sort_key(t.id)):
        reason = reasons.get((task.id, task.version)) or f"lease of {holders.get(task.id, 'its holder')} expired"
        found.append(Reclaim(task.id, holders.get(task.id, ""), reason, expiries.get(task.id), tokens.get(task.id)))
    return found




def _silent_agents(agents: Sequence[AgentRecord], reclaimed: Sequence[Reclaim]) -> set[str]:
    """Agents that let a lease run out and have not been heard from since: most likely dead.

    Their records may still look fresh (the lease and the record are renewed together, and a
    record counts as stale only a while later), so without this rule the task just taken back
    could go straight back to the agent that went silent.
    """
    last_heard = {a.name: a.heartbeat_at for a in agents}
    return {
        r.previous_owner
        for r in reclaimed
        if r.expired_at is None or r.previous_owner not in last_heard or last_heard[r.previous_owner] <= r.expired_at
    }


def _policy_decisions(store: Store, settings: BoardSettings) -> list[PolicyDecision]:
    decisions: list[PolicyDecision | None] = []
    if settings.policies.block_after_failures or settings.policies.complete_after_successes:
        decisions = [decide_policy(task, settings) for task in store.tasks.values()]
    if settings.budget.pause:
        decided = {d.task for d in decisions if d is not None}
        by_task, by_agent = read_budgets(store, store.tasks, settings)
        for task_id in by_task.keys() | {t.id for t in store.tasks.values() if t.owner in by_agent}:
            task = store.tasks[task_id]
            if task_id not in decided:
                decisions.append(decide_budget(task, by_task.get(task_id), by_agent.get(task.owner)))
    return sorted((d for d in decisions if d is not None), key=lambda d: id_sort_key(d.task))


def assign_ready_tasks(
    store: Store,
    live_agents: Sequence[str],
    settings: BoardSettings,
    *,
    order: AssignmentOrder = critical_path_order,
    refused: list[str] | None = None,
) -> list[Assignment]:
    """Hand ready tasks to live agents with spare capacity, best task to the first free slot.

    The whole pass holds the board lock, so a worker claiming for itself at the same moment
    cannot make an agent exceed its limit: every count here is read under the same lock.
    Slots go round by round, so every agent gets one task before any agent gets a second.
    """
    limit = settings.coordinator.max_tasks_per_agent
    assigned: list[Assignment] = []
    if not live_agents or not store.graph.ready_ids():
        return assigned  # nothing to hand out or no one to take it: skip the lock
    with store.transaction():
        held = Counter(t.owner for t in store.tasks.values() if t.status == Status.IN_PROGRESS and t.owner)
        slots = [name for round_ in range(limit) for name in live_agents if held[name] <= round_]
        if not slots:
            return assigned
        queue = order(store.graph, store.graph.ready_ids())
        for agent in slots:
            while queue:
                task_id = queue.pop(0)
                try:
                    task = actions.assign(store, task_id, agent, Who(COORDINATOR), lease_seconds=settings.lease.seconds)
                except BoardError as error:
                    if refused is not None:
                        refused.append(f"#{task_id} to {agent}: {error}")
                    continue
                assert task.lease is not None
                assigned.append(Assignment(task.id, agent, task.lease.token))
                break
            else:
                break
    return assigned


def run_alert_detectors(store: Store, now: datetime, settings: BoardSettings) -> list[dict[str, Any]]:
    """Every alert detector, once per tick; stores the alerts (``store.alert_board``) when they changed.

    The caller keeps the store current (the daemon's watcher, or a fresh load for ``--once``),
    so the detectors skip their own directory rescan.
    """
    return [alert.to_dict() for alert in refresh_alerts(store, now=now, settings=settings, rescan=False)]


def _checkpoint(store: Store, report: TickReport, task_id: str, reason: str, note: str) -> None:
    try:
        checkpoint = write_checkpoint(store, task_id, reason=reason, note=note, actor=COORDINATOR)
    except (BoardError, OSError) as error:
        report.refused.append(f"checkpoint of #{task_id}: {error}")
        return
    report.checkpoints.append(checkpoint.where)
