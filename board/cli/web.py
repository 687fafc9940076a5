"""``board web [DIR]``: serve the dashboard to web browsers (``board.web``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from board.cli.arguments import number_argument
from board.cli.parser import add_command

#: Position of these commands in --help.
ORDER = 5
DEFAULT_PORT = 8000

port_number = number_argument(int, "a whole number", lambda port: 0 < port < 65536, "a port is a number from 1 to 65535, not {}")


def register(commands: argparse._SubParsersAction) -> None:
    web = add_command(commands, "web", "serve the dashboard to web browsers, each session its own dashboard (behind a token)")
    web.add_argument("dir", nargs="?", help="workspace to serve (default: --workspace or the current directory)")
    web.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 for every network)")
    web.add_argument("--port", type=port_number, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})")
    web.add_argument("--readonly", action="store_true", help="serve a view only: no key changes the board")
    web.add_argument("--public-url", metavar="URL", help="the address browsers reach the server at, when a proxy stands in front of it")
    web.set_defaults(handler=cmd_web, no_json="it serves the dashboard until stopped")


def cmd_web(args: argparse.Namespace) -> int:
    from board.config import load_settings
    from board.store import Store

    workspace = Path(getattr(args, "dir", None) or args.workspace).expanduser().resolve()
    # Refused here in one line (no board, a database out of reach), not in every session.
    store = Store.open(workspace, whole=False)
    settings = load_settings(store.local_dir)
    store.close()
    from board.web.server import new_token, serve

    argv = [sys.executable, "-m", "board", "ui", str(workspace)] + (["--readonly"] if args.readonly else [])
    title = f"board · {workspace.name or workspace}" + (" · read-only" if args.readonly else "")
    return serve(argv, title=title, host=args.host, port=args.port, token=settings.web.token or new_token(), public_url=args.public_url)
