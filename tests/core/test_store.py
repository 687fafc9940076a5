import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from board.errors import BoardError, GraphError, IllegalTransition, StaleLease, TaskNotFound, VersionConflict
from board.status import Status
from board.store import Store

from tests.disk import history, snapshot, task_file, write_task_document
from tests.conftest import BOTH_BACKENDS, files_only

pytestmark = BOTH_BACKENDS


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def test_create_writes_both_sides_of_each_edge_and_logs_history(store: Store, workspace: Path) -> None:
    a = store.create("Design schema")
    b = store.create("Repository layer", blocked_by=[a.id], files=["repo.py"], priority="high")
    assert (a.id, b.id) == ("1", "2")
    assert task_file(workspace, "1")["blocks"] == ["2"]
    assert task_file(workspace, "2")["blockedBy"] == ["1"]
    ops = [(h["task"], h["op"], h["version"]) for h in history(workspace)]
    assert ops == [("1", "create", 1), ("2", "create", 1), ("1", "link", 2)]
    assert history(workspace)[-1]["changes"] == {"blocks": [[], ["2"]]}
    store.close()
    assert not list((workspace / ".tasks").glob(".*.tmp"))


@files_only("seed 001 writes its own files")
def test_ids_continue_after_the_highest_integer_on_disk(store: Store, workspace: Path) -> None:
    (workspace / ".tasks" / "task_41.json").write_text(json.dumps({"id": 41, "subject": "written by seed 001"}))
    (workspace / ".tasks" / "task_zeta.json").write_text(json.dumps({"id": "zeta", "subject": "named"}))
    assert store.create("next").id == "42"
    assert task_file(workspace, "41")["id"] == 41  # untouched until someone writes it


@pytest.mark.parametrize(
    "bad_write",
    [
        lambda s: s.add_dependency("1", "3"),  # cycle 1 -> 3 -> 2 -> 1
        lambda s: s.add_dependency("1", "1"),
        lambda s: s.add_dependency("1", "404"),
        lambda s: s.create("orphan", blocked_by=["404"]),
        lambda s: s.create("orphan", parent="404"),
        lambda s: s.set_status("3", "completed"),
        lambda s: s.set_status("1", "bogus"),
        lambda s: s.update("1", progress=150),
        lambda s: s.update("1", subject=""),
        lambda s: s.update("1", status="completed"),
        lambda s: s.release("1"),
        lambda s: s.claim_task("3", "agent"),
        lambda s: s.claim("bad agent name"),
    ],
)
def test_refused_writes_change_nothing_on_disk(store: Store, workspace: Path, bad_write) -> None:
    store.create("one")
    store.create("two", blocked_by=["1"])
    store.create("three", blocked_by=["2"])
    before = snapshot(workspace)
    with pytest.raises(BoardError) as caught:
        bad_write(store)
    assert "\n" not in str(caught.value)
    assert snapshot(workspace) == before


def test_cycle_refusal_names_the_cycle(store: Store) -> None:
    for _ in range(3):
        store.create("t")
    store.add_dependency("2", "1")
    store.add_dependency("3", "2")
    with pytest.raises(GraphError, match=r"#1 -> #3 -> #2 -> #1"):
        store.add_dependency("1", "3")


def test_compare_and_set_refuses_a_stale_version_and_records_it(store: Store, workspace: Path) -> None:
    task = store.create("edit me")
    store.update("1", description="first", expected_version=task.version)
    with pytest.raises(VersionConflict, match="expected version 1, it is at 2"):
        store.update("1", description="second", expected_version=task.version)
    assert task_file(workspace, "1")["description"] == "first"
    assert history(workspace)[-1]["op"] == "conflict"


def test_another_store_catches_up_through_the_history_log(workspace: Path) -> None:
    writer, reader = Store.open(workspace), Store.open(workspace)
    writer.create("made elsewhere")
    writer.create("second", blocked_by=["1"])
    assert reader.tasks == {}
    changes = reader.sync()
    assert changes.changed == {"1", "2"}
    assert reader.tasks["1"].blocks == ["2"] and reader.graph.ready_ids() == {"1"}
    assert not reader.sync()  # nothing new


