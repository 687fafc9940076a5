"""Task text is shown, never obeyed: control characters and markup from task files reach the
screen as visible text."""

from __future__ import annotations

from pathlib import Path

import pytest

from board.store import Store
from tests.ui.conftest import make_app, settled, wait_for

pytestmark = pytest.mark.anyio

EVIL_SUBJECT = "retitle \x1b]0;pwned\x07 wipe \x1b[2J [bold red]markup[/] \u202eesrever \x9b"


def screen_text(app) -> str:
    """Every character on the screen, as the terminal would receive it between escapes."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_control_characters_and_markup_in_task_text_are_shown_not_obeyed(workspace: Path) -> None:
    store = Store.open(workspace)
    evil = store.create(EVIL_SUBJECT, description="line one\n\x1b[31mred\x1b[0m [link=http://x]click[/link]", owner="mal\x1blory")
    app = make_app(workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        shown = screen_text(app)
        assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown and "\u202e" not in shown
        assert "retitle \\x1b]0" in shown
        await pilot.press("enter")  # the detail view of the selected (only) task
        await wait_for(pilot, lambda: "\\x1b[31mred" in screen_text(app), message="the detail view with the description")
        detail = screen_text(app)
        assert "\x1b" not in detail and "[bold red]markup[/]" in detail and "mal\\x1blory" in detail
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await pilot.press("r", "e", "t", "i")
        await wait_for(pilot, lambda: "#1 retitle" in screen_text(app), message="the palette to offer the task")
        assert "\x1b" not in screen_text(app)
        await pilot.press("escape")
    assert evil.id == "1"
