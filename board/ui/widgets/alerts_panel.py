"""The board's alerts, worst first: severity, age, message; what to do about the selected one."""

from __future__ import annotations

from datetime import datetime, timedelta

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from board.alerts import Alert, Severity
from board.ui.board_alerts import AlertGroup, main_task, panel_rows
from board.present import age_reads_the_same_for
from board.ui.card import format_age
from board.ui.widgets.component_styles import PANEL_FRAME, component_style
from board.text import printable
from board.ui.widgets.posted import Posted

SEVERITY_MARK = {Severity.ERROR: "✗", Severity.WARNING: "⚠", Severity.INFO: "i"}


class AlertList(OptionList):
    """The rows of the alerts panel. Enter on an alert goes to its task; on a group, opens it.

    | key | action |
    |---|---|
    | up / down | previous / next alert |
    | enter | go to the alert's task (a group: show or hide its alerts) |
    | m | on an idle team member's alert: a prepared message to it |
    | escape | back to the board |
    """

    BINDINGS = [
        Binding("enter", "select", "Go to task", id="alerts.jump"),
        # Shown only on an agent.idle_with_task alert (check_action).
        Binding("m", "nudge", "Nudge", id="alerts.nudge", tooltip="a prepared message to the idle team member"),
        Binding("escape", "leave", "Back to board", id="alerts.back"),
        Binding("j", "cursor_down", "Down", show=False, id="alerts.down"),
        Binding("k", "cursor_up", "Up", show=False, id="alerts.up"),
    ]

    class Left(Message):
        """The user left the list (escape)."""

    class Nudge(Message):
        """m on an alert."""

    def action_leave(self) -> None:
        self.post_message(self.Left())

    def action_nudge(self) -> None:
        self.post_message(self.Nudge())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "nudge":
            panel = self.parent
            option = self.highlighted_option
            row = panel._row(option.id) if isinstance(panel, AlertsPanel) and option is not None else None
            return isinstance(row, Alert) and row.kind == "agent.idle_with_task" and isinstance(panel, AlertsPanel) and not panel.readonly
        return True


