"""The displayed board's rules, without Textual: which reads count, what a change touches."""

from __future__ import annotations

from board.graph import TaskGraph
from board.model import Task
from board.ui.board_state import DisplayedBoard
from board.ui.lanes import Lane, Lanes


def board_of(*tasks: Task) -> DisplayedBoard:
    board = DisplayedBoard(TaskGraph(), Lanes())
    board.apply(tasks, observed=1)
    return board


def test_a_read_made_before_the_one_shown_is_dropped_whatever_the_versions_say() -> None:
    board = board_of(Task(id="1", subject="a", version=5))
    applied = board.apply([Task(id="1", subject="outside rewrite", version=2)], observed=3)
    assert applied.changed == {"1"} and board.graph.tasks["1"].subject == "outside rewrite"  # a lower version is the disk
    late = board.apply([Task(id="1", subject="an older read", version=9)], observed=2)
    assert late.changed == set() and board.graph.tasks["1"].subject == "outside rewrite"
    assert board.apply([], ["1"], observed=2).changed == set()  # an older read cannot remove it either
    assert board.apply([], ["1"], observed=4).changed == {"1"} and "1" not in board.graph.tasks


def test_a_change_touches_its_dependents_and_parent_and_an_edge_rebuilds_the_lanes() -> None:
    board = board_of(
        Task(id="1", subject="blocker"),
        Task(id="2", subject="waits", blocked_by=["1"]),
        Task(id="3", subject="parent"),
        Task(id="4", subject="child", parent="3"),
    )
    assert board.lanes.lane_index("2")[0] == Lane.WAITING_DEPS
    applied = board.apply([Task(id="1", subject="blocker", status="completed", version=2)], observed=2)
    assert applied.affected == {"1", "2"} and not applied.edges_changed and applied.moved_from
    assert board.lanes.lane_index("2")[0] == Lane.READY  # its blocker is done
    child = board.apply([Task(id="4", subject="child", parent="3", progress=50, version=2)], observed=3)
    assert child.affected == {"3", "4"}
    edge = board.apply([Task(id="3", subject="parent", blocked_by=["2"], version=2)], observed=4)
    assert edge.edges_changed and edge.moved_from is None


def test_a_task_that_starts_waiting_or_asks_anew_is_reported_once() -> None:
    board = board_of(Task(id="1", subject="a", status="in_progress", owner="x"))
    asked = board.apply([Task(id="1", subject="a", status="waiting", owner="x", question="which?", version=2)], observed=2)
    assert [t.id for t in asked.asking] == ["1"]
    again = board.apply([Task(id="1", subject="a", status="waiting", owner="x", question="which?", progress=5, version=3)], observed=3)
    assert again.asking == []
    anew = board.apply([Task(id="1", subject="a", status="waiting", owner="x", question="and now?", version=4)], observed=4)
    assert [t.question for t in anew.asking] == ["and now?"]


def test_the_first_read_of_a_big_board_arranges_the_lanes_once() -> None:
    board = DisplayedBoard(TaskGraph(), Lanes())
    board.put_unarranged([Task(id=str(n), subject="t") for n in range(1, 4)], observed=1)
    assert board.lanes_stale and board.lanes.ids[Lane.READY] == []
    board.arrange()
    assert not board.lanes_stale and board.lanes.ids[Lane.READY] == ["1", "2", "3"]


def test_the_same_task_read_again_changes_nothing_and_is_held_once() -> None:
    board = board_of(Task(id="1", subject="a"), Task(id="2", subject="b", blocked_by=["1"]))
    again = Task(id="2", subject="b", blocked_by=["1"])
    applied = board.apply([again], observed=2)
    assert applied.changed == set() and not applied.edges_changed
    assert board.graph.tasks["2"] is again  # the copy read before can go
    assert board.lanes.lane_index("2") == (Lane.WAITING_DEPS, 0)
