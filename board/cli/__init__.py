"""The ``board`` command line.

Each module in this package that defines ``register(commands)`` adds one group of subcommands;
they are found by name, so adding a command group is adding a module.
Handlers take the parsed arguments and return an exit status; a ``BoardError`` anywhere
becomes one line on stderr and exit 2, with nothing changed on disk.
"""

from __future__ import annotations

import sys

# Only for annotations, which are never evaluated: ``board hook`` starts faster without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence

#: Built by ``board.cli.parser``, imported only when a command needs it.
_PARSER_NAMES = frozenset({"add_command", "build_parser", "common_options", "command_modules", "parse_arguments"})


def __getattr__(name: str) -> object:
    if name in _PARSER_NAMES:
        from board.cli import parser

        return getattr(parser, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Options of the top level that take a value (the command is the first word that is not one).
VALUED_OPTIONS = frozenset({"-w", "--workspace", "--claude", "--db"})
#: The commands agents and scripts run most, each about one task: brief, and bounded in what
#: they make, they run without the cyclic garbage collector, whose passes over what their imports
#: made were 1.5-2.5 ms of each (``board hook`` too). Every other command collects as usual.
BRIEF_COMMANDS = frozenset({("hook",), ("claim",), ("heartbeat",), ("release",), ("toolcall",), ("task", "show"), ("task", "update")})
#: The commands that open the dashboard (``board`` alone is ``board ui``) start without it too:
#: the dashboard collects once its board is on screen, and from then on as usual
#: (``board.ui.run_dashboard``).
DASHBOARD_COMMANDS = frozenset({(), ("ui",)})


def main(argv: Sequence[str] | None = None) -> int:
    _collect_nothing_at_exit()
    argv = list(sys.argv[1:] if argv is None else argv)
    import gc

    collecting = gc.isenabled()
    words = command_words(argv)
    if words is not None and not {"-h", "--help"} & set(argv):
        if {tuple(words[:1]), tuple(words[:2])} & BRIEF_COMMANDS or tuple(words[:1]) in DASHBOARD_COMMANDS:
            gc.disable()
    try:
        return _main(argv)
    finally:
        if collecting:
            gc.enable()  # as it was, for a caller that goes on (a test, a script)


def command_words(argv: list[str]) -> list[str] | None:
    """The first two words of ``argv`` that are neither options nor their values (``["task",
    "show"]``); None when help or ``--`` comes before the first (only the whole parser can tell)."""
    words: list[str] = []
    value_next = False
    for token in argv:
        if value_next:
            value_next = False
        elif token in ("-h", "--help", "--"):
            return words or None
        elif token.startswith("-"):
            value_next = token in VALUED_OPTIONS
        else:
            words.append(token)
            if len(words) == 2:
                break
    return words


def _main(argv: list[str]) -> int:
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv[1:]):
        # Claude Code runs this on every tool call of every agent: straight to the hook, with
        # nothing imported that it does not use (see board.claude.hooks).
        from board.claude.hooks.handler import main as hook_main

        return hook_main(argv[1:])
    for position, value in enumerate(argv, start=1):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # Bytes that are not UTF-8 arrive as lone surrogates and could never be stored.
            sys.stderr.write(f"board: argument {position} is not valid UTF-8 text; nothing was changed\n")
            return 2
    from board.cli.parser import parse_arguments
    from board.cli.startup import skip_pydantic_plugins

    skip_pydantic_plugins()

    args = parse_arguments(argv)
    if not hasattr(args, "workspace"):
        # From anywhere inside a workspace, as git works from any subdirectory of a repository
        # ('board init' makes a board where it is asked to).
        from pathlib import Path

        from board.store.file_format import find_board

        args.workspace = "." if getattr(args, "command", None) == "init" else str(find_board(Path.cwd()))
    if getattr(args, "db", None):
        # For this process's stores and every process it starts (workers, the coordinator).
        import os

        os.environ["BOARD_DB"] = args.db
    args.json = getattr(args, "json", False)
    if args.json and getattr(args, "no_json", None):
        sys.stderr.write(f"board {args.command}: --json is not available here: {args.no_json}\n")
        return 2
    if args.json and getattr(args, "format", None) not in (None, "json"):
        sys.stderr.write(f"board: --json and --format {args.format} ask for two different outputs; pass one\n")
        return 2
    handler = getattr(args, "handler", None)
    if handler is None:
        from board.cli.dashboard import open_dashboard

        handler = open_dashboard
    # Text from task files never reaches the terminal as control characters. (The dashboard
    # draws on the terminal through its own stream, and escapes task text itself.)
    from board.text import EscapingStream

    streams = sys.stdout, sys.stderr
    sys.stdout = EscapingStream(sys.stdout, json=args.json)  # type: ignore[assignment]
    sys.stderr = EscapingStream(sys.stderr)  # type: ignore[assignment]
    try:
        return _run(handler, args)
    finally:
        sys.stdout, sys.stderr = streams


_EXIT_ARRANGED = False


def _collect_nothing_at_exit() -> None:
    """Have the process end without the garbage collector's last passes over every object it
    made (the pydantic core, the store, the parser): 2.5 to 4 ms of a command about one task,
    a tenth of it, and of every ``board hook``. Frozen last (the exit handlers run last in, first
    out), everything is still freed as the interpreter lets go of its modules; only objects that
    hold each other in a cycle are left to the end of the process, which closes their files, and
    board writes nothing through buffers a collection would have flushed."""
    global _EXIT_ARRANGED
    if not _EXIT_ARRANGED:
        import atexit
        import gc

        atexit.register(gc.freeze)
        _EXIT_ARRANGED = True


def _run(handler: Callable[[argparse.Namespace], int | None], args: argparse.Namespace) -> int:
    from board.errors import BoardError, os_error_line

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
