"""What each MCP tool answers, as types: the SDK derives each tool's output schema from its
return annotation, and checks every answer against it before sending it.

A document the command line prints (a task, a checkpoint, an alert) names the fields a client
relies on and allows the rest (``extra="allow"``), so a field added to a document reaches
clients without a schema change dropping it. pydantic reads a nested ``TypedDict`` only from
``typing_extensions`` before Python 3.12.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, with_config
from typing_extensions import NotRequired, TypedDict

OPEN = ConfigDict(extra="allow")


class Lease(TypedDict):
    owner: str
    token: int
    expiresAt: str


class TaskRow(TypedDict):
    """A task in one row (``board.present.task_row``): what an agent choosing work acts on."""

    id: str
    subject: str
    status: str
    priority: str
    owner: str
    #: 0-100; a parent's comes from its sub-tasks.
    progress: int
    #: It can start now: pending, its blockers completed.
    ready: bool
    blockedBy: list[str]
    labels: list[str]
    #: The live claim on a task in progress: holder, token, expiry.
    lease: Lease | None
    version: int


class Derived(TypedDict):
    ready: bool
    progress: int
    openBlockers: list[str]
    wave: int | None
    dependents: list[str]


@with_config(OPEN)
class TaskDocument(TypedDict):
    """A task's whole document (``board task show --json``) with what the board derives."""

    id: str
    subject: str
    description: str
    status: str
    priority: str
    owner: str
    blockedBy: list[str]
    blocks: list[str]
    labels: list[str]
    files: list[str]
    progress: int
    lease: dict[str, Any] | None
    question: str | None
    answer: str | None
    error: str | None
    version: int
    derived: Derived


@with_config(OPEN)
class ShownTask(TaskDocument):
    """A task as ``task_show`` gives it: its document and the tokens spent on it, priced."""

    tokens: dict[str, Any]


class Unreadable(TypedDict):
    id: str
    path: str
    reason: str


class Listing(TypedDict):
    """A page of ``task_list``."""

    #: One row per task (``TaskRow``), or with ``full`` the whole document (``TaskDocument``).
    tasks: list[TaskRow | TaskDocument]
    #: Tasks whose file cannot be read (id, path, reason): never silently left out. On the first page.
    unreadable: list[Unreadable]
    #: How many tasks the filters match, on every page together.
    total: int
    #: How many of those are in each status.
    counts: dict[str, int]
    #: Pass it as ``cursor`` for the next page; null on the last one.
    nextCursor: str | None


class Claimed(TypedDict):
    #: The task as ``task_show`` gives it, or None when nothing is ready.
    task: TaskDocument | None


class Renewed(TypedDict):
    renewed: list[str]


@with_config(OPEN)
class Reservation(TypedDict):
    path: str
    owner: str
    task: str
    mode: str
    expiresAt: str
    acquiredAt: NotRequired[str]


class Reservations(TypedDict):
    reservations: list[Reservation]


class Unreserved(TypedDict):
    #: The paths whose reservations the task gave up.
    released: list[str]


@with_config(OPEN)
class Alert(TypedDict):
    key: str
    kind: str
    severity: str
    tasks: list[str]
    agents: list[str]
    files: list[str]
    message: str
    action: str
    since: str | None


class Alerts(TypedDict):
    alerts: list[Alert]


@with_config(OPEN)
class Checkpoint(TypedDict):
    """A checkpoint (``board checkpoint --json``); in a listing, ``valid`` says whether its
    checksum holds, and a corrupt one has only ``path``, ``valid`` and ``problem``."""

    path: str
    seq: NotRequired[int]
    task: NotRequired[str]
    createdAt: NotRequired[str]
    actor: NotRequired[str]
    reason: NotRequired[str]
    note: NotRequired[str]
    gitHead: NotRequired[str | None]
    fileHashes: NotRequired[dict[str, str | None]]
    document: NotRequired[dict[str, Any]]
    checksum: NotRequired[str]
    valid: NotRequired[bool]
    problem: NotRequired[str]


class Checkpointed(TypedDict):
    #: The checkpoint just written; null when listing.
    checkpoint: Checkpoint | None
    #: With ``list``: the task's checkpoints, oldest first; else null.
    checkpoints: list[Checkpoint] | None


class ThenNow(TypedDict):
    then: Any
    now: Any


class Resumed(TypedDict):
    """Where a task was left and what changed since (``board resume --json``)."""

    checkpoint: Checkpoint
    #: Files whose content changed since: path -> hashes then and now (null: not there).
    changedFiles: dict[str, ThenNow]
    gitHead: ThenNow
    #: Task fields that changed since: field -> [then, now].
    changedFields: dict[str, list[Any]]


@with_config(OPEN)
class Agent(TypedDict):
    name: str
    kind: str
    #: working, idle, gone or stale.
    state: str
    team: str | None
    task: str | None
    tasks: list[str]
    toolCalls: int
    lastActivity: str | None
    messageable: bool


class Agents(TypedDict):
    """``board agents --json``: the registered agents and Claude Code team members, and the teams."""

    agents: list[Agent]
    teams: list[dict[str, Any]]


class Sent(TypedDict):
    team: str
    to: str
    inbox: str
    message: dict[str, Any]


class PlannedTask(TypedDict):
    #: Its id on the board; None for a task a dry run would make.
    id: str | None
    key: str
    subject: str
    where: str


class NamedTask(TypedDict):
    id: str | None
    subject: str


@with_config(OPEN)
class PlanImported(TypedDict):
    """What ``plan_import`` made, changed and left (``board plan import --json``)."""

    source: str
    dryRun: bool
    created: list[PlannedTask]
    updated: list[dict[str, Any]]
    unchanged: list[PlannedTask]
    #: Tasks of this plan it no longer has: reported, cancelled only with prune.
    removed: list[dict[str, Any]]
    pruned: list[str]
    completed: list[str]
    left: list[dict[str, Any]]
    #: Each wave's tasks, in the order they can run: a task's blockers and sub-tasks come first.
    waves: list[list[NamedTask]]
    criticalPath: list[NamedTask]
    skipped: list[str]
