"""Everything about one agent: its state, team, tasks, tool calls, and the messages to and from it."""

from __future__ import annotations

from datetime import datetime

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from board.claude.teams import InboxMessage, conversation, messageable, why_not_messageable
from board.roster import RosterEntry
from board.text import printable
from board.present import moment_text
from board.ui.messages import AgentsShown, TasksShown
from board.ui.session import BoardSession
from board.ui.widgets.key_footer import KeyFooter

#: Lines of a message's text shown before it is cut.
MESSAGE_LINES = 6


def _when(moment: datetime | None, now: datetime) -> str:
    return moment_text(moment, now)


def message_lines(messages: list[InboxMessage], name: str, *, unread_style: str = "bold", muted: str = "dim") -> Text:
    """A conversation, oldest first: who to whom and when, unread ones marked, then the text."""
    text = Text()
    for message in messages:
        unread = not message.read
        text.append("● " if unread else "  ", unread_style)
        when = message.timestamp.strftime("%m-%d %H:%M") if message.timestamp else "?"
        text.append(f"{when} ", muted)
        text.append(printable(message.sender), "bold")
        text.append(" → ")
        text.append(printable(message.recipient), "bold")
        if unread:
            text.append("  unread", unread_style)
        text.append("\n")
        body = message.preview() if message.protocol is not None else message.text
        lines = printable(body, multiline=True).splitlines() or [""]
        for line in lines[:MESSAGE_LINES]:
            text.append(f"    {line}\n")
        if len(lines) > MESSAGE_LINES:
            text.append(f"    … {len(lines) - MESSAGE_LINES} more lines\n", muted)
    if not messages:
        text.append(f"no messages to or from {printable(name)}\n", muted)
    return text


class AgentScreen(Screen[None]):
    """| key | action |
    |---|---|
    | escape / q | back to the board |
    | m | message this agent |
    """

    #: The board's task keys mean nothing here (no task is shown): the app hides them.
    ACTS_ON_TASKS = False
    BINDINGS = [
        Binding("escape,q", "back", "Back", id="agent.back"),
        Binding("m", "message", "Message", id="agent.message"),
    ]
    DEFAULT_CSS = """
    AgentScreen { layout: vertical; }
    #agent-body { height: 1fr; }
    #agent-main { width: 1fr; padding: 0 1; background: $surface; }
    #agent-title { margin: 1 0; color: $foreground; }
    #agent-messages { width: 1fr; min-width: 40; border: round $panel-lighten-2; border-title-color: $foreground; border-title-style: bold; padding: 0 1; }
    """

    class MessageAgent(Message):
        """m: write to the agent shown."""

        def __init__(self, entry: RosterEntry) -> None:
            self.entry = entry
            super().__init__()

    def __init__(self, name: str, team: str | None, session: BoardSession) -> None:
        super().__init__()
        self.agent_name = name
        self.team_name = team
        self.session = session

    def compose(self) -> ComposeResult:
        with Horizontal(id="agent-body"):
            with VerticalScroll(id="agent-main"):
                yield Static(id="agent-title")
                yield Static(id="agent-fields")
            with VerticalScroll(id="agent-messages"):
                yield Static(id="agent-conversation")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._show_agent()

    def on_agents_shown(self, message: AgentsShown) -> None:
        self._show_agent()

    def on_tasks_shown(self, message: TasksShown) -> None:
        self._show_agent()

    def entry(self) -> RosterEntry | None:
        return self.session.roster_entry(self.agent_name, self.team_name)

    def _show_agent(self) -> None:
        session = self.session
        entry = self.entry()
        title = self.query_one("#agent-title", Static)
        if entry is None:
            title.update(Text(f"{printable(self.agent_name)} is no longer among the board's agents", style="bold"))
            return
        now = session.now()
        heading = Text()
        heading.append(printable(entry.name), style="bold")
        if entry.lead:
            heading.append(" ★ lead", style="bold")
        if entry.team:
            heading.append(f"   team {printable(entry.team)}")
        heading.append(f"   {entry.activity}", style="italic")
        title.update(heading)

        fields = Table.grid(padding=(0, 2))
        fields.add_column(style="dim", no_wrap=True)
        fields.add_column()
        tasks = session.graph.tasks
        current = tasks.get(entry.task) if entry.task else None
        state = str(entry.activity)
        if entry.idle_with_task:
            state += f" while {', '.join('#' + t for t in entry.tasks)} {'is' if len(entry.tasks) == 1 else 'are'} in progress under its name (m sends a nudge)"
        record = next((r for r in session.agents if r.name == entry.name), None)
        team = next((t for t in session.teams if t.name == entry.team), None)
        member = team.member(entry.name) if team is not None else None
        rows: list[tuple[str, str]] = [
            ("state", state),
            ("team", (printable(entry.team) + (" (lead)" if entry.lead else "")) if entry.team else "— (registered agent)"),
            ("agent type", printable(entry.agent_type) or "—"),
            ("model", printable(entry.model) or "—"),
            ("current task", f"#{entry.task} {printable(current.subject)}" if current else (f"#{entry.task}" if entry.task else "—")),
            ("in progress", ", ".join(f"#{t}" for t in entry.tasks) or "—"),
            ("tool calls", str(entry.tool_calls)),
            ("last activity", _when(entry.last_activity, now)),
        ]
        if member is not None:
            rows += [("cwd", printable(member.cwd) or "—"), ("joined", _when(member.joined_at, now)), ("agent id", printable(member.agent_id) or "—")]
        if record is not None:
            rows += [
                ("kind", printable(record.kind)),
                ("heartbeat", _when(record.heartbeat_at, now)),
                ("session", printable(record.session_id or "") or "—"),
            ]
            if record.pid is not None:
                rows.append(("process", f"{record.pid} on {printable(record.host) or '?'}"))
        if team is not None:
            # Shown from Claude Code's folder down: the same on every machine.
            inbox = "—" if not messageable(entry.name) else printable(str(team.inbox_path(entry.name).relative_to(team.directory.parent.parent)))
            rows.append(("inbox", inbox))
            if not messageable(entry.name):
                rows.append(("messages", why_not_messageable(entry.name)))
            elif entry.inbox_problem:
                rows.append(("inbox problem", printable(entry.inbox_problem)))
            if team.problem:
                rows.append(("team problem", printable(team.problem)))
        for label, value in rows:
            fields.add_row(Text(label), Text(value))
        self.query_one("#agent-fields", Static).update(fields)

        messages = conversation(entry.name, [inbox for (team_name, _), inbox in session.inboxes.items() if team_name == entry.team])
        unread = sum(1 for m in messages if not m.read and m.recipient == entry.name)
        panel = self.query_one("#agent-messages", VerticalScroll)
        panel.border_title = f"Messages ({len(messages)}{f', {unread} unread' if unread else ''})" if entry.team else "Messages"
        if entry.team is None:
            body = Text("a registered agent has no inbox: only Claude Code team members do", style="dim")
        else:
            body = message_lines(messages, entry.name)
        self.query_one("#agent-conversation", Static).update(body)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_message(self) -> None:
        entry = self.entry()
        if entry is not None:
            self.post_message(self.MessageAgent(entry))
