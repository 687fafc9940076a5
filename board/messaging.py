"""Who works on the board, and a word to one of them, the same for the command line and MCP.

``board agents`` and MCP's ``agents`` list the registered agents and the members of the Claude
Code teams working on the board (``agents_json``); ``board message`` and MCP's ``message`` find
the recipient among the board's teams and append the message to its inbox in Claude Code's
format, and answer the same.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from board.agent_record import AgentRecord
    from board.claude.teams import Team
    from board.config import BoardSettings
    from board.roster import RosterEntry
    from board.store import Store


def board_teams_of(store: Store) -> tuple[list[AgentRecord], list[Team]]:
    """The board's registered agents, and the Claude Code teams working on it."""
    from board.agents import list_agents
    from board.roster import board_teams

    layout = store.layout
    records = list_agents(store.agent_records)
    return records, board_teams(layout.workspace, layout.tasks_dir, layout.name, records)


def send_message(store: Store, to: str, sender: str, text: str, *, summary: str | None = None, team: str | None = None) -> dict[str, Any]:
    """Append ``text`` to team member ``to``'s inbox (in the team called ``team``, when the name
    is in several); what was sent, where: ``{"team", "to", "inbox", "message"}``."""
    from board.claude.teams import append_message, find_recipient

    _, teams = board_teams_of(store)
    recipient = find_recipient(to, teams, team_name=team)
    sent = append_message(recipient.team, recipient.member.name, sender, text, summary=summary)
    return {"team": recipient.team.name, "to": recipient.member.name, "inbox": str(recipient.team.inbox_path(recipient.member.name)), "message": sent}


def board_roster(store: Store, now: datetime) -> tuple[list[RosterEntry], list[Team], dict[str, dict[str, Any]]]:
    """The board's agents (``board.roster``), the teams working on it, and each agent's tokens."""
    from board.claude.teams import team_inboxes
    from board.config import settings_or_defaults
    from board.roster import build_roster, in_progress_by_owner

    records, teams = board_teams_of(store)
    inboxes = {(team.name, name): inbox for team in teams for name, inbox in team_inboxes(team).items()}
    settings = settings_or_defaults(store.local_dir)
    roster = build_roster(records, teams, in_progress_by_owner(store.tasks.values()), now, settings.agent_stale_after, inboxes, store.tasks)
    return roster, teams, _agent_tokens(store, roster, settings)


def agents_json(roster: list[RosterEntry], teams: list[Team], tokens: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``{"agents": [...], "teams": [...]}``, as ``board agents --json`` and MCP's ``agents`` give it."""
    return {"agents": [{**_entry_json(entry), "tokens": tokens[entry.name]} for entry in roster], "teams": [_team_json(team) for team in teams]}


def _entry_json(entry: RosterEntry) -> dict[str, Any]:
    from board.times import iso

    return {
        "name": entry.name,
        "kind": entry.kind,
        "state": str(entry.activity),
        "team": entry.team,
        "lead": entry.lead,
        "agentType": entry.agent_type or None,
        "model": entry.model or None,
        "task": entry.task,
        "tasks": list(entry.tasks),
        "toolCalls": entry.tool_calls,
        "lastActivity": iso(entry.last_activity) if entry.last_activity else None,
        "heartbeatAt": iso(entry.heartbeat_at) if entry.heartbeat_at else None,
        "messageable": entry.messageable,
        "unread": entry.unread,
        "idleWithTask": entry.idle_with_task,
        "inboxProblem": entry.inbox_problem,
        "parent": entry.parent,
        "todos": {"done": entry.todos[0], "total": entry.todos[1]} if entry.todos else None,
    }


def _agent_tokens(store: Any, roster: list[RosterEntry], settings: BoardSettings) -> dict[str, dict[str, Any]]:
    """Each agent's tokens (from its session transcripts: ``board.claude.transcripts``) and their cost."""
    from board.claude.transcripts import agent_tokens_path, read_tokens
    from board.prices import summary

    prices = settings.model_prices()
    return {entry.name: summary(read_tokens(agent_tokens_path(store.state_dir, entry.name)), prices) for entry in roster}


def _team_json(team: Team) -> dict[str, Any]:
    return {
        "name": team.name,
        "title": team.title or None,
        "description": team.description or None,
        "directory": str(team.directory),
        "members": [m.name for m in team.members],
        "problem": team.problem,
    }
