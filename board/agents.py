"""The agent registry: one ``agents/<name>.json`` per agent, written by the agent or its runner."""

from __future__ import annotations

import json
import os
import socket
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from board.model import utcnow, validate_id
from board.store.atomic import read_regular, write_atomic
from board.store.lifetime_lock import LifetimeLock, held_elsewhere
from board.times import parse_time
from board.toolcall_log import count_agent_calls


class AgentState(StrEnum):
    IDLE = "idle"
    WORKING = "working"
    STALE = "stale"


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


#: Fields a record carries only when someone set them (Claude Code's hooks), so records of
#: other agents read as they always did.
ONLY_WHEN_SET = ("activity", "activityAt", "sessionId", "team", "agentType")


def agents_dir(state_dir: Path) -> Path:
    return state_dir / "agents"


def name_lock(state_dir: Path, name: str) -> LifetimeLock:
    """The lock a process holds on an agent name while it works under it.

    Leases and tokens are per name: two live processes under one name would both pass every
    fence and run the same task at once. Holding this lock makes the name one process's.
    """
    directory = agents_dir(state_dir)
    directory.mkdir(exist_ok=True)
    return LifetimeLock(directory / f".{validate_id(name)}.lock")


def name_in_use(state_dir: Path, name: str) -> bool:
    """Does a live process hold agent name ``name`` on this board?"""
    return held_elsewhere(agents_dir(state_dir) / f".{validate_id(name)}.lock")


def write_agent(state_dir: Path, record: AgentRecord) -> None:
    validate_id(record.name)
    directory = agents_dir(state_dir)
    directory.mkdir(exist_ok=True)
    data = record.model_dump(mode="json", by_alias=True)
    for key in ONLY_WHEN_SET:
        if data.get(key) is None:
            data.pop(key, None)
    write_atomic(directory / f"{record.name}.json", (json.dumps(data, indent=2) + "\n").encode())


def register_agent(state_dir: Path, name: str, *, kind: str = "agent", pid: int | None = None, now: datetime | None = None) -> AgentRecord:
    now = now or utcnow()
    record = AgentRecord(name=name, kind=kind, pid=pid if pid is not None else os.getpid(), host=socket.gethostname(), heartbeat_at=now, started_at=now)
    write_agent(state_dir, record)
    return record


def read_agent(state_dir: Path, name: str) -> AgentRecord | None:
    try:
        raw = read_regular(agents_dir(state_dir) / f"{validate_id(name)}.json")
        return with_logged_calls(state_dir, AgentRecord.model_validate_json(raw))
    except (OSError, ValidationError, ValueError):
        return None


def list_agents(state_dir: Path) -> list[AgentRecord]:
    """Every readable agent record; unreadable ones are skipped (they are the agent's business)."""
    directory = agents_dir(state_dir)
    if not directory.is_dir():
        return []
    records = []
    for path in sorted(directory.glob("*.json")):
        try:
            records.append(with_logged_calls(state_dir, AgentRecord.model_validate_json(read_regular(path))))
        except (OSError, ValidationError, ValueError):
            continue
    return records


def with_logged_calls(state_dir: Path, record: AgentRecord) -> AgentRecord:
    """The record with its calls counted from its call log (``board.toolcall_log``), the one
    count every writer adds to, and its heartbeat no older than its last logged call: an
    agent making tool calls is alive whether or not it writes heartbeats."""
    counted = count_agent_calls(state_dir, record.name)
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
