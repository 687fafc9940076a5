"""What the dashboard shows, Textual-free: the board as last read, arranged in lanes, and the rule
that decides which reads count.

Reads come from several threads (the board reader, the dashboard's own writes), each numbered
when it was made (``BoardChanged.observed``). What the disk says is shown, whatever its version
(an outside writer may lower or drop it); only a read made before one already shown is dropped,
as it is out of date.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from board.graph import TaskGraph
from board.model import Task
from board.status import Status
from board.ui.lanes import Lane, Lanes


@dataclass
class Applied:
    """What one batch of reads changed on the board, for the widgets to follow."""

    #: Tasks whose document changed (or that appeared or went).
    changed: set[str] = field(default_factory=set)
    #: Tasks whose card may read differently: the changed ones, their dependents and parents.
    affected: set[str] = field(default_factory=set)
    #: A dependency changed, or a task came or went: the lanes were rebuilt.
    edges_changed: bool = False
    #: Per lane whose cards changed, the first index that moved (None: every lane was rebuilt).
    moved_from: dict[Lane, int] | None = field(default_factory=dict)
    #: Tasks that started waiting for a person, or changed their question.
    asking: list[Task] = field(default_factory=list)


class DisplayedBoard:
    """The tasks on screen (``graph``) and their lanes, changed only through ``apply``."""

    def __init__(self, graph: TaskGraph, lanes: Lanes) -> None:
        self.graph = graph
        self.lanes = lanes
        #: For each task, the number of the last read that showed it.
        self._observed: dict[str, int] = {}
        #: Tasks were put without arranging the lanes (``put_unarranged``).
        self.lanes_stale = False

    def put_unarranged(self, tasks: Iterable[Task], observed: int) -> None:
        """During the first read of a big board: take the tasks, arrange the lanes later."""
        for task in tasks:
            self._observed[task.id] = observed
            self.graph.put(task)
        self.lanes_stale = True

    def arrange(self) -> None:
        self.lanes.rebuild(self.graph)
        self.lanes_stale = False

    def apply(self, tasks: Iterable[Task], removed: Iterable[str] = (), *, observed: int | None = None) -> Applied:
        """Take what was read (``observed``: when; None for a read that cannot be stale)."""
        applied = Applied()
        parents: set[str] = set()
        for task in tasks:
            if self._stale(task.id, observed):
                continue
            current = self.graph.tasks.get(task.id)
            if current is not None and task == current:
                if task is not current:
                    # The same task read again (the whole board, after a reconnect): hold the
                    # reader's copy, so the one shown stops keeping a second copy of the board alive.
                    self.graph.tasks[task.id] = task
                continue
            if current is None or current.blocked_by != task.blocked_by:
                applied.edges_changed = True
            if current is not None and current.parent:
                parents.add(current.parent)
            if task.status == Status.WAITING and (current is None or current.status != Status.WAITING or current.question != task.question):
                applied.asking.append(task)
            self.graph.put(task)
            applied.changed.add(task.id)
        for task_id in removed:
            if self._stale(task_id, observed):
                continue
            current = self.graph.tasks.get(task_id)
            if current is None:
                continue
            if current.parent:
                parents.add(current.parent)
            self.graph.remove(task_id)
            applied.changed.add(task_id)
            applied.edges_changed = True
        if not applied.changed:
            return applied
        affected = set(applied.changed) | {p for p in parents if p in self.graph.tasks}
        for task_id in applied.changed:
            affected |= self.graph.dependents(task_id)
            now_shown = self.graph.tasks.get(task_id)
            if now_shown is not None and now_shown.parent:
                affected.add(now_shown.parent)
        applied.affected = affected
        if applied.edges_changed or self.lanes_stale:
            self.lanes.rebuild(self.graph)
            self.lanes_stale = False  # arranged: the end of a first read need not arrange again
            applied.moved_from = None
        else:
            applied.moved_from = self.lanes.update(self.graph, affected)
        return applied

    def _stale(self, task_id: str, observed: int | None) -> bool:
        """Was a later read of this task already shown? (Else this read is the latest.)"""
        if observed is None:
            return False
        if self._observed.get(task_id, 0) > observed:
            return True
        self._observed[task_id] = observed
        return False
