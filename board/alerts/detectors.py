"""One detector per alert kind of SPEC section 8.

Each detector is a pure function of plain data (tasks, touches, reservations, a git snapshot,
history records, the clock), so tests build the situation and assert on the alerts, no sleeps
and no git needed. Keys name the condition, never the time: the same condition gives the same
key on every evaluation.

Its length is the number of alert kinds: one short function each, read side by side.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from board.actions import answer_goes_to
from board.agent_record import AgentRecord
from board.disk.confine import LINKED_FOLDER, NOT_A_FOLDER
from board.alerts.model import Alert, Severity, list_files, one_line
from board.budgets import BudgetState
from board.times import iso, parse_time
from board.gitstate import GitState
from board.graph import GraphProblem, cancelled_blockers, id_sort_key, sorted_ids
from board.model import Task
from board.reservations import Reservation
from board.status import ACTIVE, Status
from board.worktrees.record import read_record


@dataclass(frozen=True)
class Touch:
    """A tool call recorded with ``--file``: ``agent`` touched ``path`` while working on ``task``."""

    task: str
    agent: str
    path: str
    at: datetime


@dataclass(frozen=True)
class CheckpointHashes:
    """The file hashes of a task's latest checkpoint."""

    task: str
    seq: int
    created_at: datetime
    hashes: Mapping[str, str | None]


@dataclass(frozen=True)
class IdleMember:
    """A Claude Code team member that is idle (its hooks or its team's config say so)."""

    name: str
    team: str
    #: Whether board can write to its inbox (its name is a board agent name).
    messageable: bool = True


@dataclass(frozen=True)
class InvalidFile:
    path: str
    reason: str
    #: The task the file name says it holds, if it says one.
    task: str | None = None


# -- helpers shared by the detectors --------------------------------------------------------------


class ActiveTasks(dict[str, Task]):
    """The active tasks of a board, in id order: made once per evaluation, so the detectors,
    which each walk them, need not filter and sort the board again."""

    @classmethod
    def of(cls, tasks: Mapping[str, Task]) -> ActiveTasks:
        return cls((i, tasks[i]) for i in sorted_ids(i for i, task in tasks.items() if task.status in ACTIVE))


def active_tasks(tasks: Mapping[str, Task]) -> list[Task]:
    if isinstance(tasks, ActiveTasks):
        return list(tasks.values())
    return list(ActiveTasks.of(tasks).values())


def declared_files(task: Task) -> set[str]:
    """The task's ``files``, normalised like touched paths (``./a/../b.py`` is ``b.py``)."""
    found = set()
    for path in task.files:
        normal = posixpath.normpath(path.replace("\\", "/"))
        if normal not in (".", "..") and not normal.startswith("../"):
            found.add(normal)
    return found


def changed_in_worktree(task: Task) -> tuple[str, ...]:
    """The files the task's own worktree changed, not yet merged (``board.worktrees``)."""
    record = read_record(task.metadata, task.id) if task.metadata else None
    return record.changes.paths if record is not None and not record.merged else ()


def touches_by_task(touches: Iterable[Touch]) -> dict[str, list[Touch]]:
    grouped: dict[str, list[Touch]] = defaultdict(list)
    for touch in touches:
        grouped[touch.task].append(touch)
    return grouped


def held_files(tasks: Mapping[str, Task], touches: Iterable[Touch], reservations: Iterable[Reservation] = ()) -> dict[str, set[str]]:
    """path -> active tasks holding it: declared in ``files``, touched, or reserved."""
    active = {t.id for t in active_tasks(tasks)}
    holders: dict[str, set[str]] = defaultdict(set)
    for task_id in active:
        for path in declared_files(tasks[task_id]):
            holders[path].add(task_id)
        for path in changed_in_worktree(tasks[task_id]):
            holders[path].add(task_id)
    for touch in touches:
        if touch.task in active:
            holders[touch.path].add(touch.task)
    for reservation in reservations:
        if reservation.task in active:
            holders[reservation.path].add(reservation.task)
    return holders


def _who(task: Task) -> str:
    return f"#{task.id} ({task.owner})" if task.owner else f"#{task.id}"


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _owners(tasks: Mapping[str, Task], ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({tasks[i].owner for i in ids if i in tasks and tasks[i].owner}))


