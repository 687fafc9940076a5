import random

from board.graph import TaskGraph
from board.model import Task


def make(task_id: str, blocked_by=(), status="pending", blocks=None, **kw) -> Task:
    return Task(id=task_id, subject=f"task {task_id}", blocked_by=list(blocked_by), blocks=list(blocks or []), status=status, **kw)


def symmetric(*tasks: Task) -> TaskGraph:
    """Build a graph and fill in ``blocks`` as the store would."""
    by_id = {t.id: t for t in tasks}
    for task in tasks:
        for blocker in task.blocked_by:
            if blocker in by_id and task.id not in by_id[blocker].blocks:
                by_id[blocker].blocks.append(task.id)
    return TaskGraph(tasks)


def test_readiness_follows_blocker_status_without_editing_dependents() -> None:
    graph = symmetric(make("1"), make("2", ["1"]), make("3", ["1", "2"]))
    assert graph.ready_ids() == {"1"}
    graph.put(make("1", status="completed", blocks=["2", "3"]))
    assert graph.ready_ids() == {"2"}
    assert graph.tasks["3"].blocked_by == ["1", "2"]  # the edge stays for drawing and history
    assert graph.open_blockers(graph.tasks["3"]) == ["2"]
    graph.put(make("2", ["1"], status="completed", blocks=["3"]))
    assert graph.ready_ids() == {"3"}


def test_a_dangling_blocker_counts_as_open() -> None:
    graph = TaskGraph([make("1", ["99"])])
    assert not graph.is_ready("1")
    assert graph.open_blockers(graph.tasks["1"]) == ["99"]
    graph.put(make("99", status="completed"))
    assert graph.is_ready("1")


def test_only_pending_tasks_are_ready() -> None:
    graph = TaskGraph([make("1", status="in_progress"), make("2", status="failed"), make("3")])
    assert graph.ready_ids() == {"3"}


def test_waves_and_ancestry() -> None:
    graph = symmetric(make("1"), make("2"), make("3", ["1"]), make("4", ["3", "2"]), make("5", ["1"]))
    assert graph.waves() == {"1": 0, "2": 0, "3": 1, "5": 1, "4": 2}
    assert graph.ancestors("4") == {"1", "2", "3"}
    assert graph.descendants("1") == {"3", "4", "5"}
    assert graph.dependents("1") == {"3", "5"}


def test_critical_path_is_the_longest_chain_of_unfinished_work() -> None:
    graph = symmetric(make("1"), make("2", ["1"]), make("3", ["2"]), make("4"), make("5", ["4"]))
    assert graph.critical_path() == ["1", "2", "3"]
    graph.put(make("1", status="completed", blocks=["2"]))
    graph.put(make("2", ["1"], status="completed", blocks=["3"]))
    assert graph.critical_path() == ["4", "5"]  # what is left of 1 -> 2 -> 3 is shorter now
    estimated = symmetric(make("1"), make("2", ["1"]), make("4", metadata={"estimate": 10}))
    assert estimated.critical_path() == ["4"]


def test_claim_order_is_priority_then_remaining_path_then_id() -> None:
    graph = symmetric(
        make("1", priority="low"), make("2"), make("3"), make("4", ["3"]), make("10", priority="critical"), make("11")
    )
    assert graph.claim_order(graph.ready_ids()) == ["10", "3", "2", "11", "1"]
    assert graph.best_ready() == "10"


def test_cycles_are_found_and_named_as_a_closed_chain() -> None:
    graph = TaskGraph([make("1", ["3"]), make("2", ["1"]), make("3", ["2"]), make("4", ["4"]), make("5", ["1"])])
    cycles = sorted(graph.cycles())
    assert cycles == [["1", "3", "2", "1"], ["4", "4"]]
    messages = [p.message for p in graph.problems() if p.kind == "graph.cycle"]
    assert "dependency cycle: #1 -> #3 -> #2 -> #1" in messages
    assert graph.waves()["5"] == graph.waves()["1"]  # cyclic tasks still get a column


