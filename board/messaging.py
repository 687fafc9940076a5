"""A word to a member of a Claude Code team working on the board, said the same way by
``board message`` and MCP's ``message``: the recipient found among the board's teams, the
message appended to its inbox in Claude Code's format, and the answer both give.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from board.agent_record import AgentRecord
    from board.claude.teams import Team
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