def _clock(moment: datetime) -> str:
    return iso(moment)[11:19]


# -- conflict.* -----------------------------------------------------------------------------------


def detect_file_conflicts(tasks: Mapping[str, Task], touches: Sequence[Touch]) -> list[Alert]:
    """``conflict.files``: active tasks of different owners declare or touch the same file.

    Files shared by the same set of tasks make one alert, so two tasks overlapping on ten
    files is one warning naming them, not ten.
    """
    owned = {t.id: t for t in active_tasks(tasks) if t.owner}
    holders = held_files(owned, touches)
    groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for path, ids in holders.items():
        if len({owned[i].owner for i in ids}) >= 2:
            groups[tuple(sorted_ids(ids))].append(path)
    alerts = []
    for group, paths in groups.items():
        paths.sort()
        alerts.append(
            Alert(
                key="conflict.files:" + ",".join(group),
                kind="conflict.files",
                severity=Severity.WARNING,
                message=f"{_and([_who(owned[i]) for i in group])} {'both' if len(group) == 2 else 'all'} work on {list_files(paths)}",
                action=f"agree who edits {paths[0]}: reserve it (board reserve ID PATH) or make one task wait for the other",
                tasks=group,
                agents=_owners(owned, group),
                files=tuple(paths),
            )
        )
    return alerts


def detect_merge_conflicts(tasks: Mapping[str, Task]) -> list[Alert]:
    """``merge.conflict``: a task's branch could not be merged into its base (``board merge``
    found both changed the same lines) and is not merged yet."""
    alerts = []
    for task in tasks.values():
        record = read_record(task.metadata, task.id) if task.metadata else None
        if record is None or record.conflict is None or record.merged:
            continue
        others = record.conflict.tasks
        alerts.append(
            Alert(
                key=f"merge.conflict:{task.id}",
                kind="merge.conflict",
                severity=Severity.WARNING,
                message=f"#{task.id} cannot be merged into {record.base}: both changed {list_files(list(record.conflict.files))}"
                + (f" (so did {_and(['#' + t for t in others])})" if others else ""),
                action=f"board merge {task.id} --send-back gives it to an agent to resolve; or in {record.path}: git merge {record.base}, fix, commit, then board merge {task.id}",
                tasks=(task.id,),
                agents=(task.owner,) if task.owner else (),
                files=record.conflict.files,
            )
        )
    return alerts


def detect_reservation_conflicts(reservations: Sequence[Reservation], touches: Sequence[Touch]) -> list[Alert]:
    """``conflict.reservation``: an agent touched a file while another agent held it reserved.

    A touch counts while the reservation is live (from when it was taken); a reader touching
    a file others only read is sharing, not a conflict.
    """
    by_path: dict[str, list[Reservation]] = defaultdict(list)
    for reservation in reservations:
        by_path[reservation.path].append(reservation)
    found: dict[tuple[str, str], tuple[set[str], list[Reservation]]] = {}
    for touch in touches:
        held = by_path.get(touch.path)
        if not held:
            continue
        reads_it = any(r.owner == touch.agent and r.mode == "read" for r in held)
        for reservation in held:
            if reservation.owner == touch.agent:
                continue
            if reservation.mode == "read" and reads_it:
                continue
            if reservation.acquired_at is not None and touch.at < reservation.acquired_at:
                continue
            if touch.at >= reservation.expires_at:
                continue
            entry = found.setdefault((touch.path, touch.agent), (set(), []))
            entry[0].add(touch.task)
            if reservation not in entry[1]:
                entry[1].append(reservation)
    alerts = []
    for (path, agent), (touching_tasks, holders) in sorted(found.items()):
        first = holders[0]
        doing = "writing" if first.mode == "write" else "reading"
        ids = tuple(sorted_ids({*touching_tasks, *(h.task for h in holders)}))
        alerts.append(
            Alert(
                key=f"conflict.reservation:{path}:{agent}",
                kind="conflict.reservation",
                severity=Severity.ERROR,
                message=f"{agent} touched {path} (task {', '.join('#' + t for t in sorted_ids(touching_tasks))}), reserved for {doing} by {first.owner} for task #{first.task}",
                action=f"{agent}: stop editing {path} and check {first.owner}'s work on it; reserve files before touching them",
                tasks=ids,
                agents=tuple(sorted({agent, *(h.owner for h in holders)})),
                files=(path,),
            )
        )
    return alerts


