"""The board's agents: registered agents one line each (state, current task, heartbeat age, tool
calls), then each Claude Code team working on the board, two lines per member (state, lead ★,
current task, last activity, tool calls; model, agent type, unread messages)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget

from board.agent_record import AgentRecord
from board.claude.teams import Inbox, Team
from board.model import Task
from board.roster import Activity, RosterEntry, build_roster, todos_text
from board.text import printable
from board.ui.card import format_age
from board.ui.widgets.component_styles import PANEL_FRAME, component_style
from board.ui.widgets.posted import Posted

STATE_MARK = {Activity.WORKING: "●", Activity.IDLE: "○", Activity.STALE: "✗", Activity.GONE: "✗"}


def short_model(model: str) -> str:
    """``claude-sonnet-4-5`` as ``sonnet-4-5``: the panel is narrow."""
    return model.removeprefix("claude-")


class AgentsPanel(Widget, can_focus=True):
    """Agents as the app hands them down (``show_agents``, ``show_owned``); posts ``OpenAgent``,
    ``MessageAgent`` and ``Left`` up.

    | key | action |
    |---|---|
    | up / k, down / j | previous / next agent |
    | enter | the agent's details: its tasks and messages |
    | m | message the agent (a Claude Code team member) |
    | escape | back to the board |
    """

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="agents.up"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="agents.down"),
        Binding("enter", "open", "Details", id="agents.open"),
        Binding("m", "message", "Message", id="agents.message"),
        Binding("escape", "leave", "Back to board", id="agents.back"),
    ]
    COMPONENT_CLASSES = {
        "agents-panel--working", "agents-panel--idle", "agents-panel--stale", "agents-panel--gone", "agents-panel--muted",
        "agents-panel--name", "agents-panel--team", "agents-panel--lead", "agents-panel--warning", "agents-panel--error",
        "agents-panel--unread", "agents-panel--cursor",
    }
    DEFAULT_CSS = """
    AgentsPanel {
        height: auto;
        max-height: 50%;
        """ + PANEL_FRAME + """
        padding: 0 1;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
    }
    AgentsPanel:focus { border: round $primary; background-tint: $foreground 0%; }
    AgentsPanel > .agents-panel--working { color: $success; }
    AgentsPanel > .agents-panel--idle { color: $primary; }
    AgentsPanel > .agents-panel--stale { color: $error; }
    AgentsPanel > .agents-panel--gone { color: $text-muted; }
    AgentsPanel > .agents-panel--muted { color: $text-muted; }
    AgentsPanel > .agents-panel--name { text-style: bold; color: $foreground; }
    AgentsPanel > .agents-panel--team { text-style: bold; color: $secondary; }
    AgentsPanel > .agents-panel--lead { color: $warning; text-style: bold; }
    AgentsPanel > .agents-panel--warning { color: $warning; text-style: bold; }
    AgentsPanel > .agents-panel--error { color: $error; }
    AgentsPanel > .agents-panel--unread { color: $accent; text-style: bold; }
    AgentsPanel > .agents-panel--cursor { background: $primary 45%; }
    """

    class AboutAgent(Posted):
        """Something asked of one agent in the panel."""

        def __init__(self, panel: AgentsPanel, entry: RosterEntry) -> None:
            self.entry = entry
            super().__init__(panel)

    class OpenAgent(AboutAgent):
        """Enter on an agent: show its details."""

    class MessageAgent(AboutAgent):
        """m on an agent: write to it."""

    class Left(Message):
        """Escape in the panel: back to the board."""

    def __init__(self, now: Callable[[], datetime], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.costs: dict[str, str] = {}
        self.now = now
        self.agents: list[AgentRecord] = []
        self.teams: list[Team] = []
        self.inboxes: Mapping[tuple[str, str], Inbox] = {}
        self.owned: Mapping[str, Sequence[Task]] = {}
        #: The board's tasks (the app's, shared): an agent's record may name a task it no longer holds.
        self.tasks: Mapping[str, Task] = {}
        self.stale_after = timedelta(seconds=30)
        self.border_title = "Agents"
        self._ages_shown: tuple[tuple[str, str], ...] = ()
        #: The highlighted agent: (team, name).
        self.cursor: tuple[str | None, str] | None = None

    # -- attributes down ----------------------------------------------------------------------

    def show_agents(
        self, agents: list[AgentRecord], stale_after: timedelta, *,
        teams: list[Team] | None = None, inboxes: Mapping[tuple[str, str], Inbox] | None = None,
        costs: Mapping[str, str] | None = None,
    ) -> None:
        height = self._line_count()
        self.costs = dict(costs or {})
        self.agents = agents
        self.stale_after = stale_after
        self.teams = teams or []
        self.inboxes = inboxes or {}
        members = sum(len(t.members) for t in self.teams)
        self.border_subtitle = str(len(self.roster()))
        if members and len(self.teams) == 1:
            self.border_subtitle = f"{self.border_subtitle} · team {self.teams[0].name}"
        self._ages_shown = self._ages()
        self.refresh(layout=self._line_count() != height)

    def show_owned(self, owned: Mapping[str, Sequence[Task]]) -> None:
        """Tasks in progress by owner changed: current tasks and idle marks may read differently."""
        self.owned = owned
        self.refresh()

    def refresh_ages(self) -> None:
        """Redraw if an age or a state reads differently now (the clock moved)."""
        ages = self._ages()
        if ages != self._ages_shown:
            self._ages_shown = ages
            self.refresh()

    def roster(self) -> list[RosterEntry]:
        return build_roster(self.agents, self.teams, self.owned, self.now(), self.stale_after, self.inboxes, self.tasks)

    def _ages(self) -> tuple[tuple[str, str], ...]:
        now = self.now()
        return tuple((self._age(entry, now), str(entry.activity)) for entry in self.roster())

    @staticmethod
    def _age(entry: RosterEntry, now: datetime) -> str:
        moment = entry.heartbeat_at if not entry.member_of_team else entry.last_activity
        return format_age((now - moment).total_seconds()) if moment else ""

    # -- rendering ----------------------------------------------------------------------------

    def _line_count(self) -> int:
        registered = {e.name for e in self.roster() if not e.member_of_team}
        lines = len(registered) + sum(1 + (1 if t.problem else 0) + 2 * len(t.members) for t in self.teams)
        return max(1, lines)

    def get_content_height(self, container, viewport, width: int) -> int:
        return self._line_count()

    def _style(self, name: str) -> Style:
        return component_style(self, f"agents-panel--{name}")

    def render(self) -> Text:
        entries = self.roster()
        if not entries and not self.teams:
            return Text("no agents registered", self._style("muted"))
        width = self.size.width
        now = self.now()
        chosen = self._chosen(entries)
        lines: list[Text] = []
        by_team: dict[str, list[RosterEntry]] = {}
        for entry in entries:
            if entry.team is None:
                lines.append(self._registered_line(entry, now, width, entry is chosen))
            else:
                by_team.setdefault(entry.team, []).append(entry)
        for team in self.teams:
            lines.append(self._team_line(team, width))
            if team.problem:
                problem = Text("  ⚠ " + printable(team.problem), self._style("error"), no_wrap=True, overflow="ellipsis")
                problem.truncate(width, overflow="ellipsis")
                lines.append(problem)
            for entry in by_team.get(team.name, []):
                lines.extend(self._member_lines(entry, now, width, entry is chosen))
        return Text("\n").join(lines)

    def _chosen(self, entries: list[RosterEntry]) -> RosterEntry | None:
        """The highlighted entry while the panel has the keys."""
        if not self.has_focus or not entries:
            return None
        return next((e for e in entries if (e.team, e.name) == self.cursor), entries[0])

    def _with_right(self, line: Text, right: Text, width: int, highlighted: bool, *, keep_right: bool = False) -> Text:
        """``right`` at the right edge if there is room (``keep_right``: cut ``line`` to make room)."""
        if keep_right and right.cell_len and line.cell_len + 1 + right.cell_len > width:
            line.truncate(max(0, width - right.cell_len - 1), overflow="ellipsis")
        gap = width - line.cell_len - right.cell_len
        if gap >= 1:
            line.append(" " * gap)
            line.append_text(right)
        line.truncate(width, overflow="ellipsis", pad=highlighted)
        if highlighted:
            line.stylize(self._style("cursor"))
        return line

    def _registered_line(self, entry: RosterEntry, now: datetime, width: int, highlighted: bool) -> Text:
        style = self._style(str(entry.activity))
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(STATE_MARK[entry.activity] + " ", style)
        line.append(printable(entry.name), self._style("name"))
        line.append(f" #{printable(entry.task)}" if entry.task else " idle", style)
        if entry.todos:
            line.append(f" {todos_text(entry.todos)}", self._style("muted"))
        age = self._age(entry, now)
        right = Text((f"♥{age} " if age else "") + f"⚒{entry.tool_calls}{self._cost(entry)}", self._style("muted"))
        return self._with_right(line, right, width, highlighted)

    def _cost(self, entry: RosterEntry) -> str:
        """`` $0.42`` (`` $?`` unpriced): the estimated cost of the agent's tokens, when it spent any."""
        cost = self.costs.get(entry.name)
        return "" if cost is None else f" {cost}"

    def _team_line(self, team: Team, width: int) -> Text:
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append("─ ", self._style("muted"))
        line.append(printable(team.name), self._style("team"))
        line.append(" ", self._style("muted"))
        line.append("─" * max(0, width - line.cell_len), self._style("muted"))
        line.truncate(width, overflow="ellipsis")
        return line

    def _member_lines(self, entry: RosterEntry, now: datetime, width: int, highlighted: bool) -> list[Text]:
        style = self._style(str(entry.activity))
        first = Text(no_wrap=True, overflow="ellipsis")
        first.append(STATE_MARK[entry.activity] + " ", style)
        first.append(printable(entry.name), self._style("name"))
        if entry.lead:
            first.append(" ★", self._style("lead"))
        if entry.task:
            first.append(f" #{printable(entry.task)}", self._style("warning") if entry.idle_with_task else style)
        if entry.idle_with_task:
            first.append(" ⚠", self._style("warning"))
        age = self._age(entry, now)
        calls = f"⚒{entry.tool_calls}{self._cost(entry)}"
        right = Text((f"{age} " if age else "") + calls, self._style("muted"))
        if age and first.cell_len + 1 + right.cell_len > width:
            right = Text(calls, self._style("muted"))  # in a narrow panel its task matters more than its age
        second = Text("  " + " · ".join(printable(part) for part in (short_model(entry.model), entry.agent_type) if part), self._style("muted"), no_wrap=True, overflow="ellipsis")
        mail = Text()
        if entry.inbox_problem and entry.messageable:
            mail = Text("✉?", self._style("error"))
        elif entry.unread:
            mail = Text(f"✉{entry.unread}", self._style("unread"))
        if entry.todos:  # what it is at now: kept in view, the model and type give way
            mail = Text(todos_text(entry.todos), self._style("muted")) + (Text(" ") + mail if mail.plain else Text())
        return [self._with_right(first, right, width, highlighted, keep_right=True), self._with_right(second, mail, width, highlighted, keep_right=True)]

    # -- input --------------------------------------------------------------------------------

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def action_cursor(self, step: int) -> None:
        entries = self.roster()
        if not entries:
            return
        keys = [(e.team, e.name) for e in entries]
        index = keys.index(self.cursor) if self.cursor in keys else 0
        self.cursor = keys[max(0, min(len(keys) - 1, index + step))]
        self.refresh()

    def highlighted(self) -> RosterEntry | None:
        entries = self.roster()
        return next((e for e in entries if (e.team, e.name) == self.cursor), entries[0] if entries else None)

    def action_open(self) -> None:
        entry = self.highlighted()
        if entry is not None:
            self.post_message(self.OpenAgent(self, entry))

    def action_message(self) -> None:
        entry = self.highlighted()
        if entry is not None:
            self.post_message(self.MessageAgent(self, entry))

    def action_leave(self) -> None:
        self.post_message(self.Left())
