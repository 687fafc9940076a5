"""``board init``, ``board task ...`` and ``board check``."""


from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from board.cli.parser import add_command
from board.cli.arguments import add_budget_options, budget_change, label, number_argument, task_id
from board.cli.output import print_json, print_task
from board.errors import BoardError
from board.cli.opening import open_store, who
from board.present import SORTS, blocker_list, prompt, select_tasks, shown_task, table, task_json, task_tokens, tokens_text
from board.priority import Priority
from board.status import Status

# Building the parser must not load the store or pydantic (every command pays for what is
# imported here): handlers import them when they run.
if TYPE_CHECKING:
    from board.model import Task
    from board.store import Store


#: Position of these commands in --help.
ORDER = 10

progress_value = number_argument(int, "a whole number", lambda number: 0 <= number <= 100, "{} is outside 0-100")


def register(commands: argparse._SubParsersAction) -> None:
    init = add_command(commands, "init", "create .tasks/ in the workspace")
    init.set_defaults(handler=cmd_init)

    task = add_command(commands, "task", "create, change, list and show tasks")
    task_commands = task.add_subparsers(dest="task_command", metavar="ACTION", required=True, parser_class=type(task))
    task_commands.common = commands.common  # type: ignore[attr-defined]

    create = add_command(task_commands, "create", "create a task and print its id")
    create.add_argument("subject", help="one line saying what is to be done")
    create.add_argument("--description", default="", help="the details (any length, several lines)")
    create.add_argument("--active-form", default="", help="what an agent shows while doing it ('Writing the parser')")
    create.add_argument("--blocked-by", nargs="+", type=task_id, default=[], metavar="ID", help="tasks that must be completed first")
    create.add_argument("--blocks", nargs="+", type=task_id, default=[], metavar="ID", help="tasks that wait on this one")
    create.add_argument("--priority", choices=[p.value for p in Priority], default="medium", help="claim order comes first from this (default medium)")
    create.add_argument("--parent", type=task_id, help="make it a sub-task of this task")
    create.add_argument("--files", nargs="+", default=[], metavar="PATH", help="files the task will change (conflict alerts watch them)")
    create.add_argument("--label", dest="labels", action="append", type=label, default=[], metavar="LABEL", help="a label (repeat for more)")
    create.add_argument("--id", dest="new_id", type=task_id, help="use this id instead of the next number")
    add_budget_options(create, "the task")
    create.set_defaults(handler=cmd_create)

    update = add_command(task_commands, "update", "change a task")
    update.add_argument("id", type=task_id, help="the task to change")
    update.add_argument("--status", choices=[s.value for s in Status], help="move it (the transition rules apply)")
    update.add_argument("--worktree", choices=("keep", "remove"), help="with --status cancelled: what to do with its worktree, if it has one (as for task delete)")
    update.add_argument("--owner", help="who works on it")
    update.add_argument("--progress", type=progress_value, help="0-100")
    update.add_argument("--subject", help="a new subject")
    update.add_argument("--description", help="a new description")
    update.add_argument("--active-form", help="what an agent shows while doing it")
    update.add_argument("--priority", choices=[p.value for p in Priority], help="a new priority")
    update.add_argument("--error", help="why it failed (with --status failed)")
    update.add_argument("--question", help="what a person must decide or do (with --status waiting; the dashboard shows it)")
    update.add_argument("--files", nargs="+", metavar="PATH", help="replace the files it will change")
    update.add_argument("--label", dest="labels", action="append", type=label, default=[], metavar="LABEL", help="add a label (repeat for more)")
    update.add_argument("--remove-label", dest="drop_labels", action="append", type=label, default=[], metavar="LABEL", help="remove a label (repeat for more)")
    update.add_argument("--add-blocked-by", nargs="+", type=task_id, default=[], metavar="ID", help="add dependencies: these must be completed first")
    update.add_argument("--add-blocks", nargs="+", type=task_id, default=[], metavar="ID", help="make these tasks wait on this one")
    update.add_argument("--remove-blocked-by", nargs="+", type=task_id, default=[], metavar="ID", help="drop these dependencies (both sides)")
    update.add_argument("--remove-blocks", nargs="+", type=task_id, default=[], metavar="ID", help="stop blocking these tasks (both sides)")
    add_budget_options(update, "the task")
    update.add_argument("--expect-version", type=int, help="refuse the change unless the task is at this version")
    update.add_argument("--token", type=int, help="your lease token (default: $BOARD_LEASE_TOKEN when $BOARD_TASK_ID is this task); refused once it is no longer current")
    update.add_argument("--force", action="store_true", help="as a person, override the agent whose live lease holds the task (history records it)")
    update.set_defaults(handler=cmd_update)

    listing = add_command(task_commands, "list", "list tasks")
    _listing_options(listing)
    listing.add_argument("--ready", action="store_true", help="only tasks that can start now")
    listing.add_argument("--all", action="store_true", help="include tasks Claude Code keeps internal (metadata._internal)")
    listing.add_argument("--format", choices=["table", "json", "prompt"], help="table (default), json, or the compact list an agent keeps in its context")
    listing.set_defaults(handler=cmd_list)

    search = add_command(task_commands, "search", "find tasks whose subject or description holds every word given (completed ones too)")
    search.add_argument("words", nargs="+", metavar="WORD", help="words to find, case-insensitively")
    _listing_options(search)
    search.set_defaults(handler=cmd_search, all=False, ready=False)

    show = add_command(task_commands, "show", "show one task")
    show.add_argument("id", type=task_id, help="the task to show")
    show.set_defaults(handler=cmd_show)

    answer = add_command(commands, "answer", "answer a task that waits for a person; it goes back to its owner (or to the queue)")
    answer.add_argument("id", type=task_id, help="the waiting task")
    answer.add_argument("text", help="the answer, as the agent will read it")
    answer.add_argument("--requeue", action="store_true", help="put it back in the queue for any agent instead of its owner")
    answer.set_defaults(handler=cmd_answer)

    undo = add_command(commands, "undo", "take back the status a policy set on a task (a spent budget, failures in a row...): it goes back to work")
    undo.add_argument("id", type=task_id, help="the task a policy moved")
    undo.set_defaults(handler=cmd_undo)

    delete = add_command(task_commands, "delete", "move a task to the archive; 'task restore' brings it back (refused while other tasks depend on it)")
    delete.add_argument("id", type=task_id, help="the task to archive")
    delete.add_argument("--token", type=int, help="your lease token, if you hold the task")
    delete.add_argument("--force", action="store_true", help="delete it even though tasks wait on it or are its sub-tasks (those links are dropped on both sides), or an agent holds it under a live lease")
    delete.add_argument("--worktree", choices=("keep", "remove"), help="what to do with its worktree, if it has one (default keep; remove refuses one with uncommitted changes, and keeps a branch with unmerged commits)")
    delete.set_defaults(handler=cmd_delete)

    restore = add_command(task_commands, "restore", "bring a deleted task back from the archive")
    restore.add_argument("id", type=task_id, help="the archived task to bring back")
    restore.set_defaults(handler=cmd_restore)

    check = add_command(commands, "check", "find broken files and graph problems (exit 1 when any)")
    check.add_argument("--fix", action="store_true", help="repair one-sided dependency edges and remove temp files left by killed writers")
    check.set_defaults(handler=cmd_check)