def detect_write_conflicts(history: Sequence[Mapping[str, Any]], now: datetime, window: timedelta) -> list[Alert]:
    """``conflict.write``: compare-and-set writes refused for a stale version in the last ``window``."""
    refused: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in history:
        at = parse_time(record.get("ts"))
        if record.get("op") == "conflict" and at is not None and now - window <= at <= now and record.get("task") is not None:
            refused[str(record["task"])].append(record)
    alerts = []
    for task_id in sorted_ids(refused):
        records = refused[task_id]
        latest = records[-1]
        count = f"{len(records)} stale writes were" if len(records) > 1 else "a stale write was"
        detail = f" (latest by {latest.get('actor', '?')}, expecting version {latest.get('expected', '?')}, it was at {latest.get('version', '?')})"
        alerts.append(
            Alert(
                key=f"conflict.write:{task_id}",
                kind="conflict.write",
                severity=Severity.INFO,
                message=f"#{task_id}: {count} refused in the last {_span(window)}{detail}",
                action=f"two writers are changing #{task_id} at once; the refused one should re-read it and retry",
                tasks=(task_id,),
                agents=tuple(sorted({str(r.get("actor")) for r in records if r.get("actor")})),
            )
        )
    return alerts


# -- drift.* --------------------------------------------------------------------------------------


def detect_upstream_drift(git: GitState | None, tasks: Mapping[str, Task], holdings: Mapping[str, set[str]]) -> list[Alert]:
    """``drift.upstream``: HEAD is behind its upstream; an error when upstream changed a held file."""
    if git is None or git.upstream is None or git.behind <= 0:
        return []
    behind = f"HEAD is {git.behind} commit{'s' if git.behind != 1 else ''} behind {git.upstream}"
    held = sorted(p for p in git.upstream_changed if holdings.get(p))
    if held:
        ids = tuple(sorted_ids({t for p in held for t in holdings[p]}))
        whose = _and([_who(tasks[i]) for i in ids])
        return [
            Alert(
                key=f"drift.upstream:{git.upstream}:held",
                kind="drift.upstream",
                severity=Severity.ERROR,
                message=f"{behind}, which changed {list_files(held)}, held by {whose}",
                action=f"pause {', '.join('#' + i for i in ids)} and rebase onto {git.upstream} (git pull --rebase), then resolve {held[0]}",
                tasks=ids,
                agents=_owners(tasks, ids),
                files=tuple(held),
            )
        ]
    changed = len(git.upstream_changed)
    return [
        Alert(
            key=f"drift.upstream:{git.upstream}",
            kind="drift.upstream",
            severity=Severity.WARNING,
            message=f"{behind} ({changed} file{'s' if changed != 1 else ''} changed there, none held by an active task)",
            action=f"rebase onto {git.upstream} when convenient (git pull --rebase); no active task's files are affected",
            files=tuple(git.upstream_changed[:50]),
        )
    ]


def detect_force_push(git: GitState | None, tasks: Mapping[str, Task]) -> list[Alert]:
    """``drift.force_push``: the upstream head seen before is no longer in the upstream's history.

    It stays up until HEAD contains the new upstream head (the clone was reset or rebased).
    """
    if git is None or git.force_push is None:
        return []
    push = git.force_push
    working = [t for t in active_tasks(tasks) if t.status == Status.IN_PROGRESS]
    ids = tuple(t.id for t in working)
    return [
        Alert(
            key=f"drift.force_push:{git.upstream}:{push.new}",
            kind="drift.force_push",
            severity=Severity.ERROR,
            message=f"{git.upstream} was force-pushed: {push.old[:10]} is no longer in its history (now {push.new[:10]})",
            action=f"pause work on this branch, check which local commits the rewrite drops, then reset or rebase onto {git.upstream}",
            tasks=ids,
            agents=_owners(tasks, ids),
        )
    ]


