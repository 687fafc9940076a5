"""The footer of keys is made once and made again only when the keys it would show change: the
board says its bindings may have changed at every move of the cursor (``KeyFooter``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets._footer import FooterKey

from board.ui.lanes import Lane
from tests.ui.conftest import make_app, settled

pytestmark = pytest.mark.anyio


def footer_keys(app) -> list[FooterKey]:
    return list(app.screen.query(FooterKey))


async def test_a_move_between_cards_with_the_same_keys_keeps_the_footer_and_a_new_key_shows(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        ready = list(app.lanes.ids[Lane.READY])
        app.select(ready[0])
        await pilot.pause()
        before = footer_keys(app)
        assert "answer" not in {key.action for key in before}
        for task_id in ready[1:4]:  # ready tasks: the same keys on each
            app.select(task_id)
            await pilot.pause()
        after = footer_keys(app)
        assert [id(key) for key in after] == [id(key) for key in before], "the footer was made again for the same keys"

        app.jump_to("20")  # waiting on a person: "w Answer" shows
        await pilot.pause()
        await pilot.pause()
        assert "answer" in {key.action for key in footer_keys(app) if key.display}
        app.select(ready[0])
        await pilot.pause()
        await pilot.pause()
        assert "answer" not in {key.action for key in footer_keys(app)}


async def test_a_key_is_styled_once_as_the_footer_is_made(sample: Path) -> None:
    app = make_app(sample)
    restyled: list[str] = []
    update_styles = app.update_styles

    def counting(node, *args, **kwargs):
        if isinstance(node, FooterKey):
            restyled.append(node.action)
        return update_styles(node, *args, **kwargs)

    app.update_styles = counting  # type: ignore[method-assign]
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        keys = footer_keys(app)
        assert len(keys) > 10
        assert restyled == [], f"footer keys restyled one by one after they were made: {restyled}"
        assert all(key.has_class("-compact") == key.compact for key in keys)
        assert not any(key.has_class("-compact") for key in keys if not key.has_class("-command-palette"))

    narrow = make_app(sample)
    async with narrow.run_test(size=(100, 45)) as pilot:  # narrow: the compact style, every key
        await settled(pilot)
        assert all(key.has_class("-compact") and key.compact for key in footer_keys(narrow))


async def test_under_eighty_columns_the_palettes_key_stays_out_of_the_keys_grid(sample: Path) -> None:
    """On a narrow screen the keys take rows and the palette's key is left out (ctrl+p still
    opens it): from the first frame on, and after the footer is made again for a new key."""
    app = make_app(sample)
    async with app.run_test(size=(60, 45)) as pilot:
        await settled(pilot)
        palette = [key for key in footer_keys(app) if key.has_class("-command-palette")]
        assert len(palette) == 1 and not palette[0].display
        app.jump_to("20")  # waiting on a person: "w Answer" joins the keys, the footer is made again
        await pilot.pause()
        await pilot.pause()
        keys = footer_keys(app)
        assert "answer" in {key.action for key in keys if key.display}
        assert [key.display for key in keys if key.has_class("-command-palette")] == [False]
