"""The DAG, left to right by wave: nodes marked and coloured by status, the critical path marked (★)."""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from board.graph import TaskGraph
from board.ui.card import STATE_SYMBOLS, STYLE_NAMES, CardView, component_class
from board.ui.graph_layout import GraphLayout, layout_to_fit
from board.ui.widgets.component_styles import card_css, component_styles
from board.text import printable

#: What the symbols before each node mean (the view's border shows it).
LEGEND = "✓ done ▶ running ○ ready ◌ on deps ? needs you ‖ paused ⊘ blocked ✗ failed ★ critical path"


#: Up to this many tasks, any change relayouts the graph (up to ~0.2 s); above, only new edges do.
RELAYOUT_LIMIT = 2000


class GraphView(ScrollView, can_focus=True):
    """Shares the selection with the kanban.

    | key | action |
    |---|---|
    | up / k, down / j | previous / next task in the wave |
    | left / h, right / l | nearest task in the previous / next wave |
    """

    BINDINGS = [
        Binding("up,k", "move(0, -1)", "Up", show=False, id="graph.up"),
        Binding("down,j", "move(0, 1)", "Down", show=False, id="graph.down"),
        Binding("left,h", "move(-1, 0)", "Left", show=False, id="graph.left"),
        Binding("right,l", "move(1, 0)", "Right", show=False, id="graph.right"),
    ]
    COMPONENT_CLASSES = {component_class("graph-view", name) for name in STYLE_NAMES}
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
    """ + card_css("GraphView", "graph-view")

    def __init__(self, graph: TaskGraph, view: CardView, *, select: Callable[[str], None], id: str | None = None) -> None:
        super().__init__(id=id)
        self.graph = graph
        self.view = view
        #: Makes a task the selected one, at once (as ``KanbanBoard.select_task``: a key typed
        #: right after a cursor key must find the node the cursor went to selected).
        self.select_task = select
        self.graph_layout = GraphLayout()
        self._dirty = True
        self._rows: LRUCache[int, Text] = LRUCache(512)
        self._styles: dict[str, Style] | None = None
        self.border_title = "Dependencies by wave"
        self.border_subtitle = LEGEND
        #: Which tasks to show (the kanban's filter); None shows all.
        self.visible_ids: Callable[[], set[str]] | None = None
        #: The width the layout was made for (node labels widen to fill a wider view).
        self._laid_out_for = 0

    def on_resize(self, event: events.Resize) -> None:
        if self.scrollable_content_region.width != self._laid_out_for and self.graph_layout.columns:
            self._dirty = True
            if getattr(self.parent, "current", None) == self.id:
                self._relayout()

    # -- attributes down ----------------------------------------------------------------------

    def board_changed(self, *, structure: bool, task_ids: set[str]) -> None:
        """Tasks changed. New edges mean a new layout; a status change only recolours its node,
        except on boards small enough to relayout at once (the critical path may have moved)."""
        if not task_ids and not structure:
            return
        shown = self.is_mounted and getattr(self.parent, "current", None) == self.id
        if structure or len(self.graph) <= RELAYOUT_LIMIT:
            self._dirty = True
            if shown:
                self._relayout()
            return
        self._refresh_nodes(task_ids)

    def _refresh_nodes(self, task_ids: set[str]) -> None:
        for task_id in task_ids:
            row = self.graph_layout.row_of.get(task_id)
            if row is not None:
                self._rows.discard(row)
                self.refresh_line(row)

    def selection_changed(self, previous: str | None, current: str | None) -> None:
        related = {t for t in (previous, current) if t}
        for task_id in list(related):
            task = self.graph.tasks.get(task_id)
            if task is not None:
                related |= set(task.blocked_by) | self.graph.dependents(task_id)
        self._refresh_nodes(related)
        self.reveal_selection()

    def _relayout(self) -> None:
        self.graph_layout = layout_to_fit(self.graph, self.visible_ids() if self.visible_ids else None, self.scrollable_content_region.width)
        self._laid_out_for = self.scrollable_content_region.width
        self._dirty = False
        self._rows.clear()
        self.virtual_size = Size(self.graph_layout.width, self.graph_layout.height)
        self.refresh()

    def reveal_selection(self) -> None:
        if self._dirty and getattr(self.parent, "current", None) == self.id:
            self._relayout()
        if self.view.selected not in self.graph_layout.position:
            return
        layout = self.graph_layout
        task_id = self.view.selected or ""
        # The arrowhead and a little of the line into it stay in view too.
        region = Region(layout.node_x(task_id) - 3, layout.row_of[task_id], layout.node_width + 3, 1)
        self.scroll_to_region(region, animate=False, immediate=True, spacing=None)

    # -- rendering ----------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        self._styles = None
        self._rows.clear()
        super().notify_style_update()

    @property
    def styles_by_name(self) -> dict[str, Style]:
        if self._styles is None:
            self._styles = component_styles(self, "graph-view")
        return self._styles

    def render_line(self, y: int) -> Strip:
        if self._dirty:
            self._relayout()
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        base = self.rich_style
        text = self._rows.get(row)
        if text is None:
            text = self._render_row(row)
            self._rows[row] = text
        strip = Strip(text.render(self.app.console), text.cell_len)
        return strip.crop_extend(scroll_x, scroll_x + self.size.width, base).apply_style(base)

    def _render_row(self, row: int) -> Text:
        layout = self.graph_layout
        styles = self.styles_by_name
        line = Text(no_wrap=True)
        glyphs = layout.edge_glyphs(row)
        nodes = dict(layout.nodes_by_row.get(row, ()))
        limit = max([*(x + self.graph_layout.node_width for x in nodes), *(x + 1 for x in glyphs)], default=0)
        x = 0
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
                char, critical = glyph
                style = styles["critical-path"] if critical else styles["edge"]
            if style is not run_style:
                flush()
                run_style = style
            run.append(char)
            x += 1
        flush()
        return line

    def _node_text(self, task_id: str, styles: dict[str, Style]) -> Text:
        task = self.graph.tasks.get(task_id)
        if task is None:
            return Text(" " * self.graph_layout.node_width)
        state = self.view.states.get(task_id, str(task.status))
        state_style = styles.get(state, Style())
        relation = self.view.relation(task_id)
        if relation == "selected":
            # On the selection's background the label takes the plain foreground: a status
            # colour can be the very colour of that background.
            state_style = Style(color=self.rich_style.color)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(STATE_SYMBOLS.get(state, "■"), styles.get(state, Style()) + Style(bold=True))
        text.append("★" if task_id in self.graph_layout.critical else " ", styles["critical-path"])
        text.append(f"#{task_id} ", state_style + Style(bold=True))
        badge = self.view.badge(task_id)
        if badge:
            text.append("⚠ ", styles[f"alert-{badge[0]}"])
        text.append(printable(task.subject), state_style)
        text.truncate(self.graph_layout.node_width - 1, overflow="ellipsis", pad=True)
        if relation == "selected":
            text.stylize(styles["selected"])
        elif relation:
            text.stylize(styles["related"])
        text.append(" ")
        return text

    # -- cursor -------------------------------------------------------------------------------

    def action_move(self, dx: int, dy: int) -> None:
        layout = self.graph_layout
        place = layout.position.get(self.view.selected or "")
        if place is None:
            first = layout.node_at(0, 0)
            if first:
                self.select_task(first)
            return
        column, index = place
        if dy:
            target = layout.node_at(column, index + dy)
        else:
            target = layout.nearest_in_column(column + dx, layout.row_of[self.view.selected or ""])
        if target:
            self.select_task(target)
