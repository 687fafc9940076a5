"""The agents of a board as one list: the registered agents (``agents/<name>.json``) and the
members of the Claude Code teams working on it. Textual-free: the agents panel, ``board agents``
and the idle detector all read it, so they agree on who is working, idle or gone.

A member's state comes from the newer of two signals: its registry record's ``activity``
(written by Claude Code's hooks: "working", "idle", "gone", at ``activityAt``) and the team
config's ``isActive`` flag (false while idle, as of the config file's last write).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path

from board.agent_record import AgentRecord
from board.agents import AgentState, agent_state
from board.claude.teams import Inbox, Team, TeamMember, messageable, teams_for_board
from board.graph import sorted_ids
from board.model import Task
from board.status import Status


class Activity(StrEnum):
    WORKING = "working"
    IDLE = "idle"
    #: Ended: its session or sub-agent stopped, or its runner stopped it.
    GONE = "gone"
    #: A registered agent whose heartbeat stopped (crashed or hung).
    STALE = "stale"


#: Registry activity words and what they mean here.
_HOOK_ACTIVITY = {"working": Activity.WORKING, "idle": Activity.IDLE, "gone": Activity.GONE}


@dataclass(frozen=True)
class RosterEntry:
    name: str
    kind: str
    activity: Activity
    #: The tasks in progress under its name, by id.
    tasks: tuple[str, ...] = ()
    #: The one it works on now: its record's ``task`` while it still holds it, else the first of ``tasks``.
    task: str | None = None
    tool_calls: int = 0
    last_activity: datetime | None = None
    #: A registered agent's heartbeat (the panel shows its age).
    heartbeat_at: datetime | None = None
    team: str | None = None
    agent_type: str = ""
    model: str = ""
    lead: bool = False
    messageable: bool = False
    unread: int = 0
    #: The member's inbox could not be read (shown, never raised).
    inbox_problem: str | None = None
    #: A sub-agent's parent: the agent whose row it is shown under.
    parent: str | None = None
    #: Its own todo list: (done, total), or None when it keeps none.
    todos: tuple[int, int] | None = None

    @property
    def member_of_team(self) -> bool:
        return self.team is not None

    @property
    def idle_with_task(self) -> bool:
        """A team member that stopped while work under its name is in progress: it needs a nudge."""
        return self.member_of_team and self.activity == Activity.IDLE and bool(self.tasks)


def todos_text(todos: tuple[int, int] | None) -> str:
    """``2/5 todos``: how far an agent is through its own todo list ("" when it keeps none)."""
    return f"{todos[0]}/{todos[1]} todos" if todos else ""


def in_progress_by_owner(tasks: Iterable[Task]) -> dict[str, list[Task]]:
    owned: dict[str, list[Task]] = {}
    for task in tasks:
        if task.status == Status.IN_PROGRESS and task.owner:
            owned.setdefault(task.owner, []).append(task)
    return owned


class OwnedTasks:
    """Tasks in progress by owner, kept current from the changes the dashboard applies (a
    10,000-task board is not walked on every update)."""

    def __init__(self) -> None:
        self._owner_of: dict[str, str] = {}
        self.by_owner: dict[str, dict[str, Task]] = {}

    def update(self, tasks: Iterable[Task], removed: Iterable[str] = ()) -> bool:
        """Take changed tasks (and removed ids); True when someone's tasks in progress changed."""
        moved = False
        for task in tasks:
            owner = task.owner if task.status == Status.IN_PROGRESS and task.owner else None
            moved |= self._put(task.id, owner, task)
        for task_id in removed:
            moved |= self._put(task_id, None, None)
        return moved

    def _put(self, task_id: str, owner: str | None, task: Task | None) -> bool:
        before = self._owner_of.pop(task_id, None)
        if before is not None:
            held = self.by_owner[before]
            held.pop(task_id, None)
            if not held:
                del self.by_owner[before]
        if owner is None or task is None:
            return before is not None
        self._owner_of[task_id] = owner
        self.by_owner.setdefault(owner, {})[task_id] = task
        return True

    def of(self, name: str) -> list[Task]:
        held = self.by_owner.get(name, {})
        return [held[i] for i in sorted_ids(held)]

    def as_mapping(self) -> dict[str, list[Task]]:
        return {owner: self.of(owner) for owner in self.by_owner}


