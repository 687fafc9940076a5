"""``board plan import`` and ``board plan export``: a markdown plan, or another tool's board
(Backlog.md, beads, Task Master), made into tasks; and the board written out as a Backlog.md
folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from board.cli.parser import add_command

#: Position of these commands in --help.
ORDER = 14
#: The boards ``--from`` reads.
FOREIGN = ("backlog", "beads", "taskmaster")


def register(commands: argparse._SubParsersAction) -> None:
    plan = add_command(commands, "plan", "make tasks from a markdown plan or another tool's board, and write the board out for Backlog.md")
    plan_commands = plan.add_subparsers(dest="plan_command", metavar="ACTION", required=True, parser_class=type(plan))
    plan_commands.common = commands.common  # type: ignore[attr-defined]

    importing = add_command(
        plan_commands, "import",
        "make tasks from a markdown plan (headings or list items are tasks, nested items sub-tasks; see 'Plans' in the README), "
        "or with --from, from a Backlog.md folder, a beads issues.jsonl or a Task Master tasks.json; importing again updates the tasks it made",
    )
    importing.add_argument("path", metavar="PATH", help="the plan's markdown file; with --from, the other tool's project, folder or file")
    importing.add_argument("--from", dest="kind", choices=FOREIGN, help="read another tool's board instead of a markdown plan")
    importing.add_argument("--tag", help="Task Master: the tag to import (default: master, or the file's only tag)")
    importing.add_argument("--dry-run", action="store_true", help="show what it would create, update and leave, the waves and the critical path; change nothing")
    importing.add_argument("--prune", action="store_true", help="cancel the tasks it made that the plan no longer has (without it they are only reported)")
    importing.set_defaults(handler=cmd_import)

    exporting = add_command(plan_commands, "export", "write the board's tasks as another tool's board, in a new folder")
    exporting.add_argument("--to", dest="kind", choices=["backlog"], required=True, help="the tool: backlog (Backlog.md)")
    exporting.add_argument("directory", metavar="DIR", help="the project folder to write backlog/ in (made if missing; refused if it holds Backlog.md tasks)")
    exporting.set_defaults(handler=cmd_export)


def read_plan(args: argparse.Namespace) -> object:
    from board.plans import backlog, beads, taskmaster
    from board.plans.markdown import read_markdown_file
    from board.plans.plan import PlanError

    path = Path(args.path)
    if args.tag is not None and args.kind != "taskmaster":
        raise PlanError("--tag is Task Master's: pass it with --from taskmaster")
    if args.kind is None:
        return read_markdown_file(path, Path(args.workspace))
    if not path.exists():
        raise PlanError(f"{path}: no such file or folder")
    if args.kind == "backlog":
        return backlog.read_backlog(path)
    if args.kind == "beads":
        return beads.read_beads(path)
    return taskmaster.read_taskmaster(path, args.tag)


def _no_board_yet(args: argparse.Namespace) -> bool:
    """No board in the workspace's files, and none named in a database."""
    import os
    from pathlib import Path

    from board.store.layout import detect_layout

    if getattr(args, "db", None) or os.environ.get("BOARD_DB") or getattr(args, "claude", None):
        return False
    return not detect_layout(Path(args.workspace).expanduser().resolve()).exists()


def cmd_import(args: argparse.Namespace) -> int:
    from board.cli.output import print_json
    from board.cli.opening import open_store
    from board.identity import acting_user
    from board.plans.importing import import_plan
    from board.plans.plan import Plan

    plan = read_plan(args)
    assert isinstance(plan, Plan)
    # The plan is read and checked first, so a refused one leaves no board made either.
    if args.dry_run and _no_board_yet(args):
        # A dry run before the first import: what it would make on the empty board it makes.
        import tempfile

        from board.store import Store

        with tempfile.TemporaryDirectory(prefix="board-plan-") as empty:
            report = import_plan(Store.open(empty, create=True), plan, actor=acting_user(), dry_run=True, prune=args.prune)
    else:
        store = open_store(args, create=not args.dry_run)
        report = import_plan(store, plan, actor=acting_user(), dry_run=args.dry_run, prune=args.prune)
    if args.json:
        print_json(report.as_json())
    else:
        print(report.text())
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from board.cli.output import print_json
    from board.cli.opening import open_store
    from board.plans.exporting import export_backlog

    store = open_store(args)
    report = export_backlog(store, Path(args.directory))
    if args.json:
        print_json(report)
    else:
        print(f"exported {report['exported']} tasks to {report['folder']} ('backlog task list' there shows them)")
    return 0
