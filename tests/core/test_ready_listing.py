"""``board task list --ready`` reads only the tasks ready now where the store keeps them apart
(board's own folder: its index of ready tasks; PostgreSQL: the ready column its triggers keep),
each with its blockers and sub-tasks, and shows exactly what a reading of the whole board shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.cli import main
from board.graph import by_id
from board.present import prompt, table
from board.status import Status
from board.store import Store
from tests.conftest import BOTH_BACKENDS

pytestmark = BOTH_BACKENDS


def listed(workspace: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert main(["-w", str(workspace), "task", "list", "--ready", *extra]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out.rstrip("\n")


def as_the_whole_board_shows_it(workspace: Path, show=table) -> str:
    whole = Store.open(workspace)
    ready = [task for task in by_id(whole.tasks) if whole.graph.is_ready(task.id)]
    return show(ready, whole.graph) if ready or show is prompt else "no tasks"


def three_tasks_the_first_claimed(workspace: Path) -> None:
    store = Store.open(workspace)
    for subject in ("one", "two", "three"):
        store.create(subject)
    store.claim("warm-up")  # writes the index whole: #2 and #3 are ready


def finish(store: Store, task_id: str, status: Status = Status.COMPLETED) -> None:
    if store.get(task_id).status == Status.PENDING and status == Status.COMPLETED:
        store.set_status(task_id, Status.IN_PROGRESS, owner="someone", force=True)
    store.set_status(task_id, status, force=True)


def test_the_ready_list_is_the_whole_boards_through_every_kind_of_write(workspace: Path, capsys) -> None:
    store = Store.open(workspace)
    store.create("first")  # 1
    store.create("after the first", blocked_by=["1"])  # 2
    store.create("release", priority="high")  # 3
    store.create("code", parent="3")  # 4
    store.create("docs", parent="3")  # 5
    store.create("tests", parent="4", metadata={"estimate": 5})  # 6
    store.create("hidden", metadata={"_internal": True})  # 7
    store.create("labelled", labels=["api"])  # 8
    warm_up = store.claim("warm-up")  # the first claim writes the index whole on board's own folder
    store.release(warm_up.id, token=warm_up.lease.token)
    steps = [
        lambda s: finish(s, "1"),  # #2 becomes ready
        lambda s: s.update("6", progress=40, force=True),
        lambda s: finish(s, "6"),  # #4 ready; #3 still waits on #5
        lambda s: finish(s, "5", Status.CANCELLED),
        lambda s: finish(s, "4"),  # #3 ready, its progress from its sub-tasks
        lambda s: s.create("new", blocked_by=["2"], priority="critical"),
        lambda s: s.claim("alice"),
        lambda s: s.delete("8", force=True),
    ]
    for number, step in enumerate(steps):
        step(Store.open(workspace))
        for show, extra in ((table, ()), (prompt, ("--format", "prompt"))):
            assert listed(workspace, capsys, *extra) == as_the_whole_board_shows_it(workspace, show), f"after step {number}"


def test_a_task_an_outside_writer_took_out_of_the_queue_is_not_listed(workspace: Path, capsys, backend: str) -> None:
    if backend != "files":
        pytest.skip("about files, not PostgreSQL: a task file written by hand")
    three_tasks_the_first_claimed(workspace)
    path = workspace / ".tasks" / "task_2.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "status": "cancelled"}))
    rows = listed(workspace, capsys).splitlines()[1:]
    assert [row.split()[0] for row in rows] == ["3"]


def test_hostile_entries_in_the_index_read_nothing_outside_the_board(workspace: Path, capsys, backend: str, tmp_path: Path) -> None:
    if backend != "files":
        pytest.skip("about board's own folder: its index is a file anyone here may write")
    store = Store.open(workspace)
    store.create("one")
    store.create("two")
    store.claim("warm-up")
    outside = tmp_path.parent / "task_x.json"
    outside.write_text(json.dumps({"id": "x", "subject": "planted", "status": "pending"}))
    journal = workspace / ".tasks" / "ready.journal"
    with journal.open("a") as lines:
        for hostile in ("../../task_x", "../task_x", "x/../../y", "", "2\n"):
            lines.write(json.dumps({"task": hostile, "entry": {"rank": 0, "remaining": 1}}) + "\n")
    assert [row.split()[0] for row in listed(workspace, capsys).splitlines()[1:]] == ["2"]


def test_a_ready_task_whose_file_breaks_is_named_on_stderr_and_the_rest_listed(workspace: Path, capsys, backend: str) -> None:
    if backend != "files":
        pytest.skip("about files, not PostgreSQL: a task file broken by hand")
    three_tasks_the_first_claimed(workspace)
    (workspace / ".tasks" / "task_2.json").write_text('{"id": "2", "subject": ')
    assert main(["-w", str(workspace), "task", "list", "--ready"]) == 0
    out, err = capsys.readouterr()
    assert [row.split()[0] for row in out.splitlines()[1:]] == ["3"]
    assert err.count("\n") == 1 and "cannot read" in err and "task_2.json" in err
