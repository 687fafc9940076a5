"""One kanban column: a line-rendered, virtual list of cards (thousands of tasks, no child widgets)."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from board.ui.card import CARD_HEIGHT, CardView, card_lines, task_age
from board.ui.lanes import LANE_TITLES, Lane
from board.ui.widgets.component_styles import PANEL_FRAME, CardStyles
from board.ui.widgets.posted import Posted

#: Seconds a column's card count may lag behind a move.
COUNT_DELAY = 0.3
GUTTER = {"selected": "▌", "blocker": "▲", "dependent": "▼", "": "▎"}


class TaskColumn(ScrollView, can_focus=False):
    """Cards of one lane. The board above it owns the cursor and keys; a click posts ``CardClicked``."""

    DEFAULT_CSS = """
    TaskColumn {
        width: 1fr;
        height: 1fr;
        """ + PANEL_FRAME + """
        scrollbar-size-vertical: 1;
        scrollbar-size-horizontal: 0;
        overflow-x: hidden;
    }
    """

    class CardClicked(Posted):
        def __init__(self, column: TaskColumn, task_id: str) -> None:
            self.task_id = task_id
            super().__init__(column)

    def __init__(self, lane: Lane, view: CardView, card_styles: CardStyles, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lane = lane
        self.view = view
        #: The cards' styles, shared by the board's columns (``CardStyles``).
        self.card_styles = card_styles
        self.ids: list[str] = []
        self.focused_board = False
        self._base: Style | None = None
        self._count_pending = False
        self._cache: LRUCache[tuple[object, ...], list[Strip]] = LRUCache(512)
        #: The age each card showed when last drawn (``refresh_aged_cards``).
        self._ages_shown: dict[str, str] = {}
        self.border_title = LANE_TITLES[lane]

    # -- attributes set by the board ----------------------------------------------------------

    def set_ids(self, ids: list[str], *, changed_from: int | None = None) -> None:
        """Show these ids (the board's sorted list for this lane, shared, not copied).

        ``changed_from``: cards before this index are unchanged, so only the visible lines from
        there down are redrawn (nothing, when the change is below the window).
        """
        self.ids = ids
        self._set_virtual_height(len(ids) * CARD_HEIGHT)
        if changed_from is None:
            self._show_count()
            self.refresh()
            return
        if not self._count_pending and self.border_subtitle != f"{len(ids):,}":
            # A new count redraws the whole column (the border is part of every line), so on a
            # busy board counts catch up at most a few times a second instead of on every move.
            self._count_pending = True
            self.set_timer(COUNT_DELAY, self._show_count)
        top, bottom = int(self.scroll_y), int(self.scroll_y) + self.size.height
        start = max(top, changed_from * CARD_HEIGHT)
        if start < bottom:
            self.refresh_lines(start, bottom - start)

    def _set_virtual_height(self, height: int) -> None:
        """Resize the scrollable area without a screen relayout.

        Assigning ``virtual_size`` lays out the whole screen and repaints every widget (tens of
        ms on a big board, for each card that changes column). The column's own box does not
        change, so update the reactive quietly and just the scrollbar; only when the scrollbar
        appears or disappears is a real layout needed.
        """
        size = Size(self.size.width, height)
        if size == self.virtual_size:
            return
        if not self.is_mounted or not self.size.width:
            self.virtual_size = size
            if height > self.app.size.height:
                # Taller than the terminal, so its scrollbar is certain: shown before the first
                # layout, which would otherwise find it missing and lay the screen out again
                # (a second frame, 20 ms after the first).
                self.show_vertical_scrollbar = True
            return
        had_scrollbar = self.show_vertical_scrollbar
        self.set_reactive(TaskColumn.virtual_size, size)
        self._scroll_update(size)
        if self.show_vertical_scrollbar != had_scrollbar:
            self.refresh(layout=True)
        self.scroll_y = self.validate_scroll_y(self.scroll_y)

    def _show_count(self) -> None:
        self._count_pending = False
        self.border_subtitle = f"{len(self.ids):,}"

    def refresh_aged_cards(self) -> None:
        """Redraw the visible cards whose age, as shown, moved on (once a second on an idle
        board, this is usually none, and never the whole column)."""
        now = self.view.now()
        first = self.first_visible_card()
        last = min(len(self.ids), first + self.size.height // CARD_HEIGHT + 2)
        for index in range(first, last):
            task = self.view.graph.tasks.get(self.ids[index])
            if task is None:
                continue
            age = task_age(task, now)
            if self._ages_shown.get(task.id) != age:
                self._ages_shown[task.id] = age
                self.refresh_card(index)

    def refresh_card(self, index: int) -> None:
        self.refresh_lines(index * CARD_HEIGHT, CARD_HEIGHT)

    def scroll_to_card(self, index: int, *, animate: bool = False) -> None:
        self.scroll_to_region(Region(0, index * CARD_HEIGHT, 1, CARD_HEIGHT), animate=animate, immediate=True)

    def card_at(self, y: int) -> int | None:
        index = (int(self.scroll_y) + y) // CARD_HEIGHT
        return index if 0 <= index < len(self.ids) else None

    def first_visible_card(self) -> int:
        return int(self.scroll_y) // CARD_HEIGHT

    # -- rendering ----------------------------------------------------------------------------

    def _base_style(self) -> Style:
        if self._base is None:
            self._base = self.rich_style
        return self._base

    def notify_style_update(self) -> None:
        self._base = None
        self._cache.clear()
        super().notify_style_update()

    @property
    def styles_by_name(self) -> dict[str, Style]:
        return self.card_styles.by_name

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._base_style()
        index, line = divmod(int(self.scroll_y) + y, CARD_HEIGHT)
        if index >= len(self.ids) or line == CARD_HEIGHT - 1:
            return Strip.blank(width, base)
        task_id = self.ids[index]
        task = self.view.graph.tasks.get(task_id)
        if task is None:
            return Strip.blank(width, base)
        relation = self.view.relation(task_id)
        age = self._ages_shown[task_id] = task_age(task, self.view.now())
        key = (
            task_id, task.version, id(task), width, relation, self.focused_board,
            age, self.view.states.get(task_id),
            self.view.badge(task_id),
            self.view.unread.get(task.owner), self.view.spend.get(task_id),
        )
        strips = self._cache.get(key)
        if strips is None:
            strips = self._render_card(task, width, relation, base)
            self._cache[key] = strips
        return strips[line]

    def _render_card(self, task, width: int, relation: str, base: Style) -> list[Strip]:
        styles = self.styles_by_name
        lines = card_lines(task, self.view, max(1, width - 2), styles)
        gutter_style = styles.get(self.view.states.get(task.id, str(task.status)), Style())
        if relation == "blocker":
            gutter_style = styles["blocker"]
        elif relation == "dependent":
            gutter_style = styles["dependent"]
        highlight = None
        if relation == "selected":
            highlight = styles["selected"] if self.focused_board else styles["related"]
        elif relation:
            highlight = styles["related"]
        console = self.app.console
        strips = []
        for text in lines:
            row = Text(GUTTER[relation], gutter_style, no_wrap=True)
            row.append_text(text)
            row.append(" ")
            if highlight is not None:
                row.stylize(highlight)
            strip = Strip(row.render(console), row.cell_len)
            strips.append(strip.crop_extend(0, width, base).apply_style(base).simplify())
        return strips

    # -- input --------------------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        index = self.card_at(event.y)
        if index is not None:
            self.post_message(self.CardClicked(self, self.ids[index]))
