"""Every move a person or an agent makes on a task, defined once.

The command line, the dashboard, the coordinator and the workers call these functions; none of
them decides on its own what "retry" or "cancel" means. Two kinds of rule meet here:

- the store's, which hold for every writer whatever it calls: the transition table, readiness
  (blockers completed, sub-tasks finished), an owner for work in progress, and fencing (under a
  live lease only the holder's token, or a person's ``force``, changes status, progress or
  owner);
- the moves' own, written here once: which statuses "retry" takes back to the queue, who owns a
  resumed task, what to say when a move cannot be made.

Every refusal is a ``BoardError`` with one line a person can act on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from board.records import NamedTuple
from board.errors import BoardError, Command, Option, Part
from board.model import Budget, PolicyMark, Seen, Task, live_lease_holder
from board.status import Status
from board.store import Store

if TYPE_CHECKING:
    from board.agent_record import AgentRecord
    from board.config import BoardSettings

#: Plain fields (``Store.PLAIN_FIELDS``) to set in the same write as a move.
Fields = Mapping[str, Any] | None
#: Statuses ``requeue`` puts back in the queue, and what the move is called from each.
REQUEUE_FROM = {
    Status.FAILED: "retry",
    Status.CANCELLED: "reopen",
    Status.BLOCKED: "requeue",
    Status.PAUSED: "requeue",
    Status.IN_PROGRESS: "release",
}
#: Statuses ``resume`` takes back into progress.
RESUMABLE = frozenset({Status.PAUSED, Status.BLOCKED, Status.WAITING})
#: The longest question or answer (a card shows its first line; the detail view all of it).
MAX_QUESTION = 4000


# Named tuples, not dataclasses: the ``dataclasses`` module brings ``inspect`` (6 ms) into
# every command that moves a task.
class Who(NamedTuple):
    """Who makes a move, and with what right: an agent's lease token, or a person's override."""

    name: str
    token: int | None = None
    #: A person overriding a live lease (the dashboard asks first; history records it).
    force: bool = False
    #: Refuse the move if the task moved on: a version number, or what the person saw
    #: (``Seen``) when they pressed the key.
    expected_version: int | Seen | None = None


def _settings(store: Store) -> BoardSettings:
    """The board's settings; a broken board.toml means the defaults here (``board check`` says why)."""
    # Loaded here, not at the top: most actions never read a setting, and the settings models
    # cost a command 10 ms to build.
    from board.config import settings_or_defaults

    return settings_or_defaults(store.local_dir)


def board_lease_seconds(store: Store) -> float:
    """The board's lease length (``[lease] seconds`` in board.toml), for leases a person hands out."""
    return _settings(store).lease.seconds


def needs_override(task: Task, now: datetime) -> str | None:
    """The agent whose live lease a tokenless move on ``task`` would override, or None.

    The dashboard asks a person to confirm before it acts with ``force``.
    """
    return live_lease_holder(task, now)


def refusal(move: str, task: Task) -> str | None:
    """Why ``move`` ("start", "resume", "pause", "requeue", "cancel", "assign", "answer") cannot be made
    on ``task`` as it stands, or None. Each move checks it; the dashboard asks before it opens
    a dialog. Readiness and fencing are the store's to judge, at the moment of the write."""
    why = _refusal(move, task)
    return None if why is None else str(why)


def _refusal(move: str, task: Task) -> BoardError | None:
    """``refusal``, as the error a front end spells its own way."""
    why = _refusal_parts(move, task)
    return None if why is None else BoardError(*why) if isinstance(why, tuple) else BoardError(why)


