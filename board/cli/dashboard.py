"""``board`` / ``board ui [DIR]``: open the live dashboard on a workspace."""

from __future__ import annotations

import argparse
from pathlib import Path

from board.cli.parser import add_command
from board.errors import BoardError

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
    open_database_board(workspace)
    return run_dashboard(workspace, readonly=bool(getattr(args, "readonly", False)))


def open_database_board(workspace: Path) -> None:
    """When the workspace's board is in a database (``--db``, ``$BOARD_DB``, ``[store] url``),
    open it as every other command does, from any folder: a database that cannot be reached or
    holds no board is refused in one line. A board in files needs its ``.tasks/`` already: the
    dashboard says so itself."""
    from board.store.base import database_url

    url = database_url(workspace)
    if url is None:
        return
    if not workspace.expanduser().is_dir():
        raise BoardError(f"{workspace} is not a directory: give the workspace to open the board of the database in")
    from board.store.postgres.store import PostgresStore

    PostgresStore.open(workspace, url=url, whole=False).close()
