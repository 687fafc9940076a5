"""The board one dashboard shows, Textual-free: its store and the lock every thread takes to use
it, what is on screen (graph, lanes, card view), the agents, teams and inboxes, and the doors the
keys go through (history, writes, messages).

The app holds one session and hands it down to its screens; a screen's worker asks the session
for what it reads, and the session takes the lock. Reads return ``BoardRead``: numbered under the
lock, so the app can tell an earlier read from a later one (``DisplayedBoard``).
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from board.agent_record import AgentRecord
from board.agents import list_agents
from board.alerts import Alert
from board.budgets import Spend, SpendReader
from board.claude.teams import Inbox, Team, append_message, read_inbox
from board.claude.transcripts import agent_costs
from board.config import BoardSettings, load_settings
from board.coordinator.presence import coordinator_heard_on
from board.errors import BoardError
from board.graph import TaskGraph
from board.identity import HUMAN_ACTOR, local_user
from board.model import Task
from board.roster import OwnedTasks, RosterEntry, board_teams, build_roster
from board.store import Store
from board.store.opening import open_unread
from board.ui.board_alerts import AlertsFollower
from board.ui.board_state import DisplayedBoard
from board.text import printable
from board.ui.card import CardView, money, tokens_short
from board.ui.lanes import Lanes

#: Observation order across every reader and writer of one dashboard.
_observations = itertools.count(1)


def next_observation() -> int:
    """The next number in the order reads and writes were made in (taken under the store's lock)."""
    return next(_observations)


def unread_by_member(inboxes: dict[tuple[str, str], Inbox]) -> dict[str, int]:
    """Unread messages by member name, for the mark on the cards its owner works on."""
    unread: dict[str, int] = {}
    for (_, name), inbox in inboxes.items():
        if inbox.unread:
            unread[name] = unread.get(name, 0) + inbox.unread
    return unread


@dataclass
class BoardRead:
    """Tasks as read from the board (or returned by a write), numbered when read."""

    tasks: list[Task] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: Set on the last read of the first full read.
    loaded: bool = False
    observed: int = field(default_factory=next_observation)


@dataclass(frozen=True)
class AgentsRead:
    """The registered agents, the teams working on the board, their inboxes and agents' costs."""

    agents: list[AgentRecord]
    teams: list[Team]
    inboxes: dict[tuple[str, str], Inbox]
    costs: dict[str, str]


@dataclass(frozen=True)
class TaskLogs:
    """What the detail view shows of a task's logs."""

    history: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    checkpoints: list[str]


class BoardSession:
    """One dashboard's board. ``lock`` guards ``store``; everything else is the app thread's."""

    def __init__(self, workspace: Path, *, now: Callable[[], datetime]) -> None:
        self.workspace = workspace
        self.now = now
        self.store: Store = open_unread(workspace, actor=HUMAN_ACTOR)
        #: Where the board is kept, in the title, when it is not this workspace's files.
        self.kept_in = self.store.kept_in()
        self.layout = self.store.layout
        self.lock = threading.Lock()
        #: Why board.toml could not be read (its defaults apply meanwhile), or None.
        self.settings_problem: str | None = None
        self.settings = self._load_settings()
        #: What is on screen: ``graph`` and ``lanes`` are its, shared.
        self.board = DisplayedBoard(TaskGraph(missing_blocker_done=self.layout.missing_blocker_done), Lanes())
        self.graph = self.board.graph
        self.lanes = self.board.lanes
        self.view = CardView(self.graph, now, states=self.lanes.states)
        self.agents: list[AgentRecord] = []
        #: The Claude Code teams working on the board, and their members' inboxes.
        self.teams: list[Team] = []
        self.inboxes: dict[tuple[str, str], Inbox] = {}
        #: Tasks in progress by owner (the agents panel's current tasks, idle marks).
        self.owned = OwnedTasks()
        self.alerts: list[Alert] = []
        #: Whether ``alerts`` are the ones a running coordinator stored.
        self.alerts_from_coordinator = False
        #: Set by the board reader when something changed that alerts depend on.
        self.alerts_follower = AlertsFollower(self.store.alert_board_of_its_own(), self.store.local_dir, lambda: bool(coordinator_heard_on(self.store)))
        #: Set when the dashboard closes: following the board (``Store.follow``) ends.
        self.stopped = threading.Event()
        #: The agents, teams and inboxes last read (a reading posts only a change).
        self._agents_read: AgentsRead | None = None
        #: Reads each task's tokens (again only once its log grew); what it last read.
        self._spend_reader: SpendReader | None = None
        self._spend_read: dict[str, Spend] = {}

    def _load_settings(self) -> BoardSettings:
        try:
            return load_settings(self.store.local_dir)
        except BoardError as error:
            self.settings_problem = str(error)
            return BoardSettings()

    def stop(self) -> None:
        """Stop following the board (the dashboard closes)."""
        self.alerts_follower.stop()
        self.stopped.set()

    # -- reading ------------------------------------------------------------------------------

    def read_page(self, size: int, *, first: bool = False) -> BoardRead:
        """Read the next ``size`` tasks of the board (the first page: from the start, as the
        board is now)."""
        with self.lock:
            if first:
                self.store.start_reading()
            changes, done = self.store.read_more(size)
            tasks = self.store.graph.tasks
            return BoardRead([tasks[i] for i in changes.changed if i in tasks], loaded=done)

    def read_agents(self, *, costs: bool = True) -> AgentsRead | None:
        """Read the registered agents, the teams working on the board and their inboxes (teams
        live outside the board's folders, so the reconcile looks at them too), and with
        ``costs`` what each agent's tokens cost (each agent's whole tokens log); None when
        nothing changed since the last reading. Raises ``BoardUnavailable`` when the board is
        out of reach."""
        layout = self.layout
        agents = list_agents(self.store.agent_records)
        teams = board_teams(layout.workspace, layout.tasks_dir, layout.name, agents)
        inboxes = {(team.name, member.name): read_inbox(team, member.name) for team in teams for member in team.members if member.messageable}
        names = [a.name for a in agents] + [m.name for team in teams for m in team.members]
        costs_now = agent_costs(layout.state_dir, names, self.settings.model_prices()) if costs else {}
        reading = AgentsRead(agents, teams, inboxes, costs_now)
        if reading == self._agents_read:
            return None
        self._agents_read = reading
        return reading

    def read_spend(self) -> dict[str, Spend] | None:
        """What each task spent; None when nothing changed since the last reading. Tokens are
        logged for a task and its agent in the same look, so an agent's log changing is the cue."""
        prices = self.settings.model_prices()
        if self._spend_reader is None or self._spend_reader.prices != prices:
            self._spend_reader = SpendReader(self.layout.state_dir, prices)
        spend = self._spend_reader.every_task()
        if spend == self._spend_read:
            return None
        self._spend_read = spend
        return spend

    def task_logs(self, task_id: str, *, history: int, calls: int) -> TaskLogs:
        """The last ``history`` records of a task's history, its last ``calls`` tool calls, and
        its checkpoints."""
        with self.lock:
            records = self.store.history(task_id)
            made = self.store.toolcalls(task_id)
        from board.checkpoints import list_checkpoints  # a task's details only, not the board's first frame

        try:
            checkpoints = [str(seq) for seq in list_checkpoints(self.store.checkpoint_book, task_id)]
        except (OSError, ValueError):
            checkpoints = []
        return TaskLogs(records[-history:], made[-calls:], checkpoints)

    # -- the header ---------------------------------------------------------------------------

    def title(self) -> str:
        """The workspace's name, and where the board is kept when that is not its files."""
        return printable(" · ".join(filter(None, (self.workspace.name or str(self.workspace), self.kept_in))))

    def hint(self, *, loaded: bool, connection_problem: str | None, filtered: bool) -> str:
        """Why the board shows nothing, or cannot be followed right now ("" when all is well)."""
        if connection_problem is not None:
            return f"reconnecting… {connection_problem}"
        if loaded and not self.graph and not self.layout.exists():
            return f"{self.layout.tasks_dir} is gone (deleted or moved); the board comes back when it does"
        if loaded and not self.graph:
            return 'no tasks yet: add one with  board task create "Subject"'
        if loaded and filtered and not len(self.lanes):
            return "no task matches the filter (escape clears it)"
        return ""

    def counts(self) -> Counter[str]:
        """Tasks per display state; a task whose file cannot be read is on no card, so counted apart."""
        unreadable = sum(1 for alert in self.alerts if alert.kind == "file.invalid" and alert.tasks)
        return self.lanes.counts + Counter(unreadable=unreadable) if unreadable else self.lanes.counts

    def spent(self) -> str:
        """The board's estimated cost so far (tokens, for models without a price); "" before any."""
        spend = self.view.spend.values()
        if not spend:
            return ""
        usd = sum(s.usd for s in spend)
        return f"{money(usd) if usd else tokens_short(sum(s.tokens for s in spend))} spent"

    # -- agents -------------------------------------------------------------------------------

    def roster(self) -> list[RosterEntry]:
        return build_roster(self.agents, self.teams, self.owned.as_mapping(), self.now(), self.settings.agent_stale_after, self.inboxes, self.graph.tasks)

    def roster_entry(self, name: str, team: str | None) -> RosterEntry | None:
        return next((e for e in self.roster() if e.name == name and (team is None or e.team == team)), None)

    def owner_entry(self, owner: str) -> RosterEntry | None:
        """The team member a task's owner is (the first team's, if several have the name)."""
        return next((e for e in self.roster() if e.name == owner and e.member_of_team), None)

    def agent_record(self, name: str | None) -> AgentRecord | None:
        return next((a for a in self.agents if a.name == name), None)

    # -- writing ------------------------------------------------------------------------------

    def write(self, operation: Callable[[Store], Task]) -> BoardRead:
        """Run one move through the store (``board.actions``); the task it returns, as read."""
        with self.lock:
            return BoardRead([operation(self.store)])

    def diff_of(self, task_id: str) -> tuple[str, str]:
        """(a title, the diff) of a task's worktree against its base: ``board diff ID``."""
        from board.worktrees import git_work, on_board

        task = self.graph.tasks.get(task_id)
        if task is None:
            raise BoardError(f"#{task_id} is no longer on the board")
        record = on_board.needed_record(self.store, task)
        state = f"merged as {record.merged[:12]}" if record.merged else record.changes.summary()
        title = f"#{task.id} {task.subject} · {record.branch} against {record.base} · {state}"
        return title, git_work.task_diff(self.store.layout.workspace, record)

    def send_message(self, team_name: str, name: str, text: str) -> None:
        """Append ``text`` to a team member's inbox, from the person at the keyboard."""
        team = next((t for t in self.teams if t.name == team_name), None)
        if team is None:
            raise BoardError(f"team {team_name} is no longer working on this board")
        append_message(team, name, local_user(), text)