def detect_dirty(git: GitState | None, tasks: Mapping[str, Task], touches: Sequence[Touch]) -> list[Alert]:
    """``drift.dirty``: uncommitted changes in files an active task holds, touched by another agent.

    The owner's own uncommitted work is the normal state of a task in progress; what matters
    is another agent having changed (recorded a touch on) a file that task holds.
    """
    if git is None:
        return []
    changed = git.changed_locally
    if not changed:
        return []
    by_path: dict[str, list[Touch]] = defaultdict(list)
    for touch in touches:
        if touch.path in changed:
            by_path[touch.path].append(touch)
    own = touches_by_task(touches)
    alerts = []
    for task in active_tasks(tasks):
        if not task.owner:
            continue
        held = (declared_files(task) | {t.path for t in own.get(task.id, ())}) & changed
        files: list[str] = []
        others: set[str] = set()
        their_tasks: set[str] = set()
        for path in sorted(held):
            strangers = [
                t for t in by_path.get(path, ()) if t.agent != task.owner and (task.started_at is None or t.at >= task.started_at)
            ]
            if strangers:
                files.append(path)
                others |= {t.agent for t in strangers}
                their_tasks |= {t.task for t in strangers if t.task != task.id}
        if files:
            alerts.append(
                Alert(
                    key=f"drift.dirty:{task.id}",
                    kind="drift.dirty",
                    severity=Severity.WARNING,
                    message=f"uncommitted changes in {list_files(files)}, held by {_who(task)}, touched by {_and(sorted(others))}",
                    action=f"{_and(sorted(others))}: leave {files[0]} to #{task.id}; commit or revert it only with {task.owner}'s agreement",
                    tasks=(task.id, *sorted_ids(their_tasks)),
                    agents=tuple(sorted({task.owner, *others})),
                    files=tuple(files),
                )
            )
    return alerts


def detect_external_changes(
    tasks: Mapping[str, Task],
    checkpoints: Mapping[str, CheckpointHashes],
    current_hashes: Mapping[str, str | None],
    touches: Sequence[Touch],
) -> list[Alert]:
    """``drift.external_change``: a file changed since the task's last checkpoint, not by its owner.

    A change counts as the owner's when the owner recorded a touch on that file since the
    checkpoint; a new checkpoint, or the file changing back, clears the alert.
    """
    own = touches_by_task(touches)
    alerts = []
    for task in active_tasks(tasks):
        checkpoint = checkpoints.get(task.id)
        if checkpoint is None:
            continue
        changed = sorted(p for p, then in checkpoint.hashes.items() if p in current_hashes and current_hashes[p] != then)
        if not changed:
            continue
        by_owner = {t.path for t in own.get(task.id, ()) if t.agent == task.owner and t.at >= checkpoint.created_at}
        external = [p for p in changed if p not in by_owner]
        if not external:
            continue
        suspects = {
            t.agent for t in touches if t.path in external and t.agent != task.owner and t.at >= checkpoint.created_at
        }
        not_by = f", not by {task.owner}" if task.owner else ""
        alerts.append(
            Alert(
                key=f"drift.external_change:{task.id}",
                kind="drift.external_change",
                severity=Severity.WARNING,
                message=f"#{task.id}: {list_files(external)} changed since checkpoint {checkpoint.seq} ({_clock(checkpoint.created_at)}){not_by}",
                action=f"review the change before #{task.id} goes on; once accounted for, take a new checkpoint (board checkpoint {task.id})",
                tasks=(task.id,),
                agents=tuple(sorted({*([task.owner] if task.owner else []), *suspects})),
                files=tuple(external),
            )
        )
    return alerts


# -- lease, graph, files, agents, people ----------------------------------------------------------


