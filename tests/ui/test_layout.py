"""How the dashboard lays itself out as the terminal changes size."""

from __future__ import annotations

from pathlib import Path

import pytest

from board.ui.app import PANELS_MIN_WIDTH
from tests.ui.conftest import FIXED_NOW, make_app, settled

pytestmark = pytest.mark.anyio


async def test_the_side_panels_follow_the_new_size_both_ways(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        side = app.query_one("#side")
        assert side.display and not side.has_class("hidden")
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert side.has_class("hidden"), "shrunk below the panels' width, the panels still take room"
        from board.ui.widgets.task_column import TaskColumn

        lane_widths = [column.size.width for column in app.query(TaskColumn)]
        assert lane_widths and min(lane_widths) >= 14, lane_widths
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        assert not side.has_class("hidden"), "grown past the panels' width, the panels stay hidden"
        await pilot.resize_terminal(PANELS_MIN_WIDTH - 1, 40)
        await pilot.pause()
        assert side.has_class("hidden")


async def test_panels_the_person_toggled_stay_as_they_chose_across_resizes(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        side = app.query_one("#side")
        await pilot.press("i")
        assert side.has_class("hidden")
        await pilot.resize_terminal(170, 45)
        await pilot.pause()
        assert side.has_class("hidden")


async def test_ages_and_heartbeats_move_on_an_idle_board(sample: Path) -> None:
    from datetime import timedelta

    from board.ui.widgets.agents_panel import AgentsPanel
    from board.ui.widgets.task_column import TaskColumn
    from tests.ui.conftest import FIXED_NOW, wait_for

    clock = [FIXED_NOW]
    app = make_app(sample, now=lambda: clock[0], live_clock=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        agents = app.query_one(AgentsPanel)
        column = next(c for c in app.query(TaskColumn) if c.ids and "#7 " in c.render_line(0).text)
        assert "♥20s" in str(agents.render())
        card_head = column.render_line(0).text
        assert card_head.rstrip().endswith("alice 2h"), card_head
        clock[0] = FIXED_NOW + timedelta(days=3)
        await wait_for(pilot, lambda: "♥3d" in str(agents.render()) and column.render_line(0).text.rstrip().endswith("alice 3d"), message="ages to move on with no change on disk")


async def test_an_idle_tick_redraws_nothing_that_reads_the_same(sample: Path) -> None:
    """Once a second the clock moves the ages on screen; where no age reads differently, the
    panels are not rebuilt (an idle dashboard should cost next to nothing)."""
    from datetime import timedelta

    from board.ui.widgets.alerts_panel import AlertList
    from board.ui.widgets.agents_panel import AgentsPanel

    clock = [FIXED_NOW + timedelta(hours=1)]  # every age on screen in minutes or more
    app = make_app(sample, now=lambda: clock[0])
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        listing = app.query_one(AlertList)
        agents = app.query_one(AgentsPanel)
        clock[0] += timedelta(minutes=2)  # the alerts, raised at open, read "2m" now
        app._tick()
        await pilot.pause()
        options, shown, text = listing.get_option_at_index(0), agents._ages_shown, str(listing.get_option_at_index(0).prompt)
        clock[0] += timedelta(seconds=1)
        app._tick()
        await pilot.pause()
        assert listing.get_option_at_index(0) is options and agents._ages_shown is shown  # nothing read differently
        clock[0] += timedelta(hours=2)
        app._tick()
        await pilot.pause()
        assert str(listing.get_option_at_index(0).prompt) != text and agents._ages_shown != shown
        assert listing.get_option_at_index(0) is options  # the same rows: new text in place, no rebuild