def cmd_init(args: argparse.Namespace) -> int:
    workspace = Path(args.workspace)
    if not workspace.is_dir():
        raise BoardError(f"{workspace} is not a directory")
    from board.store.base import database_url

    url = database_url(workspace)
    if url is not None:
        return _init_database(args, workspace, url)
    existed = (workspace / ".tasks").is_dir()
    store = open_store(args, create=True)
    if args.json:
        print_json({"board": str(store.layout.tasks_dir), "created": not existed})
    else:
        print(f"{'board already initialised' if existed else 'initialised'} {store.layout.tasks_dir}")
    return 0


def _init_database(args: argparse.Namespace, workspace: Path, url: str) -> int:
    """Create the board's schema in the database, or bring it up to this board's version."""
    from board.store.postgres.connect import connect, redact
    from board.store.postgres.migrations import migrate, schema_version

    with connect(url, autocommit=True) as conn:
        applied = migrate(conn)
        version = schema_version(conn)
    # No .tasks/ here: this machine's files go where the store keeps them for this database
    # (the workspace's .tasks/ when it has one, else a folder of its own under the state directory).
    if args.json:
        print_json({"board": redact(url), "created": bool(applied), "migrations": applied, "schemaVersion": version})
    elif applied:
        print(f"initialised {redact(url)} (schema version {version}; applied {', '.join(map(str, applied))})")
    else:
        print(f"board already initialised {redact(url)} (schema version {version})")
    return 0


