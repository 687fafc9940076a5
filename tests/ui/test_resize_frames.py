"""A terminal resized: the first frame the dashboard draws is the whole new screen, as a dashboard
started at that size draws it; no frame of the old layout, clipped to the new size, comes first."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.ui.conftest import make_app, settled

pytestmark = pytest.mark.anyio


def screen_lines(app) -> tuple[tuple[int, int], list[str]]:
    """What the terminal shows once the frame just drawn is out: the screen's composed lines,
    at the size the screen was laid out for, as the terminal clips them."""
    compositor = app.screen._compositor
    width, height = app.size
    lines = [strip.text[:width] for strip in compositor.render_strips()[:height]]
    return (compositor.size.width, compositor.size.height), lines


#: The glyphs of a scrollbar's thumb ends (cards and bars use none of them).
SCROLLBAR_GLYPHS = str.maketrans("▁▂▃▄▅▆▇", "       ")


def without_scrollbars(lines: list[str]) -> list[str]:
    return [line.translate(SCROLLBAR_GLYPHS) for line in lines]


async def quiet(pilot, *, rounds: int = 3, timeout: float = 10.0) -> None:
    """Wait until the app has had nothing to do for a few rounds: no message waiting, no layout
    or repaint pending."""
    app = pilot.app
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    calm = 0
    while calm < rounds:
        if loop.time() > deadline:
            raise AssertionError("the dashboard did not settle")
        await pilot.pause()
        busy = any(node._message_queue.qsize() for node in (app, app.screen, *app.screen.walk_children()))
        calm = 0 if busy or app.screen._layout_required or app.screen._dirty_widgets else calm + 1


async def fresh_screen(workspace: Path, size: tuple[int, int]) -> list[str]:
    app = make_app(workspace)
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        app.clear_notifications()
        await quiet(pilot)
        return screen_lines(app)[1]


async def test_the_first_frame_after_a_resize_is_the_new_screen_whole(sample: Path) -> None:
    expected = await fresh_screen(sample, (80, 24))
    app = make_app(sample)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        app.clear_notifications()
        await quiet(pilot)
        frames: list[tuple[tuple[int, int], list[str]]] = []
        display = app._display

        def record(screen, renderable) -> None:
            display(screen, renderable)
            if renderable is not None and screen is app.screen:
                frames.append(screen_lines(app))

        app._display = record  # every frame the app puts out, as the terminal would show it
        await pilot.resize_terminal(80, 24)
        await quiet(pilot)
        assert frames, "nothing drawn after the resize"
        assert screen_lines(app) == ((80, 24), expected)  # settled: as a dashboard started at 80×24
        stale = [laid_out for laid_out, _ in frames if laid_out != (80, 24)]
        assert not stale, f"frames drawn after the resize were laid out for {stale}: the old layout, clipped to the new size"
        # The first frame is the new screen whole. (A column's scrollbar, which the new height
        # calls for, is Textual's to add once the column knows its size: the next frame.)
        _, first = frames[0]
        assert without_scrollbars(first) == without_scrollbars(expected), "\n".join(f"{a!r}\n{b!r}" for a, b in zip(first, expected) if a != b)


async def test_the_first_frame_has_the_scrollbars_of_columns_taller_than_the_screen(tmp_path: Path) -> None:
    """A column taller than the terminal gets its scrollbar before the first layout: Textual would
    find it missing after that layout and lay the screen out again, a second frame."""
    from board.store import Store
    from board.ui.lanes import Lane

    store = Store.open(tmp_path, create=True)
    for n in range(14):  # 14 ready cards, 56 rows: taller than the 45-row terminal
        store.create(f"Task {n}")
    store.close()
    app = make_app(tmp_path)
    #: Each column in the first frame: its scrollbar drawn, its cards' height, its room.
    first: dict[Lane, tuple[bool, int, int]] = {}
    display = app._display

    def first_frame(*args, **kwargs):
        if not first:
            drawn = app.screen._compositor._full_map  # the layout this frame was drawn from
            first.update({lane: (c._vertical_scrollbar in drawn, c.virtual_size.height, c.container_size.height) for lane, c in app.kanban.columns.items()})
        return display(*args, **kwargs)

    app._display = first_frame  # type: ignore[method-assign]
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        await quiet(pilot)
        shown, tall, room = first[Lane.READY]
        assert tall > 45 and shown, first[Lane.READY]
        for lane, column in app.kanban.columns.items():  # and Textual, laid out since, agrees
            assert column.show_vertical_scrollbar == (column.virtual_size.height > column.container_size.height) == first[lane][0], (lane, first[lane])
