"""The cursor stays on the selected card when agents move cards around it (more in
``test_selection_follows.py``)."""

from __future__ import annotations

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
