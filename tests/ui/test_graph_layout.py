"""The dependency graph as drawn: read the plain text back and follow the lines by eye's rules.

A reader follows a line from the right side of a blocker, left to right: at a tee the line forks
(or other lines join it), at ┼ two lines cross and each goes straight on, and an arrowhead ▸
enters the node right of it. Every blocker's lines must reach exactly its dependents.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from board.graph import TaskGraph
from board.model import Task
from board.store import Store
from board.ui import graph_layout
from board.ui.graph_layout import ARROW, DOWN, GLYPH_DIRECTIONS, LEFT, NODE_WIDTH, RIGHT, UP, WIDEST_NODE, GraphLayout, layout_graph, layout_to_fit
from board.ui.widgets.graph_view import HEADER_ROWS
from tests.bench.big_board import build_big_board
from tests.ui.conftest import make_app, settled

pytestmark = pytest.mark.anyio  # the widget test runs on asyncio (anyio ships with watchfiles)

#: direction -> (dx, dy, the direction pointing back)
STEPS = {UP: (0, -1, DOWN), DOWN: (0, 1, UP), LEFT: (-1, 0, RIGHT), RIGHT: (1, 0, LEFT)}


def drawn(layout: GraphLayout) -> list[str]:
    """The layout as plain text, every node labelled ``#id`` then padded with dots."""
    return [layout.plain_row(y, lambda task_id: f"#{task_id}".ljust(layout.node_width - 1, ".")) for y in range(layout.height)]


def cell(lines: list[str], x: int, y: int) -> str:
    if 0 <= y < len(lines) and 0 <= x < len(lines[y]):
        return lines[y][x]
    return " "


def label_at(layout: GraphLayout, x: int, y: int) -> str | None:
    """The task whose label starts at (x, y), if any."""
    for node_x, task_id in layout.nodes_by_row.get(y, ()):
        if node_x == x:
            return task_id
    return None


def directions(lines: list[str], layout: GraphLayout, x: int, y: int) -> int:
    """Directions the glyph at (x, y) joins; nothing inside a label."""
    for node_x, _task_id in layout.nodes_by_row.get(y, ()):
        if node_x <= x < node_x + layout.node_width:
            return 0
    return GLYPH_DIRECTIONS.get(cell(lines, x, y), 0)


def dangling_ends(layout: GraphLayout, lines: list[str]) -> list[tuple[int, int, str]]:
    """Edge cells joining towards a neighbour that does not join back (checked from both
    sides, this also catches a neighbour joining towards a cell that ignores it).

    A line may end only at a label: on its left at the blank after a blocker's label, on its
    right at an arrowhead, which joins only leftwards."""
    problems = []
    for y, line in enumerate(lines):
        for x in range(len(line)):
            bits = directions(lines, layout, x, y)
            for direction, (dx, dy, back) in STEPS.items():
                if not bits & direction or directions(lines, layout, x + dx, y + dy) & back:
                    continue
                leaves_a_blocker = direction == LEFT and label_at(layout, x - layout.node_width, y) is not None
                if not leaves_a_blocker:
                    problems.append((x, y, line[x]))
    return problems


def reached(layout: GraphLayout, lines: list[str], blocker: str) -> set[str]:
    """Dependents whose arrowheads the lines from ``blocker`` lead to, never moving left."""
    x, y = layout.node_x(blocker) + layout.node_width, layout.row_of[blocker]
    if not directions(lines, layout, x, y) & LEFT:
        return set()
    found: set[str] = set()
    seen: set[tuple[int, int, int]] = set()
    todo = [(x, y, LEFT)]
    while todo:
        x, y, came_from = todo.pop()
        if (x, y, came_from) in seen:
            continue
        seen.add((x, y, came_from))
        glyph = cell(lines, x, y)
        bits = directions(lines, layout, x, y)
        if not bits & came_from:
            continue
        if glyph == ARROW:
            dependent = label_at(layout, x + 1, y)
            assert dependent is not None, f"arrowhead at ({x}, {y}) points at no node"
            found.add(dependent)
            continue
        onward = bits & ~came_from
        if glyph == "┼":  # a crossing: straight on
            onward = STEPS[came_from][2]
        for direction in (UP, DOWN, RIGHT):
            if onward & direction:
                dx, dy, back = STEPS[direction]
                todo.append((x + dx, y + dy, back))
    return found