def member_tool_calls(record: AgentRecord | None, owned: Sequence[Task]) -> int:
    """Tool calls to show for an agent: its registry record's count, else those recorded on the
    tasks it has in progress."""
    if record is not None and record.tool_calls:
        return record.tool_calls
    return sum(task.tool_calls.total for task in owned)


def member_last_activity(record: AgentRecord | None, owned: Sequence[Task], member: TeamMember | None = None) -> datetime | None:
    """The last moment anything shows the agent at work: its record's activity or heartbeat, a
    tool call on a task it holds, or (a member never seen since) when it joined its team."""
    moments = [m for m in (record.activity_at, record.heartbeat_at) if m is not None] if record is not None else []
    moments += [task.tool_calls.last_at for task in owned if task.tool_calls.last_at is not None]
    if not moments and member is not None and member.joined_at is not None:
        moments.append(member.joined_at)
    return max(moments, default=None)


def record_activity(record: AgentRecord, now: datetime, stale_after: timedelta) -> Activity:
    """A registered agent's state: what the hooks last saw, else its heartbeat's age."""
    if record.stopped:
        return Activity.GONE if record.activity in _HOOK_ACTIVITY else Activity.STALE
    hooked = _HOOK_ACTIVITY.get(record.activity or "")
    if hooked is not None:
        return hooked
    state = agent_state(record, now, stale_after)
    return {AgentState.WORKING: Activity.WORKING, AgentState.IDLE: Activity.IDLE, AgentState.STALE: Activity.STALE}[state]


def member_activity(member: TeamMember, team: Team, record: AgentRecord | None) -> Activity:
    """A team member's state from the newer of its record's activity and the config's flag."""
    hooked = _HOOK_ACTIVITY.get(record.activity or "") if record is not None else None
    from_config = Activity.IDLE if member.active is False else Activity.WORKING
    if hooked is None:
        return from_config
    if hooked == Activity.GONE or from_config == hooked:
        return hooked
    assert record is not None
    config_is_newer = team.changed_at is not None and (record.activity_at is None or team.changed_at > record.activity_at)
    return from_config if config_is_newer else hooked


def member_record(member: TeamMember, team: Team, records: Mapping[str, AgentRecord]) -> AgentRecord | None:
    """The registry record of a team member: the one of its name, unless it names another team;
    for the lead without one, the agent whose session leads the team (a ``board run`` worker is
    known by its own name, not the one the team gives its lead)."""
    record = records.get(member.name)
    if record is None and member.lead and team.lead_session_id:
        record = next((r for r in records.values() if r.session_id == team.lead_session_id and not r.parent), None)
    if record is None or (record.team and record.team not in (team.name, team.title)):
        return None
    return record


#: Statuses in which a task is still its owner's (the others: done, given up, or back in the queue).
STILL_HELD = frozenset({Status.IN_PROGRESS, Status.WAITING, Status.PAUSED, Status.BLOCKED})


def current_task(name: str, record: AgentRecord | None, held: Sequence[Task], tasks: Mapping[str, Task] | None) -> str | None:
    """The task an agent works on now: the one its record names while that task is still the
    agent's (the record of an agent that stopped keeps naming a task another agent took up or
    finished since), else the first it has in progress. Without ``tasks`` the record is believed."""
    named = record.task if record is not None else None
    if named and tasks is not None:
        task = tasks.get(named)
        if task is None or task.owner != name or task.status not in STILL_HELD:
            named = None
    return named or (held[0].id if held else None)


