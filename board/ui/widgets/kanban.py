"""The kanban board: five lane columns side by side (one at a time on a narrow screen), one
cursor, keys to move it."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal

from board.ui.card import CardView
from board.ui.lanes import Lane, Lanes
from board.ui.widgets.component_styles import CardStyles
from board.ui.widgets.key_footer import ONE_LANE_BELOW
from board.ui.widgets.task_column import TaskColumn


class KanbanBoard(Horizontal, can_focus=True):
    """Columns Waiting on deps · Ready · In progress · Blocked/Failed · Done.

    | key | action |
    |---|---|
    | up / k, down / j | previous / next card in the column |
    | left / h, right / l | the nearest card in the next non-empty column |
    | home / end, pgup / pgdn | first / last card, a page up / down |
    | [ / ] | the lane before / after (one lane at a time, on a narrow screen) |
    """

    BINDINGS = [
        Binding("up,k", "move(0, -1)", "Up", show=False, id="board.up"),
        Binding("down,j", "move(0, 1)", "Down", show=False, id="board.down"),
        Binding("left,h", "move(-1, 0)", "Left", show=False, id="board.left"),
        Binding("right,l", "move(1, 0)", "Right", show=False, id="board.right"),
        Binding("home", "edge(-1)", "First card", show=False, id="board.first"),
        Binding("end", "edge(1)", "Last card", show=False, id="board.last"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="board.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="board.page_down"),
        # In the footer (to tap, in a phone's browser) only while one lane shows (check_action).
        Binding("[", "lane(-1)", "◀ Lane", id="board.lane_before"),
        Binding("]", "lane(1)", "Lane ▶", id="board.lane_after"),
    ]
    DEFAULT_CSS = """
    KanbanBoard { height: 1fr; width: 1fr; }
    KanbanBoard:focus { background-tint: $foreground 0%; }
    KanbanBoard:focus TaskColumn { border: round $panel-lighten-3; }
    #lane-ready { border-title-color: $primary; }
    #lane-in-progress { border-title-color: $accent; }
    #lane-attention { border-title-color: $error; }
    #lane-done { border-title-color: $success; }
    """

    def __init__(self, lanes: Lanes, view: CardView, *, select: Callable[[str | None], None], id: str | None = None) -> None:
        super().__init__(id=id)
        self.lanes = lanes
        self.view = view
        #: Makes a task the selected one (None: nothing to select). Called at once, not posted
        #: up as a message: a key typed right after a cursor key is already on its way to the
        #: app, and must find the card the cursor went to selected, not the one it left.
        self.select_task = select
        self.card_styles = CardStyles()
        self.columns = {lane: TaskColumn(lane, view, self.card_styles, id=f"lane-{lane.name.lower().replace('_', '-')}") for lane in Lane}
        self._lane = Lane.READY
        #: Whether the screen is too narrow for five lanes: only ``_lane``'s shows.
        self.one_lane = False

    def compose(self) -> ComposeResult:
        yield self.card_styles
        yield from self.columns.values()

    # -- attributes down ----------------------------------------------------------------------

    def show_lanes(self, changed_from: dict[Lane, int] | None = None) -> None:
        """Re-read the lane lists after the board changed: all of them, or just the lanes given,
        redrawing each from the first card that moved."""
        if changed_from is None:
            for lane in Lane:
                self.columns[lane].set_ids(self.lanes.ids[lane])
            return
        for lane, index in changed_from.items():
            self.columns[lane].set_ids(self.lanes.ids[lane], changed_from=index)

    def refresh_tasks(self, task_ids: set[str]) -> None:
        """Redraw just the cards of these tasks where they are visible."""
        for task_id in task_ids:
            placed = self.lanes.lane_index(task_id)
            if placed is not None:
                lane, index = placed
                self.columns[lane].refresh_card(index)

    def refresh_aged_cards(self) -> None:
        for column in self.columns.values():
            if column.display:
                column.refresh_aged_cards()

    def refresh_all(self) -> None:
        for column in self.columns.values():
            column.refresh()

    def reveal_selection(self) -> None:
        placed = self.lanes.lane_index(self.view.selected) if self.view.selected else None
        if placed is not None:
            self._set_lane(placed[0])
            self.columns[placed[0]].scroll_to_card(placed[1])

    def fit_to_width(self, width: int) -> None:
        """Five lanes, or on a screen narrower than ``ONE_LANE_BELOW`` the current one alone."""
        one_lane = width < ONE_LANE_BELOW
        if one_lane != self.one_lane:
            self.one_lane = one_lane
            self.refresh_bindings()
        self._show_lanes_that_fit()

    def _show_lanes_that_fit(self) -> None:
        for lane, column in self.columns.items():
            column.display = not self.one_lane or lane == self._lane

    def _set_lane(self, lane: Lane) -> None:
        if lane != self._lane:
            self._lane = lane
            if self.one_lane:
                self._show_lanes_that_fit()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.one_lane if action == "lane" else True

    def action_lane(self, step: int) -> None:
        """The lane before or after this one, empty or not, its first card on screen selected."""
        lane = Lane((self._lane + step) % len(Lane))
        self._set_lane(lane)
        if self.lanes.ids[lane]:
            self._select(lane, self.columns[lane].first_visible_card())

    def on_focus(self) -> None:
        self._set_focus_look(True)

    def on_blur(self) -> None:
        self._set_focus_look(False)

    def _set_focus_look(self, focused: bool) -> None:
        for column in self.columns.values():
            column.focused_board = focused
            column.refresh()

    # -- cursor -------------------------------------------------------------------------------

    def _position(self) -> tuple[Lane, int | None]:
        placed = self.lanes.lane_index(self.view.selected) if self.view.selected else None
        if placed is None:
            return self._lane, None
        return placed

    def _select(self, lane: Lane, index: int) -> None:
        ids = self.lanes.ids[lane]
        if not ids:
            return
        index = max(0, min(index, len(ids) - 1))
        self._set_lane(lane)
        self.columns[lane].scroll_to_card(index)
        self.select_task(ids[index])

    def action_move(self, dx: int, dy: int) -> None:
        lane, index = self._position()
        if index is None:
            self.select_first()
            return
        if dy:
            self._select(lane, index + dy)
            return
        row_on_screen = index - self.columns[lane].first_visible_card()
        target = lane + dx
        while 0 <= target < len(Lane):
            if self.lanes.ids[Lane(target)]:
                column = self.columns[Lane(target)]
                self._select(Lane(target), column.first_visible_card() + max(0, row_on_screen))
                return
            target += dx

    def action_edge(self, direction: int) -> None:
        lane, _ = self._position()
        self._select(lane, 0 if direction < 0 else len(self.lanes.ids[lane]) - 1)

    def action_page(self, direction: int) -> None:
        lane, index = self._position()
        page = max(1, self.columns[lane].size.height // 4)
        self._select(lane, (index or 0) + direction * page)

    def select_first(self) -> None:
        """Select the first card of the first non-empty lane, preferring the current one."""
        order = [self._lane, *[lane for lane in Lane if lane != self._lane]]
        for lane in order:
            if self.lanes.ids[lane]:
                self._select(lane, 0)
                return
        self.select_task(None)

    def on_task_column_card_clicked(self, message: TaskColumn.CardClicked) -> None:
        message.stop()
        self.focus()
        self.select_task(message.task_id)