def assert_drawn_faithfully(graph: TaskGraph, layout: GraphLayout) -> None:
    lines = drawn(layout)
    assert dangling_ends(layout, lines) == []
    for y, line in enumerate(lines):
        for x, char in enumerate(line):
            if char == ARROW:
                assert label_at(layout, x + 1, y), f"row {y}: arrowhead at {x} with no node right of it"
    for blocker in graph.tasks:
        column = layout.position[blocker][0]
        dependents = {d for d in graph.dependents(blocker) if layout.position[d][0] > column}
        for dependent in dependents:
            # A line leaves the blocker's right side and ends in an arrowhead at the dependent's left.
            assert directions(lines, layout, layout.node_x(blocker) + layout.node_width, layout.row_of[blocker]) & LEFT
            assert cell(lines, layout.node_x(dependent) - 1, layout.row_of[dependent]) == ARROW
        assert reached(layout, lines, blocker) == dependents, f"lines from #{blocker}\n" + "\n".join(lines)


def small_board() -> TaskGraph:
    """Fan-out, fan-in, an edge skipping two waves, a lone task and a critical chain."""
    edges = {"1": [], "2": [], "3": ["1"], "4": ["1", "2"], "5": ["2"], "6": ["3", "4"], "7": ["1", "5"], "8": ["6", "2"], "9": []}
    return TaskGraph(Task(id=task_id, subject=f"Task {task_id}", blocked_by=blockers) for task_id, blockers in edges.items())


def test_small_dag_every_line_leaves_its_blocker_and_reaches_exactly_its_dependents() -> None:
    graph = small_board()
    layout = layout_graph(graph)
    assert [sorted(column) for column in layout.columns] == [["1", "2", "9"], ["3", "4", "5"], ["6", "7"], ["8"]]
    assert_drawn_faithfully(graph, layout)
    lines = drawn(layout)
    # #1's edge to #3 on the same row runs straight: label, a blank, then the line.
    assert lines[layout.row_of["1"]][layout.node_x("1") : layout.node_x("3")].startswith("#1" + "." * (NODE_WIDTH - 3) + " ─")
    # #9 has no dependents: no line starts after its label.
    assert cell(lines, layout.node_x("9") + NODE_WIDTH, layout.row_of["9"]) == " "


def test_filtered_board_draws_only_edges_between_shown_tasks() -> None:
    graph = small_board()
    layout = layout_graph(graph, visible={"1", "2", "4", "8"})
    assert layout.columns == [["1", "2"], ["4"], ["8"]]
    lines = drawn(layout)
    assert dangling_ends(layout, lines) == []
    assert reached(layout, lines, "1") == {"4"} and reached(layout, lines, "2") == {"4", "8"}


def test_sample_board_graph_has_no_dangling_or_false_connections(sample: Path) -> None:
    graph = Store.open(sample).graph
    layout = layout_graph(graph)
    assert_drawn_faithfully(graph, layout)
    assert layout.width > 5 * NODE_WIDTH  # wider than a narrow pane: the view scrolls


def test_large_board_graph_stays_faithful(tmp_path: Path) -> None:
    graph = Store.open(build_big_board(tmp_path / "big", 600)).graph
    assert_drawn_faithfully(graph, layout_graph(graph))


