"""The board's rules hold for every writer: readiness, owners, fencing, leases, parents, policies.

The command line is run in-process (``board.cli.main``) where its exit status and message are
what is checked; the rules themselves are checked on the files they leave on disk.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from board import actions
from tests.conftest import BOTH_BACKENDS, files_only
from board.actions import Who
from board.cli import main
from board.present import prompt, table, task_json
from board.config import BoardSettings
from board.coordinator.policies import apply_policy, decide_policy
from board.errors import BoardError, LeaseHeld, NotReady, StaleLease
from board.status import Status
from board.store import Store
from tests.conftest import REPO
from tests.core.test_store import FakeClock
from tests.disk import archived, history, on_board, snapshot, task_file

pytestmark = BOTH_BACKENDS


def cli(workspace: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["-w", str(workspace), *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def chain(workspace: Path) -> Store:
    """#1 <- #2 <- #3: #2 waits on #1, #3 on #2."""
    store = Store.open(workspace)
    store.create("schema")
    store.create("repository", blocked_by=["1"])
    store.create("api", blocked_by=["2"])
    return store


# -- readiness and owners --------------------------------------------------------------------


def test_an_update_cannot_start_a_task_whose_blockers_are_open(chain: Store, workspace: Path, capsys) -> None:
    before = snapshot(workspace)
    status, _, err = cli(workspace, "task", "update", "2", "--status", "in_progress", capsys=capsys)
    assert status == 2
    assert err.strip() == "board: task 2 is not ready: it waits on #1"
    assert snapshot(workspace) == before


def test_a_task_started_from_the_command_line_has_an_owner(chain: Store, workspace: Path, capsys) -> None:
    status, out, _ = cli(workspace, "task", "update", "1", "--status", "in_progress", capsys=capsys)
    assert status == 0 and out.startswith("#1 in_progress")
    started = task_file(workspace, "1")
    assert started["owner"]  # the person who ran it, never nobody
    assert started["lease"] is None  # a person's task: theirs until they change it
    assert history(workspace)[-1]["actor"] == started["owner"]
    agent = cli(workspace, "task", "update", "1", "--status", "paused", capsys=capsys)
    assert agent[0] == 0


def test_no_front_end_can_start_a_waiting_task_by_any_route(chain: Store) -> None:
    person = Who("ann")
    with pytest.raises(NotReady, match="waits on #1"):
        actions.start(chain, "2", person)
    with pytest.raises(NotReady):
        chain.set_status("2", "in_progress", owner="ann")
    with pytest.raises(NotReady):
        chain.claim_task("2", "agent-1")
    with pytest.raises(NotReady):
        actions.move_to(chain, "2", Status.IN_PROGRESS, person)
    assert chain.get("2").status == Status.PENDING


@files_only("an outside writer edits a task file")
def test_a_start_reads_the_blockers_from_disk_not_from_a_stale_index(chain: Store, workspace: Path) -> None:
    # Another process completes #1 behind this store's back (an outside writer, no history line).
    doc = task_file(workspace, "1")
    doc.update(status="completed", progress=100, version=doc["version"] + 1)
    (workspace / ".tasks" / "task_1.json").write_text(json.dumps(doc))
    started = actions.start(chain, "2", Who("ann"))
    assert (started.status, started.owner) == (Status.IN_PROGRESS, "ann")


def test_in_progress_always_has_an_owner(chain: Store) -> None:
    with pytest.raises(BoardError, match="needs an owner"):
        chain.set_status("1", "in_progress")
    assert chain.get("1").status == Status.PENDING


# -- leases ----------------------------------------------------------------------------------


def test_a_heartbeat_renews_a_lease_by_its_own_length(workspace: Path) -> None:
    clock = FakeClock()
    store = Store.open(workspace, clock=clock)
    store.create("long job")
    claimed = store.claim("alice", lease_seconds=600)
    assert claimed.lease.seconds == 600
    clock.advance(100)
    [renewed] = store.heartbeat("alice")
    assert renewed.lease.expires_at == clock.now + timedelta(seconds=600)
    clock.advance(500)
    assert store.reclaim_expired() == []  # 30 s leases would have been reclaimed long ago
    clock.advance(101)
    assert [t.id for t in store.reclaim_expired()] == ["1"]


