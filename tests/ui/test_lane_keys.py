"""The lanes' order kept in one integer per task on a board of numeric ids, and in tuples once
an id that is not a number arrives: the same order either way, and every task found again."""

from __future__ import annotations

import random

from board.graph import TaskGraph
from board.model import Task
from board.ui.lanes import Lane, Lanes


def board(ids: list[str], seed: int = 3) -> TaskGraph:
    chooser = random.Random(seed)
    graph = TaskGraph()
    for task_id in ids:
        blockers = [b for b in chooser.sample(ids, 2) if b != task_id and ids.index(b) < ids.index(task_id)]
        status = chooser.choice(["pending", "pending", "in_progress", "completed", "failed"])
        graph.put(Task(id=task_id, subject=f"task {task_id}", status=status, blocked_by=blockers, priority=chooser.choice(["low", "medium", "high", "critical"]), owner="a" if status == "in_progress" else ""))
    return graph


def order(lanes: Lanes) -> dict[Lane, list[str]]:
    return {lane: list(lanes.ids[lane]) for lane in Lane}


def test_numeric_ids_pack_into_one_integer_each_and_keep_the_tuples_order() -> None:
    graph = board([str(n) for n in range(1, 400)])
    packed = Lanes()
    packed.rebuild(graph)
    assert all(isinstance(key, int) for key in packed._placed.values())
    tuples = Lanes()
    tuples._packed = False
    tuples._place_all(graph)
    assert all(isinstance(key, tuple) for key in tuples._placed.values())
    assert order(packed) == order(tuples)
    for task_id in ("1", "57", "399"):
        lane, index = packed.lane_index(task_id)  # type: ignore[misc]
        assert packed.ids[lane][index] == task_id


def test_an_id_that_is_not_a_number_turns_every_key_into_a_tuple_in_the_same_order() -> None:
    ids = [str(n) for n in range(1, 200)]
    graph = board(ids)
    lanes = Lanes()
    lanes.rebuild(graph)
    graph.put(Task(id="setup-db", subject="set up", status="pending"))
    moved = lanes.update(graph, ["setup-db"])
    assert moved and all(isinstance(key, tuple) for key in lanes._placed.values())
    fresh = Lanes()
    fresh.rebuild(graph)
    assert order(lanes) == order(fresh)
    lane, index = lanes.lane_index("setup-db")  # type: ignore[misc]
    assert lanes.ids[lane][index] == "setup-db"
    # Updates keep working on tuples: a numeric task moves lanes and is found where it went.
    graph.put(Task(id="5", subject="task 5", status="completed"))
    lanes.update(graph, ["5"])
    lane, index = lanes.lane_index("5")  # type: ignore[misc]
    assert lane == Lane.DONE and lanes.ids[lane][index] == "5"
    fresh.rebuild(graph)
    assert order(lanes) == order(fresh)
