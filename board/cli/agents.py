"""``board agents`` and ``board message``: who works on the board, and a word to one of them.

The agents are the registered ones (``agents/<name>.json``) and the members of the Claude Code
teams working on the board; a message goes to a team member's inbox in Claude Code's format.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import TYPE_CHECKING, Any

from board.cli.parser import add_command
from board.cli.arguments import agent_name
from board.cli.output import print_json
from board.cli.opening import open_store
from board.identity import acting_user
from board.present import format_age, tokens_text

if TYPE_CHECKING:  # handlers load them: building the parser must stay light
    from board.claude.teams import Team
    from board.roster import RosterEntry

#: Position of these commands in --help.
ORDER = 22


def register(commands: argparse._SubParsersAction) -> None:
    agents = add_command(commands, "agents", "list the board's agents: registered ones and Claude Code team members")
    agents.set_defaults(handler=cmd_agents)

    message = add_command(commands, "message", "send a message to a Claude Code team member's inbox")
    message.add_argument("name", help="the team member to write to")
    message.add_argument("text", help="what to say")
    message.add_argument("--team", help="the team, when the name is in several (default: the team working on this board that has the member)")
    message.add_argument("--from", dest="sender", type=agent_name, help="who the message is from (default: $BOARD_AGENT, else your login name)")
    message.add_argument("--summary", help="the few words Claude Code shows for the message (default: its first words)")
    message.set_defaults(handler=cmd_message)


def cmd_agents(args: argparse.Namespace) -> int:
    from board.messaging import agents_json, board_roster

    store = open_store(args)
    now = store.clock()
    roster, teams, tokens = board_roster(store, now)
    if args.json:
        print_json(agents_json(roster, teams, tokens))
        return 0
    if not roster:
        print("no agents: none registered, and no Claude Code team works on this board")
    else:
        print(_table(roster, now, tokens))
    for line in _notes(roster, teams):
        print(line)
    return 0


def _age(moment: datetime | None, now: datetime) -> str:
    return f"{format_age((now - moment).total_seconds())} ago" if moment else "-"


def _table(roster: list[RosterEntry], now: datetime, tokens: dict[str, dict[str, Any]]) -> str:
    from board.roster import todos_text

    rows = [("NAME", "STATE", "TEAM", "TYPE", "MODEL", "TASK", "TODOS", "CALLS", "TOKENS", "LAST ACTIVE", "UNREAD")]
    for entry in roster:
        team = "-" if entry.team is None else entry.team + (" (lead)" if entry.lead else "")
        rows.append(
            (
                entry.name,
                str(entry.activity),
                team,
                entry.agent_type or entry.kind,
                entry.model or "-",
                f"#{entry.task}" if entry.task else "-",
                todos_text(entry.todos).removesuffix(" todos") or "-",
                str(entry.tool_calls),
                tokens_text(tokens[entry.name]),
                _age(entry.last_activity, now),
                str(entry.unread) if entry.member_of_team else "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)


def _notes(roster: list[RosterEntry], teams: list[Team]) -> list[str]:
    from board.claude.teams import why_not_messageable

    notes = []
    for entry in roster:
        if entry.idle_with_task:
            listed = ", ".join(f"#{t}" for t in entry.tasks)
            how = f"board message {entry.name} \"...\" nudges it" if entry.messageable else why_not_messageable(entry.name)
            notes.append(f"{entry.name} ({entry.team}) is idle while {listed} is in progress under its name: {how}")
        elif entry.member_of_team and not entry.messageable:
            notes.append(why_not_messageable(entry.name))
        if entry.inbox_problem and entry.messageable:
            notes.append(f"{entry.name}'s inbox: {entry.inbox_problem}")
    notes += [f"team {team.name}: {team.problem}" for team in teams if team.problem]
    return notes


def cmd_message(args: argparse.Namespace) -> int:
    from board.messaging import send_message

    store = open_store(args, whole=False)
    sent = send_message(store, args.name, args.sender or acting_user(), args.text, summary=args.summary, team=args.team)
    if args.json:
        print_json(sent)
    else:
        print(f"sent to {sent['to']} (team {sent['team']}): {sent['inbox']}")
    return 0
