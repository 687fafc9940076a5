"""Key sequences act through the store: the file on disk is checked after each step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.status import Status
from board.identity import local_user
from board.ui.messages import BoardChanged
from board.ui.widgets.agents_panel import AgentsPanel
from tests.ui.conftest import make_app, settled, wait_for, writes_done

pytestmark = pytest.mark.anyio  # async tests run on asyncio (anyio ships with watchfiles)


def on_disk(workspace: Path, task_id: str) -> dict:
    return json.loads((workspace / ".tasks" / f"task_{task_id}.json").read_text())


async def test_start_then_pause_cancel_with_confirmation_and_retry(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        assert app.view.selected == "32"  # first card of Ready: pending, no blockers
        await pilot.press("s")
        await wait_for(pilot, lambda: on_disk(sample, "32")["status"] == "in_progress", message="start written")
        task = on_disk(sample, "32")
        assert task["owner"] and task["lease"] is None and task["version"] == 2
        await wait_for(pilot, lambda: app.graph.tasks["32"].status == Status.IN_PROGRESS, message="start shown")
        assert "32" in app.lanes.ids[app.lanes.lane_index("32")[0]]

        await pilot.press("c")  # in progress cannot be cancelled: refused, nothing written
        await writes_done(pilot)
        assert on_disk(sample, "32")["status"] == "in_progress"
        assert app.screen is app.screen_stack[0]  # no dialog for a move that cannot be made
        assert any("pause it first" in n.message for n in app._notifications)

        await pilot.press("p")
        await wait_for(pilot, lambda: on_disk(sample, "32")["status"] == "paused", message="pause written")
        await wait_for(pilot, lambda: app.graph.tasks["32"].status == Status.PAUSED, message="pause shown")

        await pilot.press("c")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "ConfirmScreen"
        await pilot.press("n")  # keep it
        await writes_done(pilot)
        assert on_disk(sample, "32")["status"] == "paused"

        await pilot.press("c", "y")
        await wait_for(pilot, lambda: on_disk(sample, "32")["status"] == "cancelled", message="cancel written")
        await wait_for(pilot, lambda: app.graph.tasks["32"].status == Status.CANCELLED, message="cancel shown")
        assert app.lanes.lane_index("32") is None  # cancelled cards are hidden until toggled

        app.jump_to("32")
        await pilot.pause()
        assert app.view.selected == "32" and app.lanes.show_cancelled
        await pilot.press("r")
        await wait_for(pilot, lambda: on_disk(sample, "32")["status"] == "pending", message="reopen written")
        history = [json.loads(line) for line in (sample / ".tasks" / "history.jsonl").read_text().splitlines()]
        mine = [h for h in history if h["task"] == "32" and h["actor"] == local_user()]
        assert [h["op"] for h in mine] == ["status:in_progress", "status:paused", "status:cancelled", "status:pending (reopen)"]


async def test_retry_a_failed_task(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("18")
        await pilot.press("r")
        await wait_for(pilot, lambda: on_disk(sample, "18")["status"] == "pending", message="retry written")
        assert on_disk(sample, "18")["error"] is None


async def test_retry_hands_blocked_and_paused_tasks_back_and_a_running_one_only_when_confirmed(sample: Path) -> None:
    from board.store import Store

    # alice is alive: her lease on #7 was just renewed for ten minutes.
    renewed = Store.open(sample).heartbeat("alice", lease_seconds=600)
    assert [t.id for t in renewed] == ["7"]
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        for task_id in ("17", "19"):  # blocked, paused
            app.jump_to(task_id)
            await pilot.press("r")
            await wait_for(pilot, lambda: on_disk(sample, task_id)["status"] == "pending", message=f"#{task_id} requeued")
            assert on_disk(sample, task_id)["owner"] == ""
        running = on_disk(sample, "7")
        assert running["status"] == "in_progress"
        app.jump_to("7")
        await pilot.press("r")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "ConfirmScreen"  # alice would lose her task: ask
        await pilot.press("n")
        await writes_done(pilot)
        assert on_disk(sample, "7") == running
        await pilot.press("r", "y")
        await wait_for(pilot, lambda: on_disk(sample, "7")["status"] == "pending", message="#7 taken back")
        last = [json.loads(line) for line in (sample / ".tasks" / "history.jsonl").read_text().splitlines()][-1]
        assert (last["task"], last["actor"], last.get("forced")) == ("7", local_user(), True)
        assert last["changes"]["owner"] == ["alice", ""]


async def test_start_refuses_a_task_waiting_on_dependencies(sample: Path) -> None:
    before = on_disk(sample, "5")
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("5")
        await pilot.press("s")
        await writes_done(pilot)
        assert on_disk(sample, "5") == before
        assert any("not ready" in n.message for n in app._notifications)


async def test_a_key_refuses_to_act_on_a_task_that_changed_since_it_was_seen(sample: Path) -> None:
    from board.store import Store

    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("26")
        # An agent takes the task; the dashboard (no watcher here) still shows it ready.
        Store.open(sample).claim_task("26", "zoe", lease_seconds=300)
        written = on_disk(sample, "26")
        await pilot.press("s")
        await wait_for(pilot, lambda: any("changed since you pressed the key" in n.message for n in app._notifications), message="conflict")
        assert any("held by zoe" in n.message for n in app._notifications)
        assert on_disk(sample, "26") == written


async def test_an_agents_tool_calls_meanwhile_do_not_stop_a_key(sample: Path) -> None:
    from board.store import Store

    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("19")  # paused, erin's
        Store.open(sample).update("19", description="notes added by erin", actor="erin")  # not what the key is about
        await pilot.press("r")
        await wait_for(pilot, lambda: on_disk(sample, "19")["status"] == "pending", message="requeued")


async def test_assign_claims_for_the_chosen_agent(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("26")
        await pilot.press("a")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "AssignScreen"
        await pilot.press("down", "enter")  # second agent: bob
        await wait_for(pilot, lambda: on_disk(sample, "26")["status"] == "in_progress", message="claim written")
        task = on_disk(sample, "26")
        assert task["owner"] == "bob" and task["lease"]["owner"] == "bob"


async def test_assign_marks_silent_agents_and_asks_before_handing_one_a_task(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("27")
        await pilot.press("a")
        await pilot.pause()
        listed = [str(app.screen.query_one("#agents-list").get_option_at_index(n).prompt) for n in range(5)]
        assert [line.split()[0] for line in listed] == ["alice", "bob", "carol", "dave", "erin"]  # the live ones first
        assert "heartbeat 20s ago" in listed[0] and "silent for 1m" in listed[2] and "silent for 45m" in listed[4]
        await pilot.press("down", "down", "enter")  # carol: silent
        await pilot.pause()
        assert app.screen.__class__.__name__ == "ConfirmScreen"
        assert "carol has been silent for 1m. Assign #27 to it anyway?" in str(app.screen.query_one("#question").render())
        await pilot.press("n")
        await writes_done(pilot)
        assert on_disk(sample, "27")["status"] == "pending"
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: on_disk(sample, "27")["status"] == "in_progress", message="assigned anyway")
        assert on_disk(sample, "27")["owner"] == "carol"


async def test_readonly_disables_every_action(sample: Path) -> None:
    before = {p.name: p.read_bytes() for p in (sample / ".tasks").glob("task_*.json")}
    app = make_app(sample, readonly=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await pilot.press("s", "p", "r", "c", "a")
        await writes_done(pilot)
        assert app.screen is app.screen_stack[0]
    assert {p.name: p.read_bytes() for p in (sample / ".tasks").glob("task_*.json")} == before


async def test_a_stale_read_never_replaces_a_newer_one(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        current = app.graph.tasks["7"]
        # Read first, delivered last (two readers racing): the earlier read must not win, even
        # though its version is higher. Versions do not order reads: outside writers lower them.
        earlier = BoardChanged(tasks=[current.model_copy(update={"version": current.version + 5, "progress": 5})])
        later = BoardChanged(tasks=[current.model_copy(update={"version": current.version - 1, "progress": 90})])
        app.post_message(later)
        await pilot.pause()
        app.post_message(earlier)
        await pilot.pause()
        assert app.graph.tasks["7"].progress == 90


async def test_filter_by_owner_status_and_text(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await pilot.press("slash", *"@carol", "enter")
        await pilot.pause()
        assert app.lanes.placed_ids() == {t.id for t in app.graph if t.owner == "carol"}
        app.set_filter("status:ready")
        assert app.lanes.placed_ids() == app.graph.ready_ids()
        app.set_filter("auth")
        assert app.lanes.placed_ids() == {"9", "10", "11", "12"}
        await pilot.press("escape")
        await pilot.pause()
        assert len(app.lanes) == len(app.graph) - 1  # all but the cancelled one


async def test_clearing_a_filter_goes_back_to_the_card_selected_before_and_a_term_that_matches_nothing_says_so(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("26")
        await pilot.pause()
        await pilot.press("slash", *"status:finished", "enter")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "FilterScreen"  # kept open, saying why
        assert "no status 'finished'" in str(app.screen.query_one("#detail").render())
        await pilot.press("escape")
        await pilot.pause()
        assert not app.task_query and app.view.selected == "26"
        await pilot.press("slash", *"@carol", "enter")
        await pilot.pause()
        assert app.view.selected != "26"  # #26 is not carol's
        await pilot.press("escape")  # clears the filter
        await pilot.pause()
        assert not app.task_query and app.view.selected == "26"
        await pilot.press("slash", *"label:db", "enter")
        await pilot.pause()
        assert app.lanes.placed_ids() == {t.id for t in app.graph if "db" in t.labels}


async def test_detail_jumps_along_dependencies(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("7")
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert screen.__class__.__name__ == "DetailScreen"
        await pilot.press("enter")  # first entry: "needs #3"
        await pilot.pause()
        assert screen.task_id == "3" and app.view.selected == "3"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.screen_stack[0]


async def test_board_complete_notification(workspace: Path) -> None:
    from board.store import Store

    store = Store.open(workspace)
    task = store.create("only task")
    app = make_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        await pilot.press("s")
        await wait_for(pilot, lambda: app.graph.tasks[task.id].status == Status.IN_PROGRESS, message="started")
        done = Store.open(workspace).set_status(task.id, "completed")  # the person's own task: no lease
        app.post_message(BoardChanged(tasks=[done]))
        await wait_for(pilot, lambda: any("Every task is done" in n.message for n in app._notifications), message="done notice")


async def test_graph_view_shares_the_selection(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("1")
        await pilot.press("g")
        await pilot.pause()
        assert app.graph_view.has_focus
        await pilot.press("l")  # wave 1: #1's neighbours are #3 and #4
        await pilot.pause()
        assert app.view.selected in {"3", "4"}
        await pilot.press("l", "j")
        await pilot.pause()
        chosen = app.view.selected
        column, index = app.graph_view.graph_layout.position[chosen]
        assert column == 2 and index >= 1
        await pilot.press("g")  # back on the kanban, the same task is selected
        await pilot.pause()
        assert app.view.selected == chosen and app.kanban.has_focus
        assert "30" in app.graph_view.graph_layout.critical  # the release ends the longest open chain


async def test_a_policy_status_has_a_badge_and_u_undoes_it(workspace: Path) -> None:
    from board.config import BoardSettings
    from board.coordinator.policies import apply_policy, decide_policy
    from board.store import Store
    from board.ui.lanes import Lane
    from tests.ui.test_live import column_text

    store = Store.open(workspace)
    store.create("flaky tests")
    token = store.claim("alice", lease_seconds=300).lease.token
    for _ in range(2):
        store.record_toolcall("1", "pytest", ok=False, token=token)
    apply_policy(store, decide_policy(store.get("1"), BoardSettings.model_validate({"policies": {"block_after_failures": 2}})), store.clock())
    app = make_app(workspace)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        assert "BLOCKED⚙" in column_text(app, Lane.ATTENTION)
        await pilot.press("enter")
        await pilot.pause()
        fields = app.screen.query_one("#detail-fields")
        shown = "\n".join(fields.render_line(y).text for y in range(fields.size.height))
        assert "block_after_failures set blocked" in shown and "u undoes it" in shown
        await pilot.press("u")
        await wait_for(pilot, lambda: on_disk(workspace, "1")["status"] == "in_progress", message="undo written")
        undone = on_disk(workspace, "1")
        assert (undone["owner"], undone["lease"]["owner"], undone["policy"]["settled"]) == ("alice", "alice", True)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.lanes.lane_index("1")[0] == Lane.IN_PROGRESS, message="undo shown")
        assert "⚙" not in column_text(app, Lane.IN_PROGRESS)
        await pilot.press("u")  # nothing left to undo: said, not done
        await pilot.pause()
        assert any("nothing to undo" in n.message for n in app._notifications)


async def test_a_theme_picked_with_t_or_the_palette_is_remembered_and_a_demo_never_writes_the_config(sample: Path, user_config: Path) -> None:
    from board.ui.themes import remembered_theme, user_config_path

    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        assert not user_config_path().exists()  # opening the board writes nothing
        await pilot.press("t")
        await pilot.pause()
        assert remembered_theme() == app.theme
        app.theme = "textual-light"  # what the palette's "Change theme" does
        await pilot.pause()
        assert remembered_theme() == "textual-light"

    user_config_path().unlink()
    demo = make_app(sample, remember_choices=False)
    async with demo.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await pilot.press("t")
        demo.theme = "textual-dark"
        await pilot.pause()
        assert not user_config_path().exists()


async def test_text_coloured_in_code_takes_the_themes_colours_ansi_ones_included(sample: Path) -> None:
    """The detail view colours its alerts in code: each theme's colour, ANSI themes' too (named
    as Rich does not name them), and a new theme recolours a detail view already open."""
    from textual.color import Color
    from textual.geometry import Region

    from board.ui.widgets.alerts_panel import SEVERITY_MARK

    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("20")  # it waits for a person: an alert says so
        await pilot.press("enter")
        [alert] = app.view.alerts["20"]
        colour = {"error": "error", "warning": "warning"}.get(alert.severity, "primary")
        panel = app.screen.query_one("#detail-alerts")

        def mark_colour():
            lines = panel.render_lines(Region(0, 0, panel.size.width, panel.size.height))
            return next(segment.style.color for line in lines for segment in line if segment.text == SEVERITY_MARK[alert.severity])

        shown = []
        for theme in ("ansi-dark", "board-light", "ansi-light", "textual-dark"):
            app.theme = theme
            expected = Color.parse(app.get_theme(theme).to_color_system().generate()[colour]).rich_color
            await wait_for(pilot, lambda expected=expected: mark_colour() == expected, message=f"the alert in {theme}'s {colour}")
            shown.append(expected)
        assert all(before != after for before, after in zip(shown, shown[1:]))  # so none was left over from the theme before


async def assert_the_cursor_keys_move_on_the_board(app, pilot) -> None:
    assert app.kanban.has_focus
    before = app.view.selected
    await pilot.press("down")
    await pilot.pause()
    assert app.view.selected != before


async def test_the_keys_come_back_to_the_board_when_a_focused_panel_is_hidden(sample: Path) -> None:
    """Textual drops the focus of a widget it hides: a focused panel hidden by ``i`` or by a
    terminal grown narrow, or hidden under a dialog, leaves the cursor keys with the board."""
    app = make_app(sample)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        await pilot.press("e")  # into the alerts panel
        await pilot.pause()
        assert app.alerts_panel.query_one("AlertList").has_focus
        await pilot.resize_terminal(70, 30)  # narrow: the panels hide
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        await assert_the_cursor_keys_move_on_the_board(app, pilot)
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        await pilot.press("A")  # into the agents panel, then hide the panels
        await pilot.pause()
        assert app.query_one(AgentsPanel).has_focus
        await pilot.press("i")
        await pilot.pause()
        await assert_the_cursor_keys_move_on_the_board(app, pilot)


async def test_showing_cancelled_tasks_with_x_redraws_a_graph_on_screen(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        cancelled = [t.id for t in app.graph.tasks.values() if t.status == Status.CANCELLED]
        assert cancelled
        await pilot.press("g")
        view = app.graph_view
        await wait_for(pilot, lambda: bool(view.graph_layout.position) and not view.laying_out, message="the layout")
        assert not set(cancelled) & set(view.graph_layout.position)
        await pilot.press("x")
        await wait_for(pilot, lambda: set(cancelled) <= set(view.graph_layout.position), message="the cancelled tasks laid out")
        await pilot.press("x")
        await wait_for(pilot, lambda: not set(cancelled) & set(view.graph_layout.position), message="the cancelled tasks gone again")