def build_roster(
    records: Sequence[AgentRecord],
    teams: Sequence[Team],
    owned: Mapping[str, Sequence[Task]],
    now: datetime,
    stale_after: timedelta,
    inboxes: Mapping[tuple[str, str], Inbox] | None = None,
    tasks: Mapping[str, Task] | None = None,
) -> list[RosterEntry]:
    """Registered agents first (those not in a team, by name), then each team's members, the
    lead first. A member's registry record (same name) is folded into its entry. With the
    board's ``tasks``, an agent's current task is one it still holds (``current_task``)."""
    by_name = {record.name: record for record in records}
    in_teams: set[str] = set()
    members: list[RosterEntry] = []
    for team in teams:
        for member in sorted(team.members, key=lambda m: not m.lead):
            record = member_record(member, team, by_name)
            if record is not None:
                in_teams.add(record.name)
            # The name board knows it by: the one its tasks and calls are under.
            name = record.name if record is not None else member.name
            held = list(owned.get(name, ()))
            inbox = (inboxes or {}).get((team.name, member.name))
            current = current_task(name, record, held, tasks)
            members.append(
                RosterEntry(
                    name=name,
                    kind=record.kind if record is not None else "claude-code",
                    activity=member_activity(member, team, record),
                    tasks=tuple(t.id for t in held),
                    task=current,
                    tool_calls=member_tool_calls(record, held),
                    last_activity=member_last_activity(record, held, member),
                    heartbeat_at=None,
                    team=team.name,
                    agent_type=member.agent_type or (record.agent_type or "" if record is not None else ""),
                    model=member.model or (record.model or "" if record is not None else ""),
                    lead=member.lead,
                    # A message goes to the member's inbox, by the member's name.
                    messageable=member.messageable and name == member.name,
                    unread=inbox.unread if inbox is not None else 0,
                    inbox_problem=inbox.problem if inbox is not None else None,
                    todos=record.todo_counts if record is not None else None,
                )
            )
    alone = []
    for record in records:
        if record.name in in_teams:
            continue
        held = list(owned.get(record.name, ()))
        alone.append(
            RosterEntry(
                name=record.name,
                kind=record.kind,
                activity=record_activity(record, now, stale_after),
                tasks=tuple(t.id for t in held),
                task=current_task(record.name, record, held, tasks),
                tool_calls=record.tool_calls,
                last_activity=member_last_activity(record, held),
                heartbeat_at=record.heartbeat_at,
                agent_type=record.agent_type or "",
                model=record.model or "",
                messageable=messageable(record.name),
                parent=record.parent,
                todos=record.todo_counts,
            )
        )
    return _under_parents(alone, members)


def _under_parents(alone: list[RosterEntry], members: list[RosterEntry]) -> list[RosterEntry]:
    """Each sub-agent's row right after its parent's (a parent not listed: at the end of the
    registered agents), in the order they came."""
    listed = {e.name for e in alone} | {e.name for e in members}
    children: dict[str, list[RosterEntry]] = {}
    for entry in alone:
        if entry.parent and entry.parent != entry.name and entry.parent in listed:
            children.setdefault(entry.parent, []).append(entry)
    placed = {id(child) for group in children.values() for child in group}

    def with_children(entries: list[RosterEntry]) -> list[RosterEntry]:
        result = []
        for entry in entries:
            if id(entry) in placed:
                continue
            result.append(entry)
            result += children.pop(entry.name, [])
        return result

    return with_children(alone) + with_children(members)


def board_teams(workspace: Path, tasks_dir: Path, layout_name: str, records: Iterable[AgentRecord]) -> list[Team]:
    """The Claude Code teams working on a board (see ``teams_for_board``)."""
    claude_list = tasks_dir if layout_name == "claude-code" else None
    return teams_for_board(workspace=workspace, claude_list=claude_list, named=[r.team for r in records if r.team])


def nudge_text(name: str, tasks: Sequence[Task]) -> str:
    """The message a nudge sends: what board sees, and the three ways out."""
    named = [f"#{t.id} ({' '.join(t.subject.split())[:60]})" for t in tasks[:3]]
    if len(tasks) > 3:
        named.append(f"{len(tasks) - 3} more")
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    verb = "is" if len(tasks) == 1 else "are"
    return (
        f"{name}, the task board shows you idle while {listed} {verb} still in progress under your name. "
        "If it is done, mark it completed; if something blocks you, say what; otherwise please carry on with it."
    )
