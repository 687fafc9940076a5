"""Building the command line's parser: one group of subcommands per module of ``board.cli``.

A command builds only its own module's part of the parser (``COMMANDS`` says which module that
is), so a script's ``board toolcall`` does not import and build twenty other commands first.
``--help``, a mistake, or a command not in the map build all of it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from types import ModuleType
from typing import Any

from board import __version__
from board.cli import command_words


#: Which module of ``board.cli`` registers each command (tests/core/test_startup.py checks
#: this against what the modules register).
COMMANDS = {
    "ui": "dashboard", "web": "web",
    "init": "tasks", "task": "tasks", "answer": "tasks", "undo": "tasks", "check": "tasks",
    "import": "transfer", "export": "transfer",
    "claim": "leases", "heartbeat": "leases", "release": "leases", "toolcall": "leases",
    "agents": "agents", "message": "agents",
    "checkpoint": "checkpoints", "resume": "checkpoints",
    "alerts": "alerts", "reserve": "alerts", "reservations": "alerts", "unreserve": "alerts",
    "graph": "graph",
    "worktree": "worktrees", "diff": "worktrees", "merge": "worktrees",
    "plan": "plan",
    "run": "run", "worker": "run", "coordinator": "run", "demo": "run",
    "mcp": "mcp",
    "hooks": "hooks", "hook": "hooks",
}



class _PartialParserMiss(Exception):
    """A parser built for one command refused the line: the whole parser decides instead."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line and exit 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        prog = self.prog
        if message.startswith(("argument COMMAND: invalid choice:", "argument ACTION: invalid choice:")):
            # argparse would list every command: --help does that better.
            message = f"{message.split(': ')[2].split(' (choose')[0]} is not a command"
        sys.stderr.write(f"{prog}: {message} (see '{prog} --help')\n")
        raise SystemExit(2)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse builds a formatter for every option it adds, and each asks ``shutil`` for
        # the terminal's width: importing shutil (with bz2, lzma and zlib) was 1.5-3 ms of
        # every command, which prints no help. The width is worked out as shutil works it out.
        return self.formatter_class(prog=self.prog, width=terminal_width() - 2)  # type: ignore[call-arg]


def terminal_width() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil: ``$COLUMNS`` when it
    is a positive number, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _PartialParser(_Parser):
    """The parsers of a build for one command: their mistakes go to the whole parser, which
    may know better (and words it best)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _PartialParserMiss(message)


def common_options() -> argparse.ArgumentParser:
    """Options every subcommand accepts, wherever they are written on the line."""
    common = _Parser(add_help=False)
    common.add_argument("-w", "--workspace", metavar="DIR", default=argparse.SUPPRESS, help="the workspace holding .tasks/ (default: the nearest one from the current directory upward, as git finds .git)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON instead of text")
    common.add_argument(
        "--db", default=argparse.SUPPRESS, metavar="URL",
        help="the PostgreSQL database holding the board, e.g. postgresql://host/board (default: $BOARD_DB, else [store] url in .tasks/board.toml; else the board is the files in .tasks/)",
    )
    common.add_argument(
        "--claude", default=argparse.SUPPRESS, metavar="LIST",
        help="use the Claude Code task list ~/.claude/tasks/LIST ('latest' for the most recently changed)",
    )
    return common


def command_modules() -> list[ModuleType]:
    """Every module of this package with a ``register`` function; ``ORDER`` sorts --help."""
    import pkgutil  # only the whole parser lists the package

    found = []
    for info in pkgutil.iter_modules([os.path.dirname(__file__)]):
        module = importlib.import_module(f"board.cli.{info.name}")
        if hasattr(module, "register"):
            found.append(module)
    return sorted(found, key=lambda m: (getattr(m, "ORDER", 50), m.__name__))


def command_word(argv: list[str]) -> str | None:
    """The command ``argv`` names, "" when it names none (the dashboard), None when only the
    whole parser can tell (help, ``--``, an option it does not know)."""
    words = command_words(argv)
    if words is None:
        return None
    return (words[0] if words[0] in COMMANDS else None) if words else ""


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """Parse ``argv`` with the part of the parser its command needs (all of it when unsure)."""
    command = command_word(argv)
    if command is not None:
        try:
            return build_parser(only=command).parse_args(argv)
        except _PartialParserMiss:
            pass
    return build_parser().parse_args(argv)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or with ``only``, of that command's module alone ("" for
    none: the dashboard with the top-level options)."""
    parser_class = _Parser if only is None else _PartialParser
    common = common_options()
    parser = parser_class(
        prog="board",
        description="A live task board for teams of AI coding agents. Run with no command to open the dashboard.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"board {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=parser_class)
    commands.common = common  # type: ignore[attr-defined]
    if only is None:
        modules = command_modules()
    else:
        modules = [importlib.import_module(f"board.cli.{COMMANDS[only]}")] if only else []
    for module in modules:
        module.register(commands)
    return parser


def add_command(commands: argparse._SubParsersAction, name: str, help: str, **kwargs: Any) -> argparse.ArgumentParser:
    return commands.add_parser(name, help=help, description=help, parents=[commands.common], **kwargs)  # type: ignore[attr-defined]
