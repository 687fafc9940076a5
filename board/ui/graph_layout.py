"""Lay the task DAG out left to right by wave, with box-drawing edges. Textual-free.

One algorithm in one module (ordering, routing, drawing the rows), hence its length: its parts
share the layout's data and are read together.

Each wave is a column of one-line nodes, ``ROW_PITCH`` rows apart, in the order crossing the
fewest lines that a bounded search finds (see "ordering the waves" below). An edge that skips
waves is carried through every wave in between by a pass-through line on a row of its own (one
per blocker and wave, shared by all of that blocker's long edges), so edges only ever join
neighbouring columns.

In the gap between two columns an edge leaves its blocker on the blocker's row and enters its
dependent on the dependent's row, with an arrowhead. If the rows differ, it turns onto a vertical
*track* and back. Tracks and the rows they connect through are allotted so that lines never share
a cell by accident:

* an out-track belongs to one blocker and one direction (up or down): its tees are that
  blocker's edges forking;
* an in-track belongs to one dependent and one direction: its tees are edges joining into it;
* a *lane* (a row between nodes) carries one edge across the gap from an out-track to an
  in-track; an edge may instead run along its dependent's row (when nothing else enters or leaves
  on that row) or along its blocker's row (likewise).

So every tee (├ ┤ ┬ ┴) is a fork or a join of one node's edges, ┼ is always two edges crossing,
and no line ever runs leftwards: read left to right, the lines from a blocker reach exactly its
dependents.

Edges are kept as segments (a big board has millions of edge cells) and turned into a row of
cells only when that row is drawn: each cell gets a bitmask of directions, so forks, joins and
crossings become the right junction characters.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Container
from dataclasses import dataclass, field

from board.graph import TaskGraph, id_sort_key
from board.status import Status

#: Cells of a node: its label, truncated with an ellipsis, then one blank before the edges.
NODE_WIDTH = 24
#: The widest a node grows when the view has room to spare (``layout_to_fit``).
WIDEST_NODE = 56
#: x of the first column: room for nothing but a margin (nothing enters the first wave).
LEFT_MARGIN = 1
UP, DOWN, LEFT, RIGHT = 1, 2, 4, 8
BOX = {
    LEFT | RIGHT: "─", UP | DOWN: "│", DOWN | RIGHT: "╭", DOWN | LEFT: "╮", UP | RIGHT: "╰", UP | LEFT: "╯",
    UP | DOWN | RIGHT: "├", UP | DOWN | LEFT: "┤", LEFT | RIGHT | DOWN: "┬", LEFT | RIGHT | UP: "┴",
    UP | DOWN | LEFT | RIGHT: "┼", LEFT: "─", RIGHT: "─", UP: "│", DOWN: "│",
}
#: Directions each glyph joins, for tests and anything else that reads a drawn row back.
GLYPH_DIRECTIONS = {glyph: bits for bits, glyph in BOX.items() if bin(bits).count("1") > 1}
#: Narrow in every terminal (U+25B8 is not East Asian ambiguous width, unlike ▶).
ARROW = "▸"
GLYPH_DIRECTIONS[ARROW] = LEFT
#: Rows from one node to the next in a column: the rows between are lanes for edges, and
#: with two of them a gap rarely runs out of lanes near the nodes it connects.
ROW_PITCH = 3
#: Vertical segments are indexed by blocks of this many rows.
ROW_BLOCK = 64
#: Cells of a finished wave's column when finished waves are collapsed: its count and a blank.
COLLAPSED_WIDTH = 7
#: The dashboard collapses finished waves on boards showing more tasks than this.
COLLAPSE_ABOVE = 200
#: Lines in a channel are set a blank apart when the graph grows by at most this factor.
SPREAD_AT_MOST = 1.25

#: One end of a link in a gap: a task id, or ("express", blocker id) for a blocker's express.
Item = str | tuple[str, str]


@dataclass
class GraphLayout:
    #: Task ids per wave, top to bottom (pass-through lines not included).
    columns: list[list[str]] = field(default_factory=list)
    #: (wave, index in ``columns[wave]``) of every task.
    position: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Screen row of every task.
    row_of: dict[str, int] = field(default_factory=dict)
    #: x of the first cell of each column's labels.
    column_x: list[int] = field(default_factory=list)
    #: (x, task id) of the nodes on each row, left to right.
    nodes_by_row: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    #: Horizontal edge segments per row: (x0, x1, on the critical path, line: index in ``edges``).
    horizontals: dict[int, list[tuple[int, int, bool, int]]] = field(default_factory=dict)
    #: Vertical edge segments (x, y0, y1, critical, line), filed under every block of rows they
    #: cross, sorted.
    vertical_blocks: dict[int, list[tuple[int, int, int, bool, int]]] = field(default_factory=dict)
    critical: set[str] = field(default_factory=set)
    width: int = 0
    height: int = 0
    #: Cells of each node (``NODE_WIDTH`` unless the view had room for longer labels).
    node_width: int = NODE_WIDTH
    #: Blank cells between neighbouring tracks in a gap, plus one (2: the lines a blank apart).
    spread: int = 1
    #: Cells setting the tracks a blank apart would add to ``width`` (for a ``spread`` of 1).
    spread_cost: int = 0
    #: What each line carries: (blocker, the dependents reached through it). A segment names
    #: its line by index, so a chain of tasks can light exactly its own lines.
    edges: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    #: Indexes in ``edges`` of each blocker's lines.
    edges_of: dict[str, list[int]] = field(default_factory=dict)
    #: The wave (0 first) each column shows.
    waves: list[int] = field(default_factory=list)
    #: Columns of finished waves drawn collapsed, with how many tasks each holds.
    collapsed: dict[int, int] = field(default_factory=dict)

    def node_x(self, task_id: str) -> int:
        return self.column_x[self.position[task_id][0]]

    def column_width(self, column: int) -> int:
        return COLLAPSED_WIDTH if column in self.collapsed else self.node_width

    def chain_edges(self, chain: set[str]) -> set[int]:
        """The lines joining tasks of ``chain`` (a line carrying several edges, if any of them)."""
        lit = set()
        for blocker in chain:
            for edge in self.edges_of.get(blocker, ()):
                if any(dependent in chain for dependent in self.edges[edge][1]):
                    lit.add(edge)
        return lit

    def row_cells(self, y: int, lit: Container[int] = (), start: int = 0, end: int | None = None) -> dict[int, tuple[int, bool, bool]]:
        """Edge cells of one row from x = ``start`` to before ``end`` (default: all of it):
        x -> (direction bits, on the critical path, on a ``lit`` line)."""
        end = self.width if end is None else end
        cells: dict[int, tuple[int, bool, bool]] = {}
        for x0, x1, critical, edge in self.horizontals.get(y, ()):
            if x1 < start or x0 >= end:
                continue
            on = edge in lit
            for x in range(max(x0, start), min(x1, end - 1) + 1):
                bits = (LEFT if x > x0 else 0) | (RIGHT if x < x1 else 0)
                old_bits, old_critical, old_on = cells.get(x, (0, False, False))
                cells[x] = (old_bits | bits, old_critical or critical, old_on or on)
        block = self.vertical_blocks.get(y // ROW_BLOCK, [])
        for index in range(bisect.bisect_left(block, (start,)), len(block)):
            x, y0, y1, critical, edge = block[index]
            if x >= end:
                break
            if y0 <= y <= y1:
                bits = (UP if y > y0 else 0) | (DOWN if y < y1 else 0)
                old_bits, old_critical, old_on = cells.get(x, (0, False, False))
                cells[x] = (old_bits | bits, old_critical or critical, old_on or edge in lit)
        return cells

    def edge_glyphs(self, y: int, lit: Container[int] = (), start: int = 0, end: int | None = None) -> dict[int, tuple[str, bool, bool]]:
        """Edge characters of one row (from ``start`` to before ``end``): x -> (glyph, on the
        critical path, on a ``lit`` line); arrowheads included."""
        glyphs = {x: (BOX[bits], critical, on) for x, (bits, critical, on) in self.row_cells(y, lit, start, end).items() if bits}
        for x, _task_id in self.nodes_by_row.get(y, ()):
            if x - 1 in glyphs:
                glyphs[x - 1] = (ARROW, *glyphs[x - 1][1:])
        return glyphs

    def plain_row(self, y: int, label: Callable[[str], str]) -> str:
        """One row as plain text, each node drawn as ``label(task_id)`` cut to its width."""
        cells = [" "] * self.width
        for x, (glyph, _critical, _on) in self.edge_glyphs(y).items():
            cells[x] = glyph
        for x, task_id in self.nodes_by_row.get(y, ()):
            text = label(task_id)[: self.node_width - 1].ljust(self.node_width)
            cells[x : x + self.node_width] = text
        return "".join(cells).rstrip()

    def node_at(self, wave: int, index: int) -> str | None:
        if 0 <= wave < len(self.columns) and 0 <= index < len(self.columns[wave]):
            return self.columns[wave][index]
        return None

    def nearest_beside(self, column: int, step: int, row: int) -> str | None:
        """The task nearest ``row`` in the next column with tasks, ``step`` (-1 or 1) from ``column``."""
        column += step
        while 0 <= column < len(self.columns):
            if self.columns[column]:
                return self.nearest_in_column(column, row)
            column += step
        return None

    def nearest_in_column(self, wave: int, row: int) -> str | None:
        """The task of ``wave`` whose row is closest to ``row`` (the upper one on a tie)."""
        if not 0 <= wave < len(self.columns) or not self.columns[wave]:
            return None
        return min(self.columns[wave], key=lambda task_id: (abs(self.row_of[task_id] - row), self.row_of[task_id]))


def layout_to_fit(graph: TaskGraph, visible: set[str] | None, room: int, *, collapse_done: bool = False) -> GraphLayout:
    """``layout_graph`` for a view ``room`` cells wide. The lines turning in each channel are
    set a blank apart when that fits in the view or widens the graph by at most a quarter
    (``SPREAD_AT_MOST``): a few more cells to scroll, for lines that can be told apart. Room
    still to spare widens the nodes (up to ``WIDEST_NODE``) to show more of each subject."""
    layout = layout_graph(graph, visible, collapse_done=collapse_done)
    spaced_width = layout.width + layout.spread_cost
    if layout.spread_cost and (spaced_width <= room or spaced_width <= layout.width * SPREAD_AT_MOST):
        layout = layout_graph(graph, visible, spread=2, collapse_done=collapse_done)
    columns = len(layout.columns) - len(layout.collapsed)
    if columns <= 0 or layout.width >= room:
        return layout
    wider = min(WIDEST_NODE, NODE_WIDTH + (room - layout.width) // columns)
    if wider > NODE_WIDTH:
        return layout_graph(graph, visible, node_width=wider, spread=layout.spread, collapse_done=collapse_done)
    return layout


def finished_waves_collapse(shown: int) -> bool:
    """Whether a board of ``shown`` tasks collapses its finished waves (the dashboard's rule)."""
    return shown > COLLAPSE_ABOVE


def layout_graph(
    graph: TaskGraph, visible: set[str] | None = None, *, node_width: int = NODE_WIDTH, spread: int = 1, collapse_done: bool = False,
) -> GraphLayout:
    """Place ``visible`` tasks (default: all) and route the edges between them. With
    ``collapse_done``, a wave whose tasks are all completed is a narrow column of its count,
    and the lines from its tasks are left out."""
    waves = graph.waves()
    ids = [t for t in graph.tasks if visible is None or t in visible]
    by_wave: dict[int, list[str]] = {}
    for task_id in ids:
        by_wave.setdefault(waves.get(task_id, 0), []).append(task_id)
    # Compact the waves that survive filtering into consecutive columns.
    columns = [sorted(by_wave[wave], key=id_sort_key) for wave in sorted(by_wave)]
    collapsed: dict[int, int] = {}
    if collapse_done:
        for column, members in enumerate(columns):
            if all(graph.tasks[task_id].status == Status.COMPLETED for task_id in members):
                collapsed[column] = len(members)
                columns[column] = []
        ids = [task_id for members in columns for task_id in members]
    column_of = {task_id: column for column, members in enumerate(columns) for task_id in members}
    dependents: dict[str, list[str]] = {}
    for task_id in ids:
        for blocker in dict.fromkeys(graph.tasks[task_id].blocked_by):
            # A blocker in the same or a later column is only possible inside a cycle; cycles
            # are reported as alerts, not drawn.
            if blocker in column_of and column_of[blocker] < column_of[task_id]:
                dependents.setdefault(blocker, []).append(task_id)
    layout = GraphLayout(node_width=node_width, spread=spread, waves=sorted(by_wave), collapsed=collapsed)
    layout.columns = order_columns(columns, dependents, column_of)
    for column, members in enumerate(layout.columns):
        for index, task_id in enumerate(members):
            layout.position[task_id] = (column, index)
            layout.row_of[task_id] = ROW_PITCH * index
    column_count = len(layout.columns)
    row: dict[Item, int] = {task_id: y for task_id, y in layout.row_of.items()}

    critical_path = [t for t in graph.critical_path() if t in layout.position]
    layout.critical = set(critical_path)
    critical_edges = set(zip(critical_path, critical_path[1:]))

    def line(blocker: str, reached: list[str]) -> int:
        layout.edges.append((blocker, tuple(reached)))
        layout.edges_of.setdefault(blocker, []).append(len(layout.edges) - 1)
        return len(layout.edges) - 1

    # Links between neighbouring columns (gap g: column g to g + 1). A blocker's edges that
    # skip waves share an express: a line on a lane of its own from the gap after the blocker
    # to the gap before its farthest dependent, which they branch off like edges off a node.
    links: list[list[tuple[Item, Item, bool, int]]] = [[] for _ in range(max(0, column_count - 1))]
    reserved: list[set[int]] = [set() for _ in links]
    continuing: list[set[Item]] = [set() for _ in links]
    # (express, first gap, last gap, last critical gap, its far dependents by the gap they leave it in)
    expresses: list[tuple[Item, int, int, int, dict[int, list[str]]]] = []
    express_lanes: dict[int, tuple[list[int], list[int]]] = {}  # lane -> sorted first gaps, last gaps
    for blocker in sorted(dependents, key=lambda t: (layout.position[t][0], layout.row_of[t])):
        targets = dependents[blocker]
        start = layout.position[blocker][0]
        far = [t for t in targets if layout.position[t][0] > start + 1]
        for target in targets:
            if layout.position[target][0] == start + 1:
                links[start].append((blocker, target, (blocker, target) in critical_edges, line(blocker, [target])))
        if not far:
            continue
        express: Item = ("express", blocker)
        last_gap = max(layout.position[t][0] for t in far) - 1
        critical_gap = max((layout.position[t][0] - 1 for t in far if (blocker, t) in critical_edges), default=-1)
        row[express] = _express_lane(layout.row_of[blocker], start, last_gap, express_lanes)
        leaving: dict[int, list[str]] = {}
        for target in far:
            leaving.setdefault(layout.position[target][0] - 1, []).append(target)
        expresses.append((express, start, last_gap, critical_gap, leaving))
        links[start].append((blocker, express, critical_gap >= 0, line(blocker, far)))
        for gap in range(start, last_gap + 1):
            reserved[gap].add(row[express])
            if gap < last_gap:
                continuing[gap].add(express)
        for target in far:
            links[layout.position[target][0] - 1].append((express, target, (blocker, target) in critical_edges, line(blocker, [target])))

    height = max((ROW_PITCH * (len(members) - 1) + 1 for members in layout.columns), default=0)
    height = max([height, *(row[express] + 1 for express, *_ in expresses)])
    exit_xs: list[int] = []
    arrow_xs: list[int] = []
    x = LEFT_MARGIN
    for column, members in enumerate(layout.columns):
        layout.column_x.append(x)
        for task_id in members:
            layout.nodes_by_row.setdefault(row[task_id], []).append((x, task_id))
        x += layout.column_width(column)
        if column < column_count - 1:
            exit_xs.append(x)
            x, lowest = _route_gap(layout, links[column], row, reserved[column], continuing[column], x, spread)
            arrow_xs.append(x - 1)
            height = max(height, lowest + 1)
    # Each express runs from its first gap's arrowhead column to the start of its last gap, in
    # pieces between the gaps where dependents leave it: each piece is the line of the
    # dependents still ahead, amber as far as the gap before its critical dependent.
    for express, first_gap, last_gap, critical_gap, leaving in expresses:
        blocker = express[1]
        begin = arrow_xs[first_gap]
        ahead = [target for gap in sorted(leaving) for target in leaving[gap]]
        for gap in sorted(leaving):
            end = exit_xs[gap]
            _horizontal(layout, row[express], begin, end, critical_gap >= gap, line(blocker, ahead))
            ahead = ahead[len(leaving[gap]):]
            begin = end
    for block in layout.vertical_blocks.values():
        block.sort()  # by x: a row drawn in part finds its segments by bisection
    layout.width = x + 1
    layout.height = height
    return layout


def _express_lane(blocker_row: int, first_gap: int, last_gap: int, taken: dict[int, tuple[list[int], list[int]]]) -> int:
    """The lane nearest just under the blocker that no other express uses in these gaps."""
    distance = 1
    while True:
        for lane in (blocker_row + distance, blocker_row - distance):
            if lane < 1 or lane % ROW_PITCH == 0:
                continue
            starts, ends = taken.setdefault(lane, ([], []))
            at = bisect.bisect_left(starts, first_gap)
            if (at == 0 or ends[at - 1] < first_gap) and (at == len(starts) or starts[at] > last_gap):
                starts.insert(at, first_gap)
                ends.insert(at, last_gap)
                return lane
        distance += 1


def _horizontal(layout: GraphLayout, y: int, x0: int, x1: int, critical: bool, edge: int) -> None:
    if x0 != x1:
        layout.horizontals.setdefault(y, []).append((min(x0, x1), max(x0, x1), critical, edge))


def _vertical(layout: GraphLayout, x: int, y0: int, y1: int, critical: bool, edge: int) -> None:
    low, high = min(y0, y1), max(y0, y1)
    if low == high:
        return
    for block in range(low // ROW_BLOCK, high // ROW_BLOCK + 1):
        layout.vertical_blocks.setdefault(block, []).append((x, low, high, critical, edge))


def _route_gap(
    layout: GraphLayout,
    gap_links: list[tuple[Item, Item, bool, int]],
    row: dict[Item, int],
    express_lanes: set[int],
    continuing: set[Item],
    exit_x: int,
    spread: int = 1,
) -> tuple[int, int]:
    """Route the links of one gap, starting at ``exit_x`` (the first cell after the left
    column's labels), around the ``express_lanes`` running through it (``continuing`` are the
    expresses that go on past it), neighbouring tracks ``spread`` cells apart. Returns the x of
    the next column and the lowest row used."""
    outgoing: dict[Item, int] = {}
    incoming: dict[Item, int] = {}
    for left, right, _critical, _edge in gap_links:
        outgoing[left] = outgoing.get(left, 0) + 1
        incoming[right] = incoming.get(right, 0) + 1
    # Rows whose part of the gap is spoken for: a left item's edges leave along its row, a right
    # item's edges arrive along its row.
    leaving_rows = {row[item] for item in outgoing}
    arriving_rows = {row[item] for item in incoming}

    # Each bent link: (left, right, critical, line, via row, uses out-track, uses in-track).
    routes: list[tuple[Item, Item, bool, int, int, bool, bool]] = []
    lanes_taken = set(express_lanes)
    bent = []
    for left, right, critical, edge in gap_links:
        y0, y1 = row[left], row[right]
        if y0 == y1:
            routes.append((left, right, critical, edge, y0, False, False))
        elif incoming[right] == 1 and y1 not in leaving_rows:
            routes.append((left, right, critical, edge, y1, True, False))  # along the dependent's row
        elif outgoing[left] == 1 and y0 not in arriving_rows and left not in continuing:
            # Along the blocker's row. (An express going on past this gap would run on
            # through the dependent's in-track and seem to join it.)
            routes.append((left, right, critical, edge, y0, False, True))
        else:
            bent.append((left, right, critical, edge))
    # Short links first, so they get the lanes right next to their dependent.
    for left, right, critical, edge in sorted(bent, key=lambda link: (abs(row[link[1]] - row[link[0]]), row[link[1]], row[link[0]])):
        lane = _free_lane(row[left], row[right], lanes_taken)
        lanes_taken.add(lane)
        routes.append((left, right, critical, edge, lane, True, True))

    # Tracks: one per (item, direction); the rows each one spans.
    out_spans: dict[tuple[Item, bool], list[int]] = {}
    in_spans: dict[tuple[Item, bool], list[int]] = {}
    for left, right, _critical, _edge, via, out_track, in_track in routes:
        if out_track:
            span = out_spans.setdefault((left, via > row[left]), [row[left], row[left]])
            span[0], span[1] = min(span[0], via), max(span[1], via)
        if in_track:
            span = in_spans.setdefault((right, via < row[right]), [row[right], row[right]])
            span[0], span[1] = min(span[0], via), max(span[1], via)
    out_slot, out_count = _pack(out_spans)
    in_slot, in_count = _pack(in_spans)
    # The channel is as wide as its tracks need: out-tracks, a blank, in-tracks, a blank, the
    # arrowheads (each track ``spread`` cells from the next).
    out_x = {key: exit_x + 1 + spread * index for key, index in out_slot.items()}
    after_out = exit_x + 1 + (spread * (out_count - 1) + 1 if out_count else 0)
    in_start = after_out + (spread if out_count and in_count else 0)
    # The innermost in-tracks sit nearest their dependents (packed from the right).
    in_x = {key: in_start + spread * (in_count - 1 - index) for key, index in in_slot.items()}
    after_in = in_start + (spread * (in_count - 1) + 1 if in_count else 0)
    arrow_x = after_in + (spread if in_count else 0)
    if spread == 1:
        # What setting these tracks a blank apart would add (``layout_to_fit`` weighs it).
        layout.spread_cost += max(0, out_count - 1) + max(0, in_count - 1) + (1 if out_count and in_count else 0) + (1 if in_count else 0)

    lowest = 0
    for left, right, critical, edge, via, out_track, in_track in routes:
        y0, y1 = row[left], row[right]
        lowest = max(lowest, via, y0, y1)
        turn_out = out_x[(left, via > y0)] if out_track else None
        turn_in = in_x[(right, via < y1)] if in_track else None
        first = exit_x
        if turn_out is not None:
            _horizontal(layout, y0, exit_x, turn_out, critical, edge)
            _vertical(layout, turn_out, y0, via, critical, edge)
            first = turn_out
        if turn_in is not None:
            _horizontal(layout, via, first, turn_in, critical, edge)
            _vertical(layout, turn_in, via, y1, critical, edge)
            _horizontal(layout, y1, turn_in, arrow_x, critical, edge)
        else:
            _horizontal(layout, via, first, arrow_x, critical, edge)
    return arrow_x + 1, lowest


def _free_lane(source_row: int, target_row: int, taken: set[int]) -> int:
    """The free lane nearest the dependent, preferably between the two ends' rows.

    The dependent is on a node row; the source is a node or an express (on a lane)."""
    step = 1 if target_row > source_row else -1
    lane = target_row - step
    while (lane - source_row) * step > 0:
        if lane % ROW_PITCH and lane not in taken:
            return lane
        lane -= step
    # Every lane between is busy (a dense gap): go past the dependent, or past the source.
    past_target = target_row + step
    past_source = lane
    while True:
        for lane in (past_target, past_source):
            if lane >= 1 and lane % ROW_PITCH and lane not in taken:
                return lane
        past_target += step
        past_source -= step


def _pack(spans: dict[tuple[Item, bool], list[int]]) -> tuple[dict[tuple[Item, bool], int], int]:
    """Give each track a slot, sharing a slot between tracks whose rows don't meet.

    Shorter tracks get lower slots: a track nested inside a longer one then sits on the side
    where neither crosses the other's branches."""
    slots: list[tuple[list[int], list[int]]] = []  # per slot: sorted starts, matching ends
    placed: dict[tuple[Item, bool], int] = {}
    for key, (low, high) in sorted(spans.items(), key=lambda entry: (entry[1][1] - entry[1][0], entry[1][0])):
        for index, (starts, ends) in enumerate(slots):
            at = bisect.bisect_left(starts, low)
            if (at == 0 or ends[at - 1] < low) and (at == len(starts) or starts[at] > high):
                starts.insert(at, low)
                ends.insert(at, high)
                placed[key] = index
                break
        else:
            slots.append(([low], [high]))
            placed[key] = len(slots) - 1
    return placed, len(slots)


# -- ordering the waves ------------------------------------------------------------------------
#
# Crossings are made in the order of each column, so that order is searched for much as
# Graphviz's dot does (Gansner et al., "A technique for drawing directed graphs", 1993): sweeps
# that sort each column by the weighted median of its neighbours' places, down and up in turn,
# each followed by transpositions of neighbours that cross less swapped; the best order seen is
# kept. Rows are the same in every column (``ROW_PITCH`` per place), so places compare across
# columns. A blocker's pass-through line (dot's virtual nodes) runs on the lane just under it:
# at its blocker's place plus a fraction in every column it passes, and it is counted there,
# crossing what it crosses in each gap, with the edges it carries.

#: Sweeps at most (dot's MaxIter), and sweeps without a better order before giving up: dot waits
#: 8, but on layered boards the best order came within 4 sweeps of the one before it.
ORDER_SWEEPS = 24
ORDER_PATIENCE = 4
#: Edge visits the search may make: about half a second on a slow machine, which a 1,000-task
#: layered board does not reach and a 2,000-task one with long edges does (the dashboard lays a
#: board out again whenever its edges change). A budget counted in work, not in time, keeps the
#: layout of a board the same on every run and every machine (a redraw never shuffles it); a
#: board big enough to reach it keeps the best order found so far.
ORDER_BUDGET = 600_000
#: Where a pass-through line runs, in places: on the lane under its blocker.
_PASS_THROUGH = 1 / ROW_PITCH
#: Orders of recent boards, by their columns and edges: a change of status, a new view width
#: or wider labels lay the same graph out again, and need not search again. Two, as each key
#: holds every id and edge of a board.
_ORDER_CACHE: dict[tuple, list[list[str]]] = {}
_ORDER_CACHE_SIZE = 2
#: Layouts are made on the UI thread and in a worker: one at a time touches the cache.
_ORDER_CACHE_LOCK = threading.Lock()


def order_columns(columns: list[list[str]], dependents: dict[str, list[str]], column_of: dict[str, int]) -> list[list[str]]:
    """The tasks of each column in the order that crosses least. ``columns`` come sorted by id,
    which breaks every tie; ``dependents`` are each blocker's dependents in later columns."""
    key = (tuple(map(tuple, columns)), tuple((blocker, tuple(targets)) for blocker, targets in dependents.items()))
    with _ORDER_CACHE_LOCK:
        ordered = _ORDER_CACHE.get(key)
    if ordered is None:
        ordered = _order_columns(columns, dependents, column_of)
        with _ORDER_CACHE_LOCK:
            while len(_ORDER_CACHE) >= _ORDER_CACHE_SIZE:
                del _ORDER_CACHE[next(iter(_ORDER_CACHE))]
            _ORDER_CACHE[key] = ordered
    return [list(members) for members in ordered]


@dataclass
class _Layered:
    """The graph being ordered: nodes are indexes; ``near_*`` link neighbouring columns,
    ``far_*`` skip columns (carried by the blocker's pass-through line)."""

    layers: list[list[int]]
    column: list[int]
    near_up: list[list[int]]
    near_down: list[list[int]]
    far_up: list[list[int]]
    far_down: list[list[int]]
    #: The last gap each node's pass-through line reaches (-1: it has none).
    last_gap: list[int]
    position: list[int] = field(default_factory=list)

    def ends_above(self, node: int) -> list[float]:
        """Where the node's edges come from, in the column before it."""
        position = self.position
        ends: list[float] = [position[other] for other in self.near_up[node]]
        ends += [position[other] + _PASS_THROUGH for other in self.far_up[node]]
        ends.sort()
        return ends

    def ends_below(self, node: int) -> list[float]:
        """Where the node's edges go: its dependents, near and far."""
        position = self.position
        return sorted([position[other] for other in self.near_down[node]] + [position[other] for other in self.far_down[node]])

    def segments(self) -> int:
        """Lines in all the gaps: what counting the crossings visits."""
        count = sum(map(len, self.near_down)) + sum(map(len, self.far_down))
        for layer in self.layers:
            for node in layer:
                if self.far_down[node]:
                    count += self.last_gap[node] - self.column[node]
        return count

    def crossings(self) -> int:
        """Pairs of lines that cross in the gaps between columns."""
        position = self.position
        gaps: list[list[tuple[float, float]]] = [[] for _ in self.layers[:-1]]
        for gap, layer in enumerate(self.layers[:-1]):
            for node in layer:
                place = position[node]
                pairs = gaps[gap]
                for other in self.near_down[node]:
                    pairs.append((place, position[other]))
                if self.far_down[node]:
                    through = place + _PASS_THROUGH
                    pairs.append((place, through))
                    for passed in range(gap + 1, self.last_gap[node]):
                        gaps[passed].append((through, through))
                    for other in self.far_down[node]:
                        gaps[self.column[other] - 1].append((through, position[other]))
        total = 0
        for pairs in gaps:
            pairs.sort()
            seen: list[float] = []
            for _start, end in pairs:
                # Lines already seen leave above this one (or with it): those arriving below cross it.
                total += len(seen) - bisect.bisect_right(seen, end)
                bisect.insort(seen, end)
        return total


def _order_columns(columns: list[list[str]], dependents: dict[str, list[str]], column_of: dict[str, int]) -> list[list[str]]:
    names = [task_id for members in columns for task_id in members]
    index_of = {task_id: index for index, task_id in enumerate(names)}
    count = len(names)
    graph = _Layered(
        layers=[[index_of[task_id] for task_id in members] for members in columns],
        column=[column_of[task_id] for task_id in names],
        near_up=[[] for _ in names], near_down=[[] for _ in names],
        far_up=[[] for _ in names], far_down=[[] for _ in names],
        last_gap=[-1] * count,
    )
    for blocker, targets in dependents.items():
        upper = index_of[blocker]
        for target in targets:
            lower = index_of[target]
            if column_of[target] == column_of[blocker] + 1:
                graph.near_down[upper].append(lower)
                graph.near_up[lower].append(upper)
            else:
                graph.far_down[upper].append(lower)
                graph.far_up[lower].append(upper)
                graph.last_gap[upper] = max(graph.last_gap[upper], column_of[target] - 1)
    return [[names[node] for node in layer] for layer in _minimise_crossings(graph)]


def _minimise_crossings(graph: _Layered, budget: int | None = None) -> list[list[int]]:
    """Reorder each layer of ``graph`` to cross as few lines as the search finds."""
    budget = ORDER_BUDGET if budget is None else budget
    layers = graph.layers
    edges = sum(map(len, graph.near_down)) + sum(map(len, graph.far_down))
    graph.position = position = [0] * len(graph.column)
    for layer in layers:
        for index, node in enumerate(layer):
            position[node] = index
    if edges == 0 or len(layers) < 2:
        return layers
    # Start from one barycentre sweep down: cheap, and already most of the way on most boards.
    for layer in layers[1:]:
        _sort_layer(layer, graph.ends_above, position, _barycentre)
    # A sweep visits every edge, and counting crossings every line in every gap.
    sweep_work = edges + graph.segments()
    if 2 * sweep_work > budget:
        return layers  # too big to count twice: that first sweep's order it is
    best = [list(layer) for layer in layers]
    best_crossings = graph.crossings()
    work = sweep_work
    stale = 0
    for sweep in range(ORDER_SWEEPS):
        if best_crossings == 0 or stale >= ORDER_PATIENCE or work > budget:
            break
        if sweep % 2 == 0:
            for layer in layers[1:]:
                _sort_layer(layer, graph.ends_above, position, _weighted_median)
        else:
            for layer in reversed(layers[:-1]):
                _sort_layer(layer, graph.ends_below, position, _weighted_median)
        # Swapping neighbours that cross as much either way lets the search leave a plateau;
        # every other pair of sweeps does it, as dot does.
        work += sweep_work + _transpose(graph, equal_swaps=sweep % 4 < 2, budget=budget - work)
        crossings = graph.crossings()
        if crossings < best_crossings:
            best, best_crossings, stale = [list(layer) for layer in layers], crossings, 0
        else:
            stale += 1
            if crossings == best_crossings:
                best = [list(layer) for layer in layers]
    return best


def _barycentre(ends: list[float]) -> float:
    return sum(ends) / len(ends)


def _weighted_median(ends: list[float]) -> float:
    """The median of sorted places; of an even number, the two middle ones weighted towards the
    side where the places lie closer together (Gansner et al.)."""
    count = len(ends)
    middle = count // 2
    if count % 2:
        return ends[middle]
    if count == 2:
        return (ends[0] + ends[1]) / 2
    left = ends[middle - 1] - ends[0]
    right = ends[-1] - ends[middle]
    if left + right == 0:
        return (ends[middle - 1] + ends[middle]) / 2
    return (ends[middle - 1] * right + ends[middle] * left) / (left + right)


def _sort_layer(layer: list[int], ends_of: Callable[[int], list[float]], position: list[int], value: Callable[[list[float]], float]) -> None:
    """Sort ``layer`` by ``value`` of its nodes' edges' other ends; a node without edges on
    that side keeps its place, and ties keep their order."""
    keyed = []
    free = []
    for index, node in enumerate(layer):
        ends = ends_of(node)
        if ends:
            keyed.append((value(ends), index, node))
            free.append(index)
    keyed.sort()
    for index, (_value, _old, node) in zip(free, keyed):
        layer[index] = node
        position[node] = index


def _pair_crossings(upper: list[float], lower: list[float]) -> tuple[int, int]:
    """Crossings between the edges of two neighbouring nodes whose other ends are at the sorted
    places ``upper`` and ``lower``: as they are, and with the two nodes swapped."""
    below = not_above = 0
    for end in upper:
        below += bisect.bisect_left(lower, end)
        not_above += bisect.bisect_right(lower, end)
    # Each pair of ends is crossed one way or the other, unless it is one shared end.
    return below, len(upper) * len(lower) - not_above


def _transpose(graph: _Layered, *, equal_swaps: bool, budget: int) -> int:
    """Swap neighbours in a layer wherever that crosses less, until no swap helps or the budget
    is spent; returns the edge visits made."""
    layers, position = graph.layers, graph.position
    work = 0
    pending = [True] * len(layers)
    pair = _pair_crossings
    while work < budget:
        changed = False
        for layer_index, layer in enumerate(layers):
            if not pending[layer_index] or len(layer) < 2 or work >= budget:
                continue
            pending[layer_index] = False
            # The other ends' places, per place in the layer (the layers either side hold still).
            above = [graph.ends_above(node) for node in layer]
            below: list[list[float]] = [sorted([position[other] for other in graph.near_down[node]]) for node in layer]
            # Each pair of neighbours is weighed both ways: a few visits each, and one per end.
            work += 4 * len(layer) + sum(map(len, above)) + sum(map(len, below))
            gained = 0
            for index in range(len(layer) - 1):
                a_up, b_up, a_down, b_down = above[index], above[index + 1], below[index], below[index + 1]
                as_is_up, swapped_up = pair(a_up, b_up)
                as_is_down, swapped_down = pair(a_down, b_down)
                as_is, swapped = as_is_up + as_is_down, swapped_up + swapped_down
                if swapped < as_is or (equal_swaps and swapped == as_is and as_is > 0):
                    first, second = layer[index], layer[index + 1]
                    layer[index], layer[index + 1] = second, first
                    position[first], position[second] = index + 1, index
                    above[index], above[index + 1] = b_up, a_up
                    below[index], below[index + 1] = b_down, a_down
                    gained += as_is - swapped
            if gained > 0:
                changed = True
                for neighbour in (layer_index - 1, layer_index, layer_index + 1):
                    if 0 <= neighbour < len(layers):
                        pending[neighbour] = True
        if not changed:
            break
    return work