def detect_expired_leases(history: Sequence[Mapping[str, Any]], now: datetime, window: timedelta) -> list[Alert]:
    """``lease.expired``: the coordinator took a task back from a silent agent in the last ``window``.

    Derived from the history's ``reclaim`` lines, so it is a function of the files; a later
    claim of the same task ends it early.
    """
    latest: dict[str, tuple[Mapping[str, Any], datetime]] = {}
    for record in history:
        at = parse_time(record.get("ts"))
        task_id = record.get("task")
        if at is None or task_id is None or at > now:
            continue
        if record.get("op") == "reclaim" and now - at <= window:
            latest[str(task_id)] = (record, at)
        elif record.get("op") == "claim":
            latest.pop(str(task_id), None)
    alerts = []
    for task_id in sorted_ids(latest):
        record, taken_at = latest[task_id]
        silent = _previous_owner(record)
        reason = one_line(str(record.get("reason") or (f"lease of {silent} expired" if silent else "lease expired")))
        alerts.append(
            Alert(
                key=f"lease.expired:{task_id}",
                kind="lease.expired",
                severity=Severity.WARNING,
                message=f"#{task_id} was taken back at {_clock(taken_at)}: {reason}",
                action=f"check on {silent or 'the agent'} (crashed or hung?); #{task_id} is pending again and will be reassigned",
                tasks=(task_id,),
                agents=(silent,) if silent else (),
            )
        )
    return alerts


def _previous_owner(record: Mapping[str, Any]) -> str | None:
    change = (record.get("changes") or {}).get("owner")
    if isinstance(change, list) and change and isinstance(change[0], str) and change[0]:
        return change[0]
    return None


_GRAPH_ACTIONS = {
    "graph.cycle": "edit one task of the cycle to drop its blockedBy entry; none of them can start until then",
    "graph.dangling": "remove the missing id from blockedBy/blocks (or create that task); it is treated as an open blocker",
    "graph.asymmetric": "run 'board check --fix' to write the missing side of the edge",
}


def detect_graph_problems(problems: Iterable[GraphProblem], task_file: Mapping[str, str] | None = None) -> list[Alert]:
    """``graph.cycle``, ``graph.dangling``, ``graph.asymmetric``: the files break SPEC section 4."""
    alerts = []
    for problem in problems:
        files = tuple(task_file[t] for t in problem.tasks if task_file and t in task_file)
        # One task can break a rule twice (two missing ids); the message tells them apart.
        detail = hashlib.sha256(problem.message.encode("utf-8")).hexdigest()[:8]
        alerts.append(
            Alert(
                key=f"{problem.kind}:{','.join(problem.tasks)}:{detail}",
                kind=problem.kind,
                severity=Severity.ERROR,
                message=one_line(problem.message),
                action=_GRAPH_ACTIONS.get(problem.kind, "fix the task files"),
                tasks=problem.tasks,
                files=files,
            )
        )
    return alerts


def detect_invalid_files(invalid: Iterable[InvalidFile]) -> list[Alert]:
    """``file.invalid``: a task file that does not parse or validate (left untouched)."""
    return [
        Alert(
            key=f"file.invalid:{item.path}",
            kind="file.invalid",
            severity=Severity.ERROR,
            message=one_line(f"{item.path}: {item.reason}"),
            action=(
                "put a plain folder there (board writes nothing there until then); 'board check' names every problem"
                if item.reason in (LINKED_FOLDER, NOT_A_FOLDER)
                else "fix the file by hand (board never rewrites it); 'board check' names every problem"
            ),
            tasks=(item.task,) if item.task else (),
            files=(item.path,),
        )
        for item in sorted(invalid, key=lambda i: i.path)
    ]


@dataclass(frozen=True)
class BrokenHooks:
    """board's hooks in a Claude Code settings file whose command cannot run."""

    settings: str
    command: str
    problem: str


def detect_broken_hooks(broken: Iterable[BrokenHooks]) -> list[Alert]:
    """``hooks.broken``: Claude Code runs board's hooks with a command that is not there: the
    shell exits 127, Claude Code lets every call through, and none is counted or guarded."""
    return [
        Alert(
            key=f"hooks.broken:{item.settings}",
            kind="hooks.broken",
            severity=Severity.ERROR,
            message=one_line(f"board's hooks in {item.settings} cannot run: {item.problem}"),
            action="run 'board hooks install' again with the board you use now ('board hooks status' shows every settings file)",
        )
        for item in sorted(broken, key=lambda i: i.settings)
    ]


