"""The selected task is the truth: when another writer moves its card, the cursor goes with it,
and a key acts on the card highlighted on screen; when it leaves the view, a neighbour is
selected and the person is told."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from textual import events

from board.store import Store
from board.ui.card import CARD_HEIGHT
from board.ui.lanes import Lane
from tests.conftest import REPO
from tests.ui.conftest import live_app, select_second_ready, settled, wait_for, writes_done

pytestmark = pytest.mark.anyio


def on_disk(workspace: Path, task_id: str) -> dict:
    return json.loads((workspace / ".tasks" / f"task_{task_id}.json").read_text())


def outside_write(workspace: Path, *args: str) -> None:
    """Another process writing the board, as an agent does."""
    subprocess.run([sys.executable, "-m", "board", "-w", str(workspace), *args], check=True, cwd=REPO, capture_output=True)


def highlighted(app) -> list[tuple[Lane, str]]:
    """The cards drawn with the selection's gutter, read from what the columns render."""
    found = []
    for lane, column in app.kanban.columns.items():
        for y in range(column.size.height):
            text = column.render_line(y).text
            if text.startswith("▌"):
                index = (int(column.scroll_y) + y) // CARD_HEIGHT
                found.append((lane, column.ids[index]))
    return sorted(set(found))


def on_screen(app, task_id: str) -> bool:
    placed = app.lanes.lane_index(task_id)
    if placed is None:
        return False
    column = app.kanban.columns[placed[0]]
    first = column.first_visible_card()
    return first <= placed[1] and (placed[1] + 1) * CARD_HEIGHT <= int(column.scroll_y) + column.size.height


async def test_a_card_another_writer_moves_keeps_the_cursor_and_the_next_key_acts_on_it(sample: Path) -> None:
    app = live_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        ready = await select_second_ready(app, pilot)
        assert highlighted(app) == [(Lane.READY, ready[1])]

        outside_write(sample, "task", "update", ready[1], "--status", "in_progress", "--owner", "sim-1")
        await wait_for(pilot, lambda: app.lanes.lane_index(ready[1])[0] == Lane.IN_PROGRESS, timeout=30, message="the move shown")
        await pilot.pause()
        assert app.view.selected == ready[1]
        assert highlighted(app) == [(Lane.IN_PROGRESS, ready[1])]
        assert on_screen(app, ready[1])

        # The cursor keys go on from where the card is now.
        in_progress = app.lanes.ids[Lane.IN_PROGRESS]
        index = in_progress.index(ready[1])
        await pilot.press("down" if index + 1 < len(in_progress) else "up")
        assert app.lanes.lane_index(app.view.selected)[0] == Lane.IN_PROGRESS
        app.select(ready[1])
        await pilot.pause()

        # p pauses the card highlighted: the one the agent moved, not the one now in its old slot.
        await pilot.press("p")
        await wait_for(pilot, lambda: on_disk(sample, ready[1])["status"] == "paused", timeout=30, message="the pause written")
        await writes_done(pilot)
        assert on_disk(sample, ready[2])["status"] == "pending"
        assert not [n for n in app._notifications if n.title in ("Nothing done", "Not changed")]


async def test_a_card_that_moves_below_the_fold_is_scrolled_into_view(sample: Path) -> None:
    agents = Store.open(sample)
    app = live_app(sample)
    async with app.run_test(size=(140, 24)) as pilot:
        await settled(pilot)
        # The last card of the ready lane, taken up and finished by an agent: where it lands in
        # Done is below what the column shows.
        task_id = app.lanes.ids[Lane.READY][-1]
        app.select(task_id)
        await pilot.pause()
        token = agents.claim_task(task_id, "sim-1", lease_seconds=300).lease.token
        agents.set_status(task_id, "completed", actor="sim-1", token=token)
        await wait_for(pilot, lambda: app.lanes.lane_index(task_id)[0] == Lane.DONE, timeout=30, message="the card in Done")
        await pilot.pause()
        done = app.kanban.columns[Lane.DONE]
        assert app.lanes.lane_index(task_id)[1] * CARD_HEIGHT >= done.size.height  # below the fold, unscrolled
        assert app.view.selected == task_id
        assert on_screen(app, task_id)
        assert highlighted(app) == [(Lane.DONE, task_id)]


async def test_a_selected_task_that_leaves_the_view_selects_a_neighbour_and_says_so(sample: Path) -> None:
    agents = Store.open(sample)
    app = live_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        ready = await select_second_ready(app, pilot)
        # r typed as the task is cancelled (cancelled tasks are hidden): it reaches the app
        # only after the neighbour took the cursor.
        retry = events.Key("r", "r")
        agents.set_status(ready[1], "cancelled", actor="dave")
        await wait_for(pilot, lambda: app.lanes.lane_index(ready[1]) is None, timeout=30, message="the task gone from view")
        await pilot.pause()
        assert app.view.selected == ready[2]
        assert highlighted(app) == [(Lane.READY, ready[2])]
        notices = [n.message for n in app._notifications if f"#{ready[1]} left the view" in n.message]
        assert len(notices) == 1 and "\n" not in notices[0] and f"#{ready[2]}" in notices[0]

        app.post_message(retry)
        await wait_for(pilot, lambda: any(n.title == "Nothing done" for n in app._notifications), message="r handled")
        await writes_done(pilot)
        assert on_disk(sample, ready[2])["status"] == "pending"
        assert on_disk(sample, ready[1])["status"] == "cancelled"


async def test_a_task_filtered_out_by_its_own_change_leaves_the_view_with_a_notice(sample: Path) -> None:
    app = live_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.set_filter("status:ready")
        await pilot.pause()
        ready = list(app.lanes.ids[Lane.READY])
        app.select(ready[0])
        await pilot.pause()
        outside_write(sample, "task", "update", ready[0], "--status", "in_progress", "--owner", "sim-1")
        await wait_for(pilot, lambda: app.lanes.lane_index(ready[0]) is None, timeout=30, message="the task filtered out")
        await pilot.pause()
        assert app.view.selected == ready[1]
        assert highlighted(app) == [(Lane.READY, ready[1])]
        assert any(f"#{ready[0]} left the view" in n.message for n in app._notifications)
