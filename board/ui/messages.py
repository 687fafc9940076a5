"""Messages the background readers post to the app; the app alone changes what is on screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.message import Message

from board.agents import AgentRecord
from board.model import Task


class BoardChanged(Message):
    """Tasks as read from disk (or returned by a write). Older versions than shown are dropped."""

    def __init__(
        self,
        tasks: list[Task] | None = None,
        removed: list[str] | None = None,
        invalid: dict[str, str] | None = None,
        loaded: bool = False,
    ) -> None:
        self.tasks = tasks or []
        self.removed = removed or []
        #: Every invalid file (path -> reason) when that set changed, else None.
        self.invalid = invalid
        #: Set on the last message of the first full read.
        self.loaded = loaded
        super().__init__()


class AgentsChanged(Message):
    def __init__(self, agents: list[AgentRecord]) -> None:
        self.agents = agents
        super().__init__()


class CoordinatorAlertsChanged(Message):
    """The contents of ``alerts.json`` (None when the coordinator has not written one)."""

    def __init__(self, alerts: list[dict[str, Any]] | None) -> None:
        self.alerts = alerts
        super().__init__()


class TaskLogChanged(Message):
    """``history.jsonl`` or a tool-call log changed: an open detail view may want to re-read."""

    def __init__(self, paths: set[Path]) -> None:
        self.paths = paths
        super().__init__()
