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
#: number, first, then the others by name). On a board whose ids are all numbers (most boards),
#: one integer packs all of it (about 36 bytes a task); otherwise one flat tuple per task (about
#: 108 bytes with its id's number), as nested ones (lane and key, key and id key) would cost
#: twice that.
SortKey = int | tuple[Lane, int, int, int, int | str]
_LANES = list(Lane)
_LANE_NUMBER = {lane: number for number, lane in enumerate(_LANES)}
#: The packed key, high bits to low: lane, wave, priority rank, then the id's number.
_ID_BITS, _RANK_BITS, _WAVE_BITS = 64, 3, 24
_LANE_SHIFT = _ID_BITS + _RANK_BITS + _WAVE_BITS


class _Unpackable(Exception):
    """A task whose place does not fit one integer (an id that is not a number, a huge wave)."""


TaskFilter = Callable[[Task], bool]


def _lane_of_key(key: SortKey) -> Lane:
    return _LANES[key >> _LANE_SHIFT] if isinstance(key, int) else key[0]


def display_state(task: Task, graph: TaskGraph) -> str:
    if task.status == Status.PENDING:
        return "ready" if graph.is_ready(task.id) else "waiting-deps"
    # The member's own value, one string shared by every task: ``str(task.status)`` makes a
    # new one each time, and the lanes keep a state per task (4 MB on a 100,000-task board).
    return task.status.value


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
        #: Keys are packed integers (every id a number), else tuples.
        self._packed = True
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
        lane = _lane_of_key(key)
        return lane, bisect_left(self._keys[lane], key)

    def _key(self, lane: Lane, task: Task) -> SortKey:
        task_id, wave, rank = task.id, self.waves.get(task.id, 0), PRIORITY_RANK[task.priority]
        if self._packed:
            if not (task_id.isdigit() and len(task_id) <= 18 and 0 <= wave < 1 << _WAVE_BITS and 0 <= rank < 1 << _RANK_BITS):
                raise _Unpackable(task_id)
            return (((_LANE_NUMBER[lane] << _WAVE_BITS | wave) << _RANK_BITS | rank) << _ID_BITS) | int(task_id)
        if task_id.isdigit():
            return (lane, wave, rank, 0, int(task_id))
        return (lane, wave, rank, 1, task_id)

    def _visible(self, task: Task) -> bool:
        if task.status == Status.CANCELLED and not self.show_cancelled:
            return False
        return self.task_filter is None or self.task_filter(task)

    def rebuild(self, graph: TaskGraph) -> None:
        """Place every task from scratch (first load, new waves, a new filter)."""
        self._packed = True
        try:
            self._place_all(graph)
        except _Unpackable:
            self._packed = False
            self._place_all(graph)

    def _place_all(self, graph: TaskGraph) -> None:
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
        task_ids = list(task_ids)
        try:
            return self._update(graph, task_ids)
        except _Unpackable:
            # A task whose place packs into no integer: every key becomes a tuple, placed anew.
            self.rebuild(graph)
            return {lane: 0 for lane in Lane}

    def _update(self, graph: TaskGraph, task_ids: list[str]) -> dict[Lane, int]:
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
                lane, key = _lane_of_key(old), old
                index = bisect_left(self._keys[lane], key)
                del self._keys[lane][index]
                del self.ids[lane][index]
                touched[lane] = min(index, touched.get(lane, index))
            if new is not None:
                lane, key = _lane_of_key(new), new
                index = bisect_left(self._keys[lane], key)
                self._keys[lane].insert(index, key)
                self.ids[lane].insert(index, task_id)
                self._placed[task_id] = new
                touched[lane] = min(index, touched.get(lane, index))
        return touched
