"""A key acts on the card the person sees selected when they press it, while agents move cards:
a dialog names that card, and its "y" acts on that card alone, as it still is on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot

from board.model import utcnow
from board.store import Store
from board.ui.lanes import Lane
from board.ui.screens.confirm import ConfirmScreen
from board.ui.task_keys import CURSOR_MOVED_NOTICE_SECONDS, local_user
from tests.ui.conftest import live_app, make_app, select_second_ready, settled, wait_for, writes_done

pytestmark = pytest.mark.anyio


def on_disk(workspace: Path, task_id: str) -> dict:
    return json.loads((workspace / ".tasks" / f"task_{task_id}.json").read_text())


def task_files(workspace: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in (workspace / ".tasks").glob("task_*.json")}


def agents_on(workspace: Path) -> Store:
    """The agents' own store. It keeps the real time, as the dashboard's store does (and the
    dashboards here, ``now=utcnow``): a lease an agent takes is live for all of them."""
    return Store.open(workspace)


async def type_ahead(pilot: Pilot, *keys: str) -> None:
    """Keys typed faster than the dashboard takes them (a busy machine): every one has reached
    the app before it has handled the first."""
    for key in keys:
        pilot.app.post_message(events.Key(key, key))
    await pilot.pause()


def dialog_question(app) -> str:
    return str(app.screen.query_one("#question").render()) if isinstance(app.screen, ConfirmScreen) else ""


async def test_a_key_typed_right_after_a_cursor_key_acts_on_the_card_the_cursor_went_to(sample: Path) -> None:
    agents = agents_on(sample)
    app = live_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("18")  # failed
        await pilot.press("r")
        await wait_for(pilot, lambda: on_disk(sample, "18")["status"] == "pending", message="the retry written")
        agents.claim_task("18", "sim-1", lease_seconds=300)  # an agent takes it up at once
        await wait_for(pilot, lambda: app.lanes.lane_index("18") is not None and app.lanes.lane_index("18")[0] == Lane.IN_PROGRESS, message="sim-1's claim shown")
        app.jump_to("18")
        await pilot.pause()
        [blocked] = app.lanes.ids[Lane.ATTENTION]  # where l goes: the one card left there
        held = on_disk(sample, "18")
        assert held["lease"]["owner"] == "sim-1"

        await type_ahead(pilot, "l", "r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) or on_disk(sample, blocked)["status"] == "pending", message="r handled")
        await writes_done(pilot)
        assert not isinstance(app.screen, ConfirmScreen), f"r opened {dialog_question(app)!r} with #{app.view.selected} selected"
        assert app.view.selected == blocked
        assert on_disk(sample, "18") == held  # sim-1 keeps its task

        # r on #18 itself: the dialog names it and y releases it, nothing else.
        app.jump_to("18")
        await pilot.press("r")
        assert dialog_question(app) == "Release #18?"
        before = task_files(sample)
        await pilot.press("y")
        await wait_for(pilot, lambda: on_disk(sample, "18")["status"] == "pending", message="#18 released")
        changed = {name for name, data in task_files(sample).items() if before.get(name) != data}
        assert changed == {"task_18.json"}
        last = [json.loads(line) for line in (sample / ".tasks" / "history.jsonl").read_text().splitlines()][-1]
        assert (last["task"], last["actor"], last.get("forced")) == ("18", local_user(), True)


async def test_in_the_graph_too_a_key_typed_right_after_a_cursor_key_acts_on_the_node_it_went_to(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("19")  # paused
        await pilot.press("g")
        layout = app.graph_view.graph_layout
        column, _ = layout.position["19"]
        right = layout.nearest_in_column(column + 1, layout.row_of["19"])
        assert on_disk(sample, right)["status"] == "blocked"
        paused = on_disk(sample, "19")
        await type_ahead(pilot, "l", "r")
        await wait_for(pilot, lambda: on_disk(sample, right)["status"] == "pending" or on_disk(sample, "19") != paused, message="r handled")
        await writes_done(pilot)
        assert on_disk(sample, "19") == paused, "r requeued the node the cursor left"
        assert app.view.selected == right


def sim_1_finishes(agents: Store, token: int) -> str:
    agents.set_status("18", "completed", actor="sim-1", token=token)
    return "completed"


def sim_2_takes_over(agents: Store, token: int) -> str:
    agents.release("18", actor="sim-1", token=token)
    agents.claim_task("18", "sim-2", lease_seconds=300)
    return "held by sim-2"


@pytest.mark.parametrize("meanwhile", [sim_1_finishes, sim_2_takes_over], ids=["no longer applies", "means something else"])
async def test_y_does_nothing_to_a_task_that_changed_on_disk_while_its_dialog_was_open(sample: Path, meanwhile) -> None:
    agents = agents_on(sample)
    agents.set_status("18", "pending", actor="dave")
    token = agents.claim_task("18", "sim-1", lease_seconds=300).lease.token
    app = make_app(sample, now=utcnow)  # no watcher: what y finds is read from disk, not from the screen
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("18")
        await pilot.press("r")
        assert dialog_question(app) == "Release #18?"
        now = meanwhile(agents, token)
        written = on_disk(sample, "18")
        await pilot.press("y")
        await wait_for(pilot, lambda: any(n.title == "Not changed" for n in app._notifications), message="the refusal")
        [refusal] = [n.message for n in app._notifications if n.title == "Not changed"]
        assert "\n" not in refusal and "#18" in refusal and now in refusal
        assert on_disk(sample, "18") == written


async def test_a_key_pressed_as_an_agent_moves_the_selected_card_away_acts_on_that_card_not_the_one_that_took_its_place(sample: Path) -> None:
    agents = agents_on(sample)
    app = live_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        ready = await select_second_ready(app, pilot)
        # The person presses s on ready[1]; the dashboard, busy, gets to the key only after it
        # has shown sim-1 taking that card, and the card below it moving up into its slot.
        start = events.Key("s", "s")
        agents.claim_task(ready[1], "sim-1", lease_seconds=300)
        await wait_for(pilot, lambda: app.lanes.lane_index(ready[1])[0] == Lane.IN_PROGRESS, message="sim-1's claim shown")
        assert app.view.selected == ready[1]  # the cursor went with it
        app.post_message(start)

        def refusals() -> list[str]:
            return [n.message for n in app._notifications if n.title == "Not changed"]

        await wait_for(pilot, lambda: refusals() or on_disk(sample, ready[2])["status"] != "pending", message="s handled")
        await writes_done(pilot)
        assert on_disk(sample, ready[2])["status"] == "pending", f"s started #{ready[2]}, which took #{ready[1]}'s slot as s was pressed"
        assert on_disk(sample, ready[1])["lease"]["owner"] == "sim-1"
        [refusal] = refusals()
        assert f"task {ready[1]} is already in progress (held by sim-1)" in refusal


async def test_a_key_pressed_as_the_selected_card_leaves_the_view_does_not_act_on_its_neighbour(sample: Path) -> None:
    agents = agents_on(sample)
    app = live_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        ready = await select_second_ready(app, pilot)
        start = events.Key("s", "s")
        agents.set_status(ready[1], "cancelled", actor="dave")  # cancelled cards are hidden
        await wait_for(pilot, lambda: app.lanes.lane_index(ready[1]) is None, message="the cancel shown")
        assert app.view.selected == ready[2]
        app.post_message(start)

        def notices() -> list[str]:
            return [n.message for n in app._notifications if n.title == "Nothing done"]

        await wait_for(pilot, lambda: notices() or on_disk(sample, ready[2])["status"] != "pending", message="s handled")
        await writes_done(pilot)
        assert on_disk(sample, ready[2])["status"] == "pending"
        [notice] = notices()
        assert f"#{ready[1]} left the view" in notice and f"on #{ready[2]}" in notice

        # s pressed once the person has had the moment to see the card now under the cursor starts it.
        again = events.Key("s", "s")
        again.time = app._cursor_moved.at + CURSOR_MOVED_NOTICE_SECONDS
        app.post_message(again)
        await wait_for(pilot, lambda: on_disk(sample, ready[2])["status"] == "in_progress", message="the start written")
