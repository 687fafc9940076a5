"""A plan as every reader gives it: tasks with a stable key, a parent, what each waits on and
the fields board keeps, before anything is compared with a board or written."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from board.errors import BoardError
from board.priority import Priority
from board.status import Status


class PlanError(BoardError):
    """A plan that cannot be imported as it is: one line naming where in the source."""


@dataclass
class PlanTask:
    #: Stable across imports of the same source: how a re-import finds the task it made.
    key: str
    subject: str
    description: str = ""
    #: The key of the task this one is a sub-task of.
    parent: str | None = None
    #: The keys of the tasks that must be completed first.
    needs: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    priority: Priority | None = None
    #: What the source says of it: completed or cancelled are kept; anything else is pending.
    status: Status = Status.PENDING
    #: Where it is written (``plan.md:12``, a file of a folder), for error lines and reports.
    where: str = ""
    #: The source's own id (``task-1.1``, ``bd-a1b2``, ``1.2``), when it has one.
    foreign_id: str | None = None
    #: What the source says that board has no field for, kept under the source's name.
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Plan:
    #: Which plan this is, on the board (``metadata.plan.source``): a re-import of the same
    #: source finds its tasks by it and their keys.
    source: str
    #: markdown, backlog, beads or taskmaster.
    kind: str
    tasks: list[PlanTask]
    #: Parts of the source that were read but made no task (a markdown plan's Context), for
    #: the report.
    skipped: list[str] = field(default_factory=list)

    def by_key(self) -> dict[str, PlanTask]:
        return {task.key: task for task in self.tasks}


#: Foreign priority words, and the ones a person writes, to board's four.
PRIORITY_WORDS = {
    "critical": Priority.CRITICAL, "urgent": Priority.CRITICAL, "highest": Priority.CRITICAL, "p0": Priority.CRITICAL, "blocker": Priority.CRITICAL,
    "high": Priority.HIGH, "p1": Priority.HIGH, "important": Priority.HIGH,
    "medium": Priority.MEDIUM, "normal": Priority.MEDIUM, "p2": Priority.MEDIUM, "med": Priority.MEDIUM,
    "low": Priority.LOW, "p3": Priority.LOW, "p4": Priority.LOW, "lowest": Priority.LOW, "minor": Priority.LOW,
}


def priority_of(word: str) -> Priority | None:
    return PRIORITY_WORDS.get(word.strip().lower())


#: The longest subject board keeps (``board.model``): a longer foreign title is cut, and kept whole in metadata.
MAX_SUBJECT = 200


def subject_of(title: str) -> tuple[str, str | None]:
    """A title as a task's subject (one line, at most ``MAX_SUBJECT`` characters), and the whole
    title when it had to be cut."""
    line = " ".join(title.split())
    if len(line) <= MAX_SUBJECT:
        return line, None
    return line[: MAX_SUBJECT - 1] + "…", title


def label_of(text: str) -> str:
    """A foreign label as a board label: one word (spaces become '-'), at most 40 characters."""
    return "-".join(text.split())[:40]


#: The most a file brought in as a plan may hold (a markdown plan, an issues.jsonl, a tasks.json).
MAX_FILE_BYTES = 64 * 1024 * 1024


def read_text_file(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    """A plan file's text: a regular file (a link to one is followed: these are the person's
    own files, not the board's; a device or a pipe is refused), at most ``limit`` bytes, UTF-8;
    one line of refusal otherwise."""
    from board.disk.atomic import SpecialFile, open_regular

    try:
        fd = open_regular(path, follow=True)
    except SpecialFile as error:
        raise PlanError(f"{path}: {error.reason}") from None
    except FileNotFoundError:
        raise PlanError(f"{path}: no such file") from None
    except OSError as error:
        raise PlanError(f"{path}: {error.strerror or error}") from None
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise PlanError(f"{path}: {error.strerror or error}") from None
    if len(data) > limit:
        raise PlanError(f"{path}: over the {limit:,} bytes a plan file may be")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PlanError(f"{path}: not UTF-8 text") from None
