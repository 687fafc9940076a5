"""Claude Code task lists read and written in place, as Claude Code itself would see them."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from board.status import Status
from board.store import ClaudeTaskListLayout, Store
from board.store.file_format import CLAUDE_FIELDS

from tests.core.test_cli import board


def claude_writes(directory: Path, task: dict) -> None:
    """What Claude Code does: rewrite the whole file with only its own fields."""
    kept = {key: task[key] for key in CLAUDE_FIELDS if key in task}
    (directory / f"{task['id']}.json").write_text(json.dumps(kept, indent=2))


@pytest.fixture
def task_list(tmp_path: Path) -> Path:
    return make_task_list(tmp_path)


def make_task_list(tmp_path: Path) -> Path:
    """A Claude Code list: #1 completed, #2 waiting on it, #3 on #2; ids issued up to 7."""
    directory = tmp_path / ".claude" / "tasks" / "3f2a-list"
    directory.mkdir(parents=True)
    (directory / ".lock").touch()
    (directory / ".highwatermark").write_text("7")
    claude_writes(directory, {"id": "1", "subject": "Read the codebase", "description": "", "activeForm": "Reading the codebase", "status": "completed", "blocks": ["2"], "blockedBy": [], "metadata": {}})
    claude_writes(directory, {"id": "2", "subject": "Write the parser", "description": "", "status": "pending", "owner": "", "blocks": ["3"], "blockedBy": ["1"], "metadata": {"origin": "plan"}})
    claude_writes(directory, {"id": "3", "subject": "Test the parser", "description": "", "status": "pending", "blocks": [], "blockedBy": ["2"]})
    return directory


def test_a_claude_code_list_is_recognised_and_read(task_list: Path) -> None:
    store = Store.open(task_list)
    assert isinstance(store.layout, ClaudeTaskListLayout)
    assert store.graph.ready_ids() == {"2"}
    assert store.tasks["1"].active_form == "Reading the codebase"
    assert store.tasks["2"].metadata == {"origin": "plan"}
    assert store.check() == []


def test_board_writes_keep_claude_codes_shape(task_list: Path) -> None:
    store = Store.open(task_list)
    claimed = store.claim("worker-1")
    assert claimed is not None and claimed.id == "2"
    store.record_toolcall("2", "Edit", files=["parser.py"], agent="worker-1")
    store.set_status("2", "paused", token=claimed.lease.token)
    on_disk = json.loads((task_list / "2.json").read_text())
    assert set(on_disk) <= set(CLAUDE_FIELDS)
    assert on_disk["status"] == "in_progress"  # the nearest status Claude Code knows
    assert on_disk["owner"] == "worker-1"
    assert on_disk["metadata"]["origin"] == "plan"
    assert on_disk["metadata"]["board"]["status"] == "paused"
    assert on_disk["metadata"]["board"]["toolCalls"]["total"] == 1
    assert Store.open(task_list).tasks["2"].status == Status.PAUSED
    assert not (task_list / ".lock.lock").exists() and (task_list / ".lock").exists()
    assert (task_list / ".board" / "history.jsonl").exists()


def test_a_status_change_made_by_claude_code_wins_and_board_fields_survive(task_list: Path) -> None:
    store = Store.open(task_list)
    claimed = store.claim("worker-1")
    store.set_status("2", "paused", token=claimed.lease.token)
    doc = json.loads((task_list / "2.json").read_text())
    doc["status"] = "completed"
    doc["unknownTopLevel"] = "Claude Code would drop this"
    claude_writes(task_list, doc)
    changes = store.rescan()
    assert changes.changed == {"2"}
    task = store.tasks["2"]
    assert task.status == Status.COMPLETED
    # board's own fields came back from metadata.board
    assert (task.owner, task.version) == ("worker-1", 2) and task.started_at is not None
    assert store.graph.ready_ids() == {"3"}


