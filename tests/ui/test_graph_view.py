"""The graph view following the person: the selected task's chain lit, the selection kept in
view, wave headers on top, the focus view (f), finished waves collapsed, a board too big to lay
out whole, and layouts made in a worker that a newer change supersedes."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.widgets import ContentSwitcher

from board.graph import TaskGraph
from board.model import Task
from board.status import Status
from board.store import Store
from board.ui import graph_layout
from board.ui.graph_layout import ARROW, DOWN, LEFT, RIGHT, UP, GraphLayout, layout_graph
from board.ui.widgets import graph_view
from board.ui.widgets.graph_view import HEADER_ROWS, GraphView
from tests.bench.big_board import build_big_board
from tests.ui.conftest import make_app, settled, wait_for
from tests.ui.test_graph_layout import STEPS, assert_drawn_faithfully

pytestmark = pytest.mark.anyio


def chain_of(graph: TaskGraph, task_id: str) -> set[str]:
    return {task_id} | graph.ancestors(task_id) | graph.descendants(task_id)


def lit_reach(layout: GraphLayout, lit: set[int], blocker: str) -> set[str]:
    """Dependents whose arrowheads the lit cells from ``blocker`` lead to, never moving left
    and never stepping on a dimmed cell (``┼``: straight on)."""
    def glyph(x: int, y: int) -> tuple[str, bool] | None:
        for node_x, _task_id in layout.nodes_by_row.get(y, ()):
            if node_x <= x < node_x + layout.node_width:
                return None
        found = layout.edge_glyphs(y, lit).get(x)
        return None if found is None else (found[0], found[2])

    from board.ui.graph_layout import GLYPH_DIRECTIONS

    start = (layout.node_x(blocker) + layout.node_width, layout.row_of[blocker])
    reached: set[str] = set()
    seen: set[tuple[int, int, int]] = set()
    todo = [(*start, LEFT)]
    while todo:
        x, y, came_from = todo.pop()
        if (x, y, came_from) in seen:
            continue
        seen.add((x, y, came_from))
        cell = glyph(x, y)
        if cell is None or not cell[1]:
            continue
        char, _on = cell
        bits = GLYPH_DIRECTIONS.get(char, 0)
        if not bits & came_from:
            continue
        if char == ARROW:
            reached.update(task_id for node_x, task_id in layout.nodes_by_row.get(y, ()) if node_x == x + 1)
            continue
        onward = STEPS[came_from][2] if char == "┼" else bits & ~came_from
        for direction in (UP, DOWN, RIGHT):
            if onward & direction:
                dx, dy, back = STEPS[direction]
                todo.append((x + dx, y + dy, back))
    return reached


@pytest.mark.parametrize("selected", ["7", "12", "1", "32"])
def test_the_lit_lines_of_a_chain_lead_exactly_from_each_task_of_it_to_its_dependents_in_it(sample: Path, selected: str) -> None:
    graph = Store.open(sample).graph
    layout = layout_graph(graph)
    chain = chain_of(graph, selected)
    lit = layout.chain_edges(chain)
    for blocker in layout.position:
        drawn_to = {d for d in graph.dependents(blocker) if d in layout.position and layout.position[d][0] > layout.position[blocker][0]}
        if blocker in chain:
            assert lit_reach(layout, lit, blocker) == drawn_to & chain, f"#{blocker} in the chain of #{selected}"
        else:
            assert lit_reach(layout, lit, blocker) == set(), f"#{blocker} is off the chain of #{selected}"


def node_label_colours(view: GraphView, task_id: str) -> set[tuple[int, int, int]]:
    layout = view.graph_layout
    strip = view.render_line(layout.row_of[task_id] - int(view.scroll_y) + HEADER_ROWS)
    start = layout.node_x(task_id) - int(view.scroll_x)
    colours, offset = set(), 0
    for segment in strip:
        if start <= offset < start + layout.node_width - 1 and segment.text.strip() and segment.style and segment.style.color:
            colours.add(segment.style.color.get_truecolor())
        offset += segment.cell_length
    return colours


async def test_the_graph_view_is_made_at_the_first_g_with_the_selection_in_view(sample: Path) -> None:
    """A board watched as a kanban never makes the graph's view (its module, styles and widget
    were a twelfth of the time to the first frame); the first ``g`` makes it, laid out for
    the board as it is by then and scrolled to the task selected."""
    app = make_app(sample)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        assert not app.query(GraphView)
        app.jump_to("16")  # far right on the sample's graph: the view must scroll to show it
        await pilot.pause()
        await pilot.press("g")
        view = app.graph_view
        assert app.query_one(GraphView) is view and view.has_focus
        await wait_for(pilot, lambda: "16" in view.graph_layout.position and view.selection_in_view(), message="#16 laid out and in view")
        assert view.scroll_x > 0
        await pilot.press("g")
        await pilot.pause()
        assert app.query_one(ContentSwitcher).current == "kanban" and app.query_one(GraphView) is view and not view.display
        await pilot.press("g")
        await pilot.pause()
        assert app.query_one(GraphView) is view and view.display  # made once


async def test_selecting_a_task_lights_its_whole_chain_and_dims_the_rest(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(200, 50)) as pilot:
        await settled(pilot)
        app.jump_to("7")
        await pilot.press("g")
        view = app.graph_view
        await wait_for(pilot, lambda: "7" in view.graph_layout.position, message="the layout")
        assert view.chain == chain_of(app.graph, "7")
        dimmed = view.styles_by_name["dimmed"].color.get_truecolor()
        shown = set(view.graph_layout.position)
        assert shown - view.chain and view.chain - {"7"}
        checked = 0
        for task_id in shown:
            x = view.graph_layout.node_x(task_id) - view.scroll_x
            if not -1 < view.graph_layout.row_of[task_id] - view.scroll_y < view.size.height - HEADER_ROWS or not 0 <= x <= view.size.width - view.graph_layout.node_width:
                continue  # out of view
            checked += 1
            colours = node_label_colours(view, task_id)
            if task_id in view.chain:
                assert dimmed not in colours, f"#{task_id} is on the chain of #7"
            else:
                assert colours == {dimmed}, f"#{task_id} is off the chain of #7"
        assert checked >= 15
        # Another selection, another chain.
        app.select("26")
        await pilot.pause()
        assert view.chain == chain_of(app.graph, "26") == {"2", "26"} and node_label_colours(view, "7") == {dimmed}
        # A task nothing drawn joins (#32 neither waits nor is waited on) dims nothing.
        app.select("32")
        await pilot.pause()
        assert chain_of(app.graph, "32") == {"32"} and view.chain is None
        assert dimmed not in node_label_colours(view, "7") | node_label_colours(view, "26")


async def test_the_selected_node_stays_in_view_moving_far_right_and_down_under_wave_headers(tmp_path: Path) -> None:
    workspace = build_big_board(tmp_path / "big", 600)
    app = make_app(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        await pilot.press("g")
        view = app.graph_view
        await wait_for(pilot, lambda: not view.laying_out and bool(view.graph_layout.columns), timeout=60, message="the layout")
        await pilot.press("h", "h", "h")  # to the first wave
        for key, times in (("l", 12), ("j", 25), ("l", 6), ("k", 3)):
            for _ in range(times):
                await pilot.press(key)
                await pilot.pause()
                assert view.selection_in_view(), f"after {key}: #{app.view.selected} out of view at {view.scroll_offset}"
        layout = view.graph_layout
        assert view.scroll_x > 0 and view.scroll_y > 0
        assert layout.position[app.view.selected or ""][0] >= 10
        # The headers stay on the top row, scrolled sideways with the columns.
        header = view.render_line(0).text
        column = next(c for c, x in enumerate(layout.column_x) if x >= view.scroll_x)
        assert f"wave {layout.waves[column] + 1} · {len(layout.columns[column])}" in header
        # A column cut by the left edge keeps its label at the edge.
        view.scroll_to(x=layout.column_x[column - 1] + 3, animate=False, immediate=True)
        await pilot.pause()
        assert view.scroll_x == layout.column_x[column - 1] + 3
        assert view.render_line(0).text.startswith(f"wave {layout.waves[column - 1] + 1} ·")


async def test_f_shows_exactly_the_selected_tasks_chain_and_f_or_escape_goes_back(sample: Path) -> None:
    app = make_app(sample)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        app.jump_to("12")
        await pilot.press("g")
        view = app.graph_view
        whole = set(view.graph_layout.position)
        assert whole == app.lanes.placed_ids()
        await pilot.press("f")
        await wait_for(pilot, lambda: view.focus_on == "12" and not view.laying_out, message="the focus view")
        assert set(view.graph_layout.position) == chain_of(app.graph, "12") & app.lanes.placed_ids()
        assert view.border_title and "Focus on #12" in str(view.border_title)
        assert_drawn_faithfully(_shown_graph(app.graph, view), view.graph_layout)
        await pilot.press("escape")
        await wait_for(pilot, lambda: view.focus_on is None, message="the whole board")
        assert set(view.graph_layout.position) == whole and "Focus" not in str(view.border_title)
        await pilot.press("f", "f")
        await pilot.pause()
        assert view.focus_on is None and set(view.graph_layout.position) == whole
        # A task selected outside the focus view (a jump) brings the whole board back.
        await pilot.press("f")
        await wait_for(pilot, lambda: view.focus_on == "12", message="the focus view again")
        assert "32" not in view.graph_layout.position
        app.jump_to("32")
        await wait_for(pilot, lambda: "32" in view.graph_layout.position, message="the whole board with #32")
        assert view.focus_on is None and set(view.graph_layout.position) == whole and view.selection_in_view()
        app.jump_to("12")
        await pilot.pause()
        # Out of a focus view, escape is the dashboard's again: it clears the filter.
        await pilot.press("slash", *"@alice", "enter")
        await wait_for(pilot, lambda: bool(app.task_query.text), message="the filter")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.task_query.text, message="the filter cleared")


def _shown_graph(graph: TaskGraph, view: GraphView) -> TaskGraph:
    """The graph of the tasks a view shows, blockers outside it dropped."""
    shown = set(view.graph_layout.position)
    return TaskGraph(task.model_copy(update={"blocked_by": [b for b in task.blocked_by if b in shown]}) for task_id, task in graph.tasks.items() if task_id in shown)


async def test_a_board_too_big_to_lay_out_whole_shows_the_selected_tasks_neighbourhood(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph_view, "WHOLE_GRAPH_LIMIT", 5)
    monkeypatch.setattr(graph_view, "NEIGHBOURHOOD_LIMIT", 4)
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.jump_to("7")
        await pilot.press("g")
        view = app.graph_view
        await wait_for(pilot, lambda: "7" in view.graph_layout.position, message="the neighbourhood")
        assert app.query_one(ContentSwitcher).current == "graph"
        assert set(view.graph_layout.position) == app.graph.neighbourhood("7", 4) & app.lanes.placed_ids()
        assert "Around #7" in str(view.border_title)
        # Selected elsewhere (from the kanban, a jump): the neighbourhood follows.
        app.jump_to("30")
        await wait_for(pilot, lambda: "30" in view.graph_layout.position, message="the neighbourhood of #30")
        assert set(view.graph_layout.position) == app.graph.neighbourhood("30", 4) & app.lanes.placed_ids()


def test_a_neighbourhood_takes_the_nearest_relatives_first() -> None:
    # 1 <- 2 <- 3 <- 4 <- 5, and 3 <- 6 <- 7: from 3, one step each way before two.
    edges = {"1": [], "2": ["1"], "3": ["2"], "4": ["3"], "5": ["4"], "6": ["3"], "7": ["6"], "8": []}
    graph = TaskGraph(Task(id=t, subject=t, blocked_by=b) for t, b in edges.items())
    assert graph.neighbourhood("3", 100) == chain_of(graph, "3") == {"1", "2", "3", "4", "5", "6", "7"}
    assert graph.neighbourhood("3", 4) == {"3", "2", "4", "6"}
    assert graph.neighbourhood("3", 5) == {"3", "2", "4", "6", "1"}
    assert graph.neighbourhood("3", 1) == {"3"}


def finished_board() -> TaskGraph:
    """Two finished waves, then work in progress and waiting."""
    tasks = [Task(id=str(n), subject=f"Task {n}", status=Status.COMPLETED) for n in range(1, 4)]
    tasks += [Task(id=str(n), subject=f"Task {n}", status=Status.COMPLETED, blocked_by=["1", "2"]) for n in range(4, 6)]
    tasks += [Task(id="6", subject="Task 6", status=Status.IN_PROGRESS, blocked_by=["4", "3"]), Task(id="7", subject="Task 7", blocked_by=["6", "5"])]
    tasks += [Task(id="8", subject="Task 8", blocked_by=["1", "6"]), Task(id="9", subject="Task 9", blocked_by=["8", "2"])]
    return TaskGraph(tasks)


def test_finished_waves_collapse_to_a_count_and_the_rest_is_drawn_faithfully() -> None:
    graph = finished_board()
    layout = layout_graph(graph, collapse_done=True)
    assert layout.collapsed == {0: 3, 1: 2} and layout.columns[:2] == [[], []]
    assert set(layout.position) == {"6", "7", "8", "9"}
    assert [layout.column_width(c) for c in range(2)] == [graph_layout.COLLAPSED_WIDTH] * 2
    assert layout.column_x[2] < layout_graph(graph).column_x[2]  # narrower than the waves drawn whole
    # The cursor steps over collapsed columns: nothing to the left of the first drawn wave.
    assert layout.nearest_beside(2, -1, 0) is None
    assert layout.nearest_beside(0, 1, 0) == layout.columns[2][0]
    kept = {t for t in graph.tasks if t in layout.position}
    assert_drawn_faithfully(TaskGraph(task.model_copy(update={"blocked_by": [b for b in task.blocked_by if b in kept]}) for task in graph.tasks.values() if task.id in kept), layout)
    # The rule: only boards of more than COLLAPSE_ABOVE tasks collapse.
    assert not graph_layout.finished_waves_collapse(graph_layout.COLLAPSE_ABOVE)
    assert graph_layout.finished_waves_collapse(graph_layout.COLLAPSE_ABOVE + 1)
    # A wave with one task not done stays whole.
    graph.put(graph.tasks["5"].model_copy(update={"status": Status.PENDING}))
    assert layout_graph(graph, collapse_done=True).collapsed == {0: 3}



def layouts_shown(monkeypatch: pytest.MonkeyPatch) -> list[GraphLayout]:
    """Every layout the graph view installs, in order, as it installs it."""
    shown: list[GraphLayout] = []
    install = GraphView._install
    monkeypatch.setattr(GraphView, "_install", lambda self, layout: (shown.append(layout), install(self, layout))[1])
    return shown

async def test_a_newer_change_supersedes_a_layout_still_in_the_worker(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph_view, "INLINE_LAYOUT_LIMIT", 0)  # every layout in the worker
    release = threading.Event()
    made: list[tuple[int, GraphLayout]] = []
    real = graph_view.make_layout

    def held(job: graph_view.LayoutJob) -> GraphLayout:
        layout = real(job)
        if not made:
            release.wait(30)  # the first layout stays in flight until the test lets it go
        made.append((job.generation, layout))
        return layout

    monkeypatch.setattr(graph_view, "make_layout", held)
    shown = layouts_shown(monkeypatch)
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await pilot.press("g")
        view = app.graph_view
        await wait_for(pilot, lambda: view.laying_out, message="the first layout under way")
        assert "laying out" in view.render_line(HEADER_ROWS).text and not view.graph_layout.columns
        # Keys are answered meanwhile, and a newer change (a filter) asks for another layout.
        await pilot.press("slash", *"@carol", "enter")
        await wait_for(pilot, lambda: bool(app.task_query.text), message="the filter")
        release.set()
        await wait_for(pilot, lambda: not view.laying_out, message="the newest layout")
        # Two layouts made: the first, and the newest (changes while it was held wait as one).
        assert len(made) == 2 and made[0][0] < made[1][0] == view.generation
        assert shown == [made[1][1]], "the superseded layout was shown"
        assert set(view.graph_layout.position) == app.lanes.placed_ids() != set(made[0][1].position)
        # The next change keeps the layout there on screen until its own is ready.
        before = view.graph_layout
        await pilot.press("escape")  # the filter cleared
        assert view.graph_layout is before or not view.laying_out
        await wait_for(pilot, lambda: not view.laying_out, message="the whole board again")
        assert set(view.graph_layout.position) == app.lanes.placed_ids() and view.graph_layout is not before


async def test_the_view_collapses_finished_waves_on_a_board_over_the_limit_and_says_so(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(sample)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        await pilot.press("slash", *"status:completed", "enter")
        await wait_for(pilot, lambda: bool(app.task_query.text), message="the filter")
        done = app.lanes.placed_ids()
        await pilot.press("g")
        view = app.graph_view
        await wait_for(pilot, lambda: set(view.graph_layout.position) == done, message="the finished tasks drawn")
        assert not view.graph_layout.collapsed  # a small board shows them
        monkeypatch.setattr(graph_layout, "COLLAPSE_ABOVE", len(done) - 1)
        view.board_changed(structure=True, task_ids=set())
        await wait_for(pilot, lambda: bool(view.graph_layout.collapsed), message="the finished waves collapsed")
        layout = view.graph_layout
        assert sum(layout.collapsed.values()) == len(done) and not layout.position
        header = view.render_line(0).text
        assert [f"✓{count}" for count in layout.collapsed.values()] == header.split()
        assert f"finished waves collapsed: {len(done)} tasks" in str(view.border_title)


async def test_a_board_changing_faster_than_it_is_laid_out_still_shows_a_newer_layout_every_few(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each layout is superseded while in flight; after SUPERSEDED_AT_MOST dropped in a row, the
    next one is shown while the newest is made, so the view never stays on its first layout."""
    monkeypatch.setattr(graph_view, "INLINE_LAYOUT_LIMIT", 0)
    gates = [threading.Event() for _ in range(8)]
    made: list[GraphLayout] = []
    real = graph_view.make_layout

    def held(job: graph_view.LayoutJob) -> GraphLayout:
        gate = gates[len(made)]
        layout = real(job)
        made.append(layout)
        gate.wait(30)
        return layout

    monkeypatch.setattr(graph_view, "make_layout", held)
    shown = layouts_shown(monkeypatch)
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await pilot.press("g")
        view = app.graph_view
        for step in range(graph_view.SUPERSEDED_AT_MOST + 1):
            await wait_for(pilot, lambda step=step: len(made) == step + 1, message=f"layout {step} under way")
            view.board_changed(structure=True, task_ids=set())  # supersedes it
            gates[step].set()
            await wait_for(pilot, lambda step=step: len(made) == step + 2, message=f"layout {step + 1} started")
        assert shown == [made[graph_view.SUPERSEDED_AT_MOST]], "the third superseded layout is shown meanwhile"
        assert view.laying_out
        gates[graph_view.SUPERSEDED_AT_MOST + 1].set()
        await wait_for(pilot, lambda: not view.laying_out, message="the newest layout")
        assert shown == made[graph_view.SUPERSEDED_AT_MOST :] and view.graph_layout is made[-1]
