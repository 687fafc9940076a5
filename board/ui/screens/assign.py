"""Pick an agent from ``.tasks/agents/`` to hand the selected task to."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from board.agents import AgentRecord
from board.ui.card import format_age
from board.text import printable


class AssignScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="assign.cancel")]

    def __init__(self, task_id: str, agents: list[AgentRecord], now: datetime) -> None:
        super().__init__()
        self.task_id = task_id
        self.agents = agents
        self.now = now

    def compose(self) -> ComposeResult:
        options = []
        for agent in self.agents:
            label = Text(printable(agent.name), style="bold")
            label.append(f"  {agent.kind}", style="dim")
            label.append(f"  {'on #' + agent.task if agent.task else 'idle'}")
            label.append(f"  heartbeat {format_age((self.now - agent.heartbeat_at).total_seconds())} ago", style="dim")
            options.append(Option(label, id=agent.name))
        with Vertical(id="dialog"):
            yield Label(f"Assign #{self.task_id} to", id="question")
            yield OptionList(*options, id="agents-list")
            yield Label("enter: assign · escape: cancel", id="detail")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
