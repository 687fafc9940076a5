"""A task Claude Code deletes from its list stays on the board as it last was (``.board/removed/``)."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from board.errors import BoardError
from board.graph import REMOVED_BY, removed_by_claude_code
from board.status import Status
from board.store import Store

from tests.core.test_claude_lists import claude_ready, claude_writes, make_task_list
from tests.core.test_cli import board


@pytest.fixture
def task_list(tmp_path: Path) -> Path:
    return make_task_list(tmp_path)


def removed_copies(directory: Path) -> list[str]:
    try:
        return sorted(os.listdir(directory / ".board" / "removed"))
    except FileNotFoundError:
        return []


def on_disk(directory: Path) -> dict[str, bytes]:
    """Every file below the list, by path: what a refused write must leave as it was."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file() and not p.is_symlink()}


def test_a_completed_task_claude_code_deletes_stays_listed_counted_and_shown(task_list: Path) -> None:
    store = Store.open(task_list)
    store.record_toolcall("1", "Read", files=["parser.py"], agent="worker-1")  # board's own write
    history_before = store.history("1")
    (task_list / "1.json").unlink()  # Claude Code deletes a task once it is done
    store.rescan()
    for seen in (store, Store.open(task_list)):
        task = seen.tasks["1"]
        assert removed_by_claude_code(task) and task.status == Status.COMPLETED
        assert task.subject == "Read the codebase" and task.active_form == "Reading the codebase"
        assert task.tool_calls.total == 1
        assert [t.id for t in seen.tasks.values() if t.status == Status.COMPLETED] == ["1"]
        assert seen.graph.ready_ids() == {"2"} == claude_ready(task_list)
        assert seen.check() == []
        assert seen.history("1") == history_before
    listed = board(task_list, "task", "list")
    assert listed.returncode == 0
    assert "1   completed (removed)" in listed.stdout and "Read the codebase" in listed.stdout
    shown = board(task_list, "task", "show", "1")
    assert shown.returncode == 0, shown.stderr
    assert "removed    by Claude Code from its task list; 'board task restore 1' brings it back" in shown.stdout
    assert json.loads(board(task_list, "--json", "task", "show", "1").stdout)[REMOVED_BY] == "claude-code"


def test_a_task_seen_completed_is_copied_once_and_outlives_a_delete_made_while_board_is_closed(task_list: Path) -> None:
    Store.open(task_list).close()  # a first read sees #1 completed and copies it
    assert removed_copies(task_list) == ["1.0.json"]
    copy = task_list / ".board" / "removed" / "1.0.json"
    stamp = copy.stat().st_mtime_ns
    Store.open(task_list).close()  # read again: no new write
    assert copy.stat().st_mtime_ns == stamp and removed_copies(task_list) == ["1.0.json"]
    (task_list / "1.json").unlink()  # while no board process runs
    store = Store.open(task_list)
    assert removed_by_claude_code(store.tasks["1"]) and store.tasks["1"].status == Status.COMPLETED
    assert store.graph.ready_ids() == {"2"} == claude_ready(task_list)
    partial = Store.open(task_list, whole=False)  # a command about one task reads it alone
    assert removed_by_claude_code(partial.get("1"))


def test_only_completed_tasks_are_copied_on_a_read_and_board_s_own_completions_at_once(task_list: Path) -> None:
    store = Store.open(task_list)
    assert removed_copies(task_list) == ["1.0.json"]  # #2 and #3 are pending: nothing written for them
    store.set_status("2", "in_progress", owner="ann")
    assert removed_copies(task_list) == ["1.0.json"]
    done = store.set_status("2", "completed")
    assert removed_copies(task_list) == ["1.0.json", f"2.{done.version}.json"]


def test_a_pending_task_claude_code_deletes_is_shown_removed_never_claimed_and_blocks_nothing(task_list: Path) -> None:
    store = Store.open(task_list)  # board has #2 in its index when its file goes
    (task_list / "2.json").unlink()
    store.rescan()
    for seen in (store, Store.open(task_list)):
        task = seen.tasks["2"]
        assert removed_by_claude_code(task) and task.status == Status.PENDING
        assert seen.graph.ready_ids() == {"3"} == claude_ready(task_list)  # as Claude Code sees it
        assert "Claude Code removed it" in seen.graph.why_not_ready(task)
    claimed = store.claim("worker-1")
    assert claimed is not None and claimed.id == "3"
    assert store.claim("worker-2") is None
    assert "pending (removed)" in board(task_list, "task", "list").stdout


def test_restore_brings_the_file_back_in_claude_codes_shape(task_list: Path) -> None:
    claude_writes(task_list, {"id": "4", "subject": "Ship it", "description": "", "status": "completed", "blocks": [], "blockedBy": [], "metadata": {"origin": "plan"}, "activeForm": "Shipping"})
    doc = json.loads((task_list / "4.json").read_text())
    doc["laterField"] = {"kept": True}  # a field of a later Claude Code
    (task_list / "4.json").write_text(json.dumps(doc))
    Store.open(task_list)
    (task_list / "4.json").unlink()
    restored = board(task_list, "task", "restore", "4")
    assert restored.returncode == 0, restored.stderr
    written = json.loads((task_list / "4.json").read_text())
    assert written["status"] == "completed" and written["subject"] == "Ship it" and written["activeForm"] == "Shipping"
    assert written["metadata"]["origin"] == "plan" and written["laterField"] == {"kept": True}
    assert REMOVED_BY not in written and REMOVED_BY not in written["metadata"]["board"]
    store = Store.open(task_list)
    assert not removed_by_claude_code(store.tasks["4"])
    assert [r["op"] for r in store.history("4")][-1] == "restore"


