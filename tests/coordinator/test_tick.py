"""The coordinator tick, rule by rule, with a fake clock and a real board on disk."""

from __future__ import annotations

from datetime import timedelta

import pytest

from board.checkpoints import latest_checkpoint, list_checkpoints
from board.coordinator.tick import tick
from board.errors import StaleLease
from board.status import Status

from tests.conftest import BOTH_BACKENDS

from .conftest import agent, settings

pytestmark = BOTH_BACKENDS


def test_an_expired_lease_is_reclaimed_with_a_reason_and_the_old_token_is_refused(board, clock):
    task = board.create("write the parser")
    claimed = board.claim("w1", lease_seconds=30)
    old_token = claimed.lease.token
    clock.advance(29)
    assert tick(board, [], settings()).reclaimed == []
    assert board.get(task.id).status == Status.IN_PROGRESS

    clock.advance(2)  # expired, but within the margin a holder cut off from the board has to stop its command
    assert tick(board, [], settings()).reclaimed == []
    clock.advance(settings().lease.reclaim_margin.total_seconds())
    report = tick(board, [], settings())

    assert [r.task for r in report.reclaimed] == [task.id]
    assert report.reclaimed[0].previous_owner == "w1"
    assert "lease of w1 expired" in report.reclaimed[0].reason
    after = board.get(task.id)
    assert (after.status, after.owner, after.lease) == (Status.PENDING, "", None)
    reclaim_lines = [r for r in board.history(task.id) if r["op"] == "reclaim"]
    assert len(reclaim_lines) == 1 and "lease of w1 expired" in reclaim_lines[0]["reason"]
    assert reclaim_lines[0]["actor"] == "coordinator"

    # The task goes to a live agent with a newer token; the silent holder's late write is refused.
    report = tick(board, [agent(board, "w2", clock)], settings())
    assert [(a.task, a.agent) for a in report.assigned] == [(task.id, "w2")]
    assert report.assigned[0].token > old_token
    with pytest.raises(StaleLease):
        board.set_status(task.id, "completed", token=old_token, actor="w1")
    board.set_status(task.id, "completed", token=report.assigned[0].token, actor="w2")
    assert board.get(task.id).status == Status.COMPLETED


def test_a_renewed_lease_is_never_reclaimed(board, clock):
    task = board.create("long job")
    board.claim("w1", lease_seconds=30)
    for _ in range(5):
        clock.advance(20)
        board.heartbeat("w1", lease_seconds=30)
        assert tick(board, [agent(board, "w1", clock)], settings()).reclaimed == []
    assert board.get(task.id).owner == "w1"


def test_ready_tasks_go_out_by_priority_then_critical_path_then_id(board, clock):
    low = board.create("low priority", priority="low")
    short = board.create("short chain")
    long_head = board.create("head of a long chain")
    middle = board.create("middle", blocked_by=[long_head.id])
    board.create("tail", blocked_by=[middle.id])
    urgent = board.create("urgent", priority="critical")
    tie_a = board.create("tie a")
    agents = [agent(board, f"w{i}", clock) for i in range(1, 6)]

    report = tick(board, agents, settings())

    assert [(a.agent, a.task) for a in report.assigned] == [
        ("w1", urgent.id),
        ("w2", long_head.id),
        ("w3", short.id),
        ("w4", tie_a.id),
        ("w5", low.id),
    ]
    for a in report.assigned:
        task = board.get(a.task)
        assert (task.status, task.owner, task.lease.token) == (Status.IN_PROGRESS, a.agent, a.token)


def test_tasks_waiting_on_dependencies_are_not_assigned(board, clock):
    first = board.create("first")
    board.create("second", blocked_by=[first.id])
    report = tick(board, [agent(board, "w1", clock), agent(board, "w2", clock)], settings())
    assert [a.task for a in report.assigned] == [first.id]


def test_an_agent_holds_one_task_unless_configured_otherwise(board, clock):
    for i in range(4):
        board.create(f"task {i}")
    busy = board.claim("w1", lease_seconds=30)
    agents = [agent(board, "w1", clock), agent(board, "w2", clock)]

    report = tick(board, agents, settings())
    assert [a.agent for a in report.assigned] == ["w2"]
    assert tick(board, agents, settings()).assigned == []
    assert len(board.held_by("w1")) == 1 and board.held_by("w1")[0].id == busy.id

    report = tick(board, agents, settings(coordinator={"max_tasks_per_agent": 2}))
    assert [a.agent for a in report.assigned] == ["w1", "w2"]
    assert len(board.held_by("w1")) == 2 and len(board.held_by("w2")) == 2


