"""A ``Plan`` compared with the board and written to it: the tasks it would create, update or
leave as they are, the ones the plan no longer has, the waves and the critical path.

Everything is checked before the first write (titles, labels, references, cycles, with the
board's own dependencies too), so a refused plan writes nothing. Tasks are matched to the plan
by ``metadata.plan`` (its source and the task's key): importing the same plan again updates the
tasks it made and never makes them twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from board import actions
from board.errors import BoardError, InvalidTaskFile, NotReady
from board.graph import TaskGraph, id_sort_key
from board.model import Task, live_lease_holder, task_from_dict
from board.plans.plan import Plan, PlanError, PlanTask
from board.priority import Priority
from board.status import FINISHED, Status
from board.store import Store

#: The metadata key under which a task keeps where it came from.
PLAN_KEY = "plan"
#: Statuses ``--prune`` cancels a task from (a live lease is left to its agent).
PRUNABLE = frozenset({Status.PENDING, Status.FAILED, Status.PAUSED, Status.BLOCKED, Status.WAITING, Status.IN_PROGRESS})


@dataclass
class Planned:
    """One task of the plan beside the board: its id there (None until made) and what changes."""

    task: PlanTask
    #: Its id on the board, or ``new-N`` while it is only planned.
    id: str
    existing: Task | None
    changes: list[str] = field(default_factory=list)


@dataclass
class ImportReport:
    source: str
    dry_run: bool
    planned: list[Planned]
    #: Tasks of this source the plan no longer has.
    removed: list[Task]
    pruned: list[str] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)
    #: Tasks left as they were, and why (a done task whose blockers are open; a held one).
    left: list[tuple[str, str]] = field(default_factory=list)
    waves: list[list[str]] = field(default_factory=list)
    critical_path: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    #: Each task's subject, by its id (``new-N`` while only planned).
    subjects: dict[str, str] = field(default_factory=dict)
    #: ``new-N`` to the id the task was given when it was made.
    renamed: dict[str, str] = field(default_factory=dict)

    def created(self) -> list[Planned]:
        return [p for p in self.planned if p.existing is None]

    def updated(self) -> list[Planned]:
        return [p for p in self.planned if p.existing is not None and p.changes]

    def unchanged(self) -> list[Planned]:
        return [p for p in self.planned if p.existing is not None and not p.changes]

    def as_json(self) -> dict[str, Any]:
        def row(planned: Planned) -> dict[str, Any]:
            return {"id": None if planned.id.startswith("new-") else planned.id, "key": planned.task.key, "subject": planned.task.subject, "where": planned.task.where}

        def named(task_id: str) -> dict[str, Any]:
            return {"id": None if task_id.startswith("new-") else task_id, "subject": self.subjects.get(task_id, "")}

        return {
            "source": self.source, "dryRun": self.dry_run,
            "created": [row(p) for p in self.created()],
            "updated": [{**row(p), "changed": p.changes} for p in self.updated()],
            "unchanged": [row(p) for p in self.unchanged()],
            "removed": [{"id": t.id, "subject": t.subject, "status": str(t.status), "key": t.metadata[PLAN_KEY].get("key")} for t in self.removed],
            "pruned": self.pruned, "completed": self.completed,
            "left": [{"id": task_id, "why": why} for task_id, why in self.left],
            "waves": [[named(t) for t in wave] for wave in self.waves],
            "criticalPath": [named(t) for t in self.critical_path],
            "skipped": self.skipped,
        }

    def text(self) -> str:
        def name(task_id: str) -> str:
            subject = self.subjects.get(task_id, "")
            return subject if task_id.startswith("new-") else f"#{task_id} {subject}"

        verb = ("would create", "would update") if self.dry_run else ("created", "updated")
        counts = f"{len(self.created())} {verb[0]}, {len(self.updated())} {verb[1]}, {len(self.unchanged())} unchanged"
        lines = [f"{self.source}: {len(self.planned)} tasks: {counts}"]
        for planned in self.planned:
            mark = "+" if planned.existing is None else "~" if planned.changes else "="
            what = f" ({', '.join(planned.changes)})" if planned.existing is not None and planned.changes else ""
            depth = 0
            parent = planned.task.parent
            keys = {p.task.key: p for p in self.planned}
            while parent is not None and parent in keys and depth < 8:
                depth, parent = depth + 1, keys[parent].task.parent
            lines.append(f"  {mark} {'  ' * depth}{name(planned.id)}{what}")
        for task in self.removed:
            done = "cancelled" if task.id in self.pruned else "kept (--prune cancels it)" if task.status not in FINISHED else f"kept ({task.status})"
            lines.append(f"  - #{task.id} {task.subject}: no longer in the plan; {done}")
        for task_id in self.completed:
            lines.append(f"  ✓ {name(task_id)}: {'would be' if self.dry_run else ''} completed, as the plan says".replace(":  completed", ": completed"))
        for task_id, why in self.left:
            lines.append(f"  ! {name(task_id)}: {why}")
        if self.waves:
            lines.append("waves:")
            for number, wave in enumerate(self.waves, start=1):
                lines.append(f"  {number}. " + " · ".join(name(t) for t in wave))
        if self.critical_path:
            lines.append(f"critical path ({len(self.critical_path)} tasks): " + " → ".join(name(t) for t in self.critical_path))
        if self.skipped:
            lines.append("not tasks: " + "; ".join(self.skipped))
        if self.dry_run:
            lines.append("dry run: nothing was changed")
        return "\n".join(lines)


def plan_of(task: Task) -> dict[str, Any] | None:
    mark = task.metadata.get(PLAN_KEY)
    return mark if isinstance(mark, dict) and isinstance(mark.get("source"), str) else None


def import_plan(store: Store, plan: Plan, *, actor: str, dry_run: bool = False, prune: bool = False) -> ImportReport:
    """Compare ``plan`` with the board and, unless ``dry_run``, write it: all of it, or nothing
    when any part is refused."""
    # Checked first without the lock, so a refused plan (or a dry run) leaves every file of the
    # board as it was; then again under it, against the board as it is when written.
    store.sync()
    report = _compare(store, plan, prune=prune)
    if dry_run:
        return report
    with store.transaction():
        report = _compare(store, plan, prune=prune)
        report.dry_run = False
        _write(store, plan, report, actor)
        _graph_of(store, report)
        return report


def _compare(store: Store, plan: Plan, *, prune: bool) -> ImportReport:
    mine = {}
    for task in store.tasks.values():
        mark = plan_of(task)
        if mark is not None and mark["source"] == plan.source and isinstance(mark.get("key"), str):
            mine[mark["key"]] = task
    planned = [Planned(task, mine[task.key].id if task.key in mine else f"new-{n}", mine.get(task.key)) for n, task in enumerate(plan.tasks, start=1)]
    ids = {p.task.key: p.id for p in planned}
    _check_parents(plan)
    for p in planned:
        for board_id in p.task.extra.get("boardNeeds", []):
            if board_id not in store.tasks:
                raise PlanError(f"{p.task.where}: waits on #{board_id}, which is not on the board")
    desired = {p.id: _document(p, ids, plan) for p in planned}
    for p in planned:
        try:
            task_from_dict({"id": p.id, **{k: v for k, v in desired[p.id].items() if k != "parentKey"}}, p.task.where)
        except InvalidTaskFile as error:
            raise PlanError(f"{p.task.where}: {str(error).split(': ', 1)[-1]}") from None
    _check_cycles(store, plan, planned, desired, {t.id for t in mine.values()})
    removed = sorted((task for key, task in mine.items() if key not in ids), key=lambda t: id_sort_key(t.id))
    for p in planned:
        if p.existing is not None:
            p.changes = _changes(p.existing, desired[p.id], {t.id for t in mine.values()})
    report = ImportReport(source=plan.source, dry_run=True, planned=planned, removed=removed, skipped=list(plan.skipped))
    for p in planned:
        if p.existing is not None and p.task.status == Status.COMPLETED and p.existing.status != Status.COMPLETED:
            report.completed.append(p.id)
    if prune:
        report.pruned = [t.id for t in removed if t.status in PRUNABLE and live_lease_holder(t, store.clock()) is None]
        report.left += [(t.id, "no longer in the plan, but an agent holds it: left to it") for t in removed if t.id not in report.pruned and t.status not in FINISHED]
    report.subjects = {p.id: p.task.subject for p in planned}
    _graph_of_plan(report, planned, desired)
    return report


def _check_parents(plan: Plan) -> None:
    by_key = plan.by_key()
    for task in plan.tasks:
        seen = {task.key}
        parent = task.parent
        while parent is not None:
            if parent in seen:
                raise PlanError(f"{task.where}: '{task.subject}' is below itself: its parents go round in a circle")
            seen.add(parent)
            parent = by_key[parent].parent if parent in by_key else None


def _document(p: Planned, ids: dict[str, str], plan: Plan) -> dict[str, Any]:
    """The fields the plan gives the task, as the task document spells them."""
    task = p.task
    mark: dict[str, Any] = {"source": plan.source, "key": task.key}
    metadata = dict(p.existing.metadata) if p.existing is not None else {}
    if plan.kind != "markdown":
        mark["id"] = task.foreign_id
        metadata[plan.kind] = task.extra
    metadata[PLAN_KEY] = mark
    files = task.extra.get("files", []) if plan.kind == "markdown" else (p.existing.files if p.existing is not None else [])
    return {
        "subject": task.subject, "description": task.description, "priority": str(task.priority or Priority.MEDIUM),
        "labels": list(task.labels), "files": list(files), "metadata": metadata,
        "parent": ids[task.parent] if task.parent is not None and task.parent in ids else None,
        "blockedBy": list(dict.fromkeys([ids[need] for need in _needs_with_inherited(task, plan)] + list(task.extra.get("boardNeeds", [])))),
    }


def _needs_with_inherited(task: PlanTask, plan: Plan) -> list[str]:
    """What a task of a markdown plan waits on: its own ``after:``, then what its parents wait
    on, as a person means it ("Announce it, after the tag: post on the forum, mail the list"
    posts after the tag). Leaves out its own parents and what lies below them."""
    needs = list(task.needs)
    if plan.kind != "markdown" or task.parent is None:
        return needs
    by_key = plan.by_key()
    ancestors: list[str] = []
    parent: str | None = task.parent
    while parent is not None and parent in by_key and parent not in ancestors:
        ancestors.append(parent)
        parent = by_key[parent].parent
    for key in ancestors:
        for need in by_key[key].needs:
            if need not in ancestors and not _below(by_key, need, key):
                needs.append(need)
    return needs


def _below(by_key: dict[str, PlanTask], key: str, ancestor: str) -> bool:
    seen = set()
    while key in by_key and key not in seen:
        seen.add(key)
        parent = by_key[key].parent
        if parent == ancestor:
            return True
        if parent is None:
            return False
        key = parent
    return False


def _changes(task: Task, wanted: dict[str, Any], mine: set[str]) -> list[str]:
    changed = []
    for name, attribute in (("subject", "subject"), ("description", "description"), ("priority", "priority"), ("labels", "labels"), ("files", "files"), ("parent", "parent")):
        now = getattr(task, attribute)
        if (str(now) if name == "priority" else now) != wanted[name]:
            changed.append(name)
    if task.metadata != wanted["metadata"] and "metadata" not in changed:
        changed.append("metadata")
    # Dependencies between tasks of this plan are the plan's; one a person added to another task stays.
    dropped = {b for b in task.blocked_by if b in mine} - set(wanted["blockedBy"])
    if dropped or not set(wanted["blockedBy"]) <= set(task.blocked_by):
        changed.append("dependencies")
    return changed


def _check_cycles(store: Store, plan: Plan, planned: list[Planned], desired: dict[str, dict[str, Any]], mine: set[str]) -> None:
    """Refuse a plan whose dependencies go round, within itself or through the board's own."""
    within = TaskGraph()
    for p in planned:
        within.put(Task(id=p.id, subject=p.task.subject, blocked_by=[b for b in desired[p.id]["blockedBy"] if b.startswith("new-") or b in desired]))
    cycles = within.cycles()
    if not cycles:
        board = TaskGraph()
        for task in store.tasks.values():
            if task.id in desired:
                continue
            board.put(Task(id=task.id, subject=task.subject, blocked_by=list(task.blocked_by)))
        for p in planned:
            kept = [b for b in (p.existing.blocked_by if p.existing is not None else []) if b not in mine]
            board.put(Task(id=p.id, subject=p.task.subject, blocked_by=list(dict.fromkeys([*kept, *desired[p.id]["blockedBy"]]))))
        cycles = board.cycles()
        within = board
    if cycles:
        by_id = {p.id: p.task for p in planned}
        cycle = cycles[0]
        first = next((by_id[t] for t in cycle if t in by_id), None)
        names = " → ".join(f"'{by_id[t].subject}'" if t in by_id else f"#{t}" for t in cycle)
        where = first.where if first is not None else plan.source
        raise PlanError(f"{where}: a dependency cycle: {names}; nothing was written")