class AlertsPanel(Vertical):
    """Alerts as the app hands them down (``show_alerts``); posts ``JumpToTask`` and ``Left`` up."""

    COMPONENT_CLASSES = {"alerts-panel--error", "alerts-panel--warning", "alerts-panel--info", "alerts-panel--muted"}
    DEFAULT_CSS = """
    AlertsPanel {
        height: 1fr;
        """ + PANEL_FRAME + """
        padding: 0;
    }
    #alerts-list { height: 1fr; border: none; padding: 0 1; background: $surface; scrollbar-size-vertical: 1; }
    #alerts-list:focus { background-tint: $foreground 0%; }
    #alerts-list > .option-list--option-highlighted { background: $foreground 8%; }
    #alerts-list:focus > .option-list--option-highlighted { background: $primary 45%; }
    #alerts-action { height: auto; max-height: 8; padding: 0 1; border-top: solid $panel-lighten-2; color: $foreground; }
    AlertsPanel > .alerts-panel--error { color: $error; text-style: bold; }
    AlertsPanel > .alerts-panel--warning { color: $warning; }
    AlertsPanel > .alerts-panel--info { color: $primary; }
    AlertsPanel > .alerts-panel--muted { color: $text-muted; }
    """

    class JumpToTask(Posted):
        """Enter on an alert: show the task it is mainly about."""

        def __init__(self, panel: AlertsPanel, task_id: str) -> None:
            self.task_id = task_id
            super().__init__(panel)

    class Left(Message):
        """Escape in the panel: back to the board."""

    class MessageAgent(Posted):
        """m on an alert about an idle team member: write to it."""

        def __init__(self, panel: AlertsPanel, alert: Alert) -> None:
            self.alert = alert
            super().__init__(panel)

    def __init__(self, *, readonly: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        #: A read-only dashboard sends no messages: m offers no nudge.
        self.readonly = readonly
        self.alerts: list[Alert] = []
        self.rows: list[Alert | AlertGroup] = []
        #: What each row read when last drawn (None: never drawn).
        self._rows_shown: tuple[tuple[str, str], ...] | None = None
        #: The alerts list, open groups and ages last shown (``_show_rows`` skips a repeat).
        self._last_seen: tuple[object, ...] | None = None
        self._last_alerts: list[Alert] | None = None  # held, so its identity means the same list
        self._last_expanded: frozenset[str] | None = None
        #: From when until when every age shown reads as it did when last worked out (None: unknown).
        self._ages_read: tuple[datetime, datetime] | None = None
        self.expanded: set[str] = set()
        self.now: datetime | None = None
        self.border_title = "Alerts"

    def compose(self) -> ComposeResult:
        yield AlertList(id="alerts-list")
        yield Static(id="alerts-action")

    def on_mount(self) -> None:
        self._show_rows()

    # -- attributes down ----------------------------------------------------------------------

    def show_alerts(self, alerts: list[Alert], now: datetime, *, from_coordinator: bool = False) -> None:
        """Show these alerts (ages as of ``now``), keeping the highlighted row where it was."""
        self.alerts = alerts
        self.now = now
        subtitle = f"{len(alerts):,} · {'coordinator' if from_coordinator else 'local, no git'}" if alerts else ""
        if subtitle != self.border_subtitle:
            self.border_subtitle = subtitle
        if self.is_mounted:
            self._show_rows()

    def focus_list(self) -> None:
        self.query_one(AlertList).focus()

    # -- rendering ----------------------------------------------------------------------------

    def _style(self, name: str):
        return component_style(self, f"alerts-panel--{name}")

    def _show_rows(self) -> None:
        try:
            listing = self.query_one(AlertList)
        except NoMatches:  # the app is closing: alerts read just before it closed arrive too late
            return
        # Once a second only the clock moves: the same alerts, the same groups open. Then only
        # the ages can read differently, and none does before the first of them moves on (an
        # age in minutes reads the same for a minute): until then there is nothing to do.
        expanded = frozenset(self.expanded)
        same = self.alerts is self._last_alerts and listing.option_count and expanded == self._last_expanded
        if same and self.now is not None and self._ages_read is not None and self._ages_read[0] <= self.now < self._ages_read[1]:
            return
        rows = self.rows if same else panel_rows(self.alerts, self.expanded)
        # Only an alert on a row of its own shows its age; those folded into their kind's row
        # show none. Working out every alert's age each second, when some read in seconds, took
        # an idle dashboard with 2,245 alerts three quarters of its CPU.
        now = self.now
        dated = [row.age(now).total_seconds() for row in rows if isinstance(row, Alert) and row.since is not None] if now is not None else []
        ages = tuple(format_age(age) for age in dated)
        if now is not None:
            stay = [age_reads_the_same_for(age) for age in dated]
            self._ages_read = (now, now + timedelta(seconds=min(stay))) if stay else None
        seen = (expanded, ages)
        if same and seen == self._last_seen:
            return
        self._last_alerts, self._last_seen, self._last_expanded = self.alerts, seen, expanded
        current = listing.highlighted_option.id if listing.highlighted_option is not None else None
        self.rows = rows
        texts = [self._row_text(row) for row in self.rows]
        shown = tuple((row.key, text.plain) for row, text in zip(self.rows, texts))
        previous, self._rows_shown = self._rows_shown, shown
        if previous is not None and [key for key, _ in previous] == [key for key, _ in shown] and listing.option_count == len(shown):
            # The same rows, perhaps some reading differently (an age in seconds): new text in
            # place, no rebuild of the list (which relays it out and moves its scrollbar).
            for index, ((_, before), (_, after), text) in enumerate(zip(previous, shown, texts)):
                if before != after:
                    listing.replace_option_prompt_at_index(index, text)
            return
        listing.clear_options()
        if not self.rows:
            listing.add_option(Option(Text("all clear", self._style("muted")), disabled=True))
            self._show_action(None)
            return
        listing.add_options(Option(text, id=row.key) for row, text in zip(self.rows, texts))
        ids = [row.key for row in self.rows]
        listing.highlighted = ids.index(current) if current in ids else 0

    def _row_text(self, row: Alert | AlertGroup) -> Text:
        style = self._style(str(row.severity))
        text = Text()
        if isinstance(row, AlertGroup):
            opened = row.key in self.expanded
            text.append(f"{SEVERITY_MARK[row.severity]} ", style)
            text.append(f"{'▾' if opened else '▸'} {len(row.alerts):,} × {row.kind}", style)
            named = [f"#{a.tasks[0]}" for a in row.alerts if a.tasks]
            if named:
                text.append(" " + " ".join(named[:4]) + (" …" if len(named) > 4 else ""), self._style("muted"))
            return text
        indent = "  " if any(isinstance(r, AlertGroup) and r.kind == row.kind for r in self.rows) else ""
        text.append(f"{indent}{SEVERITY_MARK[row.severity]} ", style)
        if self.now is not None and row.since is not None:
            text.append(f"{format_age(row.age(self.now).total_seconds())} ", self._style("muted"))
        text.append(printable(row.message))
        return text

    def _show_action(self, row: Alert | AlertGroup | None) -> None:
        action = self.query_one("#alerts-action", Static)
        if row is None:
            action.update("")
            action.display = False
            return
        action.display = True
        text = Text()
        if isinstance(row, AlertGroup):
            text.append(f"{row.kind}: ", self._style(str(row.severity)))
            text.append("enter shows each one", self._style("muted"))
        else:
            text.append(f"{row.kind}", self._style(str(row.severity)))
            if row.tasks:
                text.append("  " + " ".join(f"#{t}" for t in row.tasks), self._style("muted"))
            text.append("\n→ ")
            text.append(printable(row.action))
        action.update(text)

    # -- input --------------------------------------------------------------------------------

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show_action(self._row(event.option.id))
        self.query_one(AlertList).refresh_bindings()  # "m Nudge" shows on an idle member's alert only

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        row = self._row(event.option.id)
        if isinstance(row, AlertGroup):
            self.expanded ^= {row.key}
            self._show_rows()
        elif row is not None:
            task_id = main_task(row)
            if task_id is None:
                self.app.notify("this alert names no task", severity="warning", timeout=3)
            else:
                self.post_message(self.JumpToTask(self, task_id))

    def on_alert_list_left(self, event: AlertList.Left) -> None:
        event.stop()
        self.post_message(self.Left())

    def on_alert_list_nudge(self, event: AlertList.Nudge) -> None:
        event.stop()
        listing = self.query_one(AlertList)
        row = self._row(listing.highlighted_option.id) if listing.highlighted_option is not None else None
        if isinstance(row, Alert):
            self.post_message(self.MessageAgent(self, row))

    def _row(self, key: str | None) -> Alert | AlertGroup | None:
        return next((row for row in self.rows if row.key == key), None)
