"""Who made a call, and the agent registry as hook events change it.

Attribution, in order: the agent and task ``board run``'s workers put in the environment
(``BOARD_AGENT``, ``BOARD_TASK_ID``); the identity in the event (a teammate's name, a
sub-agent's type and id); the agent this session was bound to earlier; a name made from the
session. Its task, when the environment does not say: the agent's single task in progress. A
call that fits no task is counted on the agent alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from board import json_bounds
from board.active_work import read_active, replace_file
from board.hooks.where import HookBoard
from board.names import ID_PATTERN
from board.store import confine

# Only for annotations, which are never evaluated: ``board hook`` starts faster without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SESSIONS = ".sessions"
#: A board command naming the agent that runs it: binds the session to that agent.
_NAMED_IN_COMMAND = re.compile(r"(?:--agent[= ]|BOARD_AGENT=)([A-Za-z0-9][A-Za-z0-9_-]{0,63})\b")


def agent_name(text: str) -> str:
    """Any name made into an agent name (letters, digits, ``_``, ``-``; at most 64)."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-_")[:64]
    return name or "agent"


def event_identity(payload: Mapping[str, Any]) -> tuple[str, str] | None:
    """(name, kind) the event itself gives: a teammate, or a sub-agent of the session."""
    for key in ("teammate_name", "agent_name"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return agent_name(value.partition("@")[0]), "teammate"
    agent_id = payload.get("agent_id")
    if isinstance(agent_id, str) and agent_id:
        kind = payload.get("agent_type")
        prefix = kind if isinstance(kind, str) and kind else "subagent"
        return agent_name(f"{prefix}-{agent_id.partition('@')[0][:8]}"), "subagent"
    return None


def session_file(board: HookBoard, session_id: str) -> Path:
    return board.state_dir / "agents" / SESSIONS / agent_name(session_id)


def bound_agent(board: HookBoard, session_id: object) -> str | None:
    if not isinstance(session_id, str) or not session_id:
        return None
    try:
        with open(session_file(board, session_id), encoding="utf-8", opener=confine.opener) as handle:
            name = handle.read(256).strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name if ID_PATTERN.fullmatch(name) else None


def bind_session(board: HookBoard, session_id: object, agent: str) -> None:
    if not isinstance(session_id, str) or not session_id or bound_agent(board, session_id) == agent:
        return
    path = session_file(board, session_id)
    confine.make_folders(path.parent)
    replace_file(path, agent.encode())


def named_in_command(payload: Mapping[str, Any]) -> str | None:
    """The agent a ``board ... --agent NAME`` command (or ``BOARD_AGENT=NAME``) names."""
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str) or "board" not in command:
        return None
    found = _NAMED_IN_COMMAND.search(command)
    return found.group(1) if found else None


def attribute(board: HookBoard, payload: Mapping[str, Any], environ: Mapping[str, str]) -> tuple[str, str | None]:
    """(agent, task id or None) for an event."""
    agent = environ.get("BOARD_AGENT")
    if not (agent and ID_PATTERN.fullmatch(agent)):
        identity = event_identity(payload)
        agent = identity[0] if identity else bound_agent(board, payload.get("session_id"))
    if not agent:
        session = payload.get("session_id")
        agent = agent_name(f"claude-{session[:8]}") if isinstance(session, str) and session else "claude"
    task = environ.get("BOARD_TASK_ID")
    if task and board.has_task(task):
        return agent, task
    mine = [task_id for task_id, entry in read_active(board.state_dir).items() if entry.get("owner") == agent]
    return agent, (mine[0] if len(mine) == 1 and board.has_task(mine[0]) else None)


# -- the registry ------------------------------------------------------------------------------


def agent_file(board: HookBoard, name: str) -> Path:
    return board.state_dir / "agents" / f"{name}.json"


def update_agent(board: HookBoard, name: str, now: str, **fields: Any) -> None:
    """Create or update an agent's registry record (``agents/<name>.json``), keeping what other
    writers put there. ``fields`` are camelCase, as the file holds them."""
    path = agent_file(board, name)
    try:
        with open(path, "rb", opener=confine.opener) as handle:
            record = json_bounds.loads(handle.read(1024 * 1024))
        if not isinstance(record, dict):
            record = {}
    except FileNotFoundError:
        record = {}
    except (OSError, ValueError):
        return  # a broken record is the dashboard's to report, not the hook's to overwrite
    record.update(fields)
    record["name"] = name
    record.setdefault("kind", "claude-code")
    if "host" not in record:
        import socket  # only for a new record: most events find one

        record["host"] = socket.gethostname()
    record.setdefault("startedAt", now)
    record["heartbeatAt"] = now
    confine.make_folders(path.parent)
    replace_file(path, (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def recorded_activity(board: HookBoard, name: str) -> str | None:
    """The activity an agent's record shows (None: no record, or none readable)."""
    try:
        with open(agent_file(board, name), "rb", opener=confine.opener) as handle:
            record = json_bounds.loads(handle.read(1024 * 1024))
    except (OSError, ValueError):
        return None
    activity = record.get("activity") if isinstance(record, dict) else None
    return activity if isinstance(activity, str) else None