@files_only("history.jsonl itself")
def test_stores_keep_following_a_history_log_that_was_emptied_replaced_or_deleted(workspace: Path) -> None:
    """Stores keep the log open between writes and reads; whatever is done to the file by hand,
    new lines must land in the file at the path and every reader must still catch up."""
    writer, reader = Store.open(workspace), Store.open(workspace)
    writer.create("first")
    reader.sync()
    log = workspace / ".tasks" / "history.jsonl"

    log.write_bytes(b"")  # emptied
    writer.update("1", progress=10)
    reader.sync()
    assert reader.tasks["1"].progress == 10
    assert [h["changes"] for h in history(workspace)] == [{"progress": [0, 10]}]

    rotated = log.with_name("history.old")
    log.rename(rotated)  # moved away, and a longer file put in its place
    log.write_bytes(rotated.read_bytes() * 3)
    writer.update("1", progress=20)
    reader.sync()
    assert reader.tasks["1"].progress == 20
    assert history(workspace)[-1]["changes"] == {"progress": [10, 20]}
    assert len(rotated.read_bytes().splitlines()) == 1  # nothing more went to the moved file

    log.unlink()  # deleted
    writer.update("1", progress=30)
    reader.sync()
    assert reader.tasks["1"].progress == 30
    assert [h["changes"] for h in history(workspace)] == [{"progress": [20, 30]}]


@files_only("versions written into files by hand")
@pytest.mark.parametrize("version", [None, 2, 1], ids=["no version", "same version", "lower version"])
@pytest.mark.parametrize("writer", ["this store", "a fresh store"])
def test_an_outside_rewrite_is_the_state_and_the_next_write_logs_it(store: Store, workspace: Path, version: int | None, writer: str) -> None:
    store.create("v1")
    store.update("1", description="newer")  # version 2
    path = workspace / ".tasks" / "task_1.json"
    doc = json.loads(path.read_text())
    doc.update(status="in_progress", owner="claude", description="edited by hand")
    if version is None:
        del doc["version"]
    else:
        doc["version"] = version
    path.write_text(json.dumps(doc))  # plain json.dumps, as an editor or script writes it
    assert store.reread([path]).changed == {"1"}
    assert (store.tasks["1"].status, store.tasks["1"].description) == (Status.IN_PROGRESS, "edited by hand")
    writing = store if writer == "this store" else Store.open(workspace)
    written = writing.update("1", priority="high")
    assert written.version == 3  # the next version, never a repeat of 1 or 2
    *_, outside, own = history(workspace)
    assert (outside["op"], own["op"], own["version"]) == ("outside edit", "update", 3)
    if writer == "this store":  # it saw version 2 itself, so it can say what changed
        assert outside["changes"]["status"] == ["pending", "in_progress"]
        assert outside["changes"]["description"] == ["newer", "edited by hand"]
    else:  # a fresh process knows only what history recorded
        assert outside["changes"]["version"] == [2, version or 0]
    assert own["changes"] == {"priority": ["medium", "high"]}
    assert Store.open(workspace).update("1", progress=10).version == 4  # and it is not logged twice
    assert [h["op"] for h in history(workspace)].count("outside edit") == 1


@files_only("a file half written by an editor")
def test_readers_keep_the_last_good_copy_of_a_half_written_file(store: Store, workspace: Path) -> None:
    store.create("good")
    path = workspace / ".tasks" / "task_1.json"
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])
    changes = store.reread([path])
    assert changes.invalid == {str(path)}
    assert "not valid JSON" in store.invalid[str(path)]
    assert store.tasks["1"].subject == "good"
    path.write_bytes(good)
    store.reread([path])
    assert store.invalid == {}
    path.unlink()
    assert store.reread([path]).removed == {"1"}
    assert "1" not in store.tasks


@files_only("files changed, made and removed by hand")
def test_rescan_finds_changes_made_behind_the_stores_back(store: Store, workspace: Path) -> None:
    store.create("a")
    store.create("b")
    (workspace / ".tasks" / "task_2.json").unlink()
    doc = task_file(workspace, "1")
    doc.update(subject="edited by hand", version=doc["version"] + 1)
    (workspace / ".tasks" / "task_1.json").write_text(json.dumps(doc))
    (workspace / ".tasks" / "task_3.json").write_text(json.dumps({"id": "3", "subject": "dropped in"}))
    (workspace / ".tasks" / "task_4.json").write_text("{")
    changes = store.rescan()
    assert changes.changed == {"1", "3"} and changes.removed == {"2"}
    assert store.tasks["1"].subject == "edited by hand"
    assert list(store.invalid) == [str(workspace / ".tasks" / "task_4.json")]


def test_unknown_fields_survive_store_writes(store: Store, workspace: Path) -> None:
    store.create("keep my fields")
    doc = task_file(workspace, "1")
    doc["vendor"] = {"x": 1}
    write_task_document(workspace, "1", doc)
    store.update("1", progress=10)
    assert task_file(workspace, "1")["vendor"] == {"x": 1}


@files_only("file names")
def test_a_file_whose_id_does_not_match_its_name_is_invalid(store: Store, workspace: Path) -> None:
    (workspace / ".tasks" / "task_5.json").write_text(json.dumps({"id": "6", "subject": "misnamed"}))
    store.rescan()
    assert "does not match the file name" in store.invalid[str(workspace / ".tasks" / "task_5.json")]