def cmd_create(args: argparse.Namespace) -> int:
    store = open_store(args)
    task = store.create(
        args.subject,
        description=args.description,
        active_form=args.active_form,
        blocked_by=args.blocked_by,
        blocks=args.blocks,
        priority=args.priority,
        parent=args.parent,
        files=args.files,
        labels=args.labels,
        task_id=args.new_id,
        budget=budget_change(args),
    )
    print_task(args, store, task, task.id)
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    from board import actions

    change = actions.TaskChange(
        status=args.status, owner=args.owner, progress=args.progress, subject=args.subject, description=args.description,
        active_form=args.active_form, priority=args.priority, error=args.error, question=args.question, files=args.files,
        add_labels=args.labels, remove_labels=args.drop_labels, add_blocked_by=args.add_blocked_by, add_blocks=args.add_blocks,
        remove_blocked_by=args.remove_blocked_by, remove_blocks=args.remove_blocks, budget=budget_change(args),
    )
    # JSON shows what is derived from the board; plain fields alone concern the task alone.
    if args.worktree and args.status != Status.CANCELLED:
        raise BoardError("--worktree goes with --status cancelled (or task delete)")
    store = open_store(args, whole=args.json or change.touches_board())
    ending = None
    if args.status == Status.CANCELLED:  # git's helpers only for a task that may have a worktree to end
        from board.worktrees.on_board import worktree_ending

        ending = worktree_ending(store, args.id, args.worktree)
    task = actions.update_task(store, args.id, change, who(args, args.id))
    print_task(args, store, task, f"#{task.id} {task.status} (version {task.version})" + (ending() if ending else ""))
    return 0



def cmd_answer(args: argparse.Namespace) -> int:
    from board import actions

    store = open_store(args)
    task = actions.answer(store, args.id, args.text, who(args, args.id), requeue=args.requeue)
    print_task(args, store, task, f"#{task.id} answered; " + ("back in the queue" if task.status == Status.PENDING else f"back to {task.owner}"))
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    from board import actions

    store = open_store(args)
    task = actions.undo_policy(store, args.id, who(args, args.id))
    print_task(args, store, task, f"#{task.id} {task.status}" + (f" ({task.owner})" if task.owner else ""))
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from board import actions
    from board.worktrees.on_board import worktree_ending

    store = open_store(args)
    ending = worktree_ending(store, args.id, args.worktree)
    task = actions.delete(store, args.id, who(args, args.id))
    print_task(args, store, task, f"deleted #{task.id} ({task.subject}); 'board task restore {task.id}' brings it back" + (ending() if ending else ""))
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    from board import actions

    store = open_store(args)
    task = actions.restore(store, args.id, who(args, args.id))
    print_task(args, store, task, f"#{task.id} {task.status} (restored)")
    return 0


def _listing_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--status", choices=[s.value for s in Status], help="only tasks in this status")
    parser.add_argument("--owner", help="only tasks this agent or person owns")
    parser.add_argument("--label", dest="labels", action="append", type=label, default=[], metavar="LABEL", help="only tasks with this label (repeat: all of them)")
    parser.add_argument("--sort", choices=SORTS, default="id", help="order: priority (most urgent first), id (default), updated (latest first)")


def _selected(store: Store, args: argparse.Namespace, tasks: list[Task]) -> list[Task]:
    return select_tasks(
        store, tasks, status=args.status, owner=args.owner, labels=args.labels, ready=args.ready, sort=args.sort, include_hidden=args.all,
        words=getattr(args, "words", ()),
    )


def _print_tasks(store: Store, args: argparse.Namespace, tasks: list[Task], none: str, *, every_task: bool = False) -> None:
    """``every_task``: the list is the whole board, so a task whose file cannot be read gets a
    row of its own (in JSON, ``{"id", "unreadable", "path"}``) rather than going missing."""
    unreadable = store.unreadable_tasks() if every_task else {}
    fmt = "json" if args.json else (getattr(args, "format", None) or "table")
    if fmt == "json":
        print_json([task_json(t, store.graph) for t in tasks] + [
            {"id": task_id, "unreadable": reason, "path": str(store.layout.task_path(task_id))} for task_id, reason in sorted(unreadable.items())
        ])
    elif fmt == "prompt":
        print(prompt(tasks, store.graph))
    elif tasks or unreadable:
        print(table(tasks, store.graph, unreadable))
    else:
        print(none)
    for path, reason in sorted(store.invalid.items()):
        if store.layout.task_id_for(Path(path)) not in unreadable:  # not already a row of its own
            sys.stderr.write(f"board: cannot read {path}: {reason}\n")


def cmd_list(args: argparse.Namespace) -> int:
    from board.graph import by_id

    # The ready tasks alone are read where the store keeps an index of them; not for JSON,
    # whose waves and dependents are the whole board's, nor for labels, checked against it.
    only_ready = args.ready and not args.labels and not args.json and getattr(args, "format", None) != "json"
    store = open_store(args, whole=not only_ready)
    tasks = _selected(store, args, _ready_tasks(store) if only_ready else by_id(store.tasks))
    unfiltered = not (args.status or args.owner or args.labels or args.ready)
    _print_tasks(store, args, tasks, "no tasks", every_task=unfiltered)
    return 0


def _ready_tasks(store: Store) -> list[Task]:
    """The ready tasks, in id order, without reading the board where the store keeps an index
    of them: each candidate is read with its blockers and sub-tasks and judged by the rules, so
    a task the index holds wrongly is left out (an outside writer's change reaches the index
    when the coordinator next puts it right)."""
    from board.graph import by_id, id_sort_key

    candidates = store.read_ready()
    if candidates is None:
        return [task for task in by_id(store.tasks) if store.graph.is_ready(task.id)]
    return [store.graph.tasks[task_id] for task_id in sorted(set(candidates), key=id_sort_key) if store.graph.is_ready(task_id)]