def _refusal_parts(move: str, task: Task) -> str | tuple[Part, ...] | None:
    status, name = task.status, f"task {task.id}"
    if move == "start":
        if status == Status.IN_PROGRESS:
            return f"{name} is already in progress" + (f" (held by {task.owner})" if task.owner else "")
        if status in (Status.FAILED, Status.CANCELLED):
            return f"{name} is {status}: put it back in the queue first ({REQUEUE_FROM[status]})"
        if status == Status.COMPLETED:
            return f"{name} is completed, which is final"
        return None
    if move == "resume":
        return None if status in RESUMABLE else f"only a paused, blocked or waiting task can be resumed; {name} is {status}"
    if move == "pause":
        return None if status == Status.IN_PROGRESS else f"only a task in progress can be paused; {name} is {status}"
    if move == "requeue":
        if status in REQUEUE_FROM:
            return None
        if status == Status.PENDING:
            return f"{name} is already in the queue"
        if status == Status.COMPLETED:
            return f"{name} is completed, which is final"
        if status == Status.WAITING:
            return (
                f"{name} waits for a person's answer: answer it (", Command("answer", (("id", task.id), ("text", None))),
                ", or w on the dashboard), and it goes back to its owner, or to the queue with ", Option("requeue", flag=True),
            )
        return f"{name} is {status}: it cannot go straight back to the queue"
    if move == "cancel":
        if status == Status.IN_PROGRESS:
            return f"{name} is in progress: pause it first, then cancel it (or give it back to the queue)"
        if status in (Status.COMPLETED, Status.CANCELLED):
            return f"{name} is already {status}"
        return None
    if move == "assign":
        return None if status == Status.PENDING else f"only a ready task can be assigned; {name} is {status}"
    if move == "answer":
        return None if status == Status.WAITING else f"only a waiting task can be answered; {name} is {status}"
    raise ValueError(f"unknown move {move!r}")


def _refuse(move: str, task: Task) -> None:
    why = _refusal(move, task)
    if why is not None:
        raise why


def start(store: Store, task_id: str, who: Who, *, owner: str | None = None, lease_seconds: float | None = None, fields: Fields = None) -> Task:
    """Put a ready task in progress for ``owner`` (default: whoever starts it), or resume a
    paused, blocked or waiting one (see ``resume``). With ``lease_seconds`` the owner must
    heartbeat, as agents do; without, it stays theirs until they change it, as for a person."""
    task = store.get(task_id)
    _refuse("start", task)
    if task.status in RESUMABLE:
        return resume(store, task_id, who, lease_seconds=lease_seconds, fields=fields)
    return store.start(task_id, owner or who.name, lease_seconds=lease_seconds, actor=who.name, expected_version=who.expected_version, force=who.force, fields=fields)


def resume(store: Store, task_id: str, who: Who, *, lease_seconds: float | None = None, fields: Fields = None) -> Task:
    """Back to work for the task's owner. When the owner is someone else (an agent), it gets a
    fresh lease (``lease_seconds``, else the board's lease length): its worker picks the task up
    again, or the lease runs out and the coordinator hands the task to another."""
    task = store.get(task_id)
    _refuse("resume", task)
    owner = task.owner or who.name
    lease = None if owner == who.name else (lease_seconds or board_lease_seconds(store))
    return _move(store, task_id, Status.IN_PROGRESS, who, reason="resume", owner=owner, lease_seconds=lease, fields=fields)


def pause(store: Store, task_id: str, who: Who, *, fields: Fields = None) -> Task:
    _refuse("pause", store.get(task_id))
    return _move(store, task_id, Status.PAUSED, who, fields=fields)


def toggle_pause(store: Store, task_id: str, who: Who, *, lease_seconds: float | None = None) -> Task:
    """Pause a task in progress, resume a paused one (the dashboard's ``p``)."""
    if store.get(task_id).status == Status.PAUSED:
        return resume(store, task_id, who, lease_seconds=lease_seconds)
    return pause(store, task_id, who)


def requeue(store: Store, task_id: str, who: Who, *, fields: Fields = None) -> Task:
    """Back to the queue for any agent to take: retry a failed task, reopen a cancelled one,
    hand back a blocked, paused or in-progress one."""
    task = store.get(task_id)
    _refuse("requeue", task)
    how = REQUEUE_FROM[task.status]
    if how == "release":
        return store.release(task_id, actor=who.name, token=who.token, force=who.force, reason=f"released by {who.name}", fields=fields, expected_version=who.expected_version)
    return _move(store, task_id, Status.PENDING, who, reason=how, fields=fields)


def release(store: Store, task_id: str, who: Who, *, reason: str | None = None) -> Task:
    """Give a task in progress back to the queue (its worker stopped, or lost interest)."""
    return store.release(task_id, actor=who.name, token=who.token, force=who.force, reason=reason or f"released by {who.name}")


