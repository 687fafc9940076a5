"""Pick an agent from ``.tasks/agents/`` to hand the selected task to."""

from __future__ import annotations

from datetime import datetime, timedelta

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from board.agent_record import AgentRecord
from board.agents import AgentState, agent_state
from board.present import relative_time
from board.ui.card import format_age
from board.ui.screens.dialog import Dialog
from board.text import printable


class AssignScreen(Dialog[str | None]):
    """Agents that are there first; a stopped or silent one is marked so (the board asks before
    handing it a task)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="assign.cancel")]
    DEFAULT_CSS = """
    #agents-list { height: auto; max-height: 12; }
    """

    def __init__(self, task_id: str, agents: list[AgentRecord], now: datetime, stale_after: timedelta) -> None:
        super().__init__()
        self.task_id = task_id
        self.now = now
        self.states = {agent.name: agent_state(agent, now, stale_after) for agent in agents}
        self.agents = sorted(agents, key=lambda a: (self.states[a.name] == AgentState.STALE, a.name))

    def compose(self) -> ComposeResult:
        options = []
        for agent in self.agents:
            gone = self.states[agent.name] == AgentState.STALE
            label = Text(printable(agent.name), style="dim" if gone else "bold")
            label.append(f"  {agent.kind}", style="dim")
            if agent.stopped:
                label.append("  stopped", style="bold red")
            elif gone:
                label.append(f"  silent for {format_age((self.now - agent.heartbeat_at).total_seconds())}", style="bold red")
            else:
                label.append(f"  {'on #' + agent.task if agent.task else 'idle'}")
                label.append(f"  heartbeat {relative_time(agent.heartbeat_at, self.now)}", style="dim")
            options.append(Option(label, id=agent.name))
        with Vertical(id="dialog"):
            yield Label(f"Assign #{self.task_id} to", id="question")
            yield OptionList(*options, id="agents-list")
            yield Label("enter: assign · escape: cancel", id="detail")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
