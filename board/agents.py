"""The agent registry: one record per agent, written by the agent or its runner.

The records are kept by the store (``store.agent_records``, ``board.store.side.AgentRecords``):
``agents/<name>.json`` in a board's files. Which live process holds a name is the store's too
(``store.agent_records.name_lock(name)``, ``name_in_use(name)``).
"""

from __future__ import annotations

import os
import socket
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from board.document_schema import ValidationError

from board.agent_record import AgentRecord
from board.model import utcnow, validate_id
from board.times import parse_time

if TYPE_CHECKING:
    from board.store.side import AgentRecords


class AgentState(StrEnum):
    IDLE = "idle"
    WORKING = "working"
    STALE = "stale"


#: Fields a record carries only when someone set them (Claude Code's hooks), so records of
#: other agents read as they always did.
ONLY_WHEN_SET = ("activity", "activityAt", "sessionId", "team", "agentType", "model", "parent", "transcript", "todos")


def write_agent(records: AgentRecords, record: AgentRecord) -> None:
    validate_id(record.name)
    data = record.model_dump(mode="json", by_alias=True)
    for key in ONLY_WHEN_SET:
        if data.get(key) is None:
            data.pop(key, None)
    records.write(record.name, data)


def register_agent(records: AgentRecords, name: str, *, kind: str = "agent", pid: int | None = None, now: datetime | None = None) -> AgentRecord:
    now = now or utcnow()
    record = AgentRecord(name=name, kind=kind, pid=pid if pid is not None else os.getpid(), host=socket.gethostname(), heartbeat_at=now, started_at=now, tool_calls=0)
    write_agent(records, record)
    return record


def read_agent(records: AgentRecords, name: str) -> AgentRecord | None:
    data = records.read(name)
    if data is None:
        return None
    try:
        return with_logged_calls(records, AgentRecord.model_validate(data))
    except (OSError, ValidationError, ValueError):
        return None


def list_agents(records: AgentRecords) -> list[AgentRecord]:
    """Every readable agent record; unreadable ones are skipped (they are the agent's business)."""
    found = []
    for data in records.read_all():
        try:
            found.append(with_logged_calls(records, AgentRecord.model_validate(data)))
        except (OSError, ValidationError, ValueError):
            continue
    return found


def with_logged_calls(records: AgentRecords, record: AgentRecord) -> AgentRecord:
    """The record with its calls counted from its call log (``board.toolcall_log``), the one
    count every writer adds to, and its heartbeat no older than its last logged call: an
    agent making tool calls is alive whether or not it writes heartbeats."""
    counted = records.logged_calls(record.name)
    if counted is None:
        return record
    calls, last_call = counted
    record.tool_calls = calls
    last = parse_time(last_call) if last_call else None
    if last is not None and last > record.heartbeat_at:
        record.heartbeat_at = last
    return record


def agent_state(record: AgentRecord, now: datetime, stale_after: timedelta) -> AgentState:
    if record.stopped or now - record.heartbeat_at > stale_after:
        return AgentState.STALE
    return AgentState.WORKING if record.task else AgentState.IDLE