def claim(store: Store, agent: str, *, lease_seconds: float, max_held: int | None = 1, budget: Mapping[str, Any] | None = None) -> Task | None:
    """``agent`` takes the best ready task, under a lease it must renew; None when nothing is
    ready (or it holds ``max_held`` already). ``budget`` limits what the task may spend from now
    on, set under the new lease."""
    task = store.claim(agent, lease_seconds=lease_seconds, max_held=max_held)
    if task is None or budget is None:
        return task
    assert task.lease is not None
    return store.update(task.id, budget=budget, token=task.lease.token, actor=agent)


def reclaim_expired(store: Store, who: Who, *, margin: timedelta = timedelta(0)) -> list[Task]:
    """Take back every task whose lease ran out ``margin`` ago (its holder stopped renewing it):
    back to the queue, each with its reason in history."""
    return store.reclaim_expired(actor=who.name, margin=margin)


def policy_move(
    store: Store, task_id: str, target: Status, who: Who, *,
    policy: str, reason: str, at_total: int, fired_at: datetime, budget: Budget | None = None,
) -> Task:
    """A policy sets ``target`` on a task in progress, with its ``policy`` mark (the badge the
    dashboard shows, which ``undo_policy`` takes back) in the same write. Fenced on ``who.token``:
    if the agent finished the task or the lease changed hands since the policy judged it, the
    write is refused."""

    def change(task: Task) -> None:
        mark = PolicyMark(
            name=policy, status=target, reason=reason, fired_at=fired_at,
            at_total=at_total, owner=task.owner, progress=task.progress, budget=budget, leased=task.lease is not None,
        )
        store.apply_status(task, target)
        if target == Status.BLOCKED:
            task.error = reason
        task.policy = mark

    return store.mutate(task_id, change, op=f"status:{target} ({reason})", actor=who.name, token=who.token)


def cancel(store: Store, task_id: str, who: Who, *, fields: Fields = None) -> Task:
    _refuse("cancel", store.get(task_id))
    return _move(store, task_id, Status.CANCELLED, who, fields=fields)


def complete(store: Store, task_id: str, who: Who, *, fields: Fields = None) -> Task:
    return _move(store, task_id, Status.COMPLETED, who, fields=fields)


def fail(store: Store, task_id: str, who: Who, *, error: str | None = None, fields: Fields = None) -> Task:
    return _move(store, task_id, Status.FAILED, who, error=error, fields=fields)


def block(store: Store, task_id: str, who: Who, *, error: str | None = None, fields: Fields = None) -> Task:
    return _move(store, task_id, Status.BLOCKED, who, error=error, fields=fields)


def wait(store: Store, task_id: str, who: Who, *, question: str | None = None, fields: Fields = None) -> Task:
    """The task needs a person: ``question`` (or ``fields["question"]``) says what for (the
    dashboard shows it on the card)."""
    fields = dict(fields or {})
    if question is not None:
        fields["question"] = question
    if fields.get("question") is not None:
        fields["question"] = checked_question(fields["question"])
    return _move(store, task_id, Status.WAITING, who, fields=fields)


def checked_question(text: str) -> str:
    return checked_text(text, "question", "say what the person should decide or do")


def checked_text(text: str, what: str, hint: str) -> str:
    """A question or an answer as stored: trimmed, not empty, not endless."""
    text = text.strip()
    if not text:
        raise BoardError(f"the {what} is empty: {hint}")
    if len(text) > MAX_QUESTION:
        raise BoardError(f"the {what} is {len(text):,} characters; at most {MAX_QUESTION:,}")
    return text


