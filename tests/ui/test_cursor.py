"""The cursor stays where the person put it when agents move cards around it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from board.ui.lanes import Lane
from tests.conftest import REPO
from tests.ui.conftest import make_app, settled, wait_for

pytestmark = pytest.mark.anyio


def outside_write(workspace: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "board", "-w", str(workspace), *args], check=True, cwd=REPO, capture_output=True)


async def test_a_card_an_agent_moves_leaves_the_cursor_on_its_lane_and_row_and_flashes_where_it_went(sample: Path) -> None:
    app = make_app(sample, watch=True, reconcile_seconds=30)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        ready = list(app.lanes.ids[Lane.READY])
        app.select(ready[1])
        await pilot.pause()
        outside_write(sample, "task", "update", ready[1], "--status", "in_progress", "--owner", "sim-1")
        await wait_for(pilot, lambda: app.lanes.lane_index(ready[1])[0] == Lane.IN_PROGRESS, timeout=30, message="the agent's move shown")
        assert app.view.selected == ready[2]  # the card now on the row the person was on
        assert app.lanes.lane_index(app.view.selected) == (Lane.READY, 1)
        assert ready[1] in app.view.flashing
        await wait_for(pilot, lambda: ready[1] not in app.view.flashing, timeout=10, message="the flash to end")

        # A move the person makes here keeps the card selected: the next key acts on it.
        await pilot.press("s")
        await wait_for(pilot, lambda: app.lanes.lane_index(ready[2])[0] == Lane.IN_PROGRESS, timeout=30, message="the person's start shown")
        assert app.view.selected == ready[2] and not app.view.flashing
        on_disk = json.loads((sample / ".tasks" / f"task_{ready[2]}.json").read_text())
        assert on_disk["status"] == "in_progress"


async def test_the_last_card_of_a_lane_moved_away_is_followed(sample: Path) -> None:
    app = make_app(sample, watch=True, reconcile_seconds=30)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        [blocked] = [t for t in app.lanes.ids[Lane.ATTENTION] if app.graph.tasks[t].status == "blocked"]
        for other in [t for t in app.lanes.ids[Lane.ATTENTION] if t != blocked]:
            outside_write(sample, "task", "update", other, "--status", "pending")
        await wait_for(pilot, lambda: app.lanes.ids[Lane.ATTENTION] == [blocked], timeout=30, message="one card left in the lane")
        app.select(blocked)
        await pilot.pause()
        outside_write(sample, "task", "update", blocked, "--status", "pending")
        await wait_for(pilot, lambda: app.lanes.lane_index(blocked) is not None and app.lanes.lane_index(blocked)[0] != Lane.ATTENTION, timeout=30, message="the move shown")
        assert app.view.selected == blocked  # nothing is left where it was: the cursor goes with it
