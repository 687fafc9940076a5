"""The order of the tasks in each wave of the dependency graph: as few crossings as can be, and
the same order every time for the same board."""

from __future__ import annotations

import itertools
import random

from board.graph import TaskGraph
from board.model import Task
from board.ui import graph_layout
from board.ui.graph_layout import GraphLayout, layout_graph
from tests.ui.test_graph_layout import assert_drawn_faithfully, drawn


def graph_of(edges: dict[str, list[str]]) -> TaskGraph:
    return TaskGraph(Task(id=task_id, subject=f"Task {task_id}", blocked_by=blockers) for task_id, blockers in edges.items())


def neighbour_edges(graph: TaskGraph, layout: GraphLayout) -> list[tuple[str, str]]:
    return [
        (blocker, task_id)
        for task_id, task in graph.tasks.items()
        for blocker in task.blocked_by
        if layout.position[task_id][0] == layout.position[blocker][0] + 1
    ]


def crossings(edges: list[tuple[str, str]], column: dict[str, int], place: dict[str, int]) -> int:
    """Pairs of edges leaving the same column whose ends lie in opposite orders."""
    return sum(
        1
        for (a, b), (c, d) in itertools.combinations(edges, 2)
        if column[a] == column[c] and (place[a] - place[c]) * (place[b] - place[d]) < 0
    )


def drawn_crossings(graph: TaskGraph, layout: GraphLayout) -> int:
    column = {task_id: wave for task_id, (wave, _index) in layout.position.items()}
    return crossings(neighbour_edges(graph, layout), column, layout.row_of)


def fewest_crossings(graph: TaskGraph, layout: GraphLayout) -> int:
    """The least any order of the waves' tasks crosses, found by trying every one."""
    edges = neighbour_edges(graph, layout)
    column = {task_id: wave for task_id, (wave, _index) in layout.position.items()}
    best = None
    for orders in itertools.product(*(itertools.permutations(members) for members in layout.columns)):
        place = {task_id: index for members in orders for index, task_id in enumerate(members)}
        count = crossings(edges, column, place)
        best = count if best is None else min(best, count)
    return best or 0


def fresh_layout(graph: TaskGraph) -> GraphLayout:
    graph_layout._ORDER_CACHE.clear()  # search, not remember
    return layout_graph(graph)


def test_a_board_that_can_be_drawn_without_crossings_is() -> None:
    # A ladder of 6 waves of 5 tasks, each waiting on the task at its place and the one after it
    # in the wave before; the ids are shuffled so that id order crosses almost everywhere.
    rng = random.Random(3)
    ids = [str(n) for n in range(1, 31)]
    rng.shuffle(ids)
    grid = [ids[wave * 5 : wave * 5 + 5] for wave in range(6)]
    edges: dict[str, list[str]] = {}
    for wave, members in enumerate(grid):
        for place, task_id in enumerate(members):
            edges[task_id] = [] if wave == 0 else [grid[wave - 1][place]] + ([grid[wave - 1][place + 1]] if place < 4 else [])
    graph = graph_of(edges)
    by_id = GraphLayout(position={t: (w, i) for w, members in enumerate(grid) for i, t in enumerate(sorted(members, key=int))})
    by_id.row_of = {t: i for t, (_w, i) in by_id.position.items()}
    assert drawn_crossings(graph, by_id) > 10  # what sorting each wave by id would draw
    layout = fresh_layout(graph)
    assert drawn_crossings(graph, layout) == 0
    assert_drawn_faithfully(graph, layout)


def test_a_small_board_gets_its_fewest_crossings() -> None:
    # Three waves whose least crossing order has 8 crossings (every order of each wave tried).
    graph = graph_of({
        "1": [], "2": [], "3": [], "4": [],
        "5": ["4", "1"], "6": ["2", "4"], "7": ["3", "1"], "8": ["2", "3"],
        "9": ["8", "5"], "10": ["6", "7"], "11": ["5", "8", "6"],
    })
    layout = fresh_layout(graph)
    assert [sorted(members, key=int) for members in layout.columns] == [["1", "2", "3", "4"], ["5", "6", "7", "8"], ["9", "10", "11"]]
    least = fewest_crossings(graph, layout)
    assert least == 8
    assert drawn_crossings(graph, layout) == least


def test_fewer_crossings_than_one_barycentre_sweep_on_a_layered_board() -> None:
    # 10 waves of 8, each task after the first waiting on two of the wave before.
    rng = random.Random(11)
    edges: dict[str, list[str]] = {}
    previous: list[str] = []
    for wave in range(10):
        current = [str(wave * 8 + place + 1) for place in range(8)]
        for task_id in current:
            edges[task_id] = rng.sample(previous, 2) if previous else []
        previous = current
    graph = graph_of(edges)
    layout = fresh_layout(graph)
    # One sweep of barycentres from id order, what the layout did before it searched.
    place: dict[str, int] = {}
    column: dict[str, int] = {}
    for wave, members in enumerate(layout.columns):
        members = sorted(members, key=int)
        if wave:
            members.sort(key=lambda t: (sum(place[b] for b in edges[t]) / 2, int(t)))
        for index, task_id in enumerate(members):
            place[task_id], column[task_id] = index, wave
    one_sweep = crossings(neighbour_edges(graph, layout), column, place)
    assert drawn_crossings(graph, layout) < 0.85 * one_sweep
    assert_drawn_faithfully(graph, layout)


def test_the_same_board_is_laid_out_the_same_way_every_time() -> None:
    rng = random.Random(5)
    edges = {str(n): rng.sample([str(m) for m in range(max(1, n - 12), n)], k=min(n - 1, 2)) for n in range(1, 60)}
    graph = graph_of(edges)
    first = fresh_layout(graph)
    assert fresh_layout(graph).columns == first.columns
    # Nor does the order the board lists its tasks in matter.
    reversed_graph = graph_of(dict(reversed(list(edges.items()))))
    assert fresh_layout(reversed_graph).columns == first.columns
    assert layout_graph(graph).columns == first.columns  # remembered: the same again


def test_ids_break_ties() -> None:
    # Every order of each wave crosses as much: ids decide, as numbers.
    graph = graph_of({"10": [], "9": [], "100": ["9", "10"], "11": ["9", "10"], "2": []})
    assert fresh_layout(graph).columns == [["2", "9", "10"], ["11", "100"]]


def test_edges_that_skip_waves_are_ordered_with_the_rest(monkeypatch) -> None:
    # Three tasks wait on #1 from two and three waves on: its pass-through line crosses what
    # it crosses as much as any edge does. Drawn, no order of the waves shows fewer crossings.
    graph = graph_of({
        "1": [], "2": [], "3": [], "4": ["2"], "5": ["3", "1"], "6": ["3"],
        "7": ["4", "1"], "8": ["6", "2"], "9": ["5", "1"], "10": ["7", "8"],
    })
    layout = fresh_layout(graph)
    assert_drawn_faithfully(graph, layout)

    def crossed(layout: GraphLayout) -> int:
        return sum(line.count("┼") for line in drawn(layout))

    fewest = None
    for orders in itertools.product(*(itertools.permutations(members) for members in layout.columns)):
        monkeypatch.setattr(graph_layout, "order_columns", lambda *_args, orders=orders: [list(members) for members in orders])
        count = crossed(layout_graph(graph))
        fewest = count if fewest is None else min(fewest, count)
    assert crossed(layout) == fewest == 3