def answer(store: Store, task_id: str, text: str, who: Who, *, requeue: bool = False, lease_seconds: float | None = None) -> Task:
    """A person answers a waiting task. The answer is stored on the task (and so in history),
    and the task goes back to its owner, in progress under a fresh lease, as ``resume`` does;
    to the queue when ``requeue`` is asked or ``answer_requeues`` says so, so another agent
    takes it with the answer in hand."""
    from board.agents import read_agent

    text = checked_text(text, "answer", "say what the agent should do")
    task = store.get(task_id)
    _refuse("answer", task)
    owner_record = read_agent(store.agent_records, task.owner) if task.owner else None
    if requeue or answer_requeues(task, owner_record, store.clock(), _settings(store).agent_stale_after):
        return _move(store, task_id, Status.PENDING, who, reason="answered", fields={"answer": text})
    owner = task.owner
    lease = None if owner == who.name else (lease_seconds or board_lease_seconds(store))
    return _move(store, task_id, Status.IN_PROGRESS, who, reason="answered", owner=owner, lease_seconds=lease, fields={"answer": text})


def answer_requeues(task: Task, owner_record: AgentRecord | None, now: datetime, stale_after: timedelta) -> bool:
    """Does an answer send ``task`` to the queue rather than back to its owner? Yes when it has no
    owner, or its owner is a registered agent that stopped or went silent (a person, or an agent
    board has no record of, is taken to be there). The dashboard says so before you answer."""
    from board.agents import AgentState, agent_state

    if not task.owner:
        return True
    return owner_record is not None and agent_state(owner_record, now, stale_after) == AgentState.STALE


def answer_goes_to(task: Task, owner_record: AgentRecord | None, now: datetime, stale_after: timedelta) -> str:
    """Where an answer sends ``task``, in words, by the rule ``answer`` applies
    (``answer_requeues``): "back to dave", or "back to the queue (dave is not running)". The
    answer dialog and the ``human.waiting`` alert both say it with this."""
    if not answer_requeues(task, owner_record, now, stale_after):
        return f"back to {task.owner}"
    return f"back to the queue ({task.owner} is not running)" if task.owner else "back to the queue"


def assign(store: Store, task_id: str, agent: str, who: Who, *, lease_seconds: float | None = None) -> Task:
    """Hand a ready task to ``agent`` under a lease it must renew (default: the board's length)."""
    _refuse("assign", store.get(task_id))
    return store.start(task_id, agent, lease_seconds=lease_seconds or board_lease_seconds(store), actor=who.name, expected_version=who.expected_version, op="claim")


def delete(store: Store, task_id: str, who: Who) -> Task:
    """Move a task to the archive; every dependency on it is dropped. ``restore`` undoes it."""
    return store.delete(task_id, actor=who.name, token=who.token, force=who.force, expected_version=who.expected_version)


def restore(store: Store, task_id: str, who: Who) -> Task:
    return store.restore(task_id, actor=who.name)


def undo_policy(store: Store, task_id: str, who: Who, *, lease_seconds: float | None = None) -> Task:
    """Take back the status a policy set (the policy can be wrong; seed 002 says so)."""
    return store.undo_policy(task_id, actor=who.name, lease_seconds=lease_seconds or board_lease_seconds(store), expected_version=who.expected_version)


class TaskChange(NamedTuple):
    """What ``update_task`` changes on one task, in one go: the command line's ``task update``
    and the MCP server's ``task_update`` both say it this way."""

    status: Status | str | None = None
    owner: str | None = None
    progress: int | None = None
    subject: str | None = None
    description: str | None = None
    active_form: str | None = None
    priority: str | None = None
    error: str | None = None
    question: str | None = None
    files: list[str] | None = None
    add_labels: Sequence[str] = ()
    remove_labels: Sequence[str] = ()
    add_blocked_by: Sequence[str] = ()
    add_blocks: Sequence[str] = ()
    remove_blocked_by: Sequence[str] = ()
    remove_blocks: Sequence[str] = ()
    #: Limits to set (``tokens``, ``usd``; None removes one): ``board.budgets``.
    budget: dict[str, Any] | None = None

    def touches_board(self) -> bool:
        """Whether the change reads beyond the task itself: a status move checks readiness,
        links check cycles."""
        return bool(self.status or self.add_blocked_by or self.add_blocks or self.remove_blocked_by or self.remove_blocks)


def update_task(store: Store, task_id: str, change: TaskChange, who: Who) -> Task:
    """Apply ``change`` to a task as one transaction: every part is checked against the board as
    it is under the lock before the first write, so a refused change writes nothing, and no other
    writer slips in between its parts."""
    with store.transaction():
        _update_task(store, task_id, change, who)
    return store.get(task_id)


