"""Lay the task DAG out left to right by wave, with box-drawing edges. Textual-free.

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
from collections.abc import Callable
from dataclasses import dataclass, field

from board.graph import TaskGraph, id_sort_key

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
    #: Horizontal edge segments per row: (x0, x1, on the critical path).
    horizontals: dict[int, list[tuple[int, int, bool]]] = field(default_factory=dict)
    #: Vertical edge segments (x, y0, y1, critical), filed under every block of rows they cross.
    vertical_blocks: dict[int, list[tuple[int, int, int, bool]]] = field(default_factory=dict)
    critical: set[str] = field(default_factory=set)
    width: int = 0
    height: int = 0
    #: Cells of each node (``NODE_WIDTH`` unless the view had room for longer labels).
    node_width: int = NODE_WIDTH

    def node_x(self, task_id: str) -> int:
        return self.column_x[self.position[task_id][0]]

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

    def edge_glyphs(self, y: int) -> dict[int, tuple[str, bool]]:
        """Edge characters of one row: x -> (glyph, on the critical path); arrowheads included."""
        glyphs = {x: (BOX[bits], critical) for x, (bits, critical) in self.row_cells(y).items() if bits}
        for x, _task_id in self.nodes_by_row.get(y, ()):
            if x - 1 in glyphs:
                glyphs[x - 1] = (ARROW, glyphs[x - 1][1])
        return glyphs

    def plain_row(self, y: int, label: Callable[[str], str]) -> str:
        """One row as plain text, each node drawn as ``label(task_id)`` cut to its width."""
        cells = [" "] * self.width
        for x, (glyph, _critical) in self.edge_glyphs(y).items():
            cells[x] = glyph
        for x, task_id in self.nodes_by_row.get(y, ()):
            text = label(task_id)[: self.node_width - 1].ljust(self.node_width)
            cells[x : x + self.node_width] = text
        return "".join(cells).rstrip()

    def node_at(self, wave: int, index: int) -> str | None:
        if 0 <= wave < len(self.columns) and 0 <= index < len(self.columns[wave]):
            return self.columns[wave][index]
        return None

    def nearest_in_column(self, wave: int, row: int) -> str | None:
        """The task of ``wave`` whose row is closest to ``row`` (the upper one on a tie)."""
        if not 0 <= wave < len(self.columns) or not self.columns[wave]:
            return None
        return min(self.columns[wave], key=lambda task_id: (abs(self.row_of[task_id] - row), self.row_of[task_id]))


def layout_to_fit(graph: TaskGraph, visible: set[str] | None, room: int) -> GraphLayout:
    """``layout_graph``, with nodes as wide as ``room`` cells allow (up to ``WIDEST_NODE``):
    a board that fits in the view shows more of each subject; one that does not keeps the
    narrow nodes, so it takes as little scrolling as it can."""
    layout = layout_graph(graph, visible)
    columns = len(layout.columns)
    if not columns or layout.width >= room:
        return layout
    wider = min(WIDEST_NODE, NODE_WIDTH + (room - layout.width) // columns)
    return layout_graph(graph, visible, node_width=wider) if wider > NODE_WIDTH else layout


def layout_graph(graph: TaskGraph, visible: set[str] | None = None, *, node_width: int = NODE_WIDTH) -> GraphLayout:
    """Place ``visible`` tasks (default: all) and route the edges between them."""
    waves = graph.waves()
    ids = [t for t in graph.tasks if visible is None or t in visible]
    by_wave: dict[int, list[str]] = {}
    for task_id in ids:
        by_wave.setdefault(waves.get(task_id, 0), []).append(task_id)
    # Compact the waves that survive filtering into consecutive columns.
    columns = [sorted(by_wave[wave], key=id_sort_key) for wave in sorted(by_wave)]
    column_of = {task_id: column for column, members in enumerate(columns) for task_id in members}
    dependents: dict[str, list[str]] = {}
    for task_id in ids:
        for blocker in dict.fromkeys(graph.tasks[task_id].blocked_by):
            # A blocker in the same or a later column is only possible inside a cycle; cycles
            # are reported as alerts, not drawn.
            if blocker in column_of and column_of[blocker] < column_of[task_id]:
                dependents.setdefault(blocker, []).append(task_id)
    layout = GraphLayout(node_width=node_width)
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

    # Links between neighbouring columns (gap g: column g to g + 1). A blocker's edges that
    # skip waves share an express: a line on a lane of its own from the gap after the blocker
    # to the gap before its farthest dependent, which they branch off like edges off a node.
    links: list[list[tuple[Item, Item, bool]]] = [[] for _ in range(max(0, column_count - 1))]
    reserved: list[set[int]] = [set() for _ in links]
    continuing: list[set[Item]] = [set() for _ in links]
    expresses: list[tuple[Item, int, int, int]] = []  # (express, first gap, last gap, last critical gap)
    express_lanes: dict[int, tuple[list[int], list[int]]] = {}  # lane -> sorted first gaps, last gaps
    for blocker in sorted(dependents, key=lambda t: (layout.position[t][0], layout.row_of[t])):
        targets = dependents[blocker]
        start = layout.position[blocker][0]
        far = [t for t in targets if layout.position[t][0] > start + 1]
        for target in targets:
            if layout.position[target][0] == start + 1:
                links[start].append((blocker, target, (blocker, target) in critical_edges))
        if not far:
            continue
        express: Item = ("express", blocker)
        last_gap = max(layout.position[t][0] for t in far) - 1
        critical_gap = max((layout.position[t][0] - 1 for t in far if (blocker, t) in critical_edges), default=-1)
        row[express] = _express_lane(layout.row_of[blocker], start, last_gap, express_lanes)
        expresses.append((express, start, last_gap, critical_gap))
        links[start].append((blocker, express, critical_gap >= 0))
        for gap in range(start, last_gap + 1):
            reserved[gap].add(row[express])
            if gap < last_gap:
                continuing[gap].add(express)
        for target in far:
            links[layout.position[target][0] - 1].append((express, target, (blocker, target) in critical_edges))

    height = max((ROW_PITCH * (len(members) - 1) + 1 for members in layout.columns), default=0)
    height = max([height, *(row[express] + 1 for express, *_ in expresses)])
    exit_xs: list[int] = []
    arrow_xs: list[int] = []
    x = LEFT_MARGIN
    for column, members in enumerate(layout.columns):
        layout.column_x.append(x)
        for task_id in members:
            layout.nodes_by_row.setdefault(row[task_id], []).append((x, task_id))
        x += node_width
        if column < column_count - 1:
            exit_xs.append(x)
            x, lowest = _route_gap(layout, links[column], row, reserved[column], continuing[column], x)
            arrow_xs.append(x - 1)
            height = max(height, lowest + 1)
    # Each express runs from its first gap's arrowhead column to the start of its last gap,
    # amber as far as the gap before its critical dependent.
    for express, first_gap, last_gap, critical_gap in expresses:
        begin, end = arrow_xs[first_gap], exit_xs[last_gap]
        if critical_gap > first_gap:
            split = exit_xs[critical_gap]
            _horizontal(layout, row[express], begin, split, True)
            _horizontal(layout, row[express], split, end, False)
        else:
            _horizontal(layout, row[express], begin, end, False)
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


def _horizontal(layout: GraphLayout, y: int, x0: int, x1: int, critical: bool) -> None:
    if x0 != x1:
        layout.horizontals.setdefault(y, []).append((min(x0, x1), max(x0, x1), critical))


def _vertical(layout: GraphLayout, x: int, y0: int, y1: int, critical: bool) -> None:
    low, high = min(y0, y1), max(y0, y1)
    if low == high:
        return
    for block in range(low // ROW_BLOCK, high // ROW_BLOCK + 1):
        layout.vertical_blocks.setdefault(block, []).append((x, low, high, critical))


def _route_gap(
    layout: GraphLayout,
    gap_links: list[tuple[Item, Item, bool]],
    row: dict[Item, int],
    express_lanes: set[int],
    continuing: set[Item],
    exit_x: int,
) -> tuple[int, int]:
    """Route the links of one gap, starting at ``exit_x`` (the first cell after the left
    column's labels), around the ``express_lanes`` running through it (``continuing`` are the
    expresses that go on past it). Returns the x of the next column and the lowest row used."""
    outgoing: dict[Item, int] = {}
    incoming: dict[Item, int] = {}
    for left, right, _critical in gap_links:
        outgoing[left] = outgoing.get(left, 0) + 1
        incoming[right] = incoming.get(right, 0) + 1
    # Rows whose part of the gap is spoken for: a left item's edges leave along its row, a right
    # item's edges arrive along its row.
    leaving_rows = {row[item] for item in outgoing}
    arriving_rows = {row[item] for item in incoming}

    # Each bent link: (left, right, critical, via row, uses out-track, uses in-track).
    routes: list[tuple[Item, Item, bool, int, bool, bool]] = []
    lanes_taken = set(express_lanes)
    bent = []
    for left, right, critical in gap_links:
        y0, y1 = row[left], row[right]
        if y0 == y1:
            routes.append((left, right, critical, y0, False, False))
        elif incoming[right] == 1 and y1 not in leaving_rows:
            routes.append((left, right, critical, y1, True, False))  # along the dependent's row
        elif outgoing[left] == 1 and y0 not in arriving_rows and left not in continuing:
            # Along the blocker's row. (An express going on past this gap would run on
            # through the dependent's in-track and seem to join it.)
            routes.append((left, right, critical, y0, False, True))
        else:
            bent.append((left, right, critical))
    # Short links first, so they get the lanes right next to their dependent.
    for left, right, critical in sorted(bent, key=lambda link: (abs(row[link[1]] - row[link[0]]), row[link[1]], row[link[0]])):
        lane = _free_lane(row[left], row[right], lanes_taken)
        lanes_taken.add(lane)
        routes.append((left, right, critical, lane, True, True))

    # Tracks: one per (item, direction); the rows each one spans.
    out_spans: dict[tuple[Item, bool], list[int]] = {}
    in_spans: dict[tuple[Item, bool], list[int]] = {}
    for left, right, _critical, via, out_track, in_track in routes:
        if out_track:
            span = out_spans.setdefault((left, via > row[left]), [row[left], row[left]])
            span[0], span[1] = min(span[0], via), max(span[1], via)
        if in_track:
            span = in_spans.setdefault((right, via < row[right]), [row[right], row[right]])
            span[0], span[1] = min(span[0], via), max(span[1], via)
    out_slot, out_count = _pack(out_spans)
    in_slot, in_count = _pack(in_spans)
    out_x = {key: exit_x + 1 + index for key, index in out_slot.items()}
    in_start = exit_x + 1 + out_count + (1 if out_count and in_count else 0)
    # The innermost in-tracks sit nearest their dependents (packed from the right).
    in_x = {key: in_start + in_count - 1 - index for key, index in in_slot.items()}
    arrow_x = in_start + in_count + (1 if in_count else 0)

    lowest = 0
    for left, right, critical, via, out_track, in_track in routes:
        y0, y1 = row[left], row[right]
        lowest = max(lowest, via, y0, y1)
        turn_out = out_x[(left, via > y0)] if out_track else None
        turn_in = in_x[(right, via < y1)] if in_track else None
        first = exit_x
        if turn_out is not None:
            _horizontal(layout, y0, exit_x, turn_out, critical)
            _vertical(layout, turn_out, y0, via, critical)
            first = turn_out
        if turn_in is not None:
            _horizontal(layout, via, first, turn_in, critical)
            _vertical(layout, turn_in, via, y1, critical)
            _horizontal(layout, y1, turn_in, arrow_x, critical)
        else:
            _horizontal(layout, via, first, arrow_x, critical)
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


def order_columns(columns: list[list[str]], dependents: dict[str, list[str]], column_of: dict[str, int]) -> list[list[str]]:
    """The tasks of each column in the order that crosses least. ``columns`` come sorted by id,
    which breaks every tie; ``dependents`` are each blocker's dependents in later columns."""
    key = (tuple(map(tuple, columns)), tuple((blocker, tuple(targets)) for blocker, targets in dependents.items()))
    ordered = _ORDER_CACHE.get(key)
    if ordered is None:
        ordered = _order_columns(columns, dependents, column_of)
        if len(_ORDER_CACHE) >= _ORDER_CACHE_SIZE:
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