def test_cycle_if_added_names_the_cycle() -> None:
    graph = symmetric(make("1"), make("2", ["1"]), make("3", ["2"]))
    assert graph.cycle_if_added("1", "3") == ["1", "3", "2", "1"]
    assert graph.cycle_if_added("3", "1") is None
    assert graph.cycle_if_added("2", "2") == ["2", "2"]


def test_dangling_and_one_sided_edges_are_reported() -> None:
    graph = TaskGraph([make("1", blocks=["2"]), make("2"), make("3", ["1", "9"]), make("4", parent="77")])
    kinds = sorted((p.kind, p.tasks) for p in graph.problems())
    assert ("graph.asymmetric", ("1", "2")) in kinds  # 1 says it blocks 2, 2 does not agree
    assert ("graph.asymmetric", ("3", "1")) in kinds  # 3 waits on 1, 1 does not list it
    assert ("graph.dangling", ("3",)) in kinds
    assert ("graph.dangling", ("4",)) in kinds


def test_ten_thousand_tasks_match_a_reference_computation() -> None:
    rng = random.Random(7)
    tasks = []
    reference_wave: dict[str, int] = {}
    for n in range(1, 10_001):
        blockers = sorted({str(rng.randint(max(1, n - 50), n - 1)) for _ in range(rng.randint(0, 3))}) if n > 1 else []
        status = "completed" if n < 3000 and rng.random() < 0.9 else "pending"
        tasks.append(make(str(n), blockers, status=status))
        reference_wave[str(n)] = 1 + max((reference_wave[b] for b in blockers), default=-1)
    graph = TaskGraph(tasks)
    assert graph.waves() == reference_wave
    by_id = {t.id: t for t in tasks}
    reference_ready = {
        t.id for t in tasks if t.status == "pending" and all(by_id[b].status == "completed" for b in t.blocked_by)
    }
    assert graph.ready_ids() == reference_ready
    assert graph.cycles() == []
    path = graph.critical_path()
    for earlier, later in zip(path, path[1:], strict=False):
        assert earlier in graph.tasks[later].blocked_by
    chain = TaskGraph([make(str(n), [str(n - 1)] if n > 1 else []) for n in range(1, 10_001)])
    assert len(chain.critical_path()) == 10_000  # no recursion limit on deep graphs
    assert chain.ancestors("10000") == {str(n) for n in range(1, 10_000)}


def test_a_hub_s_dependents_and_a_parent_s_children_survive_growing_and_shrinking_past_a_few() -> None:
    """Few dependents (or sub-tasks) are kept one way and many another: a task gaining twenty
    and losing them again, in any order, keeps exactly the ones still linked, and readiness
    follows."""
    graph = TaskGraph([Task(id="hub", subject="hub"), Task(id="top", subject="top")])
    order = [str(n) for n in range(1, 21)]
    random.Random(3).shuffle(order)
    for n in order:
        graph.put(Task(id=n, subject=n, blocked_by=["hub"], parent="top"))
    assert graph.dependents("hub") == set(order)
    assert [t.id for t in graph.children("top")] == sorted(order, key=int)
    gone = order[:17]
    for n in gone:
        graph.remove(n)
    left = set(order) - set(gone)
    assert graph.dependents("hub") == left and {t.id for t in graph.children("top")} == left
    for n in sorted(left):
        graph.put(Task(id=n, subject=n))  # no longer blocked by the hub, nor under the parent
    assert graph.dependents("hub") == set() and graph.children("top") == []
    assert graph.is_ready("top") and all(graph.is_ready(n) for n in left)


