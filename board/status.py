"""The status machine: one transition table, used by every writer."""

from __future__ import annotations

from enum import StrEnum

from board.errors import IllegalTransition


class Status(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    BLOCKED = "blocked"
    PAUSED = "paused"
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


TRANSITIONS: dict[Status, frozenset[Status]] = {
    Status.PENDING: frozenset({Status.IN_PROGRESS, Status.CANCELLED}),
    Status.IN_PROGRESS: frozenset(
        {Status.COMPLETED, Status.FAILED, Status.BLOCKED, Status.PAUSED, Status.WAITING, Status.PENDING}
    ),
    Status.BLOCKED: frozenset({Status.IN_PROGRESS, Status.PENDING, Status.CANCELLED}),
    Status.PAUSED: frozenset({Status.IN_PROGRESS, Status.PENDING, Status.CANCELLED}),
    # waiting -> pending: answered, and its owner is gone, so it goes back to the queue.
    Status.WAITING: frozenset({Status.IN_PROGRESS, Status.PENDING, Status.FAILED, Status.CANCELLED}),
    # failed -> cancelled: a person gives up on it, without a detour through the queue.
    Status.FAILED: frozenset({Status.PENDING, Status.CANCELLED}),
    Status.CANCELLED: frozenset({Status.PENDING}),
    Status.COMPLETED: frozenset(),
}

#: Statuses in which an agent is (or may resume) working on the task.
ACTIVE = frozenset({Status.IN_PROGRESS, Status.WAITING, Status.PAUSED, Status.BLOCKED})
#: Statuses that never change again without a human (retry/reopen).
FINISHED = frozenset({Status.COMPLETED, Status.FAILED, Status.CANCELLED})


def check_transition(current: Status, target: Status) -> None:
    """Raise IllegalTransition naming both statuses and what is allowed instead."""
    if target == current:
        raise IllegalTransition(f"task is already {current}")
    allowed = TRANSITIONS[current]
    if target not in allowed:
        choices = ", ".join(sorted(allowed)) if allowed else "nothing (it is final)"
        raise IllegalTransition(f"cannot move a task from {current} to {target}; from {current} it can go to {choices}")
