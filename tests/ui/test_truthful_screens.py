"""What the dashboard says is so: an agent's current task is one it holds, the answer dialog and
the alert agree on where an answer sends a task, a time ahead reads as ahead, and the history
reads as text."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from board.alerts import Alert
from board.store import Store
from board.ui.app import BoardApp
from board.ui.screens.answer import AnswerScreen
from board.ui.screens.detail import DetailScreen
from board.ui.widgets.agents_panel import AgentsPanel
from tests.ui.conftest import FIXED_NOW, make_app, settled, wait_for

pytestmark = pytest.mark.anyio


def agent_row(app, name: str) -> str:
    rows = [row for row in app.query_one(AgentsPanel).render().plain.splitlines() if f" {name} " in f" {row} "]
    assert len(rows) == 1, rows
    return rows[0]


def shown_text(widget) -> str:
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


async def test_an_agent_is_not_shown_on_a_task_another_agent_finished(sample: Path) -> None:
    agents = Store.open(sample)
    app = make_app(sample, watch=True, reconcile_seconds=30)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        assert "#7" in agent_row(app, "alice")  # alice's record names #7, which she holds
        # alice went silent: her task goes back to the queue, sim-9 takes it up and finishes it.
        agents.set_status("7", "pending", actor="coordinator", force=True, reason="lease expired")
        token = agents.claim_task("7", "sim-9", lease_seconds=300).lease.token
        agents.set_status("7", "completed", actor="sim-9", token=token)
        await wait_for(pilot, lambda: app.graph.tasks["7"].status == "completed", timeout=30, message="#7 completed on screen")
        await pilot.pause()
        assert "#7" not in agent_row(app, "alice"), agent_row(app, "alice")
        assert "idle" in agent_row(app, "alice")
        entry = app.session.roster_entry("alice", None)
        assert entry is not None and entry.task is None


async def alert_and_answer_dialog_of_20(app: BoardApp, pilot: Pilot) -> Alert:
    """#20's waiting alert, once the board is on screen; then w on #20 opens its answer dialog."""
    await settled(pilot)
    [alert] = [a for a in app.alerts if a.key == "human.waiting:20"]
    app.jump_to("20")
    await pilot.press("w")
    await wait_for(pilot, lambda: isinstance(app.screen, AnswerScreen), message="the answer dialog")
    return alert


async def test_the_alert_and_the_answer_dialog_say_the_same_of_where_an_answer_sends_a_task(sample: Path) -> None:
    # dave, who asked #20's question, last heartbeat 3 min 20 s before FIXED_NOW: stale by then.
    app = make_app(sample)
    async with app.run_test(size=(160, 45)) as pilot:
        alert = await alert_and_answer_dialog_of_20(app, pilot)
        goes_to = app.screen.goes_to
        assert goes_to == "back to the queue (dave is not running)"
        assert f"it goes {goes_to}" in alert.action, alert.action


async def test_the_same_when_the_asking_agent_is_alive(sample: Path) -> None:
    app = make_app(sample, now=lambda: FIXED_NOW - timedelta(minutes=3))  # dave's heartbeat 20 s ago
    async with app.run_test(size=(160, 45)) as pilot:
        alert = await alert_and_answer_dialog_of_20(app, pilot)
        assert app.screen.goes_to == "back to dave"
        assert "it goes back to dave" in alert.action, alert.action


async def test_a_lease_that_ends_later_reads_as_ahead_not_as_an_age(sample: Path) -> None:
    # #20's lease (dave's) expires at 23:22:00; look at it 25 s before.
    expires = Store.open(sample).get("20").lease.expires_at
    app = make_app(sample, now=lambda: expires - timedelta(seconds=25))
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        app.jump_to("20")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen), message="the detail view")
        await pilot.pause()
        fields = shown_text(app.screen.query_one("#detail-fields"))
        [lease] = [line for line in fields.splitlines() if "token" in line and "dave" in line]
        assert "expires in 25s" in lease, lease
        assert "ago" not in lease, lease


async def test_the_history_shows_a_lease_given_up_as_text_not_a_dict(sample: Path) -> None:
    agents = Store.open(sample)
    held = agents.get("8").lease
    agents.release("8", actor="carol", token=held.token)
    app = make_app(sample)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        app.jump_to("8")
        await pilot.press("enter")
        history = app.screen.query_one("#detail-history", Static)
        await wait_for(pilot, lambda: "release" in str(history.render()), message="the history read")
        timeline = str(history.render())
        [released] = [line for line in timeline.splitlines() if "release" in line]
        assert f"lease carol (token {held.token}) → none" in released, released
        assert "{" not in timeline and "'" not in timeline, timeline


def test_structured_history_changes_read_as_text() -> None:
    from board.present import change_text

    assert change_text("lease", {"owner": "carol", "token": 3, "expiresAt": "2026-11-20T23:08:00Z"}, None) == "lease carol (token 3) → none"
    assert change_text("lease", None, {"owner": "bob", "token": 4}) == "lease none → bob (token 4)"
    mark = {"name": "block_after_failures", "status": "blocked", "reason": "2 failed calls", "firedAt": "2026-11-20T23:00:00Z"}
    assert change_text("policy", None, mark) == "policy none → block_after_failures set blocked"
    calls = {"total": 3, "ok": 2, "failed": 1, "consecutiveFailures": 1, "lastTool": "Bash", "lastAt": None}
    assert change_text("toolCalls", None, calls) == "toolCalls none → 3 calls, 1 failed"
    assert change_text("labels", ["api"], ["api", "auth"]) == "labels api → api, auth"
    assert change_text("status", "in_progress", "pending") == "status in_progress → pending"