def _graph_of_plan(report: ImportReport, planned: list[Planned], desired: dict[str, dict[str, Any]]) -> None:
    graph = TaskGraph()
    for p in planned:
        status = p.existing.status if p.existing is not None else p.task.status
        if p.task.status == Status.COMPLETED:
            status = Status.COMPLETED
        # A parent is ready once its sub-tasks are finished: in waves, they come before it.
        children = [q.id for q in planned if q.task.parent == p.task.key]
        blockers = [b for b in desired[p.id]["blockedBy"] if b in desired]
        graph.put(Task(id=p.id, subject=p.task.subject, status=status, blocked_by=list(dict.fromkeys([*blockers, *children]))))
    waves = graph.waves()
    count = max(waves.values(), default=-1) + 1
    order = [p.id for p in planned]
    report.waves = [[t for t in order if waves[t] == wave] for wave in range(count)]
    report.critical_path = graph.critical_path()


def _graph_of(store: Store, report: ImportReport) -> None:
    """The waves and critical path again, with the ids the tasks now have."""
    renamed = report.renamed
    report.waves = [[renamed.get(t, t) for t in wave] for wave in report.waves]
    report.critical_path = [renamed.get(t, t) for t in report.critical_path]
    report.completed = [renamed.get(t, t) for t in report.completed]
    report.left = [(renamed.get(t, t), why) for t, why in report.left]
    report.subjects = {p.id: p.task.subject for p in report.planned}


