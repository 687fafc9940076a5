"""Current alerts, most severe first: broken files, graph problems, the coordinator's alerts."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from board.ui.board_alerts import Alert, grouped

SEVERITY_MARK = {"error": "✗", "warning": "!", "info": "i"}


class AlertsPanel(Widget):
    COMPONENT_CLASSES = {"alerts-panel--error", "alerts-panel--warning", "alerts-panel--info", "alerts-panel--muted"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.alerts: list[Alert] = []
        self.border_title = "Alerts"

    def show_alerts(self, alerts: list[Alert]) -> None:
        """Show these alerts; many of one kind collapse into one line (the detail view lists each)."""
        self.alerts = grouped(alerts)
        self.border_subtitle = str(len(alerts))
        self.refresh(layout=True)

    def render(self) -> Text:
        muted = self.get_component_rich_style("alerts-panel--muted", partial=True)
        if not self.alerts:
            return Text("all clear", muted)
        lines = []
        for alert in self.alerts:
            severity = alert.severity if alert.severity in SEVERITY_MARK else "warning"
            style = self.get_component_rich_style(f"alerts-panel--{severity}", partial=True)
            line = Text()
            line.append(f"{SEVERITY_MARK[severity]} ", style)
            line.append(alert.kind, style)
            line.append(" ")
            line.append(alert.message)
            lines.append(line)
        return Text("\n").join(lines)