def cmd_search(args: argparse.Namespace) -> int:
    from board.graph import by_id

    store = open_store(args)
    _print_tasks(store, args, _selected(store, args, by_id(store.tasks)), f"no task holds {' '.join(args.words)!r}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from board.graph import removed_by_claude_code

    # The text reads the task, its blockers and its sub-tasks alone; JSON adds what is derived
    # from the whole board (its wave, its dependents).
    store = open_store(args, whole=args.json)
    task = store.get(args.id)
    if args.json:
        print_json(shown_task(store, task))
        return 0
    store.read_around(task.id)
    task = store.get(args.id)
    tokens = task_tokens(store, task.id)
    graph = store.graph
    lines = [
        f"#{task.id} {task.subject}",
        f"  status     {task.status}" + (" (ready)" if graph.is_ready(task.id) else ""),
        f"  priority   {task.priority}",
        f"  owner      {task.owner or '-'}",
        f"  progress   {graph.progress(task)}%" + (" (from its sub-tasks)" if graph.children(task.id) else ""),
        f"  tool calls {task.tool_calls.total} ({task.tool_calls.failed} failed)",
        f"  tokens     {tokens_text(tokens)}" + (f" ({tokens['input']} in, {tokens['output']} out, {tokens['cacheWrite']} cache write, {tokens['cacheRead']} cache read)" if tokens["total"] else ""),
        f"  budget     {_budget_text(store, task, tokens)}",
        f"  blocked by {', '.join('#' + b for b in task.blocked_by) or '-'}"
        + (f"  (open: {blocker_list(graph, graph.open_blockers(task))})" if graph.open_blockers(task) else ""),
        f"  blocks     {', '.join('#' + b for b in task.blocks) or '-'}",
        f"  parent     {('#' + task.parent) if task.parent else '-'}",
        f"  files      {', '.join(task.files) or '-'}",
        f"  labels     {', '.join(task.labels) or '-'}",
        f"  version    {task.version}",
    ]
    if removed_by_claude_code(task):
        lines.insert(2, f"  removed    by Claude Code from its task list; 'board task restore {task.id}' brings it back")
    if task.lease:
        lines.append(f"  lease      {task.lease.owner} token {task.lease.token} until {task.lease.expires_at.isoformat()}")
    if task.error:
        lines.append(f"  error      {task.error}")
    if task.question:
        lines.append(f"  question   {task.question}" + (f" (asked {task.asked_at.isoformat()})" if task.asked_at else ""))
    if task.answer:
        lines.append(f"  answer     {task.answer}")
    if task.description:
        lines += ["", task.description]
    print("\n".join(lines))
    return 0


def _budget_text(store: Store, task: Task, tokens: dict[str, Any]) -> str:
    """``$2.00 / 500,000 tokens (43 % spent)``, ``... (the board's)``, or ``-``."""
    from board.present import board_settings

    settings = board_settings(store)
    default = settings.budget.for_tasks() if settings is not None else None
    if task.budget is None and default is None:
        return "-"  # nothing to weigh the spend against (nor to load the readers of token logs for)
    from board.budgets import Spend, budget_summary

    summary = budget_summary(task, Spend(tokens["total"], tokens["cost"]), default)
    return "-" if summary is None else f"{summary[0]} ({summary[1]:.0%} spent)"


def cmd_check(args: argparse.Namespace) -> int:
    store = open_store(args)
    if args.fix:
        for line in store.repair_symmetry():
            print(f"fixed: {line}")
        removed = store.remove_stray_temp_files()
        for path in removed[:10]:
            print(f"fixed: removed {path.name}, a temp file left by a writer killed mid-write")
        if len(removed) > 10:
            print(f"fixed: removed {len(removed) - 10:,} more temp files left by writers killed mid-write")
    from board.config import settings_problem

    problems = store.check()
    broken_settings = settings_problem(store.local_dir)
    if broken_settings is not None:
        problems.append(broken_settings)
    if store.layout.workspace.is_dir():
        from board.claude.hooks.install import broken_hook_problems

        problems = [*problems, *broken_hook_problems(store.layout.workspace)]
        if (store.layout.workspace / ".board-worktrees").is_dir():
            from board.worktrees.on_board import worktree_problems

            problems = [*problems, *worktree_problems(store)]
    if args.json:
        print_json([p.as_dict() for p in problems])
    else:
        for problem in problems:
            print(f"{problem.where}: {problem.message}")
        if not problems:
            print(f"ok: {len(store.tasks)} tasks, no problems")
    return 1 if problems else 0
