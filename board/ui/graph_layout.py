"""Lay the task DAG out left to right by wave, with box-drawing edges. Textual-free.

Each wave is a column of one-line nodes on even rows; the odd rows between them are free lanes.
An edge between neighbouring waves turns once in the gap before its target; a longer edge drops
into the free lane under its target's row, runs along it, and climbs into the target. Edges are
kept as segments (a big board has millions of edge cells) and turned into a row of cells only
when that row is drawn: each cell gets a bitmask of directions, so crossing and merging edges
become the right junction characters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from board.graph import TaskGraph, id_sort_key

NODE_WIDTH = 24
GAP = 6
UP, DOWN, LEFT, RIGHT = 1, 2, 4, 8
BOX = {
    LEFT | RIGHT: "─", UP | DOWN: "│", DOWN | RIGHT: "┌", DOWN | LEFT: "┐", UP | RIGHT: "└", UP | LEFT: "┘",
    UP | DOWN | RIGHT: "├", UP | DOWN | LEFT: "┤", LEFT | RIGHT | DOWN: "┬", LEFT | RIGHT | UP: "┴",
    UP | DOWN | LEFT | RIGHT: "┼", LEFT: "─", RIGHT: "─", UP: "│", DOWN: "│",
}
ARROW = "▶"
#: Vertical segments are indexed by blocks of this many rows.
ROW_BLOCK = 64


@dataclass
class GraphLayout:
    #: Task ids per wave, top to bottom.
    columns: list[list[str]] = field(default_factory=list)
    #: (wave, index) of every task.
    position: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Horizontal edge segments per row: (x0, x1, on the critical path).
    horizontals: dict[int, list[tuple[int, int, bool]]] = field(default_factory=dict)
    #: Vertical edge segments (x, y0, y1, critical), filed under every block of rows they cross.
    vertical_blocks: dict[int, list[tuple[int, int, int, bool]]] = field(default_factory=dict)
    critical: set[str] = field(default_factory=set)
    width: int = 0
    height: int = 0

    @staticmethod
    def node_x(wave: int) -> int:
        return GAP + wave * (NODE_WIDTH + GAP)

    @staticmethod
    def node_y(index: int) -> int:
        return 2 * index

    def row_cells(self, y: int) -> dict[int, tuple[int, bool]]:
        """Edge cells of one row: x -> (direction bits, on the critical path)."""
        cells: dict[int, tuple[int, bool]] = {}
        for x0, x1, critical in self.horizontals.get(y, ()):
            for x in range(x0, x1 + 1):
                bits = (LEFT if x > x0 else 0) | (RIGHT if x < x1 else 0)
                old_bits, old_critical = cells.get(x, (0, False))
                cells[x] = (old_bits | bits, old_critical or critical)
        for x, y0, y1, critical in self.vertical_blocks.get(y // ROW_BLOCK, ()):
            if y0 <= y <= y1:
                bits = (UP if y > y0 else 0) | (DOWN if y < y1 else 0)
                old_bits, old_critical = cells.get(x, (0, False))
                cells[x] = (old_bits | bits, old_critical or critical)
        return cells

    def node_at(self, wave: int, index: int) -> str | None:
        if 0 <= wave < len(self.columns) and 0 <= index < len(self.columns[wave]):
            return self.columns[wave][index]
        return None


def layout_graph(graph: TaskGraph, visible: set[str] | None = None) -> GraphLayout:
    """Place ``visible`` tasks (default: all) and route the edges between them."""
    waves = graph.waves()
    ids = [t for t in graph.tasks if visible is None or t in visible]
    by_wave: dict[int, list[str]] = {}
    for task_id in ids:
        by_wave.setdefault(waves.get(task_id, 0), []).append(task_id)
    layout = GraphLayout()
    # Compact the waves that survive filtering into consecutive columns.
    for column, wave in enumerate(sorted(by_wave)):
        members = by_wave[wave]
        if column == 0:
            members.sort(key=id_sort_key)
        else:
            # Barycentre of the blockers' rows keeps edges short and crossings few.
            def centre(task_id: str) -> tuple[float, tuple[int, int, str]]:
                rows = [layout.position[b][1] for b in graph.tasks[task_id].blocked_by if b in layout.position]
                return (sum(rows) / len(rows) if rows else float("inf"), id_sort_key(task_id))

            members.sort(key=centre)
        layout.columns.append(members)
        for index, task_id in enumerate(members):
            layout.position[task_id] = (column, index)
    critical_path = [t for t in graph.critical_path() if t in layout.position]
    layout.critical = set(critical_path)
    critical_edges = set(zip(critical_path, critical_path[1:]))
    for task_id, (column, index) in layout.position.items():
        for blocker in graph.tasks[task_id].blocked_by:
            if blocker in layout.position:
                _route(layout, layout.position[blocker], (column, index), (blocker, task_id) in critical_edges)
    layout.width = GraphLayout.node_x(len(layout.columns)) + 1
    layout.height = max((2 * len(c) for c in layout.columns), default=0)
    return layout


def _route(layout: GraphLayout, source: tuple[int, int], target: tuple[int, int], critical: bool) -> None:
    (source_col, source_index), (target_col, target_index) = source, target
    if target_col <= source_col:
        return  # only possible inside a cycle; those are reported as alerts, not drawn
    y0, y1 = GraphLayout.node_y(source_index), GraphLayout.node_y(target_index)
    start = GraphLayout.node_x(source_col) + NODE_WIDTH
    entry = GraphLayout.node_x(target_col) - 2
    arrow_x = GraphLayout.node_x(target_col) - 1

    def horizontal(y: int, x0: int, x1: int) -> None:
        layout.horizontals.setdefault(y, []).append((min(x0, x1), max(x0, x1), critical))

    def vertical(x: int, y_from: int, y_to: int) -> None:
        lo, hi = min(y_from, y_to), max(y_from, y_to)
        for block in range(lo // ROW_BLOCK, hi // ROW_BLOCK + 1):
            layout.vertical_blocks.setdefault(block, []).append((x, lo, hi, critical))

    if target_col == source_col + 1:
        horizontal(y0, start, entry)
        if y1 != y0:
            vertical(entry, y0, y1)
        horizontal(y1, entry, arrow_x)
    else:
        lane = y1 + 1
        drop = start + 2
        horizontal(y0, start, drop)
        vertical(drop, y0, lane)
        horizontal(lane, drop, entry)
        vertical(entry, lane, y1)
        horizontal(y1, entry, arrow_x)
