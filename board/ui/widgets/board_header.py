"""The top of the dashboard: the board's name, an overall progress bar and counts per status."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from board.alerts import Severity
from board.ui.board_alerts import counts_label
from board.ui.card import progress_bar
from board.ui.widgets.component_styles import component_style

#: Display states in the order the header lists them, with their labels.
COUNT_LABELS = (
    ("waiting-deps", "waiting on deps"),
    ("ready", "ready"),
    ("in_progress", "in progress"),
    ("waiting", "needs you"),
    ("paused", "paused"),
    ("blocked", "blocked"),
    ("failed", "failed"),
    ("completed", "done"),
    ("cancelled", "cancelled"),
    # Tasks whose file cannot be read: on no card, so counted here, never silently missing.
    ("unreadable", "unreadable"),
)


#: Shorter labels for terminals under 150 columns.
SHORT_LABELS = {"waiting-deps": "on deps", "in_progress": "active", "waiting": "needs you", "cancelled": "cancel"}


class BoardHeader(Widget):
    """Two lines: title (workspace, view, filter) and progress with counts."""

    COMPONENT_CLASSES = {
        "board-header--title", "board-header--muted", "board-header--bar", "board-header--bar-empty",
        "board-header--alert-error", "board-header--alert-warning", "board-header--alert-info",
        *(f"board-header--{state.replace('_', '-')}" for state, _ in COUNT_LABELS),
    }
    DEFAULT_CSS = """
    BoardHeader {
        height: 2;
        background: $panel;
        color: $foreground;
    }
    BoardHeader > .board-header--title { text-style: bold; color: $foreground; }
    BoardHeader > .board-header--muted { color: $text-muted; }
    BoardHeader > .board-header--bar { color: $success; }
    BoardHeader > .board-header--bar-empty { color: $foreground 25%; }
    BoardHeader > .board-header--waiting-deps { color: $text-muted; }
    BoardHeader > .board-header--ready { color: $primary; text-style: bold; }
    BoardHeader > .board-header--in-progress { color: $accent; text-style: bold; }
    BoardHeader > .board-header--waiting { color: $warning; text-style: bold; }
    BoardHeader > .board-header--paused { color: $warning; }
    BoardHeader > .board-header--blocked { color: $error; }
    BoardHeader > .board-header--failed { color: $error; text-style: bold; }
    BoardHeader > .board-header--completed { color: $success; }
    BoardHeader > .board-header--cancelled { color: $text-disabled; }
    BoardHeader > .board-header--unreadable { color: $error; text-style: bold reverse; }
    BoardHeader > .board-header--alert-error { color: $error; text-style: bold; }
    BoardHeader > .board-header--alert-warning { color: $warning; text-style: bold; }
    BoardHeader > .board-header--alert-info { color: $primary; }
    """

    title_text: reactive[str] = reactive("board", layout=False)
    """Workspace path and mode shown on the first line."""
    detail_text: reactive[str] = reactive("")
    """Right-hand side of the first line: view, filter, read-only."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._counts: Mapping[str, int] = {}
        self._loading: str = ""
        self._hint: str = ""
        self._alert_counts: Counter[Severity] = Counter()

    def show_counts(self, counts: Mapping[str, int], loading: str = "", hint: str = "") -> None:
        """Counts per display state; ``loading`` while the first read runs; ``hint`` when the
        board (or the filter) shows nothing and the user should know why."""
        self._counts = dict(counts)
        self._loading = loading
        self._hint = hint
        self.refresh()

    def show_alert_counts(self, counts: Counter[Severity]) -> None:
        """Alerts by severity, shown on the first line: "⚠ 2 errors · 3 warnings"."""
        if counts != self._alert_counts:
            self._alert_counts = Counter(counts)
            self.refresh()

    def _style(self, name: str):
        return component_style(self, f"board-header--{name.replace('_', '-')}")

    def render(self) -> Text:
        width = self.size.width
        first = Text(no_wrap=True, overflow="ellipsis")
        first.append(" ▦ board ", self._style("title"))
        first.append(self.title_text, self._style("muted"))
        right = Text(no_wrap=True)
        parts = counts_label(self._alert_counts)
        if parts:
            right.append("⚠ ", self._style(f"alert-{parts[0][0]}"))
            for index, (severity, label) in enumerate(parts):
                right.append(" · " if index else "", self._style("muted"))
                right.append(label, self._style(f"alert-{severity}"))
            right.append(" · " if self.detail_text else " ", self._style("muted"))
        right.append(self.detail_text, self._style("muted"))
        if right:
            first.append(" " * max(1, width - first.cell_len - right.cell_len - 1))
            first.append_text(right)
        first.truncate(width, overflow="ellipsis")

        counts = self._counts
        total = sum(counts.get(state, 0) for state, _ in COUNT_LABELS)
        counted = total - counts.get("cancelled", 0)
        done = counts.get("completed", 0)
        percent = round(100 * done / counted) if counted else 0
        second = Text(no_wrap=True, overflow="ellipsis")
        bar_width = 20 if width >= 100 else 10
        filled, empty = progress_bar(percent, bar_width)
        second.append(" ")
        second.append(filled, self._style("bar"))
        second.append(empty, self._style("bar-empty"))
        second.append(f" {done}/{counted} done {percent}%", self._style("title"))
        if self._loading:
            second.append(f"  {self._loading}", self._style("muted"))
        if self._hint:
            second.append(f"  {self._hint}", self._style("muted"))
        compact = width < 150
        for state, label in COUNT_LABELS:
            value = counts.get(state, 0)
            if value:
                second.append(" " if compact else "  ")
                label = SHORT_LABELS.get(state, label) if compact else label
                second.append(f"{value:,} {label}", self._style(state))
        second.truncate(width, overflow="ellipsis")
        return Text("\n").join([first, second])
