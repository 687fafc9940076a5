"""The task graph: readiness, waves, critical path, cycles. Pure functions of the tasks.

Edges come from ``blockedBy`` only (``blocks`` is its mirror, checked for symmetry). A task
``A`` with ``blockedBy=[B]`` may start once ``B`` is completed; readiness is always derived,
never written into dependents.

``TaskGraph`` is the in-memory index every store and view shares. ``put``/``remove`` keep the
reverse edges and the ready set current in O(degree), so a completion unblocks its dependents
without looking at any other task.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from contextlib import contextmanager
from itertools import chain as chained

from board.records import NamedTuple
from board.model import PRIORITY_RANK, Task
from board.names import id_sort_key
from board.status import Status

Weight = Callable[[Task], float]
#: Whether a blocker id with no task file counts as completed (a Claude Code list deletes
#: tasks once they are done); by default a missing blocker is open.
MissingBlockerRule = Callable[[str], bool]
#: How deep parents may nest before derived progress stops following them (a parent cycle in
#: hand-edited files must not recurse forever).
MAX_PARENT_DEPTH = 16


def never_done(task_id: str) -> bool:
    return False


#: The field (kept beside a task's own, never written to its file) that marks a task whose file
#: Claude Code deleted while board keeps it on the board (``board.store.files.mirror``).
REMOVED_BY = "removedBy"
REMOVED_BY_CLAUDE_CODE = "claude-code"


def removed_by_claude_code(task: Task) -> bool:
    """A task Claude Code deleted from its list that board keeps on the board as it last was:
    shown and counted, never started, claimed or waited on (SPEC §13: Claude Code counts a
    deleted blocker as completed)."""
    extra = task.__pydantic_extra__  # not ``model_extra``: readiness asks this of every task
    return bool(extra) and extra.get(REMOVED_BY) == REMOVED_BY_CLAUDE_CODE


def is_hidden(task: Task) -> bool:
    """A task Claude Code marks internal (``metadata._internal``): never shown or handed out."""
    return task.metadata.get("_internal") is True


def unit_weight(task: Task) -> float:
    """Remaining work of a task: its ``metadata.estimate`` (seconds) when given, else 1."""
    estimate = task.metadata.get("estimate")
    if isinstance(estimate, (int, float)) and not isinstance(estimate, bool) and estimate > 0:
        return float(estimate)
    return 1.0


class GraphProblem(NamedTuple):
    """Something in the files on disk that breaks the dependency rules."""

    kind: str  # "graph.cycle" | "graph.dangling" | "graph.asymmetric"
    tasks: tuple[str, ...]
    message: str


class TaskGraph:
    """Tasks by id plus derived structure, updated incrementally."""

    def __init__(self, tasks: Iterable[Task] = (), *, missing_blocker_done: MissingBlockerRule = never_done, readiness: bool = True) -> None:
        """``readiness=False``: a graph for its structure alone (waves, remaining paths, cycles),
        which never works out which tasks are ready and so names none. A board's import judges
        readiness by the database's own rule, and on 100,000 tasks the graph's took a fifth of
        the time to build it."""
        self.tasks: dict[str, Task] = {}
        self._readiness = readiness
        self.missing_blocker_done = missing_blocker_done
        # Tuples while few, then lists (``Linked``), never sets: most tasks have one to three
        # dependents, and an empty set alone costs 216 bytes (a tuple of one, 48), for every
        # task of every index a process keeps. Each (blocker, dependent) pair is listed once:
        # ``put`` adds only edges it did not have. A tuple is replaced, not changed in place, so
        # writes to one graph must not run at once (its callers hold a lock of their own: the
        # store's write lock, the dashboard session's).
        self._dependents: dict[str, Linked] = {}
        self._children: dict[str, Linked] = {}
        self._ready: set[str] = set()
        self._structure_version = 0
        self._cache: dict[str, tuple[int, object]] = {}
        # Ready ids keyed in claim order, valid for one structure version (claims do not change it).
        self._ready_heap: list[tuple[tuple[int, float, tuple[int, int, str]], str]] = []
        self._ready_heap_version = -1
        #: While a store writes (``recording_ready_moves``): the tasks whose readiness flipped.
        self._moves: set[str] | None = None
        self.put_many(tasks)

    # -- updates ------------------------------------------------------------------------------

    def put(self, task: Task) -> None:
        old = self.tasks.get(task.id)
        self.tasks[task.id] = task
        old_blockers = set(old.blocked_by) if old else set()
        new_blockers = set(task.blocked_by)
        for blocker in old_blockers - new_blockers:
            _unlink(self._dependents, blocker, task.id)
        for blocker in new_blockers - old_blockers:
            _link(self._dependents, blocker, task.id)
        old_parent = old.parent if old else None
        if old_parent != task.parent:
            if old_parent is not None:
                _unlink(self._children, old_parent, task.id)
                self._refresh_ready(old_parent)
            if task.parent is not None:
                _link(self._children, task.parent, task.id)
        if (
            old is None
            or old_blockers != new_blockers
            or _finished(old) != _finished(task)
            or old.metadata.get("estimate") != task.metadata.get("estimate")
            or old.priority != task.priority
        ):
            # Waves, remaining paths and claim order depend only on edges, finished-ness,
            # estimates and priority, so a claim (pending -> in_progress) keeps them valid.
            self._structure_version += 1
        self._refresh_ready(task.id)
        if old is None or (old.status == Status.COMPLETED) != (task.status == Status.COMPLETED) or removed_by_claude_code(old) != removed_by_claude_code(task):
            for dependent in self._dependents.get(task.id, ()):
                self._refresh_ready(dependent)
        if task.parent is not None and (old is None or old_parent != task.parent or _finished(old) != _finished(task)):
            self._refresh_ready(task.parent)

    def put_many(self, tasks: Iterable[Task]) -> None:
        """Add tasks in bulk (loading a board): edges first, readiness once at the end."""
        added: list[str] = []
        for task in tasks:
            if task.id in self.tasks:
                self.put(task)
                continue
            self.tasks[task.id] = task
            added.append(task.id)
            for blocker in task.blocked_by:
                _link(self._dependents, blocker, task.id)
            if task.parent is not None:
                _link(self._children, task.parent, task.id)
        if not added:
            return
        self._structure_version += 1
        if not self._readiness:
            return
        refresh = set(added)
        for task_id in added:
            refresh.update(self._dependents.get(task_id, ()))
            parent = self.tasks[task_id].parent
            if parent is not None:
                refresh.add(parent)
        for task_id in refresh:
            self._refresh_ready(task_id)

    def remove(self, task_id: str) -> None:
        old = self.tasks.pop(task_id, None)
        if old is None:
            return
        for blocker in old.blocked_by:
            _unlink(self._dependents, blocker, task_id)
        if task_id in self._ready and self._moves is not None:
            self._moves.add(task_id)
        self._ready.discard(task_id)
        self._structure_version += 1
        for dependent in self._dependents.get(task_id, ()):
            self._refresh_ready(dependent)
        if old.parent is not None:
            _unlink(self._children, old.parent, task_id)
            self._refresh_ready(old.parent)

    def _refresh_ready(self, task_id: str) -> None:
        if not self._readiness:
            return
        task = self.tasks.get(task_id)
        if task is not None and task.status == Status.PENDING and not self.open_blockers(task) and not self.open_children(task_id) and not is_hidden(task) and not removed_by_claude_code(task):
            if task_id not in self._ready:
                if self._ready_heap_version == self._structure_version:
                    heapq.heappush(self._ready_heap, (self._claim_key(unit_weight)(task_id), task_id))
                if self._moves is not None:
                    self._moves.add(task_id)
            self._ready.add(task_id)
        elif task_id in self._ready:
            if self._moves is not None:
                self._moves.add(task_id)
            self._ready.discard(task_id)

    @contextmanager
    def recording_ready_moves(self) -> Iterator[set[str]]:
        """The tasks whose readiness flips while the block runs (a store's own write), so that
        the store can tell the board's index of ready tasks."""
        moves: set[str] = set()
        self._moves = moves
        try:
            yield moves
        finally:
            self._moves = None

    def structure_version(self) -> int:
        """Changes whenever waves, remaining paths or the claim order may have changed."""
        return self._structure_version

    # -- readiness ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.tasks)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self.tasks

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks.values())

    def open_blockers(self, task: Task) -> list[str]:
        """Blockers not yet completed. A dangling blocker (no such task) counts as open, unless
        the board's rule says a missing one was completed and deleted (Claude Code lists)."""
        open_ids = []
        for blocker in task.blocked_by:
            other = self.tasks.get(blocker)
            if other is None:
                if not self.missing_blocker_done(blocker):
                    open_ids.append(blocker)
            elif other.status != Status.COMPLETED:
                # Claude Code deleted it: what counts is what Claude Code makes of a missing blocker.
                if not removed_by_claude_code(other) or not self.missing_blocker_done(blocker):
                    open_ids.append(blocker)
        return open_ids

    def open_children(self, task_id: str) -> list[str]:
        """Sub-tasks not yet finished (a parent cannot start, or be claimed, before they are)."""
        kids = self._children.get(task_id)
        if not kids:
            return []
        return sorted_ids(k for k in kids if k in self.tasks and not _finished(self.tasks[k]))

    def why_not_ready(self, task: Task) -> str:
        """Why a pending task cannot start, as a clause ("it waits on #1, #2"); "" when it can."""
        reasons = []
        blockers = self.open_blockers(task)
        if blockers:
            cancelled = [b for b in blockers if b in self.tasks and self.tasks[b].status == Status.CANCELLED]
            reasons.append("it waits on " + ", ".join(f"#{b}" + (" (cancelled)" if b in cancelled else "") for b in blockers))
        children = self.open_children(task.id)
        if children:
            reasons.append("its sub-tasks " + ", ".join(f"#{c}" for c in children) + " are not finished")
        if is_hidden(task):
            reasons.append("it is internal to Claude Code")
        if removed_by_claude_code(task):
            reasons.append("Claude Code removed it from its list")
        return "; ".join(reasons)

    def is_ready(self, task_id: str) -> bool:
        return task_id in self._ready

    def ready_ids(self) -> set[str]:
        return set(self._ready)

    def dependents(self, task_id: str) -> set[str]:
        """Tasks whose ``blockedBy`` names this one (derived, not read from ``blocks``)."""
        return set(self._dependents.get(task_id, ()))

    def children(self, task_id: str) -> list[Task]:
        return [self.tasks[k] for k in sorted_ids(self._children.get(task_id, ())) if k in self.tasks]

    def progress(self, task: Task, _depth: int = 0) -> int:
        """The one rule for a task's progress, shown by every view: a completed task is 100;
        a parent's is the mean of its sub-tasks' (cancelled ones left out); any other task's is
        what its agent reported."""
        if task.status == Status.COMPLETED:
            return 100
        kids = self._children.get(task.id)
        if not kids or _depth >= MAX_PARENT_DEPTH:
            return task.progress
        counted = [self.tasks[k] for k in kids if k in self.tasks and self.tasks[k].status != Status.CANCELLED]
        if not counted:
            return task.progress
        return round(sum(self.progress(kid, _depth + 1) for kid in counted) / len(counted))

    # -- traversal ----------------------------------------------------------------------------

    def ancestors(self, task_id: str) -> set[str]:
        """Every task this one transitively waits on (existing tasks only)."""
        return self._walk(task_id, lambda t: self.tasks[t].blocked_by if t in self.tasks else ())

    def descendants(self, task_id: str) -> set[str]:
        """Every task that transitively waits on this one."""
        return self._walk(task_id, lambda t: self._dependents.get(t, ()))

    def _walk(self, start: str, step: Callable[[str], Iterable[str]]) -> set[str]:
        seen: set[str] = set()
        stack = list(step(start))
        while stack:
            node = stack.pop()
            if node in seen or node not in self.tasks:
                continue
            seen.add(node)
            stack.extend(step(node))
        seen.discard(start)
        return seen

    def neighbourhood(self, task_id: str, limit: int) -> set[str]:
        """The task and up to ``limit - 1`` of its ancestors and descendants, the nearest first
        (a step up and a step down in turn), ties broken by id: a chain too long to show whole,
        cut where it is farthest from the task."""
        def up(node: str) -> Iterable[str]:
            return self.tasks[node].blocked_by if node in self.tasks else ()

        def down(node: str) -> Iterable[str]:
            return self._dependents.get(node, ())

        kept = {task_id}
        fronts: list[tuple[list[str], Callable[[str], Iterable[str]]]] = [([task_id], up), ([task_id], down)]
        while len(kept) < limit and any(front for front, _step in fronts):
            for index, (front, step) in enumerate(fronts):
                found = sorted({n for t in front for n in step(t) if n in self.tasks and n not in kept}, key=id_sort_key)
                found = found[: max(0, limit - len(kept))]
                kept.update(found)
                fronts[index] = (found, step)
        return kept

    def path_between(self, start: str, goal: str, also: Mapping[str, Iterable[str]] | None = None) -> list[str] | None:
        """A chain start -> ... -> goal following ``blockedBy`` (and the edges in ``also``,
        blockers by task, not yet written), or None."""
        parents: dict[str, str | None] = {start: None}
        stack = [start]
        while stack:
            node = stack.pop()
            if node == goal:
                path = [node]
                while parents[path[-1]] is not None:
                    path.append(parents[path[-1]])  # type: ignore[arg-type]
                return path[::-1]
            task = self.tasks.get(node)
            for nxt in [*(task.blocked_by if task else ()), *((also or {}).get(node, ()))]:
                if nxt not in parents:
                    parents[nxt] = node
                    stack.append(nxt)
        return None

    def cycle_if_added(self, task_id: str, blocker_id: str) -> list[str] | None:
        """The cycle that ``task_id blockedBy blocker_id`` would close, as ids, or None."""
        if task_id == blocker_id:
            return [task_id, task_id]
        path = self.path_between(blocker_id, task_id)
        return None if path is None else [task_id, *path]

    # -- derived views (cached per structure version) -----------------------------------------

    def _cached(self, key: str, compute: Callable[[], object]) -> object:
        hit = self._cache.get(key)
        if hit is not None and hit[0] == self._structure_version:
            return hit[1]
        value = compute()
        self._cache[key] = (self._structure_version, value)
        return value

    def waves(self) -> dict[str, int]:
        """Topological generation of each task: 0 for no (existing) blockers, else 1 + max of them.

        Tasks caught in a cycle get the wave after the last acyclic one, so they still show.
        """
        return self._cached("waves", self._compute_waves)  # type: ignore[return-value]

    def _compute_waves(self) -> dict[str, int]:
        # Layer by layer (Kahn's algorithm): every task reached from the layer numbered
        # ``level`` gets ``level + 1``, and the last layer that reaches a task is its deepest
        # blocker's, so each task ends with one more than the highest wave among its blockers.
        # A task in or behind a cycle keeps what its reached blockers gave it, or ``last``.
        tasks, dependents = self.tasks, self._dependents
        # Each task's number of blockers on the board: how often it is listed as a dependent
        # (each pair is listed once), counted in C, less the listings under blockers that are
        # not on the board.
        counts = Counter(chained.from_iterable(dependents.values()))
        for missing in dependents.keys() - tasks.keys():
            counts.subtract(dependents[missing])
        indegree: dict[str, int] = dict.fromkeys(tasks, 0)
        indegree.update(counts)
        frontier = [tid for tid, n in indegree.items() if n == 0]
        wave: dict[str, int] = dict.fromkeys(frontier, 0)
        freed = len(frontier)  # tasks whose every blocker was reached
        level = 0
        while frontier:
            level += 1  # one int object per wave number, shared by every task in it
            nxt = []
            for tid in frontier:
                for dep in dependents.get(tid, ()):
                    left = indegree.get(dep)
                    if left is None:
                        continue
                    wave[dep] = level
                    indegree[dep] = left - 1
                    if left == 1:
                        nxt.append(dep)
            freed += len(nxt)
            frontier = nxt
        if freed == len(tasks):  # no cycle: every task has its wave, none is stuck
            self._cache["stuck"] = (self._structure_version, frozenset())
            return wave
        last = max(wave.values(), default=-1) + 1
        for tid in tasks:
            wave.setdefault(tid, last)
        self._cache["stuck"] = (self._structure_version, frozenset(tid for tid, count in indegree.items() if count))
        return wave

    def stuck_ids(self) -> frozenset[str]:
        """The tasks the waves never reach: in a dependency cycle, or waiting on one."""
        self.waves()
        return self._cache["stuck"][1]  # type: ignore[return-value]

    def remaining_path(self, weight: Weight = unit_weight) -> dict[str, float]:
        """For each task, the work on the longest chain from it through its dependents.

        Finished tasks weigh 0 (completed/cancelled) so the figure shrinks as work is done.
        """
        if weight is unit_weight:
            return self._cached("remaining", lambda: self._compute_remaining(weight))  # type: ignore[return-value]
        return self._compute_remaining(weight)

    def _compute_remaining(self, weight: Weight) -> dict[str, float]:
        waves = self.waves()
        tasks, dependents = self.tasks, self._dependents
        finished = (Status.COMPLETED, Status.CANCELLED)
        remaining: dict[str, float] = {}
        # Deepest wave first: what a task's path counts (its dependents in later waves) is known
        # by the time it is reached. Ties in any order.
        for tid in sorted(tasks, key=waves.__getitem__, reverse=True):
            task = tasks[tid]
            below = 0.0
            deps = dependents.get(tid)
            if deps:
                here = waves[tid]
                for dep in deps:
                    path = remaining.get(dep)
                    if path is not None and path > below and waves[dep] > here:
                        below = path
            if task.status in finished:
                remaining[tid] = below
            elif weight is unit_weight and not task.metadata:
                remaining[tid] = below + 1.0  # ``unit_weight`` of a task without an estimate
            else:
                remaining[tid] = weight(task) + below
        return remaining

    def critical_path(self, weight: Weight = unit_weight) -> list[str]:
        """The longest chain of unfinished work, first task first."""
        remaining = self.remaining_path(weight)
        waves = self.waves()
        unfinished = [tid for tid, t in self.tasks.items() if t.status not in (Status.COMPLETED, Status.CANCELLED)]
        if not unfinished:
            return []
        node = max(unfinished, key=lambda tid: (remaining[tid], -waves[tid], id_sort_key(tid)))
        path = [node]
        while True:
            below = [
                d for d in self._dependents.get(node, ())
                if d in remaining and waves[d] > waves[node] and self.tasks[d].status not in (Status.COMPLETED, Status.CANCELLED)
            ]
            if not below:
                return path
            node = max(below, key=lambda d: (remaining[d], id_sort_key(d)))
            path.append(node)

    def _claim_key(self, weight: Weight) -> Callable[[str], tuple[int, float, tuple[int, int, str]]]:
        remaining = self.remaining_path(weight)
        return lambda tid: (PRIORITY_RANK[self.tasks[tid].priority], -remaining.get(tid, 0.0), id_sort_key(tid))

    def claim_order(self, candidates: Iterable[str], weight: Weight = unit_weight) -> list[str]:
        """Order for handing out work: priority, then longest remaining critical path, then id."""
        return sorted(candidates, key=self._claim_key(weight))

    def best_ready(self) -> str | None:
        """The first ready task in claim order, from a heap kept across claims."""
        if self._ready_heap_version != self._structure_version:
            key = self._claim_key(unit_weight)
            self._ready_heap = [(key(tid), tid) for tid in self._ready]
            heapq.heapify(self._ready_heap)
            self._ready_heap_version = self._structure_version
        while self._ready_heap:
            tid = self._ready_heap[0][1]
            if tid in self._ready:
                return tid
            heapq.heappop(self._ready_heap)
        return None

    def first_ready(self, accept: Callable[[str], bool]) -> str | None:
        """The first ready task in claim order that ``accept`` takes (``accept`` may reserve it)."""
        self.best_ready()  # brings the heap up to date
        looked_at: list[tuple[tuple[int, float, tuple[int, int, str]], str]] = []
        try:
            while self._ready_heap:
                entry = heapq.heappop(self._ready_heap)
                if entry[1] not in self._ready:
                    continue  # no longer ready: the heap drops such entries lazily
                looked_at.append(entry)
                if accept(entry[1]):
                    return entry[1]
            return None
        finally:
            for entry in looked_at:
                heapq.heappush(self._ready_heap, entry)

    # -- problems in files written by others --------------------------------------------------

    def cycles(self) -> list[list[str]]:
        """Each strongly connected group of two or more tasks (or a self-loop), as a closed chain."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        on_stack: set[str] = set()
        stack: list[str] = []
        groups: list[list[str]] = []
        counter = 0
        for root in self.tasks:
            if root in index:
                continue
            work = [(root, iter(self.tasks[root].blocked_by))]
            index[root] = low[root] = counter
            counter += 1
            stack.append(root)
            on_stack.add(root)
            while work:
                node, edges = work[-1]
                advanced = False
                for nxt in edges:
                    if nxt not in self.tasks:
                        continue
                    if nxt not in index:
                        index[nxt] = low[nxt] = counter
                        counter += 1
                        stack.append(nxt)
                        on_stack.add(nxt)
                        work.append((nxt, iter(self.tasks[nxt].blocked_by)))
                        advanced = True
                        break
                    if nxt in on_stack:
                        low[node] = min(low[node], index[nxt])
                if advanced:
                    continue
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1 or node in self.tasks[node].blocked_by:
                        groups.append(self._closed_chain(sorted(group, key=id_sort_key)))
        return groups

    def _closed_chain(self, group: list[str]) -> list[str]:
        """Turn a strongly connected group into a readable cycle a -> b -> ... -> a."""
        start = group[0]
        members = set(group)
        for blocker in self.tasks[start].blocked_by:
            if blocker in members:
                back = self.path_between(blocker, start) if blocker != start else [start]
                if back:
                    return [start, *back]
        return [*group, start]

    def problems(self, unreadable: Container[str] = frozenset()) -> list[GraphProblem]:
        """What breaks the dependency rules; ``unreadable`` names tasks whose file exists but
        cannot be read, so that an edge to one says so rather than that it does not exist."""
        found: list[GraphProblem] = []

        def missing(task_id: str) -> str:
            return "whose file cannot be read ('board check' says why)" if task_id in unreadable else "which does not exist"

        for chain in self.cycles():
            found.append(GraphProblem("graph.cycle", tuple(dict.fromkeys(chain)), "dependency cycle: " + " -> ".join(f"#{t}" for t in chain)))
        for task in self.tasks.values():
            for blocker in task.blocked_by:
                if blocker not in self.tasks:
                    if not self.missing_blocker_done(blocker):
                        found.append(GraphProblem("graph.dangling", (task.id,), f"#{task.id} is blocked by #{blocker}, {missing(blocker)}"))
                elif task.id not in self.tasks[blocker].blocks:
                    found.append(GraphProblem("graph.asymmetric", (task.id, blocker), f"#{task.id} is blocked by #{blocker}, but #{blocker} does not list it in blocks"))
            for dependent in task.blocks:
                if dependent not in self.tasks:
                    if not self.missing_blocker_done(dependent):
                        found.append(GraphProblem("graph.dangling", (task.id,), f"#{task.id} blocks #{dependent}, {missing(dependent)}"))
                elif task.id not in self.tasks[dependent].blocked_by and task.status != Status.COMPLETED:
                    # A completed blocker dropped from its dependent's blockedBy is how seed 001
                    # unblocks; only an open blocker missing there is a broken edge.
                    found.append(GraphProblem("graph.asymmetric", (task.id, dependent), f"#{task.id} blocks #{dependent}, but #{dependent} does not list it in blockedBy"))
            if task.parent is not None and task.parent not in self.tasks:
                found.append(GraphProblem("graph.dangling", (task.id,), f"#{task.id} has parent #{task.parent}, {missing(task.parent)}"))
        return found


def cancelled_blockers(tasks: Mapping[str, Task]) -> list[GraphProblem]:
    """Pending tasks that wait on a cancelled blocker: they can never start until a person
    drops the dependency or reopens the blocker. Depends on statuses, so it is kept apart from
    ``problems`` (which depends on edges only and is cached on them)."""
    waiting: dict[str, list[str]] = {}
    for task in tasks.values():
        if task.status != Status.PENDING:
            continue
        for blocker in task.blocked_by:
            other = tasks.get(blocker)
            if other is not None and other.status == Status.CANCELLED:
                waiting.setdefault(blocker, []).append(task.id)
    found = []
    for blocker in sorted_ids(waiting):
        dependents = sorted_ids(waiting[blocker])
        names = ", ".join(f"#{d}" for d in dependents)
        found.append(
            GraphProblem(
                "graph.cancelled_blocker",
                (blocker, *dependents),
                f"{names} {'waits' if len(dependents) == 1 else 'wait'} on #{blocker}, which was cancelled: drop the dependency or reopen #{blocker}",
            )
        )
    return found


#: The ids linked to one task (its dependents, its sub-tasks): a tuple while they are few, a
#: list beyond ``FEW_LINKED``.
Linked = tuple[str, ...] | list[str]
#: Most tasks have one to three dependents. A tuple of that many is the size of what it holds,
#: where a list grown by appending keeps room for four to eight: 40 bytes a task, twice over on
#: a dashboard (its store's graph and its own), 5 MB on a 100,000-task board. A tuple is copied
#: to grow, so past a few the ids go in a list.
FEW_LINKED = 8


def _link(index: dict[str, Linked], key: str, value: str) -> None:
    """Add ``value`` to ``index[key]``."""
    held = index.get(key)
    if held is None:
        index[key] = (value,)
    elif isinstance(held, list):
        held.append(value)
    elif len(held) < FEW_LINKED:
        index[key] = (*held, value)
    else:
        index[key] = [*held, value]


def _unlink(index: dict[str, Linked], key: str, value: str) -> None:
    """Take ``value`` out of ``index[key]`` (and the key out once none is left)."""
    held = index.get(key)
    if held is None or value not in held:
        return
    if isinstance(held, list):
        held.remove(value)
        if not held:
            del index[key]
        return
    place = held.index(value)
    rest = held[:place] + held[place + 1 :]
    if rest:
        index[key] = rest
    else:
        del index[key]


def _finished(task: Task) -> bool:
    return task.status in (Status.COMPLETED, Status.CANCELLED) or removed_by_claude_code(task)


def sorted_ids(ids: Iterable[str]) -> list[str]:
    return sorted(ids, key=id_sort_key)


def by_id(tasks: Mapping[str, Task]) -> list[Task]:
    return [tasks[t] for t in sorted_ids(tasks)]