def test_the_lock_is_reentrant_within_one_store(task_list: Path) -> None:
    store = Store.open(task_list)
    with store.layout.lock():
        assert (task_list / ".lock.lock").is_dir()
        store.claim_task("2", "worker-1")  # takes the lock again inside
        assert (task_list / ".lock.lock").is_dir()
    assert not (task_list / ".lock.lock").exists()
    assert store.tasks["2"].owner == "worker-1"


def test_new_ids_respect_the_high_water_mark(task_list: Path) -> None:
    store = Store.open(task_list)
    created = store.create("Document the parser", blocked_by=["3"])
    assert created.id == "8"
    assert (task_list / ".highwatermark").read_text() == "8"
    assert json.loads((task_list / "3.json").read_text())["blocks"] == ["8"]


def test_writes_wait_for_claude_codes_lock_and_break_a_stale_one(task_list: Path) -> None:
    store = Store.open(task_list)
    held = task_list / ".lock.lock"
    held.mkdir()
    released_at: list[float] = []

    def release_later() -> None:
        time.sleep(0.4)
        released_at.append(time.monotonic())
        held.rmdir()

    threading.Thread(target=release_later).start()
    store.update("3", description="waited for the lock")
    assert released_at and time.monotonic() >= released_at[0]
    assert json.loads((task_list / "3.json").read_text())["description"] == "waited for the lock"

    held.mkdir()
    old = time.time() - 30
    os.utime(held, (old, old))  # a crashed holder's lock, 30 s old
    started = time.monotonic()
    store.update("3", description="broke a stale lock")
    assert time.monotonic() - started < 2
    assert not held.exists()

    held.mkdir()
    ahead = time.time() + 70 * 365 * 86400
    os.utime(held, (ahead, ahead))  # dated decades ahead: never "older than" anything, it held every write 30 s
    started = time.monotonic()
    store.update("3", description="broke a lock from the future")
    assert time.monotonic() - started < 2
    assert not held.exists() and json.loads((task_list / "3.json").read_text())["description"] == "broke a lock from the future"


