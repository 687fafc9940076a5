"""A task's worktree as the board keeps it: made (or found again) for the task, its changes
measured into the task's record, merged, sent back on a conflict, removed.

The record lives in the task's metadata (``record.py``) and is written through the store like
any other field, so every reader sees it; the status of a task only ever moves through
``board.actions``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from board.errors import BoardError
from board.graph import id_sort_key
from board.model import Task
from board.status import Status
from board.store import Store
from board.store.base import Problem
from board.times import iso
from board.worktrees import git_work
from board.worktrees.merge import MergeConflict, Merged, merge
from board.worktrees.place import task_of_name
from board.worktrees.record import KEY, RESOLVES, Conflict, WorktreeRecord, read_record


def workspace_of(store: Store) -> Path:
    return store.layout.workspace


def record_of(task: Task) -> WorktreeRecord | None:
    """The worktree record on the task, as board writes them (``read_record``)."""
    return read_record(task.metadata, task.id)


def own_record(store: Store, task: Task) -> WorktreeRecord | None:
    """The task's record when the worktree is the task's to work in, merge or remove: its own,
    or that of the conflicted task it was made to resolve (``send_back``), still on the same
    branch. Anything else on a task is an agent's writing, not a worktree of its."""
    record = record_of(task)
    if record is None or task_of_name(record.path.partition("/")[2]) == task.id:
        return record
    resolved = task.metadata.get(RESOLVES)
    try:
        original = store.get(resolved) if isinstance(resolved, str) else None
    except BoardError:
        return None
    theirs = record_of(original) if original is not None else None
    if theirs is None or theirs.branch != record.branch or (theirs.conflict is None and not theirs.merged):
        return None
    return record


def write_record(store: Store, task_id: str, record: WorktreeRecord | None, *, actor: str) -> Task:
    """Put ``record`` on the task (None: take it off)."""
    return update_record(store, task_id, lambda current: record, actor=actor)


def update_record(store: Store, task_id: str, change: Callable[[WorktreeRecord | None], WorktreeRecord | None], *, actor: str) -> Task:
    """Replace the task's record with ``change(the record as it is now)``, worked out on the
    task as it stands under the store's lock: a record read a moment before (by a worker's
    measuring, while a person merges) never puts back what another write moved on from."""

    def mutate(task: Task) -> None:
        current = read_record(task.metadata, task.id)
        wanted = change(current)
        if wanted == current:
            return
        metadata = dict(task.metadata)
        if wanted is None:
            metadata.pop(KEY, None)
        else:
            metadata[KEY] = wanted.to_json()
        task.metadata = metadata

    return store.mutate(task_id, mutate, op="update", actor=actor)


def open_for(store: Store, task: Task, base: str | None, *, actor: str, say: Callable[[str], None] | None = None) -> WorktreeRecord:
    """The task's worktree, made from ``base`` (the branch checked out in the workspace when
    None) or found again from its record, and the record on the task. A new one starts with
    the unmerged work of the completed tasks it waits for; ``say`` hears of any left out."""
    workspace = workspace_of(store)
    record = own_record(store, task)
    if record is not None and record.merged:
        record = None  # merged and removed: a task run again starts a new branch
    made = git_work.make(workspace, task.id, task.subject, base or git_work.checked_out_branch(workspace), record=record)
    if record is None:
        made, left_out = git_work.bring_in(workspace, made, unmerged_blockers(store, task))
        for branch in left_out:
            if say is not None:
                say(f"#{task.id} starts without {branch}: it conflicts with the work already in its worktree; it comes in when that task is merged")
    if record is None or record.path != made.path:
        write_record(store, task.id, made, actor=actor)
    return made


def unmerged_blockers(store: Store, task: Task) -> list[str]:
    """The branches of the completed tasks ``task`` waits for whose work is not in the base yet."""
    branches = []
    for blocker in task.blocked_by:
        found = store.tasks.get(blocker)
        record = record_of(found) if found is not None and found.status == Status.COMPLETED else None
        if record is not None and not record.merged and git_work.branch_exists(workspace_of(store), record.branch):
            branches.append(record.branch)
    return branches


def note_changes(store: Store, task_id: str, *, actor: str) -> WorktreeRecord | None:
    """Measure what the task changed and put it on its record when it differs (never on a
    record merged, or another branch's, by the time it is written)."""
    task = store.get(task_id)
    record = own_record(store, task)
    if record is None or record.merged:
        return record
    changes = git_work.measure(workspace_of(store), record)

    def with_changes(current: WorktreeRecord | None) -> WorktreeRecord | None:
        if current is None or current.merged or current.branch != record.branch:
            return current
        return replace(current, changes=changes)

    return record_of(update_record(store, task_id, with_changes, actor=actor))


