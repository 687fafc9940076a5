"""Who made a call, and the agent registry as hook events change it.

Attribution, in order:

- an event of a sub-agent (it carries ``agent_id``): a teammate of the session's team when its
  ``agent_type`` names a member of the team in ``config.json`` (an in-process teammate's events
  look like a sub-agent's), recorded under the member's name; else a sub-agent, a row of its
  own named after its parent, its type and its id (``parent`` names the parent);
- an event naming a teammate (``teammate_name``): that member;
- the session's own agent: the one ``board run``'s workers put in the environment
  (``BOARD_AGENT``); the agent this session was bound to earlier; the team member the session
  leads (``leadSessionId`` in a team's ``config.json``); a name made from the session.

Its task, when the environment does not say: the agent's single task in progress (a
sub-agent's: its parent's). A call that fits no task is counted on the agent alone.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path

from board import json_bounds
from board.active_work import read_active, replace_file
from board.claude.hooks.where import HookBoard, claude_home
from board.names import ID_PATTERN
from board.disk import confine

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
    """(name, kind) the event itself gives: a teammate by name, or (``agent_id``) a sub-agent
    of the session, whose name ``identify`` makes; None for the session's own events."""
    agent_id = payload.get("agent_id")
    if isinstance(agent_id, str) and agent_id:
        return agent_id, "subagent"
    for key in ("teammate_name", "agent_name"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return agent_name(value.partition("@")[0]), "teammate"
    return None


class Who:
    """The agent an event is about, and what its registry record says of it."""

    __slots__ = ("name", "kind", "parent", "team", "agent_type")

    def __init__(self, name: str, kind: str, *, parent: str | None = None, team: str | None = None, agent_type: str | None = None) -> None:
        self.name = name
        #: "session" (the session's own agent), "teammate" or "subagent".
        self.kind = kind
        self.parent = parent
        self.team = team
        self.agent_type = agent_type

    def fields(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """What the event tells of the agent, for its record (camelCase, as the file holds it)."""
        fields: dict[str, Any] = {}
        if isinstance(payload.get("session_id"), str):
            fields["sessionId"] = payload["session_id"]
        if isinstance(payload.get("model"), str) and payload["model"]:
            fields["model"] = payload["model"]
        transcript = payload.get("transcript_path")
        if self.kind == "session" and isinstance(transcript, str) and transcript.endswith(".jsonl"):
            # The coordinator reads it while the session works: tokens (and budgets) between turns.
            fields["transcript"] = transcript
        for field, value in (("agentType", self.agent_type), ("team", self.team), ("parent", self.parent)):
            if value:
                fields[field] = value
        return fields


# -- teams (config.json read here with the standard library: the hook starts fast) --------------


def _team_config(directory: Path) -> dict[str, Any] | None:
    try:
        with open(directory / "config.json", "rb", opener=confine.opener) as handle:
            data = json_bounds.loads(handle.read(16 * 1024 * 1024))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("members"), list) else None


def _members(config: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [m for m in config["members"] if isinstance(m, dict) and isinstance(m.get("name"), str) and m["name"]]


def _lead(config: Mapping[str, Any]) -> dict[str, Any] | None:
    lead_id = config.get("leadAgentId")
    return next((m for m in _members(config) if m.get("agentId") == lead_id), None)


def led_team(environ: Mapping[str, str], session_id: object) -> tuple[str, dict[str, Any]] | None:
    """(folder name, config) of the team whose lead is this session (``leadSessionId``)."""
    if not isinstance(session_id, str) or not session_id:
        return None
    root = claude_home(environ) / "teams"
    try:
        folders = sorted(entry.name for entry in os.scandir(root) if entry.is_dir(follow_symlinks=False))
    except OSError:
        return None
    for folder in folders:
        config = _team_config(root / folder)
        if config is not None and config.get("leadSessionId") == session_id:
            return folder, config
    return None


def named_team(environ: Mapping[str, str], team: object) -> dict[str, Any] | None:
    if not isinstance(team, str) or not ID_PATTERN.fullmatch(team):
        return None
    return _team_config(claude_home(environ) / "teams" / team)


def _member_type(config: Mapping[str, Any] | None, name: str) -> str | None:
    member = next((m for m in _members(config) if m["name"] == name), None) if config is not None else None
    kind = member.get("agentType") if member is not None else None
    return kind if isinstance(kind, str) and kind else None


def identify(board: HookBoard, payload: Mapping[str, Any], environ: Mapping[str, str]) -> Who:
    """The agent an event is about (see the module's text for the order)."""
    identity = event_identity(payload)
    if identity is not None and identity[1] == "subagent":
        agent_id, kind = identity[0], payload.get("agent_type")
        kind = kind if isinstance(kind, str) and kind else None
        team = led_team(environ, payload.get("session_id"))
        if team is not None and kind is not None:
            folder, config = team
            lead = _lead(config)
            member = next((m for m in _members(config) if m["name"] == kind and m is not lead), None)
            if member is not None and ID_PATTERN.fullmatch(member["name"]):
                return Who(member["name"], "teammate", team=folder, agent_type=_member_type(config, member["name"]))
        parent = session_agent(board, payload, environ)
        short = agent_name(agent_id.partition("@")[0])[:8]
        name = agent_name(f"{parent.name[:30]}-{agent_name(kind or 'subagent')[:24]}-{short}")
        return Who(name, "subagent", parent=parent.name, agent_type=kind)
    if identity is not None:
        team_name = payload.get("team_name")
        team_name = team_name if isinstance(team_name, str) and team_name else None
        return Who(identity[0], "teammate", team=team_name, agent_type=_member_type(named_team(environ, team_name), identity[0]))
    return session_agent(board, payload, environ)


def session_agent(board: HookBoard, payload: Mapping[str, Any], environ: Mapping[str, str]) -> Who:
    """The agent of the session itself (never one of its sub-agents or teammates)."""
    session = payload.get("session_id")
    agent = environ.get("BOARD_AGENT")
    if agent and ID_PATTERN.fullmatch(agent):
        return Who(agent, "session")
    own = agent_name(f"claude-{session[:8]}") if isinstance(session, str) and session else "claude"
    bound = bound_agent(board, session)
    if bound is not None and bound != own:
        return Who(bound, "session")
    led = led_team(environ, session)
    lead = _lead(led[1]) if led is not None else None
    if led is not None and lead is not None and ID_PATTERN.fullmatch(lead["name"]):
        name = lead["name"]
        kind = lead.get("agentType")
        who = Who(name, "session", team=led[0], agent_type=kind if isinstance(kind, str) and kind else None)
        if bound != name:  # once: later events find the session bound to the lead
            adopt_name(board, session, name)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            update_agent(board, name, stamp, **who.fields({}))
        return who
    return Who(bound or own, "session")


def _fold(board: HookBoard, before: str, after: str) -> None:
    """A session that turned out to be a named agent (it leads a team, or a board command named
    it): its record and calls under the session's made-up name move to that name, so it is one
    row. When the name has a record already, the made-up one goes (its calls stay logged)."""
    if before == after:
        return
    if agent_file(board, after).exists():
        try:
            os.unlink(agent_file(board, before))
        except OSError:
            pass
        return
    for suffix in (".json", ".calls.jsonl"):
        try:
            os.replace(board.state_dir / "agents" / f"{before}{suffix}", board.state_dir / "agents" / f"{after}{suffix}")
        except OSError:
            pass


def adopt_name(board: HookBoard, session_id: object, name: str) -> None:
    """The session is ``name`` from now on: bound to it, its made-up name's row folded into it."""
    if isinstance(session_id, str) and session_id:
        _fold(board, agent_name(f"claude-{session_id[:8]}"), name)
    bind_session(board, session_id, name)


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
    who = identify(board, payload, environ)
    return who.name, task_of(board, who, environ)


def task_of(board: HookBoard, who: Who, environ: Mapping[str, str]) -> str | None:
    """The task an agent's call counts on: the environment's (a teammate's environment is its
    lead's, so not a teammate's), else the single one in progress under its name (a
    sub-agent's parent's)."""
    task = environ.get("BOARD_TASK_ID")
    if task and who.kind != "teammate" and board.has_task(task):
        return task
    owner = who.parent or who.name
    mine = [task_id for task_id, entry in read_active(board.state_dir).items() if entry.get("owner") == owner]
    return mine[0] if len(mine) == 1 and board.has_task(mine[0]) else None


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


def _recorded(board: HookBoard, name: str) -> dict[str, Any]:
    """An agent's record as it is on disk ({}: no record, or none readable)."""
    try:
        with open(agent_file(board, name), "rb", opener=confine.opener) as handle:
            record = json_bounds.loads(handle.read(1024 * 1024))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def names_no_model(board: HookBoard, name: str) -> bool:
    """Whether an agent has a record, and it names no model yet."""
    record = _recorded(board, name)
    return bool(record) and not record.get("model")


def recorded_activity(board: HookBoard, name: str) -> str | None:
    """The activity an agent's record shows (None: no record, or none readable)."""
    activity = _recorded(board, name).get("activity")
    return activity if isinstance(activity, str) else None


def agents_of_session(board: HookBoard, session_id: object) -> list[str]:
    """The agents whose records name the session: its own, its sub-agents and its in-process
    teammates (their events carry their lead's session)."""
    if not isinstance(session_id, str) or not session_id:
        return []
    try:
        files = sorted(entry.name for entry in os.scandir(board.state_dir / "agents") if entry.name.endswith(".json") and entry.is_file(follow_symlinks=False))
    except OSError:
        return []
    names = [name.removesuffix(".json") for name in files]
    return [name for name in names if _recorded(board, name).get("sessionId") == session_id]


def recorded_todos(board: HookBoard, name: str) -> dict[str, bool]:
    """The agent's own todo items as its record keeps them: id to done, oldest first."""
    todos = _recorded(board, name).get("todos")
    return {key: value for key, value in todos.items() if isinstance(key, str) and isinstance(value, bool)} if isinstance(todos, dict) else {}