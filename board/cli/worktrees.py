"""``board worktree``, ``board diff`` and ``board merge``: a task's own git worktree, what it
changed, and merging it into its base."""

from __future__ import annotations

import argparse
import sys

from board.cli.arguments import task_id
from board.cli.output import print_json
from board.cli.parser import add_command
from board.cli.opening import open_store
from board.text import printable

#: Position of these commands in --help.
ORDER = 32


def register(commands: argparse._SubParsersAction) -> None:
    worktree = add_command(commands, "worktree", "make a task's own git worktree (on branch board/<id>.<slug>), or remove it")
    worktree.add_argument("id", type=task_id, help="the task")
    worktree.add_argument("--base", metavar="BRANCH", help="the branch it starts from (default: the branch checked out in the workspace)")
    worktree.add_argument("--remove", action="store_true", help="remove it instead (its branch too, once its commits are in the base)")
    worktree.add_argument("--force", action="store_true", help="with --remove: even with uncommitted changes in it (they are lost)")
    worktree.set_defaults(handler=cmd_worktree)

    diff = add_command(commands, "diff", "what a task changed in its worktree against its base (git diff)")
    diff.add_argument("id", type=task_id, help="the task")
    diff.add_argument("--stat", action="store_true", help="the changed files with lines added and removed, not the whole diff")
    diff.set_defaults(handler=cmd_diff)

    merge = add_command(commands, "merge", "merge a completed task's branch into its base (fast-forward, else a merge commit), then remove its worktree")
    merge.add_argument("id", type=task_id, help="the task")
    merge.add_argument("--send-back", action="store_true", help="after a conflict: add a task for an agent to resolve it in the worktree")
    merge.set_defaults(handler=cmd_merge)


def cmd_worktree(args: argparse.Namespace) -> int:
    from board.worktrees import git_work, on_board

    store = open_store(args, whole=False)
    task = store.get(args.id)
    actor = getattr(args, "actor", None) or "cli"
    if args.remove:
        record = on_board.needed_record(store, task)
        workspace = on_board.workspace_of(store)
        done = git_work.remove(workspace, record, force=args.force)
        if not record.merged and not git_work.branch_exists(workspace, record.branch):
            on_board.write_record(store, task.id, None, actor=actor)  # nothing of it is left
        print("; ".join(done) or f"#{task.id} had no worktree left")
        return 0
    if args.force:
        raise SystemExit(_usage("--force goes with --remove"))
    record = on_board.open_for(store, task, args.base, actor=actor)
    folder = git_work.task_folder(on_board.workspace_of(store), record)
    if args.json:
        print_json({"id": task.id, "branch": record.branch, "base": record.base, "path": str(folder)})
    else:
        print(f"#{task.id}'s worktree: {folder} (branch {record.branch}, from {record.base})")
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from board.worktrees import git_work, on_board

    store = open_store(args, whole=False)
    task = store.get(args.id)
    record = on_board.needed_record(store, task)
    workspace = on_board.workspace_of(store)
    if args.stat or args.json:
        changes = git_work.measure(workspace, record) if not record.merged else record.changes
        if args.json:
            print_json({"id": task.id, "branch": record.branch, "base": record.base, "merged": record.merged, "files": changes.files, "added": changes.added, "removed": changes.removed, "list": [{"path": c.path, "added": c.added, "removed": c.removed, "binary": c.binary} for c in changes.listed]})
            return 0
        for change in changes.listed:
            print(f"{'bin' if change.binary else '+' + str(change.added):>6} {'' if change.binary else '−' + str(change.removed):>6}  {printable(change.path)}")
        print(f"#{task.id} on {record.branch}: {changes.summary()} against {record.base}")
        return 0
    sys.stdout.write(git_work.task_diff(workspace, record))
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    from board.model import utcnow
    from board.worktrees import on_board
    from board.worktrees.merge import MergeConflict

    store = open_store(args)
    actor = getattr(args, "actor", None) or "cli"
    if args.send_back:
        made = on_board.send_back(store, args.id, actor=actor)
        print(f"#{made.id} {made.subject}: an agent resolves it in #{args.id}'s worktree; merging #{made.id} merges #{args.id}")
        return 0
    try:
        merged = on_board.merge_task(store, args.id, actor=actor, now=utcnow())
    except MergeConflict as conflict:
        sys.stderr.write(f"board merge: {conflict}\n")
        return 1
    task = store.get(args.id)
    record = on_board.needed_record(store, task)
    if args.json:
        print_json({"id": task.id, "into": record.base, "commit": merged.commit, "how": merged.how, "files": list(merged.files)})
    else:
        print(f"#{task.id} merged into {record.base} ({merged.how}, {merged.commit[:12]}, {len(merged.files)} file{'s' if len(merged.files) != 1 else ''})")
    return 0


def _usage(message: str) -> int:
    sys.stderr.write(f"board worktree: {message}\n")
    return 2