def test_the_command_line_finds_claude_code_lists(task_list: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    listing = board(tmp_path, "--claude", "3f2a-list", "task", "list", "--format", "prompt")
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.splitlines()[:3] == ["[x] #1 Read the codebase", "[ ] #2 Write the parser", "[ ] #3 Test the parser (blocked by #2)"]
    latest = board(tmp_path, "--claude", "latest", "claim", "--agent", "me")
    assert latest.stdout.startswith("2\t")
    missing = board(tmp_path, "--claude", "nope", "task", "list")
    assert missing.returncode == 2 and "there are: 3f2a-list" in missing.stderr


def claude_ready(directory: Path) -> set[str]:
    """What Claude Code counts as unblocked: pending, and every blocker's file says completed
    (a blocker whose file is gone was completed and deleted)."""
    files = {p.stem: json.loads(p.read_text()) for p in directory.glob("*.json")}
    return {
        task_id for task_id, doc in files.items()
        if doc["status"] == "pending" and not doc.get("metadata", {}).get("_internal")
        and all(b not in files or files[b]["status"] == "completed" for b in doc.get("blockedBy", []))
    }


def test_internal_tasks_are_hidden_and_never_handed_out(task_list: Path, capsys) -> None:
    from board.cli import main

    claude_writes(task_list, {"id": "8", "subject": "teammate bookkeeping", "status": "pending", "blocks": [], "blockedBy": [], "metadata": {"_internal": True}})
    store = Store.open(task_list)
    assert "8" not in store.graph.ready_ids()
    assert store.claim("a").id == "2"
    assert store.claim("b") is None  # #8 is pending with no blockers, but internal
    assert main(["-w", str(task_list), "task", "list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert listed == ["1", "2", "3"]
    assert main(["-w", str(task_list), "task", "list", "--all"]) == 0
    assert "8" in [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]


def test_a_blocker_claude_code_deleted_after_completing_it_counts_as_completed(task_list: Path) -> None:
    (task_list / "1.json").unlink()  # Claude Code deletes completed tasks; 1 <= .highwatermark (7)
    store = Store.open(task_list)
    assert store.graph.ready_ids() == {"2"} == claude_ready(task_list)
    assert [p.kind for p in store.check()] == []  # not a dangling blocker either
    # An id never issued is still a dangling, open blocker.
    doc = json.loads((task_list / "3.json").read_text())
    doc["blockedBy"] = ["2", "99"]
    claude_writes(task_list, doc)
    store.rescan()
    assert [p.kind for p in store.check()] == ["graph.dangling"]


def test_claude_code_and_board_agree_on_what_a_cancelled_blocker_unblocks(task_list: Path) -> None:
    from board import actions
    from board.actions import Who

    store = Store.open(task_list)
    actions.cancel(store, "2", Who("ann"))
    assert json.loads((task_list / "2.json").read_text())["status"] != "completed"
    assert store.graph.ready_ids() == set() == claude_ready(task_list)  # #3 waits, for both
    assert [p.kind for p in store.check()] == ["graph.cancelled_blocker"]
    assert Store.open(task_list).tasks["2"].status == Status.CANCELLED  # board reads its own status back


STALLING_WRITER = """
import sys, time
from pathlib import Path
from board.errors import BoardError
from board.store import Store
list_dir, holding, go = (Path(a) for a in sys.argv[1:])
store = Store.open(list_dir)
try:
    with store.transaction():
        holding.touch()
        while not go.exists():
            time.sleep(0.02)
        store.update("2", progress=55)
except BoardError as error:
    print(error, flush=True)
    sys.exit(5)
"""


def test_a_stalled_board_writer_never_overwrites_claude_nor_removes_its_lock(task_list: Path, tmp_path: Path) -> None:
    """board holds the list's lock and is stopped (SIGSTOP) past the stale threshold. Claude
    Code breaks the stale lock, takes its own and edits the task. When board resumes, its
    write is refused, Claude's edit stands, and Claude's lock is left to Claude."""
    import signal
    import subprocess
    import sys

    from board.store.claude import STALE_AFTER_SECONDS
    from tests.conftest import REPO
    from tests.coordinator.helpers import started, wait_for

    holding, go = tmp_path / "holding", tmp_path / "go"
    writer = started(subprocess.Popen(
        [sys.executable, "-c", STALLING_WRITER, str(task_list), str(holding), str(go)],
        env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, text=True,
    ))
    wait_for(holding.exists, timeout=60, what="board to hold the list's lock")
    writer.send_signal(signal.SIGSTOP)
    try:
        lock_dir = task_list / ".lock.lock"
        assert lock_dir.is_dir()
        # Claude Code, later: the lock has not been refreshed for longer than the stale threshold.
        old = time.time() - STALE_AFTER_SECONDS - 5
        os.utime(lock_dir, (old, old))
        os.rmdir(lock_dir)  # broken as stale
        os.mkdir(lock_dir)  # and taken
        claudes_lock = os.lstat(lock_dir).st_ino
        claude_writes(task_list, {"id": "2", "subject": "Write the parser (Claude's edit)", "description": "", "status": "in_progress", "owner": "claude", "blocks": ["3"], "blockedBy": ["1"]})
        go.touch()
    finally:
        writer.send_signal(signal.SIGCONT)
    out, _ = writer.communicate(timeout=60)
    assert writer.returncode == 5, out
    assert "lock was broken by another writer" in out
    data = json.loads((task_list / "2.json").read_text())
    assert data["subject"] == "Write the parser (Claude's edit)" and data["owner"] == "claude"
    assert "board" not in data.get("metadata", {}) or data["metadata"]["board"].get("progress") != 55
    assert lock_dir.is_dir() and os.lstat(lock_dir).st_ino == claudes_lock, "board removed the lock Claude holds"
    os.rmdir(lock_dir)


def test_a_users_own_metadata_board_value_is_kept(task_list: Path) -> None:
    claude_writes(task_list, {"id": "3", "subject": "Test the parser", "description": "", "status": "pending", "blocks": [], "blockedBy": ["2"], "metadata": {"board": "frontend team", "mine": [1, 2]}})
    assert board(task_list, "task", "update", "3", "--priority", "high").returncode == 0
    assert board(task_list, "task", "update", "3", "--progress", "30").returncode == 0
    metadata = json.loads((task_list / "3.json").read_text())["metadata"]
    assert metadata["board"] == "frontend team" and metadata["mine"] == [1, 2]
    assert metadata["boardTask"]["priority"] == "high" and metadata["boardTask"]["progress"] == 30
    task = Store.open(task_list).get("3")
    assert task.priority == "high" and task.progress == 30 and task.metadata == {"board": "frontend team", "mine": [1, 2]}


def test_a_top_level_field_board_does_not_know_stays_at_the_top_level(task_list: Path) -> None:
    """Claude Code's own newer fields stay where it reads them, whatever board writes."""
    doc = json.loads((task_list / "2.json").read_text())
    doc["createdBy"] = {"session": "abc"}  # a field of a later Claude Code
    (task_list / "2.json").write_text(json.dumps(doc))
    store = Store.open(task_list)
    claimed = store.claim("worker-1")
    assert claimed is not None and claimed.id == "2"
    store.update("2", progress=30, token=claimed.lease.token)
    on_disk = json.loads((task_list / "2.json").read_text())
    assert on_disk["createdBy"] == {"session": "abc"} and "createdBy" not in on_disk["metadata"]["board"]
    assert on_disk["metadata"]["board"]["progress"] == 30 and "progress" not in on_disk


def test_the_fields_board_keeps_in_metadata_are_the_task_models_own() -> None:
    from board.model import Task
    from board.store.file_format import BOARD_FIELDS

    model = {field.alias or name for name, field in Task.model_fields.items()}
    assert BOARD_FIELDS == model - set(CLAUDE_FIELDS)


def test_a_claude_code_list_held_in_memory_costs_what_boards_own_files_cost(tmp_path: Path) -> None:
    """A dashboard holds every task of a list: one read from a Claude Code list must be as small
    as the same task read from board's own files (shared field sets, ids, empty values)."""
    import gc
    import tracemalloc

    from board.store.file_format import to_claude

    # Written here, not by a store: a store's own reads would leave the strings cached.
    own, listed = tmp_path / "own", tmp_path / "list"
    (own / ".tasks").mkdir(parents=True)
    listed.mkdir()
    for n in range(1, 301):
        doc = {
            "id": str(n), "subject": f"task {n}", "description": f"what to do for part {n} of the work", "status": "pending",
            "blockedBy": [str(n - 1)] if n > 1 else [], "blocks": [str(n + 1)] if n < 300 else [], "labels": ["api"] if n % 3 == 0 else [],
        }
        (own / ".tasks" / f"task_{n}.json").write_text(json.dumps(doc, indent=2))
        (listed / f"{n}.json").write_text(json.dumps(to_claude(doc), indent=2))

    def held(workspace: Path) -> tuple[Store, int]:
        gc.collect()
        tracemalloc.start()
        try:
            store = Store.open(workspace)
            gc.collect()
            return store, tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()

    own_store, own_bytes = held(own)
    list_store, list_bytes = held(listed)
    assert isinstance(list_store.layout, ClaudeTaskListLayout) and len(list_store.tasks) == len(own_store.tasks) == 300
    assert list_store.tasks["7"] == own_store.tasks["7"]
    assert list_bytes <= 1.1 * own_bytes, f"{list_bytes / 300:.0f} bytes a task from the list, {own_bytes / 300:.0f} from board's own files"
