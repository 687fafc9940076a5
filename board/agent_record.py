"""One agent's record, as the store keeps it (``agents/<name>.json`` in a board's files, a row
in a database's): the model alone, so the store can read and write records without the
registry's rules (``board.agents``) above it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from board import document_schema as schema

from board.document import Document, datetime_schema, field, optional

_TEXT = schema.str_schema()
_MAYBE_TEXT = optional(_TEXT)


class AgentRecord(Document, numbers_as_str=False):
    """Read by field name or camelCase (as written); fields it does not know are kept."""

    name: str = field(_TEXT)
    kind: str = field(_TEXT, default="agent")
    pid: int | None = field(optional(schema.int_schema()), default=None)
    host: str = field(_TEXT, default="")
    task: str | None = field(_MAYBE_TEXT, default=None)
    heartbeat_at: datetime = field(datetime_schema())
    started_at: datetime | None = field(optional(datetime_schema()), default=None)
    #: Set by a runner that stopped the agent on purpose, so it is not shown as stale.
    stopped: bool = field(schema.bool_schema(), default=False)
    tool_calls: int = field(schema.int_schema(ge=0), default=0)
    #: What Claude Code's hooks last saw the agent do: "working", "idle" or "gone" (any other
    #: word is kept but means nothing to board), and when.
    activity: str | None = field(_MAYBE_TEXT, default=None)
    activity_at: datetime | None = field(optional(datetime_schema()), default=None)
    session_id: str | None = field(_MAYBE_TEXT, default=None)
    #: The Claude Code team the agent is a member of, when known.
    team: str | None = field(_MAYBE_TEXT, default=None)
    agent_type: str | None = field(_MAYBE_TEXT, default=None)
    #: The model the session started with (Claude Code's SessionStart says it).
    model: str | None = field(_MAYBE_TEXT, default=None)
    #: A sub-agent's: the agent whose session started it (its row is shown under that one's).
    parent: str | None = field(_MAYBE_TEXT, default=None)
    #: A Claude Code session's transcript, which the coordinator reads while it works.
    transcript: str | None = field(_MAYBE_TEXT, default=None)
    #: The agent's own todo list (Claude Code's TaskCreated / TaskCompleted on the session's
    #: private list): item id to done. Kept as written; ``todo_counts`` reads it leniently.
    todos: dict[str, Any] | None = field(optional(schema.dict_schema(_TEXT, schema.any_schema())), default=None)

    @property
    def todo_counts(self) -> tuple[int, int] | None:
        """(done, total) of its todo list; None when it keeps none."""
        if not self.todos:
            return None
        return sum(1 for done in self.todos.values() if done is True), len(self.todos)
