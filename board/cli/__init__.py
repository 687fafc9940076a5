"""The ``board`` command line.

Each module in this package that defines ``register(commands)`` adds one group of subcommands;
they are found by name, so adding a command group is adding a module.
Handlers take the parsed arguments and return an exit status; a ``BoardError`` anywhere
becomes one line on stderr and exit 2, with nothing changed on disk.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from board import __version__
from board.errors import BoardError, os_error_line
from board.text import EscapingStream



class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line and exit 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        prog = self.prog
        if len(message) > 160 and " (choose from " in message:
            # Every command name would make the line unreadable; --help lists them.
            message = message.split(" (choose from ", 1)[0]
        sys.stderr.write(f"{prog}: {message} (see '{prog} --help')\n")
        raise SystemExit(2)


def common_options() -> argparse.ArgumentParser:
    """Options every subcommand accepts, wherever they are written on the line."""
    common = _Parser(add_help=False)
    common.add_argument("-w", "--workspace", metavar="DIR", default=argparse.SUPPRESS, help="the workspace holding .tasks/ (default: the nearest one from the current directory upward, as git finds .git)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON instead of text")
    common.add_argument(
        "--claude", default=argparse.SUPPRESS, metavar="LIST",
        help="use the Claude Code task list ~/.claude/tasks/LIST ('latest' for the most recently changed)",
    )
    return common


def command_modules() -> list[ModuleType]:
    """Every module of this package with a ``register`` function; ``ORDER`` sorts --help."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "register"):
            found.append(module)
    return sorted(found, key=lambda m: (getattr(m, "ORDER", 50), m.__name__))


def build_parser() -> argparse.ArgumentParser:
    common = common_options()
    parser = _Parser(
        prog="board",
        description="A live task board for teams of AI coding agents. Run with no command to open the dashboard.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"board {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.common = common  # type: ignore[attr-defined]
    for module in command_modules():
        module.register(commands)
    return parser


def add_command(commands: argparse._SubParsersAction, name: str, help: str, **kwargs: object) -> argparse.ArgumentParser:
    return commands.add_parser(name, help=help, description=help, parents=[commands.common], **kwargs)  # type: ignore[attr-defined]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for position, value in enumerate(argv, start=1):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # Bytes that are not UTF-8 arrive as lone surrogates and could never be stored.
            sys.stderr.write(f"board: argument {position} is not valid UTF-8 text; nothing was changed\n")
            return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "workspace"):
        # From anywhere inside a workspace, as git works from any subdirectory of a repository
        # ('board init' makes a board where it is asked to).
        from board.store.layout import find_board

        args.workspace = "." if getattr(args, "command", None) == "init" else str(find_board(Path.cwd()))
    args.json = getattr(args, "json", False)
    if args.json and getattr(args, "no_json", None):
        sys.stderr.write(f"board {args.command}: --json is not available here: {args.no_json}\n")
        return 2
    handler = getattr(args, "handler", None)
    if handler is None:
        from board.cli.dashboard import open_dashboard

        handler = open_dashboard
    # Text from task files never reaches the terminal as control characters. (The dashboard
    # draws on the terminal through its own stream, and escapes task text itself.)
    streams = sys.stdout, sys.stderr
    sys.stdout = EscapingStream(sys.stdout, json=args.json)  # type: ignore[assignment]
    sys.stderr = EscapingStream(sys.stderr)  # type: ignore[assignment]
    try:
        return _run(handler, args)
    finally:
        sys.stdout, sys.stderr = streams


def _run(handler: object, args: argparse.Namespace) -> int:
    try:
        if hasattr(args, "claude"):
            from board.store.claude import find_claude_list

            args.workspace = str(find_claude_list(None if args.claude == "latest" else args.claude))
        return int(handler(args) or 0)
    except BoardError as error:
        sys.stderr.write(f"board: {error}\n")
        return error.exit_code
    except OSError as error:  # a full disk, a read-only mount, a file board will not touch
        if isinstance(error, BrokenPipeError):
            return 0
        sys.stderr.write(f"board: {os_error_line(error)}\n")
        return 2
    except KeyboardInterrupt:
        return 130
