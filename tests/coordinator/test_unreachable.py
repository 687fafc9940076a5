"""An agent holding a task that has gone silent (dead, or its machine cut off from the board) is
an alert naming the task and when it goes back to the queue."""

from __future__ import annotations

from board.agents import write_agent
from board.alerts import evaluate_alerts
from board.coordinator.tick import tick
from tests.conftest import BOTH_BACKENDS

from .conftest import agent, settings

pytestmark = BOTH_BACKENDS


def unreachable(board, clock) -> list:
    return [a for a in evaluate_alerts(board, now=clock(), settings=settings()) if a.kind == "agent.unreachable"]


def test_a_silent_holder_is_an_alert_until_its_task_is_taken_back(board, clock) -> None:
    task = board.create("migrations")
    agent(board, "w1", clock)
    board.claim("w1", lease_seconds=60)
    clock.advance(20)
    assert unreachable(board, clock) == []  # heard from within the stale time (the board's lease: 30 s)

    clock.advance(15)  # 35 s of silence: stale, holding a lease of 60 s
    [alert] = unreachable(board, clock)
    assert alert.tasks == (task.id,) and alert.agents == ("w1",) and alert.severity == "warning"
    assert alert.message == "w1 holds #1 but has not been heard from for 35 s (stopped, or its machine cut off from the board)"
    taken_back = (board.get(task.id).lease.expires_at + settings().lease.reclaim_margin).strftime("%H:%M:%S")
    assert alert.action.startswith(f"#1 goes back to the queue at {taken_back} unless w1 is heard from")

    clock.advance(30)  # its lease ran out, and the margin too: with no coordinator ticking, it says so
    [alert] = unreachable(board, clock)
    assert alert.action == f"its lease ran out; a coordinator takes #1 back (none has since {taken_back}: run board coordinator, or board run)"
    assert tick(board, [], settings()).reclaimed
    assert unreachable(board, clock) == []


def test_an_agent_heard_from_raises_nothing_and_one_that_stopped_holding_a_task_says_so(board, clock) -> None:
    board.create("migrations")
    agent(board, "w1", clock)
    board.claim("w1", lease_seconds=300)
    clock.advance(100)
    assert len(unreachable(board, clock)) == 1
    agent(board, "w1", clock)  # heard from again
    assert unreachable(board, clock) == []
    # Stopped on purpose with its lease kept (an MCP server that ended): at once, not after the
    # stale time, the task it holds and when it goes back.
    write_agent(board.agent_records, agent(board, "w1", clock).model_copy(update={"stopped": True}))
    [alert] = unreachable(board, clock)
    assert "w1 stopped while holding #1" in alert.message and "goes back to the queue at" in alert.action, alert
    board.release("1", actor="w1", force=True)
    assert unreachable(board, clock) == []