def test_the_heartbeat_command_keeps_each_lease_length(workspace: Path, capsys) -> None:
    Store.open(workspace).create("long job")
    assert cli(workspace, "claim", "--agent", "alice", "--lease", "600", capsys=capsys)[0] == 0
    assert cli(workspace, "heartbeat", "--agent", "alice", capsys=capsys)[0] == 0
    lease = task_file(workspace, "1")["lease"]
    left = datetime.fromisoformat(lease["expiresAt"].replace("Z", "+00:00")) - datetime.now(UTC)
    assert lease["seconds"] == 600 and left > timedelta(seconds=500)


@files_only("an outside writer edits a task file, and the index of work in progress is lost")
def test_the_heartbeat_command_renews_what_the_agent_holds_now_and_nothing_else(workspace: Path, capsys) -> None:
    """It reads only the tasks the board's index of work in progress names for the agent: what
    another process changed since is read fresh, and an index that lost the agent's entries
    (deleted, a machine's crash) sends it to the whole board rather than let a lease lapse."""
    store = Store.open(workspace)
    for n in range(5):
        store.create(f"job {n}")
    claimed = [store.claim("alice", max_held=None) for _ in range(4)]
    mine = [t.id for t in claimed]
    theirs = store.claim("bob", max_held=None).id
    # Another process gives one back: the index of work in progress moves with it.
    subprocess.run([sys.executable, "-m", "board", "-w", str(workspace), "release", mine[1], "--token", str(claimed[1].lease.token)], check=True, capture_output=True)
    # An outside writer takes another off her, behind the index's back.
    path = workspace / ".tasks" / f"task_{mine[3]}.json"
    document = json.loads(path.read_text())
    path.write_text(json.dumps({**document, "status": "pending", "owner": "", "lease": None, "version": document["version"] + 1}))
    before = {t: task_file(workspace, t)["version"] for t in [*mine, theirs]}
    status, out, _ = cli(workspace, "heartbeat", "--agent", "alice", capsys=capsys)
    assert (status, out.strip()) == (0, f"renewed 2 lease(s): #{mine[0]}, #{mine[2]}")
    after = {t: task_file(workspace, t)["version"] for t in [*mine, theirs]}
    assert after == {**before, mine[0]: before[mine[0]] + 1, mine[2]: before[mine[2]] + 1}
    (workspace / ".tasks" / "active.json").unlink()
    (workspace / ".tasks" / "active.journal").unlink()
    status, out, _ = cli(workspace, "heartbeat", "--agent", "alice", capsys=capsys)
    assert (status, out.strip()) == (0, f"renewed 2 lease(s): #{mine[0]}, #{mine[2]}")


# -- fencing ---------------------------------------------------------------------------------


def test_only_the_lease_holder_finishes_a_leased_task(workspace: Path, capsys) -> None:
    store = Store.open(workspace)
    store.create("t")
    token = store.claim("alice", lease_seconds=300).lease.token
    before = snapshot(workspace)
    for args in (
        ["task", "update", "1", "--status", "completed"],
        ["task", "update", "1", "--progress", "90"],
        ["task", "update", "1", "--owner", "mallory"],
        ["release", "1"],
    ):
        status, _, err = cli(workspace, *args, capsys=capsys)
        assert status == 2 and err.count("\n") == 1
        assert "held by alice" in err and re.search(rf"\b{token}\b", err) is None  # the key is never handed out
    assert snapshot(workspace) == before
    # What is not the holder's to decide may change: a person re-prioritises a running task.
    assert cli(workspace, "task", "update", "1", "--priority", "high", capsys=capsys)[0] == 0
    status, _, _ = cli(workspace, "task", "update", "1", "--status", "completed", "--token", str(token), capsys=capsys)
    assert status == 0 and task_file(workspace, "1")["status"] == "completed"