def test_more_slots_round_robin_before_anyone_gets_a_second_task(board, clock):
    for i in range(3):
        board.create(f"task {i}")
    report = tick(board, [agent(board, "w1", clock), agent(board, "w2", clock)], settings(coordinator={"max_tasks_per_agent": 3}))
    assert [a.agent for a in report.assigned] == ["w1", "w2", "w1"]


def test_stale_and_stopped_agents_get_nothing(board, clock):
    board.create("job")
    stale = agent(board, "old", clock)
    clock.advance(31)
    stopped = agent(board, "gone", clock, stopped=True)
    report = tick(board, [stale, stopped], settings(lease={"seconds": 30}))
    assert report.assigned == []
    assert sorted(report.stale_agents) == ["gone", "old"]

    fresh = agent(board, "new", clock)
    report = tick(board, [stale, stopped, fresh], settings(lease={"seconds": 30}))
    assert [a.agent for a in report.assigned] == ["new"]


def test_stale_after_is_counted_in_lease_lengths(board, clock):
    board.create("job")
    record = agent(board, "slow", clock)
    clock.advance(45)
    assert tick(board, [record], settings(lease={"seconds": 30}, coordinator={"stale_after_leases": 2})).assigned != []


def test_a_live_holder_keeps_its_task_even_if_its_agent_record_is_stale(board, clock):
    task = board.create("job")
    board.claim("w1", lease_seconds=30)
    clock.advance(20)
    report = tick(board, [], settings(lease={"seconds": 10}))
    assert report.reclaimed == []
    assert board.get(task.id).owner == "w1"


def test_checkpoints_are_written_for_every_status_change_the_tick_makes(board, clock):
    task = board.create("job", files=["src/a.py"])
    board.claim("w1", lease_seconds=30)
    clock.advance(34)  # past the lease and the reclaim margin
    report = tick(board, [agent(board, "w2", clock)], settings())
    checkpoints = list_checkpoints(board.checkpoint_book, task.id)
    assert len(report.checkpoints) == 2 and len(checkpoints) == 2
    latest = latest_checkpoint(board.checkpoint_book, task.id)
    assert latest.reason == "assign" and latest.document["owner"] == "w2"
    assert "assigned to w2" in latest.note


def test_block_policy_fires_after_n_consecutive_failures_and_shows_why(board, clock):
    task = board.create("flaky")
    claimed = board.claim("w1", lease_seconds=30)
    token = claimed.lease.token
    policy = settings(policies={"block_after_failures": 2})
    board.record_toolcall(task.id, "test", ok=False, token=token)
    assert tick(board, [], policy).policies == []
    board.record_toolcall(task.id, "test", ok=False, token=token)

    report = tick(board, [], policy)

    assert [(p.task, p.status) for p in report.policies] == [(task.id, Status.BLOCKED)]
    blocked = board.get(task.id)
    assert blocked.status == Status.BLOCKED
    assert blocked.policy.name == "block_after_failures" and not blocked.policy.settled
    assert "2 consecutive failed tool calls" in blocked.error
    assert any(r["op"].startswith("status:blocked (policy block_after_failures") for r in board.history(task.id))
    assert latest_checkpoint(board.checkpoint_book, task.id).reason == "policy block_after_failures"
    with pytest.raises(StaleLease):  # the worker's lease ended with the block
        board.record_toolcall(task.id, "edit", token=token)

    # Back in progress (a human unblocked it): the old failures do not fire the policy again.
    board.set_status(task.id, "pending")
    board.claim("w1", lease_seconds=30)
    assert tick(board, [], policy).policies == []


def test_complete_policy_fires_after_n_successful_calls(board, clock):
    task = board.create("easy")
    token = board.claim("w1", lease_seconds=30).lease.token
    policy = settings(policies={"complete_after_successes": 3})
    for _ in range(2):
        board.record_toolcall(task.id, "edit", token=token)
    assert tick(board, [], policy).policies == []
    board.record_toolcall(task.id, "edit", token=token)
    report = tick(board, [], policy)
    assert [(p.task, p.status) for p in report.policies] == [(task.id, Status.COMPLETED)]
    assert board.get(task.id).status == Status.COMPLETED


def test_policies_are_off_by_default(board, clock):
    task = board.create("flaky")
    token = board.claim("w1", lease_seconds=30).lease.token
    for _ in range(5):
        board.record_toolcall(task.id, "test", ok=False, token=token)
    assert tick(board, [], settings()).policies == []
    assert board.get(task.id).status == Status.IN_PROGRESS


