"""Building the command line's parser: one group of subcommands per module of ``board.cli``."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from types import ModuleType

from board import __version__
import board.cli


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line and exit 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        prog = self.prog
        if message.startswith(("argument COMMAND: invalid choice:", "argument ACTION: invalid choice:")):
            # argparse would list every command: --help does that better.
            message = f"{message.split(': ')[2].split(' (choose')[0]} is not a command"
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
    for info in pkgutil.iter_modules(board.cli.__path__):
        module = importlib.import_module(f"board.cli.{info.name}")
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
