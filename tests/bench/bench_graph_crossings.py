"""Edge crossings of the dependency graph's layout, beside Graphviz dot's on the same graph.

    PYTHONPATH=. python tests/bench/bench_graph_crossings.py [--big 20000]

For the sample board (``sample_workspace/``) and generated layered DAGs of 50, 200 and 1,000
tasks it prints how many pairs of edges cross in board's layout and in dot's, and their ratio.
Both are counted the same way: a task's rank and its order within the rank (board: its wave
and row; dot: ``dot -Tplain`` with ``rankdir=LR``, rank from a node's x, order from its y), and
only edges between neighbouring ranks. Beside them, the time of board's whole layout (ordering
and routing) and of dot on the same graph, the best of three runs each (dot's process start
included); then board's layout of ``--big`` tasks, which the ordering's work budget keeps prompt.

A generated DAG has ``waves`` waves of ``width`` tasks; each task after the first wave waits on
two tasks drawn from the wave before with ``random.Random(11)``: 10 waves of 5, 20 of 10, 40 of
25, and for ``--big`` 100 waves of a hundredth of it. Target: board <= 1.1 x dot's crossings on
each, and the 1,000-task layout no slower than dot. Without ``dot`` on PATH the dot columns
are left out and a line says so.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from board.graph import TaskGraph  # noqa: E402
from board.model import Task  # noqa: E402
from board.store import Store  # noqa: E402
from board.ui import graph_layout  # noqa: E402
from board.ui.graph_layout import layout_graph  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "sample_workspace"


def layered_dag(waves: int, width: int, seed: int = 11) -> TaskGraph:
    rng = random.Random(seed)
    tasks: list[Task] = []
    previous: list[str] = []
    for wave in range(waves):
        current = [str(wave * width + i + 1) for i in range(width)]
        for task_id in current:
            blockers = rng.sample(previous, 2) if previous else []
            tasks.append(Task(id=task_id, subject=f"Task {task_id}", blocked_by=blockers))
        previous = current
    return TaskGraph(tasks)


def edges_of(graph: TaskGraph) -> list[tuple[str, str]]:
    return [(blocker, task_id) for task_id, task in graph.tasks.items() for blocker in dict.fromkeys(task.blocked_by) if blocker in graph.tasks]


def crossings(edges: list[tuple[str, str]], rank: dict[str, int], order: dict[str, float]) -> int:
    """Pairs of edges between the same two neighbouring ranks whose ends are in opposite orders."""
    by_gap: dict[int, list[tuple[float, float]]] = {}
    for blocker, dependent in edges:
        if rank[dependent] == rank[blocker] + 1:
            by_gap.setdefault(rank[blocker], []).append((order[blocker], order[dependent]))
        elif rank[blocker] == rank[dependent] + 1:
            by_gap.setdefault(rank[dependent], []).append((order[dependent], order[blocker]))
    total = 0
    for pairs in by_gap.values():
        for i, (a0, a1) in enumerate(pairs):
            for b0, b1 in pairs[i + 1 :]:
                if (a0 - b0) * (a1 - b1) < 0:
                    total += 1
    return total


def board_crossings(graph: TaskGraph, runs: int = 3) -> tuple[int, float]:
    elapsed = float("inf")
    for _ in range(runs):
        graph_layout._ORDER_CACHE.clear()  # search again every run
        started = time.perf_counter()
        layout = layout_graph(graph)
        elapsed = min(elapsed, time.perf_counter() - started)
    rank = {task_id: column for task_id, (column, _index) in layout.position.items()}
    order = {task_id: float(row) for task_id, row in layout.row_of.items()}
    return crossings(edges_of(graph), rank, order), elapsed


def dot_crossings(graph: TaskGraph, runs: int = 3) -> tuple[int, float]:
    lines = ["digraph board {", "  rankdir=LR;", "  node [shape=box];"]
    lines += [f'  "{task_id}" [label="#{task_id}"];' for task_id in graph.tasks]
    lines += [f'  "{blocker}" -> "{dependent}";' for blocker, dependent in edges_of(graph)]
    source = "\n".join(lines + ["}"]) + "\n"
    elapsed = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        plain = subprocess.run(["dot", "-Tplain"], input=source, capture_output=True, text=True, check=True).stdout
        elapsed = min(elapsed, time.perf_counter() - started)
    xy: dict[str, tuple[float, float]] = {}
    for line in plain.splitlines():
        fields = line.split()
        if fields and fields[0] == "node":
            xy[fields[1].strip('"')] = (float(fields[2]), float(fields[3]))
    columns = sorted({round(x, 3) for x, _y in xy.values()})
    rank_of_x = {x: index for index, x in enumerate(columns)}
    rank = {task_id: rank_of_x[round(x, 3)] for task_id, (x, _y) in xy.items()}
    order = {task_id: -y for task_id, (_x, y) in xy.items()}  # plain's y grows upwards
    return crossings(edges_of(graph), rank, order), elapsed


def sample_graph() -> TaskGraph:
    with tempfile.TemporaryDirectory() as folder:  # the committed board is never opened in place
        copy = Path(folder) / "sample"
        shutil.copytree(SAMPLE, copy)
        store = Store.open(copy)
        try:
            return store.graph
        finally:
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=int, default=20_000, help="tasks of the board timed alone (default 20000)")
    options = parser.parse_args()
    have_dot = shutil.which("dot") is not None
    if not have_dot:
        print("dot not found on PATH (Graphviz): board's figures only; install graphviz for dot's")
    boards = [
        ("sample board", sample_graph()),
        ("50 tasks (10 x 5)", layered_dag(10, 5)),
        ("200 tasks (20 x 10)", layered_dag(20, 10)),
        ("1,000 tasks (40 x 25)", layered_dag(40, 25)),
    ]
    print(f"{'graph':<24} {'edges':>6} {'board':>7} {'dot':>7} {'ratio':>6}   {'board s':>8} {'dot s':>8}")
    for name, graph in boards:
        ours, our_time = board_crossings(graph)
        row = f"{name:<24} {len(edges_of(graph)):>6} {ours:>7}"
        if have_dot:
            theirs, their_time = dot_crossings(graph)
            ratio = f"{ours / theirs:.2f}" if theirs else ("1.00" if ours == 0 else "inf")
            row += f" {theirs:>7} {ratio:>6}   {our_time:>8.3f} {their_time:>8.3f}"
        else:
            row += f" {'-':>7} {'-':>6}   {our_time:>8.3f} {'-':>8}"
        print(row)
    big = layered_dag(100, options.big // 100)
    _ours, big_time = board_crossings(big, runs=1)
    print(f"whole layout of {len(big.tasks):,} tasks (100 waves of {options.big // 100}): {big_time:.2f} s")


if __name__ == "__main__":
    main()