def test_a_person_may_force_and_history_says_who(workspace: Path, capsys) -> None:
    store = Store.open(workspace)
    store.create("t")
    store.claim("alice", lease_seconds=300)
    status, _, _ = cli(workspace, "task", "update", "1", "--status", "failed", "--error", "wrong approach", "--force", capsys=capsys)
    assert status == 0
    last = history(workspace)[-1]
    assert last["forced"] is True and last["changes"]["status"] == ["in_progress", "failed"]
    assert task_file(workspace, "1")["error"] == "wrong approach"


def test_a_stale_token_is_refused_without_revealing_the_current_one(workspace: Path) -> None:
    clock = FakeClock()
    store = Store.open(workspace, clock=clock)
    store.create("t")
    old = store.claim("alice", lease_seconds=30).lease.token
    clock.advance(31)
    store.reclaim_expired()
    new = store.claim("bob", lease_seconds=30).lease.token
    with pytest.raises(StaleLease) as refused:
        actions.complete(store, "1", Who("alice", token=old))
    assert "bob" in str(refused.value) and str(new) not in str(refused.value).replace(f"task {store.get('1').id}", "")
    assert store.get("1").owner == "bob"


def test_a_worker_command_acts_with_the_token_its_worker_gave_it(workspace: Path, capsys, monkeypatch) -> None:
    store = Store.open(workspace)
    store.create("t")
    token = store.claim("worker-1", lease_seconds=300).lease.token
    monkeypatch.setenv("BOARD_TASK_ID", "1")
    monkeypatch.setenv("BOARD_LEASE_TOKEN", str(token))
    monkeypatch.setenv("BOARD_AGENT", "worker-1")
    assert cli(workspace, "task", "update", "1", "--progress", "50", capsys=capsys)[0] == 0
    assert task_file(workspace, "1")["progress"] == 50
    assert history(workspace)[-1]["actor"] == "worker-1"


def test_an_expired_lease_no_longer_fences(workspace: Path) -> None:
    clock = FakeClock()
    store = Store.open(workspace, clock=clock)
    store.create("t")
    store.claim("alice", lease_seconds=30)
    clock.advance(31)
    released = actions.requeue(store, "1", Who("ann"))
    assert (released.status, released.owner) == (Status.PENDING, "")
    assert "forced" not in history(workspace)[-1]


def test_the_dashboard_override_is_only_needed_under_a_live_lease(workspace: Path) -> None:
    clock = FakeClock()
    store = Store.open(workspace, clock=clock)
    store.create("t")
    task = store.claim("alice", lease_seconds=30)
    assert actions.needs_override(task, clock.now) == "alice"
    assert actions.needs_override(task, clock.now + timedelta(seconds=31)) is None
    with pytest.raises(LeaseHeld):
        actions.pause(store, "1", Who("ann"))
    assert actions.pause(store, "1", Who("ann", force=True)).status == Status.PAUSED


# -- parents ---------------------------------------------------------------------------------


@pytest.fixture
def family(workspace: Path) -> Store:
    """#1 is the parent of #2 and #3."""
    store = Store.open(workspace)
    store.create("release")
    store.create("code", parent="1")
    store.create("docs", parent="1")
    return store


def test_a_parent_with_open_children_is_neither_claimable_nor_startable(family: Store) -> None:
    assert family.graph.ready_ids() == {"2", "3"}
    with pytest.raises(NotReady, match="sub-tasks #2, #3 are not finished"):
        actions.start(family, "1", Who("ann"))
    first, second = family.claim("a"), family.claim("b")
    assert {first.id, second.id} == {"2", "3"}
    assert family.claim("c") is None
    actions.complete(family, "2", Who("a", token=first.lease.token))
    actions.complete(family, "3", Who("b", token=second.lease.token))
    assert family.graph.is_ready("1")
    assert family.claim("c").id == "1"