def _write(store: Store, plan: Plan, report: ImportReport, actor: str) -> None:
    planned = report.planned
    order = _creation_order(planned, plan)
    real: dict[str, str] = {}
    later_parents: list[tuple[str, str]] = []

    def now(task_id: str) -> str:
        return real.get(task_id, task_id)

    for p in order:
        if p.existing is not None:
            continue
        wanted = _document(p, {q.task.key: now(q.id) for q in planned}, plan)
        parent = wanted["parent"]
        if parent is not None and parent.startswith("new-"):
            later_parents.append((p.id, parent))
            parent = None
        status = p.task.status if p.task.status in (Status.COMPLETED, Status.CANCELLED) else Status.PENDING
        made = store.create(
            wanted["subject"], description=wanted["description"], blocked_by=wanted["blockedBy"], priority=wanted["priority"],
            parent=parent, files=wanted["files"], labels=wanted["labels"], metadata=wanted["metadata"], actor=actor, status=status,
        )
        real[p.id] = made.id
        p.id = made.id
    for child, parent in later_parents:
        store.update(now(child), parent=now(parent), actor=actor)
    ids = {p.task.key: p.id for p in planned}
    managed = {p.id for p in planned} | {t.id for t in report.removed}
    edges: list[tuple[str, str]] = []
    for p in planned:
        if p.existing is None or not p.changes:
            continue
        wanted = _document(p, ids, plan)
        fields = {name: wanted[name] for name in ("subject", "description", "priority", "labels", "files", "parent", "metadata")}
        store.update(p.id, actor=actor, **fields)
        current = store.get(p.id)
        for blocker in current.blocked_by:
            if blocker in managed and blocker not in wanted["blockedBy"]:
                store.remove_dependency(p.id, blocker, actor=actor)
        edges += [(p.id, blocker) for blocker in wanted["blockedBy"] if blocker not in current.blocked_by]
    if edges:
        store.link(edges, actor=actor)
    report.renamed = real
    who = actions.Who(actor, force=True)
    completed = []
    for task_id in report.completed:
        try:
            _complete(store, task_id, who)
            completed.append(task_id)
        except (NotReady, BoardError) as error:
            report.left.append((task_id, f"done in the plan, left {store.get(task_id).status} on the board: {error}"))
    report.completed = completed
    for task_id in report.pruned:
        actions.cancel(store, task_id, who)


