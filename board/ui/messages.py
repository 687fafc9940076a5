"""Messages the background readers post to the app; the app alone changes what is on screen."""

from __future__ import annotations

from pathlib import Path

from textual.message import Message

from board.agent_record import AgentRecord
from board.budgets import Spend
from board.alerts import Alert
from board.claude.teams import Inbox, Team
from board.model import Task
from board.ui.session import AgentsRead, BoardRead, next_observation


class BoardChanged(Message):
    """Tasks as read from disk (or returned by a write).

    Each message is numbered when it is made, which is done under the store's lock right after
    the read or write it reports: a message made earlier never replaces what a later one
    showed, whatever the versions say (an outside writer may lower or drop them).
    """

    def __init__(
        self,
        tasks: list[Task] | None = None,
        removed: list[str] | None = None,
        loaded: bool = False,
        observed: int | None = None,
    ) -> None:
        self.tasks = tasks or []
        self.removed = removed or []
        self.observed = next_observation() if observed is None else observed
        #: Set on the last message of the first full read.
        self.loaded = loaded
        super().__init__()

    @classmethod
    def of(cls, read: BoardRead) -> BoardChanged:
        """The message for a read: numbered when the read was made, under the store's lock."""
        return cls(read.tasks, read.removed, read.loaded, read.observed)


class AgentsChanged(Message):
    """The registered agents, the Claude Code teams working on the board, and their inboxes
    (by team and member name)."""

    def __init__(
        self, agents: list[AgentRecord], teams: list[Team] | None = None, inboxes: dict[tuple[str, str], Inbox] | None = None,
        costs: dict[str, str] | None = None,
    ) -> None:
        self.agents = agents
        self.teams = teams or []
        self.inboxes = inboxes or {}
        #: The estimated cost of each agent's tokens (``$0.42``, ``$?``), for those that spent any.
        self.costs = costs or {}
        super().__init__()

    @classmethod
    def of(cls, read: AgentsRead) -> AgentsChanged:
        return cls(read.agents, read.teams, read.inboxes, read.costs)


class SpendChanged(Message):
    """What each task spent in tokens and estimated dollars (the tasks that spent any)."""

    def __init__(self, spend: dict[str, Spend]) -> None:
        self.spend = spend
        super().__init__()


class AlertsChanged(Message):
    """The board's alerts, worst first, as the coordinator wrote them or as the dashboard
    evaluated them (``from_coordinator`` says which)."""

    def __init__(self, alerts: list[Alert], *, from_coordinator: bool) -> None:
        self.alerts = alerts
        self.from_coordinator = from_coordinator
        super().__init__()


class TaskLogChanged(Message):
    """``history.jsonl`` or a tool-call log changed: an open detail view may want to re-read."""

    def __init__(self, paths: set[Path]) -> None:
        self.paths = paths
        super().__init__()


# -- from the app to its open screens (they do not bubble back up) ----------------------------


class TasksShown(Message, bubble=False):
    """The board on screen changed: these tasks (and what shows them) may read differently."""

    def __init__(self, changed: set[str]) -> None:
        self.changed = changed
        super().__init__()


class AlertsShown(Message, bubble=False):
    """The alerts on screen changed (``app.view.alerts`` holds them by task)."""


class LogsShown(Message, bubble=False):
    """A task's history or tool-call log changed on disk."""


class AgentsShown(Message, bubble=False):
    """The agents, teams or inboxes on screen changed."""
