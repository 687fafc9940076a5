"""Which kanban column each task sits in, kept sorted and updated per changed task.

Textual-free so it can be tested (and timed) on its own. Order within a column is wave, then
priority, then id; the wave comes from the graph and only changes when edges change.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable
from enum import IntEnum

from board.graph import TaskGraph, is_hidden
from board.model import PRIORITY_RANK, Task
from board.status import Status


class Lane(IntEnum):
    WAITING_DEPS = 0
    READY = 1
    IN_PROGRESS = 2
    ATTENTION = 3
    DONE = 4


LANE_TITLES = {
    Lane.WAITING_DEPS: "Waiting on deps",
    Lane.READY: "Ready",
    Lane.IN_PROGRESS: "In progress",
    Lane.ATTENTION: "Blocked / Failed",
    Lane.DONE: "Done",
}

_LANE_OF_STATUS = {
    Status.IN_PROGRESS: Lane.IN_PROGRESS,
    Status.WAITING: Lane.IN_PROGRESS,
    Status.PAUSED: Lane.IN_PROGRESS,
    Status.BLOCKED: Lane.ATTENTION,
    Status.FAILED: Lane.ATTENTION,
    Status.COMPLETED: Lane.DONE,
    Status.CANCELLED: Lane.DONE,
}

#: A placed task: its lane, then its order there (wave, priority, then the id: numeric ids by
#: number, first, then the others by name). One flat tuple per task, as a 100,000-task board
#: keeps one for each: nested ones (lane and key, key and id key) cost twice the memory.
SortKey = tuple[Lane, int, int, int, int | str]
TaskFilter = Callable[[Task], bool]


def display_state(task: Task, graph: TaskGraph) -> str:
    if task.status == Status.PENDING:
        return "ready" if graph.is_ready(task.id) else "waiting-deps"
    return str(task.status)


def lane_of(task: Task, graph: TaskGraph) -> Lane:
    if task.status == Status.PENDING:
        return Lane.READY if graph.is_ready(task.id) else Lane.WAITING_DEPS
    return _LANE_OF_STATUS[task.status]


class Lanes:
    """Sorted ids per lane, plus counts per display state over the whole board (unfiltered)."""

    def __init__(self) -> None:
        self.ids: dict[Lane, list[str]] = {lane: [] for lane in Lane}
        self._keys: dict[Lane, list[SortKey]] = {lane: [] for lane in Lane}
        self._placed: dict[str, SortKey] = {}
        self._state: dict[str, str] = {}
        self.counts: Counter[str] = Counter()
        self.waves: dict[str, int] = {}
        self.show_cancelled = False
        self.task_filter: TaskFilter | None = None

    def __len__(self) -> int:
        return sum(len(ids) for ids in self.ids.values())

    @property
    def states(self) -> dict[str, str]:
        """Display state of every task on the board (filtered out or not)."""
        return self._state

    def placed_ids(self) -> set[str]:
        """Tasks shown in some lane (after the filter and the cancelled toggle)."""
        return set(self._placed)

    def lane_index(self, task_id: str) -> tuple[Lane, int] | None:
        key = self._placed.get(task_id)
        if key is None:
            return None
        lane = key[0]
        return lane, bisect_left(self._keys[lane], key)

    def _key(self, lane: Lane, task: Task) -> SortKey:
        task_id = task.id
        if task_id.isdigit():
            return (lane, self.waves.get(task_id, 0), PRIORITY_RANK[task.priority], 0, int(task_id))
        return (lane, self.waves.get(task_id, 0), PRIORITY_RANK[task.priority], 1, task_id)

    def _visible(self, task: Task) -> bool:
        if task.status == Status.CANCELLED and not self.show_cancelled:
            return False
        return self.task_filter is None or self.task_filter(task)

    def rebuild(self, graph: TaskGraph) -> None:
        """Place every task from scratch (first load, new waves, a new filter)."""
        self.waves = graph.waves()
        self.counts = Counter()
        self._state.clear()
        placed: dict[Lane, list[tuple[SortKey, str]]] = {lane: [] for lane in Lane}
        self._placed = {}
        for task in graph.tasks.values():
            if is_hidden(task):
                continue  # internal to Claude Code: not shown, not counted
            state = display_state(task, graph)
            self._state[task.id] = state
            self.counts[state] += 1
            if self._visible(task):
                lane = lane_of(task, graph)
                key = self._key(lane, task)
                placed[lane].append((key, task.id))
                self._placed[task.id] = key
        for lane, entries in placed.items():
            entries.sort()
            self._keys[lane] = [key for key, _ in entries]
            self.ids[lane] = [task_id for _, task_id in entries]

    def update(self, graph: TaskGraph, task_ids: Iterable[str]) -> dict[Lane, int]:
        """Re-place just these tasks; returns, per lane that changed, the first index that moved."""
        touched: dict[Lane, int] = {}
        for task_id in task_ids:
            old_state = self._state.pop(task_id, None)
            if old_state is not None:
                self.counts[old_state] -= 1
            old = self._placed.pop(task_id, None)
            task = graph.tasks.get(task_id)
            new: SortKey | None = None
            if task is not None and not is_hidden(task):
                state = display_state(task, graph)
                self._state[task_id] = state
                self.counts[state] += 1
                if self._visible(task):
                    new = self._key(lane_of(task, graph), task)
            if old == new:
                if new is not None:
                    self._placed[task_id] = new
                continue
            if old is not None:
                lane, key = old[0], old
                index = bisect_left(self._keys[lane], key)
                del self._keys[lane][index]
                del self.ids[lane][index]
                touched[lane] = min(index, touched.get(lane, index))
            if new is not None:
                lane, key = new[0], new
                index = bisect_left(self._keys[lane], key)
                self._keys[lane].insert(index, key)
                self.ids[lane].insert(index, task_id)
                self._placed[task_id] = new
                touched[lane] = min(index, touched.get(lane, index))
        return touched