def _creation_order(planned: list[Planned], plan: Plan) -> list[Planned]:
    """Blockers before the tasks waiting on them (the plan has no cycle), parents before their
    sub-tasks where that does not break the first rule, else in the plan's order."""
    by_key = {p.task.key: p for p in planned}
    placed: set[str] = set()
    order: list[Planned] = []

    def place(p: Planned, path: set[str]) -> None:
        if p.task.key in placed or p.task.key in path:
            return
        path = path | {p.task.key}
        for need in p.task.needs:
            if need in by_key:
                place(by_key[need], path)
        if p.task.parent in by_key and p.task.parent not in path:
            parent = by_key[p.task.parent]
            if not _needs_through(parent, p.task.key, by_key):
                place(parent, path)
        if p.task.key not in placed:
            placed.add(p.task.key)
            order.append(p)

    for p in planned:
        place(p, set())
    return order


def _needs_through(p: Planned, key: str, by_key: dict[str, Planned]) -> bool:
    """Whether ``p`` waits, directly or not, on the task ``key``."""
    seen: set[str] = set()
    stack = list(p.task.needs)
    while stack:
        need = stack.pop()
        if need == key:
            return True
        if need in seen or need not in by_key:
            continue
        seen.add(need)
        stack += by_key[need].task.needs
    return False


def _complete(store: Store, task_id: str, who: actions.Who) -> None:
    """A task the plan says is done, completed on the board by the moves a person would make:
    a task in progress is completed; a paused, blocked or waiting one resumed first; a pending
    or failed one started (its blockers must be completed) and completed."""
    task = store.get(task_id)
    if task.status == Status.CANCELLED:
        raise BoardError("it was cancelled on the board; reopen it to take the plan's word")
    if task.status == Status.FAILED:
        actions.requeue(store, task_id, who)
        task = store.get(task_id)
    if task.status == Status.PENDING:
        actions.start(store, task_id, who, owner=who.name)
    elif task.status in (Status.PAUSED, Status.BLOCKED, Status.WAITING):
        actions.resume(store, task_id, who)
    actions.complete(store, task_id, who)