def test_a_task_behind_a_cycle_keeps_the_wave_its_reached_blockers_give_it() -> None:
    """Waves come layer by layer; a task some of whose blockers are reached and others are in a
    cycle gets one more than the deepest reached blocker (as the database's claim order has
    it), and the cycle itself the wave after every other."""
    graph = symmetric(
        make("1"), make("2", ["1"]), make("3", ["2"]),  # a chain: waves 0, 1, 2
        make("c1", ["c2"]), make("c2", ["c1"]),  # a cycle
        make("behind", ["3", "c1"]),  # waits on the chain's end and on the cycle
    )
    waves = graph.waves()
    assert (waves["1"], waves["2"], waves["3"]) == (0, 1, 2)
    assert waves["behind"] == 3 and waves["c1"] == waves["c2"] == 4
    assert graph.stuck_ids() == {"c1", "c2", "behind"}
    remaining = graph.remaining_path()
    assert remaining["1"] == 4.0 and remaining["3"] == 2.0  # "behind" is in a later wave than #3


def test_few_dependents_and_sub_tasks_leave_one_by_one_from_the_middle_to_none() -> None:
    """The few-linked case (kept apart from the many): taking out the middle one of three, then
    the rest, leaves exactly those still linked, and the task they waited on or belonged to
    reads right at each step."""
    graph = TaskGraph([Task(id="hub", subject="hub"), Task(id="top", subject="top")])
    for n in ("1", "2", "3"):
        graph.put(Task(id=n, subject=n, blocked_by=["hub"], parent="top"))
    assert not graph.is_ready("top") and not graph.is_ready("1")
    graph.remove("2")
    assert graph.dependents("hub") == {"1", "3"} and [t.id for t in graph.children("top")] == ["1", "3"]
    graph.put(Task(id="3", subject="3"))  # no longer linked to either
    assert graph.dependents("hub") == {"1"} and [t.id for t in graph.children("top")] == ["1"]
    graph.remove("1")
    assert graph.dependents("hub") == set() and graph.children("top") == []
    assert graph.is_ready("top") and graph.is_ready("3")


def test_a_graph_for_its_structure_alone_has_the_same_waves_paths_and_cycles_and_names_nothing_ready() -> None:
    rng = random.Random(11)
    tasks = []
    for n in range(1, 2_001):
        blockers = sorted({str(rng.randint(max(1, n - 30), n + 5)) for _ in range(rng.randint(0, 3))} - {str(n)}) if n > 1 else []
        status = rng.choice(["pending", "pending", "completed", "in_progress", "cancelled"])
        tasks.append(make(str(n), blockers, status=status, parent=str(rng.randint(1, 2000)) if rng.random() < 0.05 else None))
    whole, structure = TaskGraph(tasks), TaskGraph(tasks, readiness=False)
    assert whole.ready_ids()  # the random board has ready tasks, and cycles (blockers ahead of a task)
    assert whole.cycles()
    assert structure.waves() == whole.waves()
    assert structure.stuck_ids() == whole.stuck_ids()
    assert structure.remaining_path() == whole.remaining_path()
    assert structure.cycles() == whole.cycles()
    assert structure.ready_ids() == set()
    structure.put(make("9999", [], status="pending"))  # later writes keep it so
    assert structure.ready_ids() == set() and structure.waves()["9999"] == 0


def test_a_blocker_not_on_the_board_leaves_its_dependents_waves_and_keeps_them_from_being_stuck() -> None:
    graph = TaskGraph([make("1"), make("2", ["1", "99"]), make("3", ["99", "98"]), make("4", ["3", "2"])])
    assert graph.waves() == {"1": 0, "2": 1, "3": 0, "4": 2}
    assert graph.stuck_ids() == frozenset()
    graph.put(make("5", ["6"]))
    graph.put(make("6", ["5", "99"]))  # a cycle: stuck, the rest as they were
    assert graph.stuck_ids() == {"5", "6"}
    assert {tid: wave for tid, wave in graph.waves().items() if tid not in ("5", "6")} == {"1": 0, "2": 1, "3": 0, "4": 2}
