"""The DAG, left to right by wave: nodes marked and coloured by status, the critical path marked (★),
the selected task's chain lit and the rest dimmed, wave headers that stay on top.

A board of more than ``INLINE_LAYOUT_LIMIT`` tasks is laid out in a thread worker: the view keeps
showing the layout it has (or "laying out…") until the new one arrives, and a newer change
supersedes a layout still in flight (its result is dropped, the newest is laid out next).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from rich.style import Style
from rich.text import Text
from textual import events
from textual.actions import SkipAction
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from board.graph import MissingBlockerRule, TaskGraph
from board.model import Task
from board.text import printable
from board.ui.card import STATE_SYMBOLS, STYLE_NAMES, CardView, component_class
from board.ui.graph_layout import GraphLayout, finished_waves_collapse, layout_to_fit
from board.ui.widgets.component_styles import card_css, component_style, component_styles

#: What the symbols before each node mean (the view's border shows it).
LEGEND = "✓ done ▶ running ○ ready ◌ on deps ? needs you ‖ paused ⊘ blocked ✗ failed ★ critical path"
TITLE = "Dependencies by wave"

#: Up to this many tasks, any change relayouts the graph; above, only new edges do.
RELAYOUT_LIMIT = 2000
#: Up to this many tasks shown, the layout is made at once (a few milliseconds); a bigger one
#: in a thread worker, so keys are answered meanwhile.
INLINE_LAYOUT_LIMIT = 100
#: The most tasks laid out whole: the layout grows faster than the board (2.5 s at 10,000
#: tasks, minutes at 100,000). A bigger board shows the neighbourhood of the selected task.
WHOLE_GRAPH_LIMIT = 20_000
#: Tasks of that neighbourhood: the selected task's nearest ancestors and descendants.
NEIGHBOURHOOD_LIMIT = 2_000
#: Layouts in a row a newer change may supersede before one of them is shown anyway.
SUPERSEDED_AT_MOST = 2
#: Rows on top that stay while the graph scrolls: each wave's number and count.
HEADER_ROWS = 1

#: The view's own styles, beside the cards' ``STYLE_NAMES``.
GRAPH_STYLES = {
    "header": "color: $text-muted; text-style: bold;",
    "chain-edge": "color: $foreground 85%;",
    "dimmed": "color: $foreground 30%;",
    "dimmed-edge": "color: $foreground 15%;",
    "dimmed-critical": "color: $accent 35%;",
}


@dataclass(frozen=True)
class LayoutJob:
    """What one layout is made of, taken on the UI thread: the task objects (never changed in
    place, so a worker may read them while the board moves on), which to show, the room."""

    generation: int
    # Left out of the repr: Textual names a worker by the repr of its work, and the repr of
    # 10,000 tasks takes a fifth of a second on the UI thread.
    tasks: list[Task] = field(repr=False)
    missing_blocker_done: MissingBlockerRule = field(repr=False)
    shown: set[str] | None = field(repr=False)
    room: int
    collapse_done: bool


def make_layout(job: LayoutJob) -> GraphLayout:
    """The layout of ``job``, from a graph of its own (any thread)."""
    graph = TaskGraph(job.tasks, missing_blocker_done=job.missing_blocker_done)
    return layout_to_fit(graph, job.shown, job.room, collapse_done=job.collapse_done)


class GraphView(ScrollView, can_focus=True):
    """Shares the selection with the kanban.

    | key | action |
    |---|---|
    | up / k, down / j | previous / next task in the wave |
    | left / h, right / l | nearest task in the previous / next wave |
    | f | focus: only the selected task, what it needs and what waits on it (f or escape leaves) |
    """

    BINDINGS = [
        Binding("up,k", "move(0, -1)", "Up", show=False, id="graph.up"),
        Binding("down,j", "move(0, 1)", "Down", show=False, id="graph.down"),
        Binding("left,h", "move(-1, 0)", "Left", show=False, id="graph.left"),
        Binding("right,l", "move(1, 0)", "Right", show=False, id="graph.right"),
        Binding("f", "focus_chain", "Focus chain", id="graph.focus", tooltip="only the selected task, what it needs and what waits on it"),
        Binding("escape", "leave_focus", "Leave focus", show=False, id="graph.leave_focus"),
    ]
    COMPONENT_CLASSES = {component_class("graph-view", name) for name in (*STYLE_NAMES, *GRAPH_STYLES)}
    DEFAULT_CSS = """
    GraphView {
        width: 1fr;
        height: 1fr;
        background: $surface;
        border: round $panel-lighten-2;
        border-title-color: $foreground;
        border-title-style: bold;
        border-subtitle-color: $accent;
    }
    GraphView:focus { border: round $panel-lighten-3; }
    """ + card_css("GraphView", "graph-view") + "".join(
        f"GraphView > .{component_class('graph-view', name)} {{ {rule} }}\n" for name, rule in GRAPH_STYLES.items()
    )

    class LaidOut(Message):
        """A worker finished the layout asked for as ``generation``."""

        def __init__(self, generation: int, layout: GraphLayout) -> None:
            super().__init__()
            self.generation = generation
            self.layout = layout

    def __init__(self, graph: TaskGraph, view: CardView, *, select: Callable[[str], None], id: str | None = None) -> None:
        super().__init__(id=id)
        self.graph = graph
        self.view = view
        #: Makes a task the selected one, at once (as ``KanbanBoard.select_task``: a key typed
        #: right after a cursor key must find the node the cursor went to selected).
        self.select_task = select
        self.graph_layout = GraphLayout()
        self._dirty = True
        #: Rows drawn, by (row, first x, end x): a big board's rows are drawn as far as the
        #: view shows them (a whole row of 10,000 tasks is thousands of cells).
        self._rows: LRUCache[tuple[int, int, int], tuple[int, Text]] = LRUCache(1024)
        #: The header row, and the scroll it was drawn for.
        self._header: tuple[int, Text] | None = None
        self._styles: dict[str, Style] | None = None
        self.border_title = TITLE
        self.border_subtitle = LEGEND
        #: Which tasks to show (the kanban's filter); None shows all.
        self.visible_ids: Callable[[], set[str]] | None = None
        #: The width the layout was made for (node labels widen to fill a wider view).
        self._laid_out_for = 0
        #: The task whose chain alone is shown (``f``), or None.
        self.focus_on: str | None = None
        #: The task whose neighbourhood is shown, on a board too big to lay out whole, or None.
        self.neighbourhood_of: str | None = None
        #: The selected task with its ancestors and descendants (drawn bright, the rest dimmed),
        #: or None (nothing selected, or nothing drawn joins the selected task).
        self.chain: set[str] | None = None
        self._lit: set[int] = set()
        #: Layouts asked for so far (the newest one's number), and the number of the one a
        #: worker is making, if any.
        self.generation = 0
        self._in_flight: int | None = None
        #: The newest layout asked of a worker, until it is shown.
        self._job: LayoutJob | None = None
        #: Tasks the newest layout will show (for "laying out…").
        self._wanted_count = 0
        #: Layouts dropped in a row because a newer change superseded them.
        self._superseded = 0
        #: Scroll to the selection when the layout that holds it arrives.
        self._reveal_pending = False

    @property
    def shown(self) -> bool:
        return self.is_mounted and getattr(self.parent, "current", None) == self.id

    @property
    def laying_out(self) -> bool:
        """A layout is being made that the view will show when it is ready."""
        return self._job is not None

    def on_resize(self, event: events.Resize) -> None:
        # Shown at last (a hidden view has no size) or resized: lay out for the width, and
        # bring the selection into view once the layout holds it.
        self._reveal_pending = True
        if self.scrollable_content_region.width != self._laid_out_for:
            self._dirty = True
            if self.shown:
                self.relayout()
        if not self.laying_out:
            self.reveal_selection()

    # -- attributes down ----------------------------------------------------------------------

    def board_changed(self, *, structure: bool, task_ids: set[str]) -> None:
        """Tasks changed. New edges mean a new layout; a status change only recolours its node,
        except on boards small enough to relayout at once (the critical path may have moved)."""
        if not task_ids and not structure:
            return
        if structure or len(self.graph) <= RELAYOUT_LIMIT:
            self._dirty = True
            if self.shown:
                self.relayout()
                if self.laying_out:
                    self._refresh_nodes(task_ids)  # recoloured where they are until then
            return
        self._refresh_nodes(task_ids)

    def _refresh_nodes(self, task_ids: set[str]) -> None:
        rows = {row for task_id in task_ids if (row := self.graph_layout.row_of.get(task_id)) is not None}
        if not rows:
            return
        for key in [key for key in self._rows.keys() if key[0] in rows]:
            self._rows.discard(key)
        for row in rows:
            self.refresh_line(row + HEADER_ROWS)

    def selection_changed(self, previous: str | None, current: str | None) -> None:
        if current and current not in self.graph_layout.position and not self.laying_out:
            if self.focus_on is not None and current in self.graph.tasks:
                # Selected outside the focus view (from the kanban, a jump): the board again.
                self.focus_on = None
                self._dirty = True
            elif self.neighbourhood_of is not None:
                self._dirty = True  # the selection left the neighbourhood shown: centre it there
        if self.shown:  # hidden, the chain is found when the graph is shown (``_install``)
            self._update_chain()
            self._rows.clear()
            self.refresh()
        self.reveal_selection()

    # -- layout -------------------------------------------------------------------------------

    def _wanted_ids(self) -> set[str] | None:
        """The tasks to lay out: the filter's, narrowed to a focus or a neighbourhood."""
        visible = self.visible_ids() if self.visible_ids else None
        if self.focus_on is not None and self.focus_on not in self.graph.tasks:
            self.focus_on = None
        count = len(self.graph) if visible is None else len(visible)
        root: str | None
        if self.focus_on is not None:
            root = self.focus_on
            chain = {root} | self.graph.ancestors(root) | self.graph.descendants(root)
            if len(chain) > WHOLE_GRAPH_LIMIT:
                chain = self.graph.neighbourhood(root, WHOLE_GRAPH_LIMIT)
        elif count > WHOLE_GRAPH_LIMIT:
            selected = self.view.selected
            root = selected if selected in self.graph.tasks else self.neighbourhood_of
            if root is None or root not in self.graph.tasks:
                root = next(iter(visible)) if visible else next(iter(self.graph.tasks), None)
            self.neighbourhood_of = root
            chain = self.graph.neighbourhood(root, NEIGHBOURHOOD_LIMIT) if root is not None else set()
        else:
            self.neighbourhood_of = None
            return visible
        if visible is None:
            return chain
        return {task_id for task_id in chain if task_id in visible} | ({root} if root is not None else set())

    def relayout(self) -> None:
        """Lay the graph out again: at once on a small board, else in a worker."""
        self._dirty = False
        shown = self._wanted_ids()
        room = self.scrollable_content_region.width
        self._laid_out_for = room
        count = len(self.graph) if shown is None else len(shown)
        self._wanted_count = count
        whole = self.focus_on is None and self.neighbourhood_of is None
        self.generation += 1
        job = LayoutJob(
            self.generation, list(self.graph.tasks.values()), self.graph.missing_blocker_done, shown, room,
            collapse_done=whole and finished_waves_collapse(count),
        )
        if count <= INLINE_LAYOUT_LIMIT:
            self._job = None
            self._superseded = 0
            self._install(layout_to_fit(self.graph, shown, room, collapse_done=job.collapse_done))
            return
        self._job = job
        if self._in_flight is None:
            self._start(job)
        self._show_title()

    def _start(self, job: LayoutJob) -> None:
        self._in_flight = job.generation
        self.run_worker(partial(self._lay_out, job), name="graph layout", group="graph-layout", thread=True)

    def _lay_out(self, job: LayoutJob) -> None:
        """In the worker: the layout, posted back to the view."""
        self.post_message(self.LaidOut(job.generation, make_layout(job)))

    def on_graph_view_laid_out(self, message: LaidOut) -> None:
        message.stop()
        if message.generation == self._in_flight:
            self._in_flight = None
        job = self._job
        if job is None:
            return  # a layout made at once since (the board shrank) is the newest
        if message.generation != job.generation:
            # Superseded by a newer change: lay the newest out, keep showing what is there,
            # unless changes have kept superseding every layout (a board changing faster than
            # it can be laid out): then this one, less old than what is shown, shows meanwhile.
            if self._in_flight is None:
                self._start(job)
            self._superseded += 1
            if self._superseded <= SUPERSEDED_AT_MOST:
                return
        else:
            self._job = None
        self._superseded = 0
        self._install(message.layout)

    def _install(self, layout: GraphLayout) -> None:
        self.graph_layout = layout
        self._rows.clear()
        self._header = None
        self._update_chain()
        self.virtual_size = Size(layout.width, layout.height + HEADER_ROWS)
        self._show_title()
        self.refresh()
        if self._reveal_pending:
            self.reveal_selection()

    def _update_chain(self) -> None:
        selected = self.view.selected
        if selected is None or selected not in self.graph_layout.position or selected not in self.graph.tasks:
            self.chain, self._lit = None, set()
            return
        chain = {selected} | self.graph.ancestors(selected) | self.graph.descendants(selected)
        if not any(task_id in self.graph_layout.position for task_id in chain - {selected}):
            # A task with nothing drawn before or after it has no chain to pick out: dimming
            # the whole board around it would only hide the board.
            self.chain, self._lit = None, set()
            return
        self.chain = chain
        self._lit = self.graph_layout.chain_edges(chain)

    def _show_title(self) -> None:
        layout = self.graph_layout
        if self.focus_on is not None:
            count = len(layout.position)
            title = f"Focus on #{self.focus_on}: what it needs and what waits on it, {count:,} task{'s' if count != 1 else ''} (f or esc leaves)"
        elif self.neighbourhood_of is not None:
            title = (
                f"Around #{self.neighbourhood_of}: {len(layout.position):,} of {len(self.graph):,} tasks, "
                f"too many to lay out whole (f: only the selected task's chain)"
            )
        else:
            title = TITLE
            if layout.collapsed:
                title += f" (finished waves collapsed: {sum(layout.collapsed.values()):,} tasks)"
        if self.laying_out:
            title += f" · laying out {self._wanted_count:,} tasks…"
        self.border_title = printable(title)

    def reveal_selection(self) -> None:
        if self._dirty and self.shown:
            self.relayout()
        layout = self.graph_layout
        task_id = self.view.selected or ""
        if task_id not in layout.position:
            self._reveal_pending = self.laying_out or self._dirty
            return
        self._reveal_pending = False
        # The arrowhead and a little of the line into it stay in view too; the row under the
        # node keeps it clear of the wave headers, which cover the top row of the viewport.
        region = Region(layout.node_x(task_id) - 3, layout.row_of[task_id], layout.node_width + 3, 1 + HEADER_ROWS)
        self.scroll_to_region(region, animate=False, immediate=True, spacing=None)
        # A layout installed in the view's first frame comes before its scrollbars know its
        # size, and until they show the view cannot scroll: again once they do.
        self._reveal_pending = self._cannot_scroll_yet()

    def _cannot_scroll_yet(self) -> bool:
        return (self.max_scroll_x > 0 and not self.allow_horizontal_scroll) or (self.max_scroll_y > 0 and not self.allow_vertical_scroll)

    def watch_show_horizontal_scrollbar(self) -> None:
        self._reveal_once_scrollable()

    def watch_show_vertical_scrollbar(self) -> None:
        self._reveal_once_scrollable()

    def _reveal_once_scrollable(self) -> None:
        if self._reveal_pending and not self.laying_out and not self._dirty:
            self.call_after_refresh(self.reveal_selection)

    def selection_in_view(self) -> bool:
        """Whether the selected node's label is wholly inside the viewport, below the headers."""
        layout = self.graph_layout
        task_id = self.view.selected or ""
        if task_id not in layout.position:
            return False
        scroll_x, scroll_y = self.scroll_offset
        region = self.scrollable_content_region
        line = layout.row_of[task_id] - scroll_y + HEADER_ROWS
        x = layout.node_x(task_id) - scroll_x
        return HEADER_ROWS <= line < region.height and 0 <= x and x + layout.node_width - 1 <= region.width

    # -- rendering ----------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        self._styles = None
        self._rows.clear()
        self._header = None
        super().notify_style_update()

    @property
    def styles_by_name(self) -> dict[str, Style]:
        if self._styles is None:
            styles = component_styles(self, "graph-view")
            for name in GRAPH_STYLES:
                styles[name] = component_style(self, component_class("graph-view", name))
            self._styles = styles
        return self._styles

    def render_line(self, y: int) -> Strip:
        if self._dirty and self.shown:
            self.relayout()
        scroll_x, scroll_y = self.scroll_offset
        base = self.rich_style
        if y < HEADER_ROWS:
            if self._header is None or self._header[0] != scroll_x:
                self._header = (scroll_x, self._header_text(scroll_x))
            text = self._header[1]
        elif not self.graph_layout.columns:
            text = Text(f" laying out {self._wanted_count:,} tasks…" if self.laying_out and y == HEADER_ROWS else "", self.styles_by_name["muted"])
            scroll_x = 0
        else:
            key = (scroll_y + y - HEADER_ROWS, scroll_x, scroll_x + self.size.width)
            cached = self._rows.get(key)
            if cached is None:
                cached = self._render_row(*key)
                self._rows[key] = cached
            begin, text = cached
            scroll_x -= begin
        strip = Strip(text.render(self.app.console), text.cell_len)
        return strip.crop_extend(scroll_x, scroll_x + self.size.width, base).apply_style(base)

    def _header_text(self, scroll_x: int) -> Text:
        """Each column's wave and count over it; a collapsed finished wave, ✓ and its count. The
        label of a column cut by the left edge moves right with the edge, while there is room."""
        layout = self.graph_layout
        styles = self.styles_by_name
        line = Text(no_wrap=True)
        for column, x in enumerate(layout.column_x):
            width = layout.column_width(column)
            if column in layout.collapsed:
                label, style = f"✓{layout.collapsed[column]:,}", styles["completed"]
            else:
                label, style = f"wave {layout.waves[column] + 1} · {len(layout.columns[column]):,}", styles["header"]
            if x < scroll_x < x + width - 1:
                width -= scroll_x - x
                x = scroll_x
            line.append(" " * (x - line.cell_len))
            line.append(label[: width - 1].ljust(width - 1), style)
        return line

    def _render_row(self, row: int, start: int, end: int) -> tuple[int, Text]:
        """The cells of ``row`` from ``start`` to ``end``, as (where the text begins, the text):
        it begins earlier when a node's label straddles ``start``."""
        layout = self.graph_layout
        styles = self.styles_by_name
        line = Text(no_wrap=True)
        lighting = self.chain is not None
        width = layout.node_width
        nodes = {x: task_id for x, task_id in layout.nodes_by_row.get(row, ()) if x + width > start and x < end}
        begin = min([start, *nodes])
        glyphs = layout.edge_glyphs(row, self._lit, begin, end)
        limit = max([*(x + width for x in nodes), *(x + 1 for x in glyphs)], default=begin)
        x = begin
        run: list[str] = []
        run_style: Style | None = None

        def flush() -> None:
            nonlocal run, run_style
            if run:
                line.append("".join(run), run_style)
                run, run_style = [], None

        while x < limit:
            if x in nodes:
                flush()
                line.append_text(self._node_text(nodes[x], styles))
                x += self.graph_layout.node_width
                continue
            glyph = glyphs.get(x)
            if glyph is None:
                char, style = " ", None
            else:
                char, critical, on = glyph
                if not lighting or on:
                    style = styles["critical-path"] if critical else styles["chain-edge" if lighting else "edge"]
                else:
                    style = styles["dimmed-critical"] if critical else styles["dimmed-edge"]
            if style is not run_style:
                flush()
                run_style = style
            run.append(char)
            x += 1
        flush()
        return begin, line

    def _node_text(self, task_id: str, styles: dict[str, Style]) -> Text:
        task = self.graph.tasks.get(task_id)
        width = self.graph_layout.node_width
        if task is None:
            return Text(" " * width)
        state = self.view.states.get(task_id, str(task.status))
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.chain is not None and task_id not in self.chain:
            # Off the selected task's chain: one dim colour, so the chain stands out.
            dimmed = styles["dimmed"]
            star = "★" if task_id in self.graph_layout.critical else " "
            text.append(f"{STATE_SYMBOLS.get(state, '■')}{star}#{task_id} {printable(task.subject)}", dimmed)
            text.truncate(width - 1, overflow="ellipsis", pad=True)
            text.append(" ")
            return text
        state_style = styles.get(state, Style())
        relation = self.view.relation(task_id)
        if relation == "selected":
            # On the selection's background the label takes the plain foreground: a status
            # colour can be the very colour of that background.
            state_style = Style(color=self.rich_style.color)
        text.append(STATE_SYMBOLS.get(state, "■"), styles.get(state, Style()) + Style(bold=True))
        text.append("★" if task_id in self.graph_layout.critical else " ", styles["critical-path"])
        text.append(f"#{task_id} ", state_style + Style(bold=True))
        badge = self.view.badge(task_id)
        if badge:
            text.append("⚠ ", styles[f"alert-{badge[0]}"])
        text.append(printable(task.subject), state_style)
        text.truncate(width - 1, overflow="ellipsis", pad=True)
        if relation == "selected":
            text.stylize(styles["selected"])
        elif relation:
            text.stylize(styles["related"])
        text.append(" ")
        return text

    # -- keys ---------------------------------------------------------------------------------

    def action_move(self, dx: int, dy: int) -> None:
        layout = self.graph_layout
        place = layout.position.get(self.view.selected or "")
        if place is None:
            first = next((members[0] for members in layout.columns if members), None)
            if first:
                self.select_task(first)
            return
        column, index = place
        if dy:
            target = layout.node_at(column, index + dy)
        else:
            target = layout.nearest_beside(column, dx, layout.row_of[self.view.selected or ""])
        if target:
            self.select_task(target)

    def action_focus_chain(self) -> None:
        """Show only the selected task's chain; on a focus view, go back to the whole board."""
        if self.focus_on is not None:
            self.action_leave_focus()
            return
        selected = self.view.selected
        if selected is None or selected not in self.graph.tasks:
            self.notify("select a task first", severity="warning")
            return
        self.focus_on = selected
        self._dirty = True
        self._reveal_pending = True
        if self.shown:
            self.relayout()
            self.reveal_selection()

    def action_leave_focus(self) -> None:
        if self.focus_on is None:
            raise SkipAction()  # escape goes on to the dashboard (clearing the filter)
        self.focus_on = None
        self._dirty = True
        self._reveal_pending = True
        if self.shown:
            self.relayout()
            self.reveal_selection()