def detect_budgets(tasks: Mapping[str, BudgetState], agents: Mapping[str, BudgetState], warn_at: float, *, pausing: bool = True) -> list[Alert]:
    """``budget.near``: a task or an agent has spent ``warn_at`` (80 %) of its budget;
    ``budget.over``: all of it (the ``budget`` policy pauses the task, unless turned off)."""
    alerts = []
    for kind_of, states in (("task", tasks), ("agent", agents)):
        for name in sorted(states) if kind_of == "agent" else sorted_ids(states):
            state = states[name]
            share = state.share
            if share < warn_at:
                continue
            over = share >= 1.0
            who = f"#{name}" if kind_of == "task" else name
            if over:
                action = (
                    f"raise its budget (board task update {name} --budget-usd ...) or undo the pause (u on the card) to let it go on"
                    if kind_of == "task"
                    else f"raise [budget] agent_usd/agent_tokens in board.toml, or reassign {name}'s work"
                )
                if not pausing:
                    action = "stop it, or raise its budget ([budget] in board.toml, or task update --budget-usd)"
            else:
                paused = who if kind_of == "task" else f"{name}'s task"
                action = f"{paused} will be paused at the limit; raise the budget now if it should go on"
            alerts.append(
                Alert(
                    key=f"budget.{'over' if over else 'near'}:{kind_of}:{name}",
                    kind=f"budget.{'over' if over else 'near'}",
                    severity=Severity.ERROR if over else Severity.WARNING,
                    message=f"{who} spent {state.text()} ({share:.0%} of its budget)",
                    action=action,
                    tasks=(name,) if kind_of == "task" else (),
                    agents=(name,) if kind_of == "agent" else (),
                )
            )
    return alerts


@dataclass(frozen=True)
class SilentHolder:
    """An agent not heard from within the board's stale time while a task is leased to it."""

    agent: str
    task: str
    heard_at: datetime
    #: When the coordinator takes the task back if the agent stays silent.
    taken_back_at: datetime
    #: The agent's process ended on purpose, its lease kept (it may resume under its token).
    stopped: bool = False


def detect_silent_holders(silent: Iterable[SilentHolder], now: datetime) -> list[Alert]:
    """``agent.unreachable``: an agent holds a task but has not been heard from: its process
    may have died, or its machine be cut off from the board. Say what happens to the task and
    when (a worker cut off stops its command by then on its own)."""
    alerts = []
    for item in sorted(silent, key=lambda i: (i.agent, id_sort_key(i.task))):
        quiet = _duration(now - item.heard_at)
        when = _clock(item.taken_back_at)
        if item.taken_back_at <= now:  # no coordinator took it back when it could have
            action = f"its lease ran out; a coordinator takes #{item.task} back (none has since {when}: run board coordinator, or board run)"
        elif item.stopped:
            action = f"#{item.task} goes back to the queue at {when} unless {item.agent} resumes it under its lease; board release {item.task} --force gives it back now"
        else:
            action = f"#{item.task} goes back to the queue at {when} unless {item.agent} is heard from; a worker cut off stops its command before then"
        if item.stopped:
            message = f"{item.agent} stopped while holding #{item.task} ({quiet} ago); its lease is kept until it ends"
        else:
            message = f"{item.agent} holds #{item.task} but has not been heard from for {quiet} (stopped, or its machine cut off from the board)"
        alerts.append(
            Alert(
                key=f"agent.unreachable:{item.agent}:{item.task}",
                kind="agent.unreachable",
                severity=Severity.WARNING,
                message=message,
                action=action,
                tasks=(item.task,),
                agents=(item.agent,),
            )
        )
    return alerts


def detect_failing_agents(tasks: Mapping[str, Task], failing_after: int) -> list[Alert]:
    """``agent.failing``: an agent's last ``failing_after`` or more tool calls on a task all failed."""
    by_agent: dict[str, list[Task]] = defaultdict(list)
    for task in active_tasks(tasks):
        if task.status == Status.IN_PROGRESS and task.owner and task.tool_calls.consecutive_failures >= failing_after:
            by_agent[task.owner].append(task)
    alerts = []
    for agent in sorted(by_agent):
        failing = by_agent[agent]
        worst = max(failing, key=lambda t: t.tool_calls.consecutive_failures)
        last = f" (last: {one_line(worst.tool_calls.last_tool, 60)})" if worst.tool_calls.last_tool else ""
        ids = tuple(t.id for t in failing)
        alerts.append(
            Alert(
                key=f"agent.failing:{agent}",
                kind="agent.failing",
                severity=Severity.WARNING,
                message=f"{agent}: {worst.tool_calls.consecutive_failures} tool calls in a row failed on #{worst.id}{last}",
                action=f"look at #{worst.id}'s recent tool calls (board task show {worst.id}); pause or reassign it if it is stuck",
                tasks=ids,
                agents=(agent,),
            )
        )
    return alerts