def test_leases_heartbeats_reclaim_and_fencing(workspace: Path) -> None:
    clock = FakeClock()
    store = Store.open(workspace, clock=clock)
    store.create("work")
    first = store.claim("alice", lease_seconds=30)
    assert first is not None and first.lease is not None
    assert (first.owner, first.status, first.lease.expires_at) == ("alice", Status.IN_PROGRESS, clock.now + timedelta(seconds=30))
    clock.advance(20)
    store.heartbeat("alice", lease_seconds=30)
    clock.advance(20)
    assert store.reclaim_expired() == []  # renewed at t=20, expires at t=50
    clock.advance(11)
    reclaimed = store.reclaim_expired()
    assert [t.id for t in reclaimed] == ["1"]
    assert (reclaimed[0].status, reclaimed[0].owner, reclaimed[0].lease) == (Status.PENDING, "", None)
    assert "lease of alice expired" in history(workspace)[-1]["reason"]
    second = store.claim("bob")
    assert second is not None and second.lease is not None
    assert second.lease.token > first.lease.token
    with pytest.raises(StaleLease, match="bob holds it"):
        store.set_status("1", "completed", token=first.lease.token)
    with pytest.raises(StaleLease):
        store.record_toolcall("1", "Edit", token=first.lease.token)
    done = store.set_status("1", "completed", token=second.lease.token)
    assert (done.status, done.lease, done.progress, done.completed_at) == (Status.COMPLETED, None, 100, clock.now)


def test_claim_takes_the_best_ready_task_and_respects_the_per_agent_limit(store: Store) -> None:
    store.create("low", priority="low")
    store.create("first of a chain")
    store.create("end of the chain", blocked_by=["2"])
    store.create("urgent", priority="critical")
    assert store.claim("a").id == "4"
    with pytest.raises(BoardError, match="already holds #4"):
        store.claim("a")
    assert store.claim("b").id == "2"  # longest remaining chain beats id order
    assert store.claim("c").id == "1"
    assert store.claim("d") is None


def test_tool_calls_update_counters_and_the_per_task_log(store: Store) -> None:
    store.create("with tools")
    store.record_toolcall("1", "Edit", files=["a.py"], agent="alice", ms=12)
    store.record_toolcall("1", "Bash", ok=False, agent="alice")
    store.record_toolcall("1", "Bash", ok=False, agent="alice")
    calls = store.tasks["1"].tool_calls
    assert (calls.total, calls.ok, calls.failed, calls.consecutive_failures, calls.last_tool) == (3, 1, 2, 2, "Bash")
    log = store.toolcalls("1")
    assert [(r["tool"], r["ok"], r["files"]) for r in log] == [("Edit", True, ["a.py"]), ("Bash", False, []), ("Bash", False, [])]
    store.record_toolcall("1", "Read")
    assert store.tasks["1"].tool_calls.consecutive_failures == 0


def test_status_side_effects(store: Store) -> None:
    store.create("t")
    token = store.claim("alice").lease.token
    failed = store.set_status("1", "failed", error="tests time out", token=token)
    assert (failed.error, failed.lease, failed.owner) == ("tests time out", None, "alice")
    retried = store.set_status("1", "pending")
    assert (retried.error, retried.owner) == (None, "")
    with pytest.raises(IllegalTransition, match="already pending"):
        store.set_status("1", "pending")


def test_check_and_repair_of_one_sided_edges(store: Store, workspace: Path) -> None:
    store.create("a")
    store.create("b", blocked_by=["1"])
    doc = task_file(workspace, "1")
    doc["blocks"] = []
    write_task_document(workspace, "1", doc)
    problems = store.check()
    assert [p.kind for p in problems] == ["graph.asymmetric"]
    assert store.repair_symmetry() == ["#1 now lists #2 in blocks"]
    assert store.check() == []


def test_opening_a_missing_board_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BoardError, match="run 'board init'"):
        Store.open(tmp_path)
    with pytest.raises(TaskNotFound):
        Store.open(tmp_path, create=True).get("1")


def test_a_tool_call_can_carry_progress_in_the_same_write(store):
    task = store.create("job")
    token = store.claim("a").lease.token
    before = len(store.history(task.id))
    updated = store.record_toolcall(task.id, "edit", token=token, progress=40)
    assert (updated.progress, updated.tool_calls.total) == (40, 1)
    assert len(store.history(task.id)) == before + 1
    import pytest

    from board.errors import BoardError

    with pytest.raises(BoardError):
        store.record_toolcall(task.id, "edit", token=token, progress=101)


