"""Registered agents: name, state, current task, heartbeat age and tool calls."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from rich.text import Text
from textual.widget import Widget

from board.agents import AgentRecord, AgentState, agent_state
from board.ui.card import format_age
from board.ui.widgets.component_styles import component_style
from board.text import printable

STATE_MARK = {AgentState.WORKING: "●", AgentState.IDLE: "○", AgentState.STALE: "✗"}


class AgentsPanel(Widget):
    """One line per agent from ``.tasks/agents/``; stale agents (no recent heartbeat) are marked."""

    COMPONENT_CLASSES = {"agents-panel--working", "agents-panel--idle", "agents-panel--stale", "agents-panel--muted", "agents-panel--name"}
    DEFAULT_CSS = """
    AgentsPanel {
        height: auto;
        max-height: 50%;
        border: round $panel-lighten-2;
        border-title-color: $foreground;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
        padding: 0 1;
    }
    AgentsPanel > .agents-panel--working { color: $success; }
    AgentsPanel > .agents-panel--idle { color: $primary; }
    AgentsPanel > .agents-panel--stale { color: $error; }
    AgentsPanel > .agents-panel--muted { color: $text-muted; }
    AgentsPanel > .agents-panel--name { text-style: bold; color: $foreground; }
    """

    def __init__(self, now: Callable[[], datetime], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.now = now
        self.agents: list[AgentRecord] = []
        self.stale_after = timedelta(seconds=30)
        self.border_title = "Agents"
        self._ages_shown: tuple[tuple[str, str], ...] = ()

    def show_agents(self, agents: list[AgentRecord], stale_after: timedelta) -> None:
        resized = len(agents) != len(self.agents)
        self.agents = agents
        self.stale_after = stale_after
        self.border_subtitle = str(len(agents))
        self._ages_shown = self._ages()
        self.refresh(layout=resized)

    def refresh_ages(self) -> None:
        """Redraw if a heartbeat age or a state reads differently now (the clock moved)."""
        ages = self._ages()
        if ages != self._ages_shown:
            self._ages_shown = ages
            self.refresh()

    def _ages(self) -> tuple[tuple[str, str], ...]:
        now = self.now()
        return tuple((format_age((now - a.heartbeat_at).total_seconds()), agent_state(a, now, self.stale_after)) for a in self.agents)

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, len(self.agents))

    def render(self) -> Text:
        if not self.agents:
            return Text("no agents registered", component_style(self, "agents-panel--muted"))
        width = self.size.width
        now = self.now()
        lines = []
        for agent in self.agents:
            state = agent_state(agent, now, self.stale_after)
            style = component_style(self, f"agents-panel--{state}")
            muted = component_style(self, "agents-panel--muted")
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(STATE_MARK[state] + " ", style)
            line.append(printable(agent.name), component_style(self, "agents-panel--name"))
            line.append(f" #{printable(agent.task)}" if agent.task else " idle", style)
            right = Text(f"♥{format_age((now - agent.heartbeat_at).total_seconds())} ⚒{agent.tool_calls}", muted)
            gap = width - line.cell_len - right.cell_len
            if gap >= 1:
                line.append(" " * gap)
                line.append_text(right)
            line.truncate(width, overflow="ellipsis")
            lines.append(line)
        return Text("\n").join(lines)
