"""``board`` / ``board ui [DIR]``: open the live dashboard on a workspace."""

from __future__ import annotations

import argparse
from pathlib import Path

from board.cli.parser import add_command

#: Position of these commands in --help.
ORDER = 0


def register(commands: argparse._SubParsersAction) -> None:
    ui = add_command(commands, "ui", "open the live dashboard")
    ui.add_argument("dir", nargs="?", help="workspace to open (default: --workspace or the current directory)")
    ui.add_argument("--readonly", action="store_true", help="watch only: disable every action")
    ui.set_defaults(handler=open_dashboard, no_json="it opens the dashboard; 'board task list --json' prints the board")


def open_dashboard(args: argparse.Namespace) -> int:
    from board.ui import run_dashboard

    workspace = Path(getattr(args, "dir", None) or args.workspace)
    return run_dashboard(workspace, readonly=bool(getattr(args, "readonly", False)))