def test_a_pending_task_restored_goes_back_to_claude_codes_readiness(task_list: Path) -> None:
    store = Store.open(task_list)
    (task_list / "2.json").unlink()
    store.rescan()
    store.restore("2")
    assert json.loads((task_list / "2.json").read_text())["blockedBy"] == ["1"]
    assert store.graph.ready_ids() == {"2"} == claude_ready(task_list)
    assert removed_copies(task_list) == ["1.0.json"]  # the pending one's copy went with its mark


@pytest.mark.parametrize("command", [("task", "update", "1", "--progress", "50"), ("release", "1", "--force"), ("task", "update", "1", "--subject", "x")])
def test_a_write_to_a_removed_task_is_refused_in_one_line_and_changes_nothing(task_list: Path, command: tuple[str, ...]) -> None:
    Store.open(task_list).update("3", progress=10)  # a first write makes the lock's own files
    (task_list / "1.json").unlink()
    Store.open(task_list)
    before = on_disk(task_list)
    result = board(task_list, *command)
    assert result.returncode == 2
    assert result.stderr == "board: task 1 was removed from the list by Claude Code; nothing was changed: 'board task restore 1' brings it back\n"
    assert on_disk(task_list) == before
    store = Store.open(task_list)
    with pytest.raises(BoardError, match="removed from the list by Claude Code"):
        store.claim_task("1", "worker-1")
    assert on_disk(task_list) == before


def test_deleting_a_removed_task_archives_it_for_good(task_list: Path) -> None:
    Store.open(task_list)
    (task_list / "1.json").unlink()
    result = board(task_list, "task", "delete", "1")
    assert result.returncode == 0, result.stderr
    assert "1" not in Store.open(task_list).tasks
    assert removed_copies(task_list) == []
    assert (task_list / ".board" / "archive" / "1.json").is_file()
    assert REMOVED_BY not in json.loads((task_list / ".board" / "archive" / "1.json").read_text())
    assert board(task_list, "task", "restore", "1").returncode == 0  # from board's archive, as any deleted task
    assert not removed_by_claude_code(Store.open(task_list).tasks["1"])


def test_board_deleting_a_task_is_not_taken_for_claude_code_removing_it(task_list: Path) -> None:
    watching = Store.open(task_list)
    Store.open(task_list).delete("3")
    watching.sync()
    watching.rescan()
    assert "3" not in watching.tasks and "3" not in Store.open(task_list).tasks


def test_a_link_planted_in_place_of_the_copies_folder_is_not_followed(task_list: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (task_list / ".board").mkdir(exist_ok=True)
    (task_list / ".board" / "removed").symlink_to(elsewhere)
    store = Store.open(task_list)  # sees #1 completed: its copy cannot be written there
    assert list(elsewhere.iterdir()) == []
    planted = str(task_list / ".board" / "removed")
    assert "symbolic link" in store.invalid[planted]  # reported, as board's other folders are
    assert any(p.where == planted for p in store.check())
    (task_list / "1.json").unlink()
    store.rescan()
    assert list(elsewhere.iterdir()) == []
    assert "1" not in store.tasks  # no copy kept: board forgets it, as before
    assert store.graph.ready_ids() == {"2"} == claude_ready(task_list)


def test_board_s_own_task_folders_keep_no_copies(workspace: Path) -> None:
    store = Store.open(workspace)
    task = store.create("Write docs")
    store.set_status(task.id, "in_progress", owner="ann")
    store.set_status(task.id, "completed")
    assert not (store.layout.state_dir / "removed").exists()


def test_a_task_in_progress_claude_code_deletes_holds_no_lease_and_no_files(task_list: Path) -> None:
    from board.active_work import read_active

    store = Store.open(task_list)
    claimed = store.claim("worker-1", lease_seconds=0.05)
    assert claimed is not None and claimed.id == "2"
    store.update("2", files=["parser.py"], token=claimed.lease.token)
    store.refresh_active()
    assert "2" in read_active(store.state_dir)
    (task_list / "2.json").unlink()
    store.rescan()
    assert store.tasks["2"].status == Status.IN_PROGRESS and removed_by_claude_code(store.tasks["2"])
    assert store.held_by("worker-1") == [] and store.heartbeat("worker-1") == []
    # A command's store, which finds the agent's tasks in the index of work in progress (that
    # still names the deleted one), renews nothing either.
    assert Store.open(task_list, whole=False).heartbeat("worker-1") == []
    store.refresh_active()
    assert "2" not in read_active(store.state_dir)  # board hook no longer counts it as worked on
    expired = store.clock() + timedelta(seconds=1)
    late = Store.open(task_list, clock=lambda: expired)
    assert late.reclaim_expired() == []  # nothing to take back: its file is gone
    assert not (task_list / "2.json").exists()
