"""Soft file reservations (seed 004's soft locks): one writer, or any number of readers, per file.

A reservation is advice between agents, not an OS lock: nothing stops a write, but ``reserve``
refuses a conflicting reservation naming who holds the file and for which task, and an agent
that touches a file reserved by another agent raises ``conflict.reservation``.

The holders of each reserved path are kept by the store (``store.reservation_book``,
``board.store.side.ReservationBook``; in a board's files, one file
``reservations/<sha256(path)[:16]>.json`` per path). Holders whose time ran out, or whose task
is finished or gone, no longer count and are dropped at the next write.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from board.errors import BoardError, Command, Option
from board.names import validate_id
from board.status import FINISHED
from board.text import shortened
from board.workspace_files import workspace_file

# What a holding is lives with the books that keep holdings; the command line reads MODES
# while building its parser.
from board.store.side import MODES, Reservation

if TYPE_CHECKING:
    from board.model import Task
    from board.store import Store
    from board.store.side import ReservationBook

class ReservationConflict(BoardError):
    """Another agent holds the file in a mode that excludes the one asked for."""


def workspace_path(workspace: Path, raw: str) -> str:
    """A path as reservations and alerts compare it (``workspace_file``), or a one-line refusal."""
    normal = workspace_file(workspace, raw)
    if normal is not None:
        return normal
    if raw and "\0" not in raw:
        root = os.path.realpath(workspace)
        leads_to = os.path.realpath(os.path.join(root, raw))
        if leads_to != os.path.normpath(os.path.join(root, raw)):
            raise BoardError(f"'{shortened(raw)}' leads to {shortened(leads_to)}, which is not inside the workspace {workspace}; name a file inside it")
    raise BoardError(f"'{shortened(str(raw))}' is not a file inside the workspace {workspace}; give a path relative to it")


def active_reservations(book: ReservationBook, now: datetime, tasks: Mapping[str, Task] | None = None) -> list[Reservation]:
    """Unexpired holdings on every path (and, given the tasks, only those of unfinished tasks)."""
    found = [h for h in book.all_holders() if h.live(now, tasks)]
    return sorted(found, key=lambda r: (r.path, r.owner, r.task))


def reserve(
    store: Store,
    task_id: str,
    paths: Iterable[str],
    *,
    agent: str | None = None,
    mode: str = "write",
    ttl_seconds: float = 300.0,
    now: datetime | None = None,
) -> list[Reservation]:
    """Reserve ``paths`` for ``task_id``; all or nothing, refused on the first conflict.

    Renewing (same agent, same task) replaces the holding, so it can also change the mode.
    """
    if mode not in MODES:
        raise BoardError(f"unknown reservation mode {mode!r}; use read or write")
    if not 1 <= ttl_seconds <= 86400:
        raise BoardError("a reservation lasts between 1 and 86400 seconds")
    workspace = store.layout.workspace
    wanted = list(dict.fromkeys(workspace_path(workspace, p) for p in paths))
    if not wanted:
        raise BoardError("name at least one file to reserve")
    with store.transaction():
        task = _current_task(store, task_id)
        if task.status in FINISHED:
            raise BoardError(f"task #{task_id} is {task.status}; only unfinished tasks reserve files")
        holder = _agent_for(task, agent)
        now = now or store.clock()
        expires = now + timedelta(seconds=ttl_seconds)
        book = store.reservation_book
        plans: list[tuple[str, list[Reservation]]] = []
        for path in wanted:
            holders = [h for h in book.holders(path) if h.live(now, store.tasks)]
            blocking = [h for h in holders if h.excludes(holder, mode)]
            if blocking:
                first = blocking[0]
                raise ReservationConflict(
                    f"{first.describe()}; wait for it or ask {first.owner} to run ", Command("unreserve", (("id", first.task), ("path", path))),
                )
            kept = [h for h in holders if (h.owner, h.task) != (holder, task_id)]
            plans.append((path, [*kept, Reservation(path, holder, task_id, mode, expires, now)]))
        for path, holders in plans:
            book.replace(path, holders)
    return [holders[-1] for _, holders in plans]


def unreserve(
    store: Store,
    task_id: str,
    paths: Iterable[str] = (),
    *,
    agent: str | None = None,
    now: datetime | None = None,
) -> list[str]:
    """Drop the task's holdings on ``paths`` (all of them when none are named); returns the paths."""
    workspace = store.layout.workspace
    validate_id(task_id)
    named = list(dict.fromkeys(workspace_path(workspace, p) for p in paths))
    with store.transaction():
        now = now or store.clock()
        book = store.reservation_book
        held: dict[str, list[Reservation]] = {}
        if named:
            held = {path: book.holders(path) for path in named}
        else:
            for holder in book.all_holders():
                held.setdefault(holder.path, []).append(holder)
            held = {path: holders for path, holders in held.items() if any(h.task == task_id for h in holders)}
        plans: list[tuple[str, list[Reservation]]] = []
        for path, holders in held.items():
            mine = [h for h in holders if h.task == task_id and (agent is None or h.owner == agent) and h.path == path]
            if not mine and named:
                raise BoardError(f"task #{task_id} holds no reservation on {path}")
            plans.append((path, [h for h in holders if h not in mine and h.live(now, store.tasks)]))
        for path, holders in plans:
            book.replace(path, holders)
    return [path for path, _ in plans]


def _current_task(store: Store, task_id: str) -> Task:
    """The task as stored now, even if it was written behind the store's back (called under the lock)."""
    store.sync()
    store._reread_ids([validate_id(task_id)])
    return store.get(task_id)


def _agent_for(task: Task, agent: str | None) -> str:
    name = agent or task.owner
    if not name:
        raise BoardError(f"task #{task.id} has no owner; pass ", Option("agent", metavar="NAME"), " to say who reserves")
    try:
        return validate_id(name)
    except ValueError:
        raise BoardError(f"'{shortened(str(name))}' is not a valid agent name (letters, digits, '_' or '-', at most 64)") from None