def needed_record(store: Store, task: Task) -> WorktreeRecord:
    record = own_record(store, task)
    if record is None:
        raise BoardError(f"task #{task.id} has no worktree (board worktree {task.id} makes one)")
    return record


def other_tasks_changing(store: Store, record: WorktreeRecord, task_id: str, files: tuple[str, ...]) -> tuple[str, ...]:
    """The other tasks whose worktrees changed any of ``files`` since this one began: not those
    merged before it started (their work is in its base), cancelled ones, or ones on its branch."""
    wanted = set(files)
    workspace = workspace_of(store)
    found = []
    for other in store.tasks.values():
        theirs = record_of(other) if other.id != task_id and other.status != Status.CANCELLED else None
        if theirs is None or theirs.branch == record.branch or not wanted & set(theirs.changes.paths):
            continue
        if theirs.merged and record.made_from and git_work.is_ancestor(workspace, theirs.merged, record.made_from):
            continue
        found.append(other.id)
    return tuple(sorted(found, key=id_sort_key))


def _working_on_it(store: Store, task: Task, record: WorktreeRecord) -> str | None:
    """Why the task's branch is not to be merged yet: a task still resolving its conflict."""
    for other in store.tasks.values():
        if other.metadata.get(RESOLVES) == task.id and other.status not in (Status.COMPLETED, Status.CANCELLED):
            return f"#{other.id} is resolving its merge conflict ({other.status}): merge #{other.id} once it is completed"
    return None


def merge_task(store: Store, task_id: str, *, actor: str, now: datetime) -> Merged:
    """Merge a completed task's branch into its base, then remove its worktree and branch. On a
    conflict nothing changes in git; the task's record names the files and the other tasks
    that changed them (the ``merge.conflict`` alert reads it), and MergeConflict is raised."""
    task = store.get(task_id)
    record = needed_record(store, task)
    if record.merged:
        raise BoardError(f"task #{task_id} was merged already (as {record.merged[:12]})")
    if task.status != Status.COMPLETED:
        raise BoardError(f"task #{task_id} is {task.status}: only a completed task is merged (its work may not be finished)")
    store.sync()
    waiting = _working_on_it(store, task, record)
    if waiting is not None:
        raise BoardError(f"#{task_id} is not merged: {waiting}")
    workspace = workspace_of(store)
    git_work.commit_leftovers(workspace, record, f"#{task.id} {task.subject}\n\nLeft uncommitted in its worktree; committed by board before merging.")
    record = note_changes(store, task_id, actor=actor) or record  # what it merges, kept once the branch is gone
    markers = git_work.leftover_markers(workspace, record)
    if markers:
        raise BoardError(f"#{task_id} is not merged: its branch leaves conflict markers in {', '.join(markers[:3])}; resolve them in {record.path} and commit")
    try:
        merged = merge(workspace, record, f"Merge #{task.id} {task.subject} ({record.branch})")
    except MergeConflict as conflict:
        store.sync()
        others = other_tasks_changing(store, record, task_id, conflict.files)
        noted = Conflict(conflict.files, others, iso(now))
        update_record(store, task_id, lambda current: replace(current, conflict=noted) if current is not None and current.branch == record.branch and not current.merged else current, actor=actor)
        raise MergeConflict(
            f"#{task_id} conflicts with {record.base} in {', '.join(conflict.files)}"
            + (f" (also changed by {', '.join('#' + t for t in others)})" if others else "")
            + f": nothing was merged; board merge {task_id} --send-back gives it to an agent to resolve",
            conflict.files,
        ) from None
    update_record(store, task_id, lambda current: replace(current or record, merged=merged.commit, conflict=None), actor=actor)
    resolved = task.metadata.get(RESOLVES)
    if isinstance(resolved, str) and resolved in store.tasks:
        update_record(store, resolved, lambda original: replace(original, merged=merged.commit, conflict=None) if original is not None and original.branch == record.branch else original, actor=actor)
    try:
        git_work.remove(workspace, record)
    except git_work.WorktreeError:
        pass  # merged; a worktree changed since stays for its owner to look at (board check lists it)
    return merged


def send_back(store: Store, task_id: str, *, actor: str) -> Task:
    """A task to settle a conflicted task's merge, for the next agent: it works in the
    conflicted task's worktree, on its branch, with the conflict told in its description and
    the conflicted task as its parent. Merging it merges the branch (and marks both merged)."""
    task = store.get(task_id)
    record = needed_record(store, task)
    if record.conflict is None:
        raise BoardError(f"task #{task_id} has no merge conflict to send back (board merge {task_id} finds one)")
    for other in store.tasks.values():
        if other.metadata.get(RESOLVES) == task_id and other.status not in (Status.COMPLETED, Status.CANCELLED):
            raise BoardError(f"#{other.id} already resolves #{task_id}'s conflict ({other.status})")
    shared = WorktreeRecord(record.branch, record.base, record.path, record.made_from, record.changes, None, None)
    return store.create(
        f"Resolve the merge conflict of #{task.id} with {record.base}",
        description=resolution_description(task, record),
        parent=task.id,
        files=list(record.conflict.files),
        labels=list(task.labels),
        priority="high",
        metadata={KEY: shared.to_json(), RESOLVES: task.id},
        actor=actor,
    )