def test_every_output_shows_a_parents_derived_progress(family: Store, workspace: Path, capsys) -> None:
    token = family.claim_task("2", "a").lease.token
    family.update("2", progress=50, token=token)
    # #2 at 50 %, #3 at 0 %: the parent is at 25 %, though its own file says 0.
    assert task_file(workspace, "1")["progress"] == 0
    parent = family.get("1")
    assert family.graph.progress(parent) == 25
    assert task_json(parent, family.graph)["derived"]["progress"] == 25
    assert " 25% " in table([parent], family.graph)
    assert "25%" in prompt([parent], family.graph)
    _, out, _ = cli(workspace, "task", "show", "1", capsys=capsys)
    assert "progress   25%" in out
    _, out, _ = cli(workspace, "task", "list", capsys=capsys)
    assert out.splitlines()[1].split()[4] == "25%"
    # A cancelled sub-task is not work to do: it leaves the mean.
    actions.cancel(family, "3", Who("ann"))
    assert family.graph.progress(family.get("1")) == 50


def show_lines(workspace: Path, task_id: str, capsys) -> dict[str, str]:
    status, out, err = cli(workspace, "task", "show", task_id, capsys=capsys)
    assert (status, err) == (0, "")
    return {line.split()[0]: line.split(None, 1)[1] for line in out.splitlines()[1:] if line.startswith("  ")}


@files_only("the index of sub-tasks' parents is kept beside the task files, and an outside writer edits one")
def test_task_show_reads_a_parents_sub_tasks_and_blockers_alone_and_says_what_the_whole_board_would(family: Store, workspace: Path, capsys) -> None:
    """``task show`` reads the task, its blockers and its sub-tasks down the tree (found through
    an index of parents the first whole read writes), and says what the whole board says."""
    family.create("gate")  # 4
    family.create("release notes", parent="3")  # 5, a grandchild of #1
    family.add_dependency("1", "4")
    token = family.claim_task("2", "a").lease.token
    family.update("2", progress=50, token=token)
    parents = workspace / ".tasks" / "parents.json"
    parents.unlink(missing_ok=True)
    # No index yet: the whole board is read, and the index written for the next command.
    assert show_lines(workspace, "1", capsys)["progress"] == "25% (from its sub-tasks)"
    assert json.loads(parents.read_text())["tasks"] == {"2": {"parent": "1"}, "3": {"parent": "1"}, "5": {"parent": "3"}}
    # Through the index: a sub-task added since (noted as it was written), a grandchild's
    # progress, a sub-task an outside writer gave another parent (read fresh, no longer one).
    family.create("changelog", parent="1")  # 6
    token5 = family.claim_task("5", "b").lease.token
    family.update("5", progress=80, token=token5)
    path = workspace / ".tasks" / "task_2.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "parent": "4"}))
    shown = show_lines(workspace, "1", capsys)
    whole = Store.open(workspace)
    parent = whole.get("1")
    assert whole.graph.progress(parent) == 40  # #3 at 80 (from #5), #6 at 0
    assert shown["progress"] == "40% (from its sub-tasks)"
    assert shown["status"] == "pending" and shown["blocked"] == "by #4  (open: #4)"
    # What that look saw of #2's new parent went into the index.
    assert show_lines(workspace, "4", capsys)["progress"] == f"{whole.graph.progress(whole.get('4'))}% (from its sub-tasks)" == "50% (from its sub-tasks)"


# -- policy marks ----------------------------------------------------------------------------


def _fire(store: Store, settings: BoardSettings) -> None:
    decision = decide_policy(store.get("1"), settings)
    assert decision is not None
    apply_policy(store, decision, store.clock())


def test_a_policy_status_carries_its_mark_and_a_person_can_undo_it(workspace: Path) -> None:
    store = Store.open(workspace)
    store.create("flaky")
    token = store.claim("alice", lease_seconds=300).lease.token
    for _ in range(2):
        store.record_toolcall("1", "test", ok=False, token=token)
    _fire(store, BoardSettings.model_validate({"policies": {"block_after_failures": 2}}))
    blocked = store.get("1")
    assert (blocked.status, blocked.policy.name, blocked.policy.owner) == (Status.BLOCKED, "block_after_failures", "alice")
    assert "2 consecutive failed tool calls" in blocked.policy.reason
    undone = actions.undo_policy(store, "1", Who("ann"))
    assert (undone.status, undone.owner, undone.lease.owner) == (Status.IN_PROGRESS, "alice", "alice")
    assert undone.policy.settled and history(workspace)[-1]["op"] == "undo policy"
    with pytest.raises(BoardError, match="nothing to undo"):
        actions.undo_policy(store, "1", Who("ann"))


