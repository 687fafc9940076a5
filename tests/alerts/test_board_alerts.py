"""Alerts from the board's own files: graph, invalid files, leases, stale writes, agents, people,
checkpoints; and the identity of an alert across evaluations (one alert per condition)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from board.alerts import KINDS, alerts_by_task, read_alerts
from board.checkpoints import write_checkpoint
from board.model import utcnow
from board.store import Store
from tests.alerts.conftest import board, of_kind, refresh, start, token_of
from tests.conftest import BOTH_BACKENDS, files_only

pytestmark = BOTH_BACKENDS

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def write_task(workspace: Path, task_id: str, **fields: object) -> None:
    """A task file written by hand, the way another tool might."""
    document = {"id": task_id, "subject": f"task {task_id}", "status": "pending", "blockedBy": [], "blocks": [], **fields}
    (workspace / ".tasks" / f"task_{task_id}.json").write_text(json.dumps(document))


@files_only("task files written by hand, as another tool would write them")
def test_hand_written_cycle_dangling_and_one_sided_edges(workspace: Path) -> None:
    write_task(workspace, "1", blockedBy=["2"], blocks=["2"])
    write_task(workspace, "2", blockedBy=["1"], blocks=["1"])
    write_task(workspace, "3", blockedBy=["99"])
    write_task(workspace, "4", blockedBy=["5"])
    write_task(workspace, "5")
    alerts = refresh(workspace)

    cycle = of_kind(alerts, "graph.cycle")
    assert len(cycle) == 1 and set(cycle[0].tasks) == {"1", "2"}
    assert set(cycle[0].files) == {".tasks/task_1.json", ".tasks/task_2.json"}
    dangling = of_kind(alerts, "graph.dangling")
    assert [a.tasks for a in dangling] == [("3",)] and "#99" in dangling[0].message
    asymmetric = of_kind(alerts, "graph.asymmetric")
    assert [a.tasks for a in asymmetric] == [("4", "5")]
    assert all(a.severity == "error" for a in cycle + dangling + asymmetric)

    write_task(workspace, "1")
    write_task(workspace, "2")
    write_task(workspace, "3")
    write_task(workspace, "5", blocks=["4"])
    alerts = refresh(workspace)
    assert [a for a in alerts if a.kind.startswith("graph.")] == []


@files_only("a task file that is not JSON")
def test_invalid_task_file_is_an_error_until_fixed(workspace: Path) -> None:
    start(workspace, "fine", "alice")
    path = workspace / ".tasks" / "task_7.json"
    path.write_text("{not json")
    alerts = of_kind(refresh(workspace), "file.invalid")
    assert len(alerts) == 1
    assert alerts[0].files == (".tasks/task_7.json",)
    assert alerts[0].tasks == ("7",)
    assert "not valid JSON" in alerts[0].message
    assert path.read_text() == "{not json"  # reported, never touched

    write_task(workspace, "7")
    assert of_kind(refresh(workspace), "file.invalid") == []


def test_reclaimed_lease_warns_for_a_window_and_clears_on_a_new_claim(workspace: Path) -> None:
    clock = [T0]
    store = Store.open(workspace, clock=lambda: clock[0])
    task = store.create("work").id
    store.claim_task(task, "alice", lease_seconds=30)
    clock[0] = T0 + timedelta(seconds=31)
    assert [t.id for t in store.reclaim_expired()] == [task]

    alerts = of_kind(refresh(workspace, now=clock[0] + timedelta(seconds=1)), "lease.expired")
    assert len(alerts) == 1
    assert alerts[0].tasks == (task,) and alerts[0].agents == ("alice",)
    assert "lease of alice expired" in alerts[0].message
    # default window: two lease lengths
    assert of_kind(refresh(workspace, now=clock[0] + timedelta(seconds=61)), "lease.expired") == []

    assert of_kind(refresh(workspace, now=clock[0] + timedelta(seconds=2)), "lease.expired") != []
    store.claim_task(task, "bob")
    assert of_kind(refresh(workspace, now=clock[0] + timedelta(seconds=3)), "lease.expired") == []


def test_refused_stale_write_is_info_for_a_while(workspace: Path) -> None:
    task = start(workspace, "work", "alice")
    refused = board(workspace, "task", "update", task, "--progress", "50", "--expect-version", "1")
    assert refused.returncode == 2 and "changed underneath you" in refused.stderr
    now = utcnow()
    alerts = of_kind(refresh(workspace, now=now), "conflict.write")
    assert len(alerts) == 1
    assert alerts[0].severity == "info" and alerts[0].tasks == (task,)
    assert of_kind(refresh(workspace, now=now + timedelta(seconds=301)), "conflict.write") == []


def test_failing_agent_warns_until_a_call_succeeds(workspace: Path) -> None:
    task = start(workspace, "work", "alice")
    store = Store.open(workspace)
    for _ in range(3):
        store.record_toolcall(task, "Bash", ok=False, agent="alice")
    alerts = of_kind(refresh(workspace), "agent.failing")
    assert len(alerts) == 1
    assert alerts[0].agents == ("alice",) and alerts[0].tasks == (task,)
    assert "3 tool calls in a row failed" in alerts[0].message
    store.record_toolcall(task, "Bash", ok=True, agent="alice")
    assert of_kind(refresh(workspace), "agent.failing") == []


def test_waiting_task_is_info_until_resumed(workspace: Path) -> None:
    task = start(workspace, "needs a decision", "alice")
    store = Store.open(workspace)
    store.set_status(task, "waiting", token=token_of(workspace, task))
    alerts = of_kind(refresh(workspace), "human.waiting")
    assert [(a.severity, a.tasks) for a in alerts] == [("info", (task,))]
    store.set_status(task, "in_progress")
    assert of_kind(refresh(workspace), "human.waiting") == []


def test_file_changed_after_a_checkpoint_not_by_its_owner(workspace: Path) -> None:
    (workspace / "src").mkdir()
    target = workspace / "src" / "app.py"
    target.write_text("v1\n")
    task = start(workspace, "edit the app", "alice", ["src/app.py"])
    store = Store.open(workspace)
    write_checkpoint(store, task, reason="claim")
    assert of_kind(refresh(workspace), "drift.external_change") == []

    target.write_text("changed behind the task's back\n")
    alerts = of_kind(refresh(workspace), "drift.external_change")
    assert len(alerts) == 1
    assert alerts[0].tasks == (task,) and alerts[0].files == ("src/app.py",)
    assert "not by alice" in alerts[0].message

    target.write_text("v1\n")  # changed back
    assert of_kind(refresh(workspace), "drift.external_change") == []

    target.write_text("alice's own edit\n")
    store.record_toolcall(task, "Edit", files=["src/app.py"], agent="alice")
    assert of_kind(refresh(workspace), "drift.external_change") == []

    target.write_text("someone else again\n")
    write_checkpoint(store, task, reason="request")  # a new checkpoint accounts for it
    assert of_kind(refresh(workspace), "drift.external_change") == []


def test_the_same_condition_is_one_alert_that_keeps_its_first_seen_time(workspace: Path) -> None:
    task = start(workspace, "needs a decision", "alice")
    Store.open(workspace).set_status(task, "waiting", token=token_of(workspace, task))
    first = refresh(workspace, now=T0)
    alert_board = Store.open(workspace, whole=False).alert_board
    written = alert_board.stamp()

    second = refresh(workspace, now=T0 + timedelta(seconds=5))
    assert [a.key for a in second] == [a.key for a in first]
    assert second[0].since == T0
    assert second[0].age(T0 + timedelta(seconds=5)) == timedelta(seconds=5)
    assert alert_board.stamp() == written  # unchanged content is not rewritten
    assert read_alerts(Store.open(workspace, whole=False).alert_board) == second
    assert read_alerts(Store.open(workspace, whole=False).alert_board)[0].since == T0

    Store.open(workspace).set_status(task, "in_progress")
    assert refresh(workspace, now=T0 + timedelta(seconds=6)) == []
    assert alert_board.read() == []


@files_only("a dangling blocker, which only a task file written by hand can have")
def test_board_alerts_prints_severity_kind_message_and_tasks(workspace: Path) -> None:
    write_task(workspace, "1", blockedBy=["9"])
    done = board(workspace, "alerts")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("ERROR") and "graph.dangling" in first and "[#1]" in first
    listed = json.loads(board(workspace, "alerts", "--json").stdout)
    assert listed[0]["kind"] == "graph.dangling"
    assert set(listed[0]) == {"key", "kind", "severity", "tasks", "agents", "files", "message", "action", "since"}


def test_every_kind_of_the_spec_has_a_severity() -> None:
    assert set(KINDS) == {
        "conflict.files", "conflict.reservation", "conflict.write", "drift.upstream", "drift.force_push",
        "drift.dirty", "drift.external_change", "lease.expired", "graph.cycle", "graph.dangling",
        "graph.asymmetric", "file.invalid", "agent.failing", "agent.idle_with_task", "human.waiting", "hooks.broken",
        "budget.near", "budget.over", "agent.unreachable", "merge.conflict",
    }  # fmt: skip


@files_only("a dangling blocker, which only a task file written by hand can have")
def test_alerts_by_task_groups_worst_first(workspace: Path) -> None:
    write_task(workspace, "1", blockedBy=["9"], status="waiting", owner="alice")
    grouped = alerts_by_task(refresh(workspace))
    assert [a.kind for a in grouped["1"]] == ["graph.dangling", "human.waiting"]


@files_only("edges changed in task files by hand")
def test_graph_problems_are_recomputed_only_when_dependencies_change(workspace: Path) -> None:
    """Progress and status updates reuse the last graph check; an edge or parent change redoes it."""
    from board.alerts.evaluate import _GraphProblemsCache

    write_task(workspace, "1", blocks=["2"])
    write_task(workspace, "2", blockedBy=["1"])
    store = Store.open(workspace)
    store.load()
    cache = _GraphProblemsCache()
    builds: list[int] = []

    def graph():
        builds.append(1)
        return store.graph

    assert cache.problems(store.tasks, graph) == [] and len(builds) == 1
    store.update("1", progress=50)
    store.set_status("1", "in_progress", owner="ann")
    assert cache.problems(store.tasks, graph) == [] and len(builds) == 1  # nothing structural changed
    write_task(workspace, "2", blockedBy=["1", "9"], version=5)  # a dangling edge, by hand
    store.rescan()  # written behind the store's back
    problems = cache.problems(store.tasks, graph)
    assert len(builds) == 2 and [(p.kind, p.tasks) for p in problems] == [("graph.dangling", ("2",))]
    write_task(workspace, "2", blockedBy=["1", "9"], parent="77", version=6)
    store.rescan()  # written behind the store's back
    problems = cache.problems(store.tasks, graph)
    assert len(builds) == 3 and len(problems) == 2


def test_a_cancelled_blocker_raises_an_alert_naming_who_waits_until_someone_acts(workspace: Path) -> None:
    from board import actions
    from board.actions import Who

    store = Store.open(workspace)
    store.create("schema")
    store.create("repository", blocked_by=["1"])
    store.create("api", blocked_by=["1"])
    assert of_kind(refresh(workspace), "graph.cancelled_blocker") == []
    actions.cancel(store, "1", Who("ann"))
    [alert] = of_kind(refresh(workspace), "graph.cancelled_blocker")
    assert (alert.severity, alert.tasks) == ("warning", ("1", "2", "3"))
    assert "#2, #3 wait on #1, which was cancelled" in alert.message
    assert "--remove-blocked-by 1" in alert.action and "reopen #1" in alert.action
    store.remove_dependency("2", "1")
    assert of_kind(refresh(workspace), "graph.cancelled_blocker")[0].tasks == ("1", "3")
    actions.requeue(store, "1", Who("ann"))  # reopened: #3 waits on open work again, as it should
    assert of_kind(refresh(workspace), "graph.cancelled_blocker") == []