@files_only("the board's directory")
def test_writing_to_a_board_whose_directory_vanished_is_a_clear_error(store: Store, workspace: Path) -> None:
    store.create("here")
    shutil.rmtree(workspace / ".tasks")
    with pytest.raises(BoardError, match="is gone"):
        store.update("1", progress=5)
    with pytest.raises(BoardError, match="is gone"):
        store.claim("alice")
    assert not (workspace / ".tasks").exists()  # nothing was recreated behind the user's back


@files_only("the board's directory and its lock")
def test_a_store_that_outlives_its_board_directory_locks_the_new_one(store: Store, workspace: Path) -> None:
    """The lock file stays open between writes; a board deleted and made again must not leave
    this store locking the old, unlinked file while other writers lock the new one."""
    import threading

    from filelock import FileLock

    store.create("old board")
    shutil.rmtree(workspace / ".tasks")
    Store.open(workspace, create=True).create("new board")
    other_writer = FileLock(workspace / ".tasks" / ".lock", timeout=0)
    other_writer.acquire()
    writing = threading.Thread(target=store.update, args=("1",), kwargs={"progress": 30})
    writing.start()
    writing.join(timeout=0.5)
    assert writing.is_alive(), "the write went ahead while another writer held the new board's lock"
    assert task_file(workspace, "1")["progress"] == 0
    other_writer.release()
    writing.join(timeout=30)
    assert not writing.is_alive() and task_file(workspace, "1")["progress"] == 30


def test_no_temp_file_is_left_behind_by_a_write_or_a_refused_write(store: Store, workspace: Path) -> None:
    store.create("a")
    store.update("1", progress=10)
    with pytest.raises(VersionConflict):
        store.update("1", expected_version=1, progress=20)
    with pytest.raises(IllegalTransition):
        store.set_status("1", "pending")
    assert store.claim("alice") is not None
    store.close()
    assert [p.name for p in (workspace / ".tasks").iterdir() if p.name.endswith(".tmp")] == []


@files_only("the write protocol's rename")
def test_a_writer_killed_between_the_rename_and_the_log_line_is_completed_by_the_next(store: Store, workspace: Path) -> None:
    store.create("a")
    store.create("b")
    tasks = workspace / ".tasks"
    # What a writer killed right after its rename leaves: the new file, the note, no log line.
    doc = task_file(workspace, "1")
    doc.update(progress=40, version=2)
    (tasks / "task_1.json").write_text(json.dumps(doc))
    record = {"ts": "2026-01-01T00:00:00Z", "task": "1", "version": 2, "actor": "killed", "op": "update", "changes": {"progress": [0, 40]}}
    (tasks / ".history-pending.json").write_text(json.dumps({"record": record, "historySize": (tasks / "history.jsonl").stat().st_size}))
    store.update("2", progress=10)
    lines = [(h["task"], h["version"], h.get("recovered", False)) for h in history(workspace)]
    assert lines[-2:] == [("1", 2, True), ("2", 2, False)]
    assert (tasks / ".history-pending.json").read_bytes() == b""
    assert store.tasks["1"].progress == 40  # the recovered change reached this store's index too


@files_only("the write protocol's note")
def test_a_note_for_a_write_that_never_happened_is_dropped(store: Store, workspace: Path) -> None:
    store.create("a")
    tasks = workspace / ".tasks"
    record = {"ts": "2026-01-01T00:00:00Z", "task": "1", "version": 2, "actor": "killed", "op": "update", "changes": {}}
    (tasks / ".history-pending.json").write_text(json.dumps({"record": record, "historySize": (tasks / "history.jsonl").stat().st_size}))
    store.update("1", description="next")
    assert [(h["version"], h["op"]) for h in history(workspace)] == [(1, "create"), (2, "update")]
    (tasks / ".history-pending.json").write_text('{"record": {"ta')  # torn before the rename
    store.update("1", description="again")
    assert (tasks / ".history-pending.json").read_bytes() == b"" and len(history(workspace)) == 3


@files_only("files half written and removed by hand")
def test_bulk_reading_keeps_the_last_good_copy_and_notices_removals(store: Store, workspace: Path) -> None:
    store.create("a")
    store.create("b")
    listing = list(store.layout.task_files())
    path_a = workspace / ".tasks" / "task_1.json"
    good = path_a.read_bytes()
    path_a.write_text('{"id": "1", "subject": ')  # an editor mid-save
    (workspace / ".tasks" / "task_2.json").unlink()
    changes = store.read_files(listing)
    assert changes.invalid == {str(path_a)} and changes.removed == {"2"}
    assert store.tasks["1"].subject == "a" and "2" not in store.tasks  # last good copy kept
    path_a.write_bytes(good.replace(b'"subject": "a"', b'"subject": "a, saved"'))
    changes = store.read_files(store.layout.task_files())
    assert changes.invalid == {str(path_a)} and changes.changed == {"1"} and not store.invalid
    assert store.tasks["1"].subject == "a, saved"
