"""An agent heard from on the command line (``board claim``, ``heartbeat``, ``toolcall``) is on
the board like a worker or an MCP client: it has a record in the registry (``board.agents``).

The record is written as the JSON the registry keeps, without its pydantic model: these are the
commands scripts run most, and they load pydantic's core only (``tests/core/test_startup.py``).
"""

from __future__ import annotations

from typing import Any

from board.model import utcnow, validate_id
from board.store.side import AgentRecords
from board.times import iso

#: The kind of an agent known from the command line alone: no process of its own to watch.
CLI_KIND = "cli"

_KEEP: Any = object()


def note_agent(records: AgentRecords, name: str, *, task: str | None = _KEEP) -> None:
    """Make the agent's record on first sight (kind ``cli``), or bring its heartbeat (and
    ``task``, unless kept) up to now. A record someone else keeps (a worker's, a Claude Code
    session's) keeps its kind, process and everything else."""
    validate_id(name)
    now = iso(utcnow())
    record = records.read(name)
    if not isinstance(record, dict) or record.get("name") != name:
        import socket  # here: only a first sight needs the host's name (3 ms of every command's start)

        record = {"name": name, "kind": CLI_KIND, "pid": None, "host": socket.gethostname(), "task": None, "startedAt": now, "toolCalls": 0}
    record["heartbeatAt"], record["stopped"] = now, False
    if task is not _KEEP:
        record["task"] = task
    records.write(name, record)
