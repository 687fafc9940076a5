"""Seed 002's automatic status policies, off unless ``board.toml`` turns them on.

``[policies] block_after_failures = N`` marks an in-progress task ``blocked`` after N
consecutive failed tool calls; ``complete_after_successes = N`` marks it ``completed`` after
N successful ones. A policy that fires says so in the history op and in the task's ``policy`` mark
(the badge the dashboard shows; a person can undo it), and fires at most once per run of tool
calls: it remembers the tool-call total it saw, so a retried task is judged only on calls made
after that.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from board import actions
from board.budgets import BudgetState
from board.config import BoardSettings
from board.model import Budget, Task
from board.status import Status
from board.store import Store

BLOCK_AFTER_FAILURES = "block_after_failures"
COMPLETE_AFTER_SUCCESSES = "complete_after_successes"
BUDGET = "budget"


@dataclass(frozen=True)
class PolicyDecision:
    """A policy that should fire on one task: the status to set and why."""

    task: str
    policy: str
    status: Status
    reason: str
    #: ``toolCalls.total`` when it fired; calls up to here never fire a policy again.
    at_total: int
    #: The lease token the decision was made under (the write is fenced on it), if leased.
    token: int | None = None
    #: The budget it was spent against (the ``budget`` policy only).
    budget: Budget | None = None


def _last_fired_total(task: Task) -> int:
    return task.policy.at_total if task.policy is not None else 0


def decide_policy(task: Task, settings: BoardSettings) -> PolicyDecision | None:
    """Which policy, if any, fires on ``task`` now. Pure: a function of the task and the settings."""
    if task.status != Status.IN_PROGRESS:
        return None
    policies = settings.policies
    calls = task.tool_calls
    since = _last_fired_total(task)
    if calls.total <= since:
        return None
    block_after = policies.block_after_failures
    if block_after and calls.consecutive_failures >= block_after and calls.total - since >= block_after:
        return PolicyDecision(
            task.id,
            BLOCK_AFTER_FAILURES,
            Status.BLOCKED,
            f"policy {BLOCK_AFTER_FAILURES}={block_after}: {calls.consecutive_failures} consecutive failed tool calls",
            calls.total,
            task.lease.token if task.lease else None,
        )
    complete_after = policies.complete_after_successes
    if complete_after and calls.ok >= complete_after:
        return PolicyDecision(
            task.id,
            COMPLETE_AFTER_SUCCESSES,
            Status.COMPLETED,
            f"policy {COMPLETE_AFTER_SUCCESSES}={complete_after}: {calls.ok} successful tool calls",
            calls.total,
            task.lease.token if task.lease else None,
        )
    return None


def decide_budget(task: Task, spent: BudgetState | None, agent_spent: BudgetState | None) -> PolicyDecision | None:
    """The ``budget`` policy on ``task``: pause it once it, or its agent, spent a budget.

    Not again for the budget it was paused at once that pause was undone (a person chose to let
    it go on); a new budget (raised, or set anew) is judged afresh."""
    if task.status != Status.IN_PROGRESS:
        return None
    for state, whose in ((spent, f"#{task.id}"), (agent_spent, task.owner)):
        if state is None or state.share < 1.0:
            continue
        mark = task.policy
        if mark is not None and mark.name == BUDGET and mark.budget == state.budget:
            return None
        return PolicyDecision(
            task.id, BUDGET, Status.PAUSED, f"policy {BUDGET}: {whose} spent {state.text()}",
            task.tool_calls.total, task.lease.token if task.lease else None, budget=state.budget,
        )
    return None


def apply_policy(store: Store, decision: PolicyDecision, now: datetime, *, actor: str = "coordinator") -> Task:
    """Set the status and the task's ``policy`` mark in one write (``actions.policy_move``).

    The coordinator acts with the lease's token as the decision read it: if the agent finished
    the task or the lease changed hands in between, the write is refused.
    """
    return actions.policy_move(
        store, decision.task, decision.status, actions.Who(actor, token=decision.token),
        policy=decision.policy, reason=decision.reason, at_total=decision.at_total, fired_at=now, budget=decision.budget,
    )