def test_an_undone_policy_gives_a_persons_task_back_without_a_lease(workspace: Path) -> None:
    """A task a person started holds no lease; a policy undone gives it back to them the same
    way, never under a lease the coordinator would take back from under them."""
    store = Store.open(workspace)
    store.create("by hand")
    actions.start(store, "1", Who("ann"))
    for _ in range(2):
        store.record_toolcall("1", "test", ok=False)
    _fire(store, BoardSettings.model_validate({"policies": {"block_after_failures": 2}}))
    assert store.get("1").status == Status.BLOCKED
    undone = actions.undo_policy(store, "1", Who("ann"))
    assert (undone.status, undone.owner, undone.lease) == (Status.IN_PROGRESS, "ann", None)
    assert store.reclaim_expired(actor="coordinator", margin=timedelta(0)) == []


def test_a_policy_completion_can_be_undone_until_a_dependent_starts(workspace: Path) -> None:
    store = Store.open(workspace)
    store.create("guessed done")
    store.create("next", blocked_by=["1"])
    token = store.claim("alice", lease_seconds=300).lease.token
    store.record_toolcall("1", "edit", token=token, progress=40)
    settings = BoardSettings.model_validate({"policies": {"complete_after_successes": 1}})
    _fire(store, settings)
    assert store.get("1").status == Status.COMPLETED and store.graph.is_ready("2")
    undone = actions.undo_policy(store, "1", Who("ann"))
    assert (undone.status, undone.progress, undone.completed_at) == (Status.IN_PROGRESS, 40, None)
    assert not store.graph.is_ready("2")
    # Fired again and this time #2 starts on it: the completion now stands.
    store.record_toolcall("1", "edit", token=undone.lease.token)
    _fire(store, settings)
    store.claim("bob")
    with pytest.raises(BoardError, match="#2 already started"):
        actions.undo_policy(store, "1", Who("ann"))


def test_a_status_a_person_sets_is_not_a_policys(workspace: Path) -> None:
    store = Store.open(workspace)
    store.create("t")
    token = store.claim("alice", lease_seconds=300).lease.token
    for _ in range(2):
        store.record_toolcall("1", "test", ok=False, token=token)
    _fire(store, BoardSettings.model_validate({"policies": {"block_after_failures": 2}}))
    actions.requeue(store, "1", Who("ann"))
    assert store.get("1").policy.settled
    with pytest.raises(BoardError, match="nothing to undo"):
        actions.undo_policy(store, "1", Who("ann"))


# -- hygiene ---------------------------------------------------------------------------------