def detect_idle_with_task(tasks: Mapping[str, Task], idle: Sequence[IdleMember]) -> list[Alert]:
    """``agent.idle_with_task``: a team member is idle while a task in progress is under its
    name. Claude Code's task status lags behind its teammates' work, and an idle teammate waits
    for a message before it goes on; the action is that message."""
    by_owner: dict[str, list[Task]] = defaultdict(list)
    for task in active_tasks(tasks):
        if task.status == Status.IN_PROGRESS and task.owner:
            by_owner[task.owner].append(task)
    alerts = []
    for member in sorted(idle, key=lambda m: (m.team, m.name)):
        held = by_owner.get(member.name)
        if not held:
            continue
        ids = tuple(t.id for t in held)
        listed = _and([f"#{i}" for i in ids])
        if member.messageable:
            action = f"nudge {member.name}: board message {member.name} \"...\" (in the dashboard, m on this alert sends a prepared one)"
        else:
            action = f"its name is not a board agent name, so board cannot message it: nudge {member.name} from Claude Code"
        alerts.append(
            Alert(
                key=f"agent.idle_with_task:{member.team}:{member.name}",
                kind="agent.idle_with_task",
                severity=Severity.WARNING,
                message=one_line(f"{member.name} ({member.team}) is idle while {listed} {'is' if len(ids) == 1 else 'are'} in progress under its name"),
                action=action,
                tasks=ids,
                agents=(member.name,),
            )
        )
    return alerts


def detect_waiting(
    tasks: Mapping[str, Task], now: datetime, escalate_after: timedelta,
    agents: Mapping[str, AgentRecord] | None = None, stale_after: timedelta = timedelta(seconds=30),
) -> list[Alert]:
    """``human.waiting``: a task waits for a person; an error once it has waited ``escalate_after``.
    Where the answer sends it is said as the answer dialog says it (``actions.answer_goes_to``)."""
    alerts = []
    for task in active_tasks(tasks):
        if task.status != Status.WAITING:
            continue
        since = task.asked_at or task.updated_at
        waited = now - since if since else timedelta(0)
        late = waited >= escalate_after
        asks = task.question or task.active_form or task.subject
        alerts.append(
            Alert(
                key=f"human.waiting:{task.id}",
                kind="human.waiting",
                severity=Severity.ERROR if late else Severity.INFO,
                message=one_line(f"#{task.id} needs you{' for ' + _duration(waited) if late else ''}: {asks}"),
                action=f"answer it: board answer {task.id} \"...\" (or w on the dashboard); it goes {answer_goes_to(task, (agents or {}).get(task.owner), now, stale_after)}",
                tasks=(task.id,),
                agents=(task.owner,) if task.owner else (),
            )
        )
    return alerts


def _duration(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h"


def detect_cancelled_blockers(tasks: Mapping[str, Task]) -> list[Alert]:
    """``graph.cancelled_blocker``: pending tasks wait on a blocker that was cancelled, so they
    can never start until a person drops the dependency or reopens the blocker."""
    alerts = []
    for problem in cancelled_blockers(tasks):
        blocker, *waiting = problem.tasks
        drop = " ".join(f"board task update {w} --remove-blocked-by {blocker};" for w in waiting[:3]).rstrip(";")
        alerts.append(
            Alert(
                key=f"graph.cancelled_blocker:{blocker}",
                kind="graph.cancelled_blocker",
                severity=Severity.WARNING,
                message=one_line(problem.message),
                action=f"drop the dependency ({drop}) or reopen #{blocker} (board task update {blocker} --status pending)",
                tasks=problem.tasks,
            )
        )
    return alerts


def _span(window: timedelta) -> str:
    seconds = int(window.total_seconds())
    return f"{seconds // 60} min" if seconds >= 120 else f"{seconds} s"
