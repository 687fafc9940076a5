"""Errors a person can act on. Each carries one line that says what was wrong."""

from __future__ import annotations

import errno


class BoardError(Exception):
    """Base class: bad input or a refused operation. The CLI prints it and exits 2."""

    exit_code = 2


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