def merge_completed(store: Store, now: datetime, *, actor: str, merged: list[str], refused: list[str], running: Callable[[str], bool] = lambda task_id: False) -> None:
    """Merge every completed task's branch whose blockers' branches are merged (dependency
    order), for ``[worktrees] merge = "auto"``. A conflict is noted on its task (its alert
    says what to do) and not tried again; a merge the base's checkout refuses waits, and so does
    a task whose command still ``running`` (it marked itself completed and may still write)."""
    waiting = {
        task.id: record
        for task in store.tasks.values()
        if task.status == Status.COMPLETED and (record := record_of(task)) is not None and not record.merged and record.conflict is None
    }
    waves = store.graph.waves() if waiting else {}
    for task_id in sorted(waiting, key=lambda i: (waves.get(i, 0), id_sort_key(i))):
        task = store.tasks[task_id]
        if any(blocker in waiting or _unmerged(store, blocker) for blocker in task.blocked_by):
            continue  # its blockers' work goes in first
        if running(task_id):
            continue
        try:
            done = merge_task(store, task_id, actor=actor, now=now)
        except MergeConflict as conflict:
            refused.append(str(conflict))
            continue
        except BoardError as error:
            refused.append(f"merge #{task_id}: {error}")
            continue
        waiting.pop(task_id)
        merged.append(f"merged #{task_id} ({done.how}, {done.commit[:12]})")


def _unmerged(store: Store, task_id: str) -> bool:
    found = store.tasks.get(task_id)
    record = record_of(found) if found is not None else None
    return record is not None and not record.merged


def resolution_description(task: Task, record: WorktreeRecord) -> str:
    conflict = record.conflict
    files = ", ".join(conflict.files) if conflict else "(see board diff)"
    others = f" They were also changed by {', '.join('#' + t for t in conflict.tasks)}." if conflict and conflict.tasks else ""
    return (
        f"#{task.id} ({task.subject}) cannot be merged into {record.base}: both changed {files}.{others}\n"
        f"Work in #{task.id}'s worktree on branch {record.branch}: run `git merge {record.base}`, resolve the conflicts "
        "keeping what both sides meant, and commit. board merges the branch once this task is completed."
    )


def worktree_ending(store: Store, task_id: str, choice: str | None) -> Callable[[], str] | None:
    """For a task about to end (cancelled, deleted) that has a worktree: what becomes of it,
    checked before the task moves (a worktree that cannot be removed refuses the command), done
    after; None for a task without one."""
    record = own_record(store, store.get(task_id))
    if record is None or record.merged:
        return None
    workspace = workspace_of(store)
    if choice != "remove":
        return lambda: f"; its worktree {record.path} is kept (board worktree {task_id} --remove removes it)"
    changed = git_work.dirty(workspace / record.path, worktree=True) if git_work.exists(workspace, record) else []
    if changed:
        raise BoardError(f"#{task_id}'s worktree {record.path} has uncommitted changes ({', '.join(changed[:3])}): nothing was done; commit them there, or keep it (--worktree keep)")
    return lambda: "; " + "; ".join(git_work.remove(workspace, record))


def worktree_problems(store: Store) -> list[Problem]:
    """``board check``'s problems with worktrees: a folder of ``.board-worktrees/`` no task's
    record names (left by a task deleted, or made by hand), and a task whose worktree vanished
    while its work is not merged."""
    from board.worktrees.place import WORKTREES_DIR

    workspace = workspace_of(store)
    folder = workspace / WORKTREES_DIR
    named: dict[str, str] = {}
    problems = []
    for task in store.tasks.values():
        record = record_of(task)
        if record is None or record.merged:
            continue
        named[record.path] = task.id
        if not git_work.exists(workspace, record) and task.status not in (Status.COMPLETED, Status.CANCELLED):
            kept = "its branch keeps its commits" if git_work.branch_exists(workspace, record.branch) else "its branch is gone too"
            problems.append(Problem("worktree.vanished", f"#{task.id}", f"its worktree {record.path} is gone ({kept}); its next run makes it again from {record.branch if 'keeps' in kept else record.base}"))
    if folder.is_dir() and not folder.is_symlink():
        for entry in sorted(folder.iterdir()):
            path = f"{WORKTREES_DIR}/{entry.name}"
            if entry.name.startswith(".") or path in named:
                continue
            problems.append(Problem("worktree.orphan", path, f"no task's worktree: remove it with git worktree remove {path} (look at its changes first: git -C {path} status)"))
    return problems