async def test_graph_view_draws_the_selected_node_readably(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("32")  # ready: its status colour is the selection's colour
        await pilot.press("g")
        await pilot.pause()
        view = app.graph_view
        layout = view.graph_layout
        y = layout.row_of["32"] - int(view.scroll_y) + HEADER_ROWS
        strip = view.render_line(y)
        text = "".join(segment.text for segment in strip)
        assert "#32 Benchmark the JS…" in text
        start = layout.node_x("32") - int(view.scroll_x)
        offset = 0
        label_styles = []
        for segment in strip:
            if start <= offset < start + NODE_WIDTH - 1 and segment.text.strip():
                label_styles.append(segment.style)
            offset += segment.cell_length
        assert label_styles
        for style in label_styles:
            assert style.bgcolor is not None and style.color is not None
            assert style.color.get_truecolor() != style.bgcolor.get_truecolor(), "label text drawn in its background colour"
        # Edges are dimmer than labels: the translucent edge colour is blended, not dropped.
        edge_colours = {
            segment.style.color.get_truecolor() for segment in view.render_line(layout.row_of["1"] - int(view.scroll_y) + HEADER_ROWS)
            if segment.style and segment.style.color and set(segment.text) <= set("─┬┴╮╯╭╰├┤│┼▸")
        }
        assert edge_colours and view.rich_style.color.get_truecolor() not in edge_colours


def test_lines_are_set_apart_when_it_costs_little_width_then_nodes_widen_keeping_every_edge(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = small_board()
    narrow = layout_graph(graph)
    spaced = layout_graph(graph, spread=2)
    assert spaced.width == narrow.width + narrow.spread_cost > narrow.width and spaced.node_width == NODE_WIDTH
    assert spaced.width <= narrow.width * graph_layout.SPREAD_AT_MOST
    assert_drawn_faithfully(graph, spaced)
    # A quarter wider at most: spaced even in a view too narrow for it.
    fitted = layout_to_fit(graph, None, room=narrow.width - 1)
    assert (fitted.spread, fitted.node_width, fitted.width) == (2, NODE_WIDTH, spaced.width)
    # More room widens the nodes of the spaced layout with what is left.
    fitted = layout_to_fit(graph, None, room=spaced.width + 40)
    assert fitted.spread == 2 and fitted.node_width == NODE_WIDTH + 40 // len(narrow.columns) and fitted.width <= spaced.width + 40
    assert_drawn_faithfully(graph, fitted)
    assert layout_to_fit(graph, None, room=10_000).node_width == WIDEST_NODE
    # Where spacing would cost too much width, it is done only when the view has the room.
    monkeypatch.setattr(graph_layout, "SPREAD_AT_MOST", 1.0)
    assert layout_to_fit(graph, None, room=spaced.width - 1).spread == 1
    assert layout_to_fit(graph, None, room=spaced.width).spread == 2
    assert layout_to_fit(graph, None, room=narrow.width - 1).node_width == NODE_WIDTH  # no room: as before


def spaced_tracks(layout: GraphLayout) -> bool:
    """Whether no two vertical lines of the drawing stand in neighbouring cells of a row."""
    for y in range(layout.height):
        xs = sorted(x for x, (bits, _critical, _lit) in layout.row_cells(y).items() if bits & (UP | DOWN))
        if any(b - a == 1 for a, b in zip(xs, xs[1:])):
            return False
    return True


def test_spaced_channels_keep_vertical_lines_a_blank_apart(sample: Path) -> None:
    graph = Store.open(sample).graph
    assert not spaced_tracks(layout_graph(graph))  # the tight layout has lines side by side
    spaced = layout_graph(graph, spread=2)
    assert spaced_tracks(spaced)
    assert_drawn_faithfully(graph, spaced)


@pytest.mark.anyio
async def test_a_small_board_in_a_wide_terminal_shows_whole_subjects_in_the_graph(workspace: Path) -> None:
    store = Store.open(workspace)
    first = store.create("Write the project charter and API sketch").id
    store.create("Design the database schema and migrations", blocked_by=[first])
    app = make_app(workspace)
    async with app.run_test(size=(160, 40)) as pilot:
        await settled(pilot)
        await pilot.press("g")
        await pilot.pause()
        screen_text = "\n".join(app.graph_view.render_line(y).text for y in range(4))
        assert "Write the project charter and API sketch" in screen_text
        assert "Design the database schema and migrations" in screen_text


def test_a_row_drawn_in_part_is_that_part_of_the_whole_row(tmp_path: Path) -> None:
    graph = Store.open(build_big_board(tmp_path / "big", 600)).graph
    layout = layout_graph(graph)
    lit = layout.chain_edges(set(list(layout.position)[::3]))
    for y in range(0, layout.height, 7):
        whole = layout.edge_glyphs(y, lit)
        for start in range(0, layout.width, 97):
            end = start + 80
            assert layout.edge_glyphs(y, lit, start, end) == {x: glyph for x, glyph in whole.items() if start <= x < end}, (y, start)
