"""Errors a person can act on. Each carries one line that says what was wrong.

A line that tells what to do next may name an option (``Option``) or a command (``Command``):
each front end spells those its own way (``BoardError.spoken``), so the command line says
``--status waiting`` and ``'board unreserve 3 app.py'`` where an MCP client reads
``status="waiting"`` and ``unreserve(id="3", path="app.py")`` (and, for a person's override no
tool makes, where a person makes it). ``str(error)`` is the command line's spelling.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Callable
from board.records import NamedTuple


# Named tuples, not dataclasses: every command imports this module, and ``dataclasses`` (with
# ``inspect``) cost a one-task command a tenth of its start.
class Option(NamedTuple):
    """An option a message names, by the name a tool gives its argument (``add_blocked_by``)."""

    name: str
    #: The value to pass (``waiting``), if the message means one.
    value: str | None = None
    #: What the command line shows for a value to fill in (``NAME``); a tool's argument is named alone.
    metavar: str | None = None
    #: A switch that takes no value (``--requeue`` on the command line, ``requeue=true`` to a tool).
    flag: bool = False
    #: A person's override (``--force``), which the command line and the dashboard offer and no
    #: tool takes: a tool's error says where a person makes it.
    person_only: bool = False


class Command(NamedTuple):
    """A command a message tells someone to run, by its words on the command line (``task
    restore``); a tool's name is those words joined by ``_``. Arguments are (name, value) pairs,
    positional on the command line; a value of None is one to fill in (``TEXT``)."""

    name: str
    arguments: tuple[tuple[str, str | None], ...] = ()
    #: Options given with it (``--list``).
    options: tuple[Option, ...] = ()


#: A part of a message: its text, or an option or a command each front end spells its own way.
Part = str | Option | Command
Spelling = Callable[[Option | Command], str]


def on_the_command_line(part: Option | Command) -> str:
    """How the command line names an option (``--owner NAME``) or a command (``'board answer 3 TEXT'``)."""
    if isinstance(part, Option):
        value = part.value if part.value is not None else part.metavar
        return "--" + part.name.replace("_", "-") + (f" {value}" if value is not None and not part.flag else "")
    words = [value if value is not None else name.upper() for name, value in part.arguments]
    return "'" + " ".join(["board", part.name, *words, *map(on_the_command_line, part.options)]) + "'"


def to_a_tool(part: Option | Command) -> str:
    """How an MCP client reads an option (a tool's argument: ``status="waiting"``, ``owner``,
    ``requeue=true``; where a person overrides, for an override no tool makes) or a command (the
    tool's call: ``answer(id="3", text=...)``)."""
    if isinstance(part, Option):
        if part.person_only:
            return "the dashboard or board's command line, not a tool"
        if part.flag:
            return f"{part.name}=true"
        return part.name if part.value is None else f"{part.name}={json.dumps(part.value, ensure_ascii=False)}"
    given = ", ".join(
        [f"{name}={'...' if value is None else json.dumps(value, ensure_ascii=False)}" for name, value in part.arguments]
        + [to_a_tool(option) if option.value is not None or option.flag else f"{option.name}=..." for option in part.options]
    )
    return f"{part.name.replace(' ', '_')}({given})"


class BoardError(Exception):
    """Base class: bad input or a refused operation. The CLI prints it and exits 2.

    Made of one string, or of parts (``Part``) when the line names an option or a command."""

    exit_code = 2

    def __init__(self, *parts: object) -> None:
        super().__init__(*parts)
        self.parts: tuple[Part, ...] = tuple(p if isinstance(p, str | Option | Command) else str(p) for p in parts)

    def spoken(self, spelling: Spelling) -> str:
        """The line, with its options and commands named as ``spelling`` names them."""
        return "".join(part if isinstance(part, str) else spelling(part) for part in self.parts)

    def __str__(self) -> str:
        return self.spoken(on_the_command_line)


class BoardUnavailable(BoardError):
    """Where the board is kept cannot be reached just now (its database server is down or out of
    reach): nothing was written; trying again later may work. A screen keeps what it shows."""


class InvalidTaskFile(BoardError):
    """A task file that does not parse or validate; it is reported and left untouched."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class TaskNotFound(BoardError):
    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        super().__init__(f"no task with id {task_id!r}")


class IllegalTransition(BoardError):
    pass


class VersionConflict(BoardError):
    """A compare-and-set write whose expected version is no longer current."""


class StaleLease(BoardError):
    """A write carrying a fencing token that is no longer the task's current one."""


class LeaseHeld(BoardError):
    """A change to a task under another holder's live lease, made without its token or --force."""


class NotReady(BoardError):
    """A task started while it still waits: on blockers, or (a parent) on its sub-tasks."""


class GraphError(BoardError):
    """A dependency change that would create a cycle or name a missing task."""


class AgentNameInUse(BoardError):
    """An agent name another live process holds: one process per name, so no task runs twice."""

    exit_code = 3


class CoordinatorRunning(BoardError):
    """Another coordinator holds the board's coordinator lock: one per board, so each lease is
    taken back once. Its own exit status lets ``board run`` tell this from a crash."""

    exit_code = 4


def os_error_line(error: OSError) -> str:
    """One line a person can act on, for a system error met reading or writing a board."""
    where = f" ({error.filename})" if error.filename else ""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"no space left on the device{where}: free some space and try again"
    if error.errno == errno.EROFS:
        return f"the file system is read-only{where}"
    if error.errno in (errno.EACCES, errno.EPERM) and not error.filename:
        return "permission denied"
    if error.strerror and error.filename:
        return f"{error.filename}: {error.strerror[0].lower() + error.strerror[1:]}"
    return str(error)
