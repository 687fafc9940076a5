"""``board import`` and ``board export``: a board moved between files and a PostgreSQL database."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from board.cli.output import print_json
from board.cli.parser import add_command
from board.errors import BoardError

#: Position of these commands in --help.
ORDER = 15


def register(commands: argparse._SubParsersAction) -> None:
    importing = add_command(
        commands, "import",
        "copy a board in files (a workspace's .tasks/, or a Claude Code task list) into the database --db names: "
        "tasks, dependencies, history, tool calls, deleted tasks, agents, reservations, checkpoints and alerts, in one transaction",
    )
    importing.add_argument("directory", metavar="DIR", help="the workspace holding .tasks/, or a Claude Code task list directory")
    importing.add_argument(
        "--replace", action="store_true",
        help="replace the board the database already holds, in the same transaction (default: refuse when it holds one)",
    )
    importing.set_defaults(handler=cmd_import)

    exporting = add_command(
        commands, "export",
        "write the board in the database --db names into DIR/.tasks/, as the file store writes it: tasks, history, "
        "tool calls, deleted tasks, agents, reservations, checkpoints and alerts",
    )
    exporting.add_argument("directory", metavar="DIR", help="the workspace to write .tasks/ in (made if missing)")
    exporting.add_argument(
        "--replace", action="store_true",
        help="replace the board DIR already holds (tasks, history, tool calls, deleted tasks, agents, reservations, "
        "checkpoints, alerts), keeping its settings, locks and logs (default: refuse when DIR holds a board)",
    )
    exporting.set_defaults(handler=cmd_export)


def database(args: argparse.Namespace) -> str:
    """The database the command works on: --db, $BOARD_DB, or the workspace's [store] url."""
    from board.store.base import database_url

    url = database_url(Path(args.workspace))
    if url is None:
        raise BoardError(f"board {args.command} needs a database: pass --db URL or set BOARD_DB")
    return url


def cmd_import(args: argparse.Namespace) -> int:
    from board.store.postgres.transfer import import_board

    report = import_board(database(args), Path(args.directory), replace=args.replace)
    _warn(report["warnings"])
    if args.json:
        print_json(report)
        return 0
    replaced = f" (replacing {_counts(report['replaced'])})" if report["replaced"] else ""
    print(f"imported {_counts(report['imported'])} from {report['source']} into {report['database']}{replaced}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from board.store.postgres.transfer import export_board

    report = export_board(database(args), Path(args.directory), replace=args.replace)
    _warn(report["warnings"])
    if args.json:
        print_json(report)
        return 0
    verb = "replaced the board in" if report["replaced"] else "exported"
    print(f"{verb} {report['board']}: {_counts(report['exported'])} from {report['database']}")
    return 0


def _counts(counts: dict[str, Any]) -> str:
    from board.store.postgres.transfer import counts_text

    return counts_text(counts, last=" and ")


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        sys.stderr.write(f"board: warning: {warning}\n")
