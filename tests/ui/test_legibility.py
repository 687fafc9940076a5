"""Highlighted cards, graph nodes and muted text stay readable in every shipped theme.

The highlight backgrounds are translucent (``$primary 45%``, ``$foreground 10%``); painted at
full strength they hide the text drawn on them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.color import Color

from board.ui.widgets.agents_panel import AgentsPanel
from board.ui.widgets.alerts_panel import AlertsPanel
from board.ui.widgets.board_header import BoardHeader
from board.ui.widgets.component_styles import component_style
from board.ui.widgets.task_column import TaskColumn
from tests.ui.conftest import make_app, settled

pytestmark = pytest.mark.anyio

HIGHLIGHTS = ("selected", "related")


def luminance(color: Color) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = color.get_truecolor()
    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


def contrast(one: Color, other: Color) -> float:
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize("theme", ["board-dark", "board-light", "board-high-contrast"])
async def test_text_on_highlighted_cards_and_nodes_is_readable(sample: Path, theme: str) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        graph_view = app.graph_view  # made on first use, as ``g`` makes it
        app.theme = theme
        await pilot.pause()
        widgets = [app.query(TaskColumn).first(), graph_view]
        for widget in widgets:
            text = widget.rich_style.color
            assert text is not None
            for name in HIGHLIGHTS:
                background = widget.styles_by_name[name].bgcolor
                assert background is not None, (type(widget).__name__, name)
                ratio = contrast(text, background)
                assert ratio >= 3.0, f"{theme}: {type(widget).__name__} {name} text contrast {ratio:.2f}"


@pytest.mark.parametrize("theme", ["board-dark", "board-light", "board-high-contrast"])
async def test_muted_text_is_readable(sample: Path, theme: str) -> None:
    """Ages, percentages and counts are drawn in the muted colour: dimmer, never invisible."""
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        graph_view = app.graph_view  # made on first use, as ``g`` makes it
        app.theme = theme
        await pilot.pause()
        column = app.query(TaskColumn).first()  # the cards' styles, drawn on a column
        muted = column.styles_by_name["muted"].color
        assert muted is not None and column.rich_style.bgcolor is not None
        assert contrast(muted, column.rich_style.bgcolor) >= 3.0, f"{theme}: task-column muted text contrast"
        widgets = {
            "graph-view": graph_view,
            "board-header": app.query_one(BoardHeader),
            "agents-panel": app.query_one(AgentsPanel),
            "alerts-panel": app.query_one(AlertsPanel),
        }
        for prefix, widget in widgets.items():
            muted = component_style(widget, f"{prefix}--muted").color
            background = widget.rich_style.bgcolor
            assert muted is not None and background is not None, prefix
            ratio = contrast(muted, background)
            assert ratio >= 3.0, f"{theme}: {prefix} muted text contrast {ratio:.2f}"