def test_the_command_line_prints_no_library_warnings(workspace: Path) -> None:
    Store.open(workspace).create("t")
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONWARNINGS": "default"}
    done = subprocess.run(
        [sys.executable, "-m", "board", "-w", str(workspace), "task", "update", "1", "--priority", "high"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert task_file(workspace, "1")["priority"] == "high"


# -- cancelled blockers ----------------------------------------------------------------------


def test_board_check_and_the_run_summary_name_a_cancelled_blocker(chain: Store, workspace: Path, capsys) -> None:
    from board.coordinator.run import board_progress, final_summary

    actions.cancel(chain, "1", Who("ann"))
    status, out, _ = cli(workspace, "check", capsys=capsys)
    assert status == 1 and "#2 waits on #1, which was cancelled: drop the dependency or reopen #1" in out
    summary = "\n".join(final_summary(board_progress(Store.open(workspace).graph)))
    assert "#2: waits on #1 (cancelled): it can never start; drop the dependency (board task update 2 --remove-blocked-by 1)" in summary
    status, _, _ = cli(workspace, "task", "update", "2", "--remove-blocked-by", "1", capsys=capsys)
    assert status == 0 and task_file(workspace, "2")["blockedBy"] == [] and task_file(workspace, "1")["blocks"] == []
    assert cli(workspace, "check", capsys=capsys)[0] == 0
    assert Store.open(workspace).graph.is_ready("2")


# -- seed 001's files ------------------------------------------------------------------------


def seed_001_write(workspace: Path, task: dict) -> None:
    """How seed 001's TaskManager saves a task: plain json.dumps, integer ids, no version."""
    (workspace / ".tasks" / f"task_{task['id']}.json").write_text(json.dumps(task, indent=2))


def seed_001_complete(workspace: Path, task_id: int) -> None:
    """Seed 001's unblocking: mark it completed and remove it from every dependent's blockedBy."""
    for path in (workspace / ".tasks").glob("task_*.json"):
        task = json.loads(path.read_text())
        if task["id"] == task_id:
            task["status"] = "completed"
        if task_id in task.get("blockedBy", []):
            task["blockedBy"].remove(task_id)
        path.write_text(json.dumps(task, indent=2))


@files_only("seed 001 writes its own files")
def test_a_seed_001_board_keeps_integer_ids_and_its_own_unblocking_works(workspace: Path, capsys) -> None:
    seed_001_write(workspace, {"id": 1, "subject": "schema", "status": "pending", "blockedBy": [], "blocks": [2], "owner": ""})
    seed_001_write(workspace, {"id": 2, "subject": "repository", "status": "pending", "blockedBy": [1], "blocks": [], "owner": ""})
    # board works on it: a claim, a tool call, a new task blocked by #2.
    assert cli(workspace, "claim", "--agent", "alice", capsys=capsys)[0] == 0
    status, out, _ = cli(workspace, "task", "create", "api", "--blocked-by", "2", capsys=capsys)
    assert (status, out.strip()) == (0, "3")
    for task_id in (1, 2, 3):
        doc = task_file(workspace, str(task_id))
        assert doc["id"] == task_id and all(type(i) is int for i in doc["blockedBy"] + doc["blocks"])
    assert task_file(workspace, "2")["blocks"] == [3] and task_file(workspace, "3")["blockedBy"] == [2]
    # Seed 001's own code keeps working on what board wrote: it completes #1 its way.
    seed_001_complete(workspace, 1)
    assert task_file(workspace, "2")["blockedBy"] == [] and task_file(workspace, "1")["blocks"] == [2]
    status, out, _ = cli(workspace, "check", capsys=capsys)
    assert status == 0, out  # one-sided because #1 is completed: seed 001's unblocking, not an error
    before = snapshot(workspace)
    assert cli(workspace, "check", "--fix", capsys=capsys)[0] == 0
    assert snapshot(workspace) == before  # --fix never undoes it
    assert Store.open(workspace).graph.is_ready("2")


@files_only("seed 001 writes its own files")
def test_an_open_blocker_missing_from_blocked_by_is_still_a_broken_edge(workspace: Path) -> None:
    seed_001_write(workspace, {"id": 1, "subject": "schema", "status": "pending", "blockedBy": [], "blocks": [2], "owner": ""})
    seed_001_write(workspace, {"id": 2, "subject": "repository", "status": "pending", "blockedBy": [], "blocks": [], "owner": ""})
    assert [p.kind for p in Store.open(workspace).check()] == ["graph.asymmetric"]


# -- delete and restore ----------------------------------------------------------------------


def test_delete_refuses_while_tasks_depend_on_it_and_changes_nothing(chain: Store, workspace: Path, capsys) -> None:
    chain.create("sub-task", parent="3")
    before = snapshot(workspace)
    status, _, err = cli(workspace, "task", "delete", "2", capsys=capsys)
    assert status == 2 and err.strip() == "board: task 2 is not deleted: #3 waits on it; a person can delete it anyway with --force (those links are dropped on both sides)"
    status, _, err = cli(workspace, "task", "delete", "3", capsys=capsys)
    assert status == 2 and "#4 is its sub-task" in err
    assert snapshot(workspace) == before


def test_delete_archives_a_task_drops_what_waits_on_it_and_restore_brings_it_back(chain: Store, workspace: Path, capsys) -> None:
    status, out, _ = cli(workspace, "task", "delete", "2", "--force", capsys=capsys)
    assert status == 0 and "board task restore 2" in out
    assert not on_board(workspace, "2") and archived(workspace, "2")
    assert task_file(workspace, "1")["blocks"] == [] and task_file(workspace, "3")["blockedBy"] == []
    assert Store.open(workspace).graph.is_ready("3")  # nothing waits on a task that is gone
    assert cli(workspace, "check", capsys=capsys)[0] == 0
    assert cli(workspace, "task", "create", "next", capsys=capsys)[1].strip() == "4"  # the id is not reused
    status, out, _ = cli(workspace, "task", "restore", "2", capsys=capsys)
    assert status == 0 and out.startswith("#2 pending")
    assert task_file(workspace, "2")["blockedBy"] == ["1"] and task_file(workspace, "1")["blocks"] == ["2"]
    assert task_file(workspace, "3")["blockedBy"] == ["2"]
    assert [h["op"] for h in history(workspace) if h["task"] == "2"][-2:] == ["delete", "restore"]
    assert cli(workspace, "task", "restore", "2", capsys=capsys)[0] == 2  # nothing left to restore


def test_a_leased_task_is_deleted_only_by_its_holder_or_with_force(workspace: Path, capsys) -> None:
    store = Store.open(workspace)
    store.create("t")
    store.claim("alice", lease_seconds=300)
    before = snapshot(workspace)
    status, _, err = cli(workspace, "task", "delete", "1", capsys=capsys)
    assert status == 2 and "held by alice" in err and snapshot(workspace) == before
    assert cli(workspace, "task", "delete", "1", "--force", capsys=capsys)[0] == 0
    assert history(workspace)[-1]["forced"] is True
    cli(workspace, "task", "restore", "1", capsys=capsys)
    restored = task_file(workspace, "1")
    assert (restored["status"], restored["owner"], restored["lease"]) == ("pending", "", None)  # alice stopped


def test_edges_added_together_are_checked_together_for_a_cycle(chain: Store, workspace: Path, capsys) -> None:
    chain.create("docs")
    before = snapshot(workspace)
    # Each edge alone is fine; together they close 1 -> 4 -> 3 -> 2 -> 1.
    status, _, err = cli(workspace, "task", "update", "4", "--add-blocked-by", "3", "--add-blocks", "1", capsys=capsys)
    assert status == 2 and "cycle" in err and "#4" in err
    assert snapshot(workspace) == before


def test_a_person_resuming_an_agents_task_hands_it_back_under_the_boards_lease(workspace: Path) -> None:
    from board.coordinator.tick import tick

    (workspace / ".tasks" / "board.toml").write_text("[lease]\nseconds = 45\n")
    clock = FakeClock()
    store = Store.open(workspace, clock=clock)
    store.create("needs an answer")
    token = store.claim("dave", lease_seconds=45).lease.token
    actions.wait(store, "1", Who("dave", token=token))
    resumed = actions.resume(store, "1", Who("ann"))
    assert (resumed.owner, resumed.lease.owner) == ("dave", "dave")
    assert resumed.lease.expires_at == clock.now + timedelta(seconds=45)
    clock.advance(49)  # dave is gone: nobody renews it (past the lease and the reclaim margin)
    report = tick(store, [], BoardSettings.model_validate({"lease": {"seconds": 45}}), checkpoints=False)
    assert [r.task for r in report.reclaimed] == ["1"] and store.graph.is_ready("1")
    # A person resuming their own task keeps it, with no lease to run out.
    store.claim_task("1", "ann")
    actions.pause(store, "1", Who("ann", token=store.get("1").lease.token))
    assert actions.resume(store, "1", Who("ann")).lease is None
