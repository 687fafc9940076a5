import pytest

from board.errors import IllegalTransition
from board.status import TRANSITIONS, Status, check_transition

# SPEC §3, written out independently of the table in board/status.py.
ALLOWED = {
    ("pending", "in_progress"), ("pending", "cancelled"),
    ("in_progress", "completed"), ("in_progress", "failed"), ("in_progress", "blocked"),
    ("in_progress", "paused"), ("in_progress", "waiting"), ("in_progress", "pending"),
    ("blocked", "in_progress"), ("blocked", "pending"), ("blocked", "cancelled"),
    ("paused", "in_progress"), ("paused", "pending"), ("paused", "cancelled"),
    ("waiting", "in_progress"), ("waiting", "failed"), ("waiting", "cancelled"),
    # Beyond SPEC §3: an answered task whose agent is gone goes back to the queue (the answer move).
    ("waiting", "pending"),
    ("failed", "pending"), ("failed", "cancelled"),
    ("cancelled", "pending"),
}


@pytest.mark.parametrize("current", list(Status))
@pytest.mark.parametrize("target", list(Status))
def test_transition_table_matches_the_spec(current: Status, target: Status) -> None:
    if (current.value, target.value) in ALLOWED:
        check_transition(current, target)
    else:
        with pytest.raises(IllegalTransition):
            check_transition(current, target)


def test_refusal_names_both_statuses_and_the_allowed_ones() -> None:
    with pytest.raises(IllegalTransition) as caught:
        check_transition(Status.FAILED, Status.COMPLETED)
    assert str(caught.value) == "cannot move a task from failed to completed; from failed it can go to cancelled, pending"


def test_completed_is_final() -> None:
    assert TRANSITIONS[Status.COMPLETED] == frozenset()
    with pytest.raises(IllegalTransition, match="nothing \\(it is final\\)"):
        check_transition(Status.COMPLETED, Status.PENDING)
