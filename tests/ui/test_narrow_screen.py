"""A narrow screen (a phone's browser, a split pane): one lane at a time, switched with ``[`` and
``]`` (keys in the footer, to tap), and every key of the footer within reach in rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets._footer import FooterKey

from board.ui.lanes import Lane
from board.ui.widgets.kanban import ONE_LANE_BELOW
from tests.ui.conftest import make_app, settled

pytestmark = pytest.mark.anyio


def shown_lanes(app) -> list[Lane]:
    return [lane for lane, column in app.kanban.columns.items() if column.display]


def footer_keys_on_screen(app) -> set[str]:
    """The keys the footer draws: displayed, and inside the screen."""
    width, height = app.size
    return {
        key.key for key in app.screen.query(FooterKey)
        if key.display and key.region.width and key.region.right <= width and key.region.bottom <= height
    }


async def test_under_eighty_columns_one_lane_shows_and_the_lane_keys_switch_it(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(48, 50)) as pilot:
        await settled(pilot)
        assert 48 < ONE_LANE_BELOW
        first = shown_lanes(app)
        assert len(first) == 1
        column = app.kanban.columns[first[0]]
        assert column.region.width >= 40  # the lane has the screen's width to itself
        seen = [first[0]]
        for _ in range(len(Lane)):
            await pilot.press("]")
            await pilot.pause()
            (lane,) = shown_lanes(app)
            seen.append(lane)
        assert set(seen) == set(Lane) and seen[-1] == seen[0]  # every lane, round to the first
        await pilot.press("[")
        await pilot.pause()
        assert shown_lanes(app) == [seen[-2]]
        # Every key the footer offers is on screen, the lane keys among them.
        offered = {binding.key for (_, binding, enabled, _) in app.screen.active_bindings.values() if binding.show}
        assert {"left_square_bracket", "right_square_bracket", "question_mark", "q"} <= offered
        assert offered - {"ctrl+p"} <= footer_keys_on_screen(app)


async def test_a_wide_screen_shows_every_lane_and_no_lane_keys(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        assert shown_lanes(app) == list(Lane)
        offered = {binding.key for (_, binding, enabled, _) in app.screen.active_bindings.values() if binding.show}
        assert not {"left_square_bracket", "right_square_bracket"} & offered
        await pilot.resize_terminal(60, 40)
        await pilot.pause()
        assert len(shown_lanes(app)) == 1
        await pilot.resize_terminal(140, 40)
        await pilot.pause()
        assert shown_lanes(app) == list(Lane)


async def test_on_a_narrow_screen_a_tasks_details_take_the_whole_width(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(52, 56)) as pilot:
        await settled(pilot)
        await pilot.press("enter")
        await pilot.pause()
        main, side = app.screen.query_one("#detail-main"), app.screen.query_one("#detail-side")
        assert main.region.width >= 48 and side.region.width >= 48  # one above the other
        assert side.region.y >= main.region.bottom
        await pilot.resize_terminal(140, 40)
        await pilot.pause()
        assert side.region.x >= main.region.right  # side by side again