def _update_task(store: Store, task_id: str, change: TaskChange, who: Who) -> None:
    task = store.get(task_id)
    fields: dict[str, Any] = {
        name: getattr(change, name)
        for name in ("owner", "progress", "subject", "description", "active_form", "priority", "files", "budget")
        if getattr(change, name) is not None
    }
    if change.error is not None and change.status not in (Status.FAILED, Status.BLOCKED):
        fields["error"] = change.error
    if change.question is not None:
        if change.status != Status.WAITING and task.status != Status.WAITING:
            raise BoardError("a question is for a person while the task waits: pass it with ", Option("status", "waiting"))
        fields["question"] = checked_question(change.question)
    if change.add_labels or change.remove_labels:
        missing = [name for name in change.remove_labels if name not in task.labels]
        if missing:
            raise BoardError(f"task {task_id} has no label {missing[0]!r}; nothing was changed")
        fields["labels"] = [name for name in dict.fromkeys([*task.labels, *change.add_labels]) if name not in change.remove_labels]
    edges = [(task_id, blocker) for blocker in change.add_blocked_by] + [(dependent, task_id) for dependent in change.add_blocks]
    dropped = [(task_id, blocker) for blocker in change.remove_blocked_by] + [(dependent, task_id) for dependent in change.remove_blocks]
    if not fields and not change.status and not edges and not dropped:
        raise BoardError("nothing to change: pass ", *_listed(Option(name) for name in ("status", "owner", "progress", "add_blocked_by")), ", ...")
    for dependent, blocker in dropped:
        other = store.tasks.get(blocker)
        if blocker not in store.get(dependent).blocked_by and (other is None or dependent not in other.blocks):
            raise BoardError(f"task {dependent} is not blocked by {blocker}; nothing to drop")
    # Everything is checked before the first write, so a refused change leaves the board as it was.
    store.check_links(edges)
    if change.status:
        move_to(store, task_id, Status(change.status), who, owner=change.owner, error=change.error, fields=fields)
    elif fields:
        store.update(task_id, actor=who.name, expected_version=who.expected_version, token=who.token, force=who.force, **fields)
    for dependent, blocker in dropped:
        store.remove_dependency(dependent, blocker, actor=who.name)
    if edges:
        store.link(edges, actor=who.name)


def _listed(parts: Iterable[Part]) -> list[Part]:
    """Parts with ``, `` between them."""
    listed: list[Part] = []
    for part in parts:
        listed += [", ", part] if listed else [part]
    return listed


def move_to(
    store: Store, task_id: str, target: Status, who: Who, *,
    owner: str | None = None, error: str | None = None, lease_seconds: float | None = None, fields: Fields = None,
) -> Task:
    """The move that brings the task to ``target``: start or resume, pause, block, wait,
    complete, fail, cancel, or back to the queue. ``fields`` change in the same write."""
    moves: dict[Status, Callable[[], Task]] = {
        Status.IN_PROGRESS: lambda: start(store, task_id, who, owner=owner, lease_seconds=lease_seconds, fields=fields),
        Status.PAUSED: lambda: pause(store, task_id, who, fields=fields),
        Status.BLOCKED: lambda: block(store, task_id, who, error=error, fields=fields),
        Status.WAITING: lambda: wait(store, task_id, who, fields=fields),
        Status.COMPLETED: lambda: complete(store, task_id, who, fields=fields),
        Status.FAILED: lambda: fail(store, task_id, who, error=error, fields=fields),
        Status.CANCELLED: lambda: cancel(store, task_id, who, fields=fields),
        Status.PENDING: lambda: requeue(store, task_id, who, fields=fields),
    }
    return moves[target]()


def _move(
    store: Store, task_id: str, target: Status, who: Who, *,
    reason: str | None = None, error: str | None = None, owner: str | None = None, lease_seconds: float | None = None, fields: Fields = None,
) -> Task:
    return store.set_status(
        task_id, target, actor=who.name, token=who.token, force=who.force, expected_version=who.expected_version,
        error=error, reason=reason, owner=owner, lease_seconds=lease_seconds, fields=fields,
    )
