"""One agent's record, as the store keeps it (``agents/<name>.json`` in a board's files, a row
in a database's): the model alone, so the store can read and write records without the
registry's rules (``board.agents``) above it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class AgentRecord(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    name: str
    kind: str = "agent"
    pid: int | None = None
    host: str = ""
    task: str | None = None
    heartbeat_at: datetime
    started_at: datetime | None = None
    #: Set by a runner that stopped the agent on purpose, so it is not shown as stale.
    stopped: bool = False
    tool_calls: int = Field(0, ge=0)
    #: What Claude Code's hooks last saw the agent do: "working", "idle" or "gone" (any other
    #: word is kept but means nothing to board), and when.
    activity: str | None = None
    activity_at: datetime | None = None
    session_id: str | None = None
    #: The Claude Code team the agent is a member of, when known.
    team: str | None = None
    agent_type: str | None = None
    #: The model the session started with (Claude Code's SessionStart says it).
    model: str | None = None
    #: A sub-agent's: the agent whose session started it (its row is shown under that one's).
    parent: str | None = None
    #: A Claude Code session's transcript, which the coordinator reads while it works.
    transcript: str | None = None
    #: The agent's own todo list (Claude Code's TaskCreated / TaskCompleted on the session's
    #: private list): item id to done. Kept as written; ``todo_counts`` reads it leniently.
    todos: dict[str, Any] | None = None

    @property
    def todo_counts(self) -> tuple[int, int] | None:
        """(done, total) of its todo list; None when it keeps none."""
        if not self.todos:
            return None
        return sum(1 for done in self.todos.values() if done is True), len(self.todos)