def test_a_reclaim_raises_one_lease_expired_alert_until_the_task_moves_on(board, clock):
    task = board.create("job")
    board.claim("w1", lease_seconds=5)
    clock.advance(9)  # past the lease and the reclaim margin
    first = [a for a in tick(board, [], settings()).alerts if a["kind"] == "lease.expired"]
    assert [(a["tasks"], a["agents"], a["severity"]) for a in first] == [([task.id], ["w1"], "warning")]
    written = board.alert_board.read()  # what every dashboard reads: alerts.json, or the alerts table
    assert [a["key"] for a in written if a["kind"] == "lease.expired"] == [first[0]["key"]]
    clock.advance(1)
    again = [a for a in tick(board, [], settings()).alerts if a["kind"] == "lease.expired"]
    assert [(a["key"], a["since"]) for a in again] == [(first[0]["key"], first[0]["since"])]  # one alert, not one per tick
    board.claim("w2")
    assert [a for a in tick(board, [], settings()).alerts if a["kind"] == "lease.expired"] == []


def test_a_quiet_board_is_left_alone(board, clock):
    board.create("job")
    before = board.history()
    report = tick(board, [], settings())
    assert not report.changed_anything and board.history() == before


def test_the_tick_is_deterministic(tmp_path, clock):
    from board.store import Store

    reports = []
    files = []
    for name in ("one", "two"):
        Store.open(tmp_path / name, create=True)
        store = Store.open(tmp_path / name, clock=clock)
        for i in range(6):
            store.create(f"task {i}", priority=["low", "high", "medium"][i % 3])
        store.claim("w9", lease_seconds=1)
        clock.now += timedelta(seconds=5)  # past the lease and the reclaim margin
        agents = [agent(store, f"w{i}", clock) for i in range(3)]
        report = tick(store, agents, settings(), checkpoints=False)
        reports.append((report.reclaimed, report.assigned))
        files.append({p.name: p.read_bytes() for p in sorted((tmp_path / name / ".tasks").glob("task_*.json"))})
        clock.now -= timedelta(seconds=5)
    reclaimed, assigned = reports[0]
    # It did something: took back w9's expired claim and handed out three tasks in claim
    # order (the two high-priority tasks first, then the best medium one).
    assert [(r.task, r.previous_owner) for r in reclaimed] == [("2", "w9")]
    assert [(a.task, a.agent) for a in assigned] == [("2", "w0"), ("5", "w1"), ("3", "w2")]
    assert reports[0] == reports[1]
    assert files[0] == files[1]  # and wrote the same bytes


def test_a_task_claimed_behind_the_coordinators_back_is_not_given_twice(board, clock):
    from board.store import Store

    task = board.create("only one")
    board.sync()
    other = Store.open(board.layout.workspace, clock=clock)
    other.claim("w1", lease_seconds=30)
    report = tick(board, [agent(board, "w2", clock)], settings())
    assert report.assigned == []
    assert board.get(task.id).owner == "w1"


def test_an_agent_that_let_its_lease_expire_gets_nothing_until_it_is_heard_from(board, clock):
    task = board.create("job")
    board.claim("w1", lease_seconds=5)
    silent = agent(board, "w1", clock)  # its last word, at the time it took the lease
    clock.advance(9)  # past the lease and the reclaim margin
    report = tick(board, [silent], settings(lease={"seconds": 30}))
    assert [r.task for r in report.reclaimed] == [task.id] and report.assigned == []
    assert board.get(task.id).status == Status.PENDING

    report = tick(board, [silent, agent(board, "w2", clock)], settings(lease={"seconds": 30}))
    assert [(a.task, a.agent) for a in report.assigned] == [(task.id, "w1")]  # later ticks judge w1 by its record alone (fresh for 30 s here)


def test_a_tick_can_leave_the_alert_detectors_for_later_unless_it_reclaimed(board, clock):
    task = board.create("job")
    quiet = tick(board, [], settings(), alerts=False)
    assert not quiet.alerts_ran and quiet.alerts == []
    board.claim("w1", lease_seconds=5)
    clock.advance(9)  # past the lease and the reclaim margin
    busy = tick(board, [], settings(), alerts=False)
    assert busy.alerts_ran and any(a["kind"] == "lease.expired" and a["tasks"] == [task.id] for a in busy.alerts)
