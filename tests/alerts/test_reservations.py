"""File reservations through the real command line, and conflict.reservation / conflict.files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from board.errors import BoardError
from board.model import utcnow
from board.reservations import ReservationConflict, active_reservations, reserve, unreserve
from board.store.files.side import reservation_file
from board.store import Store
from tests.alerts.conftest import REPO, Repos, board, of_kind, refresh, start, token_of
from tests.coordinator.helpers import started
from tests.conftest import BOTH_BACKENDS, files_only

pytestmark = BOTH_BACKENDS


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.json"))} if directory.is_dir() else {}


def test_a_conflicting_reservation_is_refused_naming_the_holder_and_task(repos: Repos) -> None:
    alice_task = start(repos.a, "edit the app", "alice", ["src/app.py"])
    bob_task = start(repos.a, "also the app", "bob")
    done = board(repos.a, "reserve", alice_task, "src/app.py", "src/util.py")
    assert done.returncode == 0, done.stderr
    assert "alice reserved src/app.py for write" in done.stdout

    before = snapshot(repos.a / ".tasks" / "reservations")
    refused = board(repos.a, "reserve", bob_task, "docs/readme.md", "./src/app.py")
    assert refused.returncode == 2
    assert refused.stdout == ""
    line = refused.stderr.strip()
    assert "\n" not in line
    assert "src/app.py is reserved for writing by alice for task #" + alice_task in line
    # all or nothing: docs/readme.md, which was free, was not reserved either
    assert snapshot(repos.a / ".tasks" / "reservations") == before

    read = board(repos.a, "reserve", bob_task, "src/util.py", "--mode", "read")
    assert read.returncode == 2 and "alice" in read.stderr


@files_only("the reservation file's format")
def test_readers_share_and_a_writer_waits_for_them(repos: Repos) -> None:
    alice_task = start(repos.a, "read the app", "alice")
    bob_task = start(repos.a, "read it too", "bob")
    carol_task = start(repos.a, "write it", "carol")
    assert board(repos.a, "reserve", alice_task, "src/app.py", "--mode", "read").returncode == 0
    assert board(repos.a, "reserve", bob_task, "src/app.py", "--mode", "read").returncode == 0
    data = json.loads(reservation_file(repos.a / ".tasks", "src/app.py").read_text())
    # the spec's shape for the first holder, and every holder listed
    assert (data["path"], data["owner"], data["task"], data["mode"]) == ("src/app.py", "alice", alice_task, "read")
    assert "expiresAt" in data
    assert [h["owner"] for h in data["holders"]] == ["alice", "bob"]

    refused = board(repos.a, "reserve", carol_task, "src/app.py")
    assert refused.returncode == 2
    assert "reserved for reading by alice" in refused.stderr

    assert board(repos.a, "unreserve", alice_task, "src/app.py").returncode == 0
    assert board(repos.a, "unreserve", bob_task).returncode == 0  # no path: all of the task's
    assert not reservation_file(repos.a / ".tasks", "src/app.py").exists()
    assert board(repos.a, "reserve", carol_task, "src/app.py").returncode == 0


def test_expired_reservations_are_ignored_and_replaced(workspace: Path) -> None:
    now = utcnow()
    alice_task = start(workspace, "one", "alice")
    bob_task = start(workspace, "two", "bob")
    store = Store.open(workspace)
    reserve(store, alice_task, ["a.py"], ttl_seconds=60, now=now)
    with pytest.raises(ReservationConflict):
        reserve(store, bob_task, ["a.py"], ttl_seconds=60, now=now + timedelta(seconds=59))
    later = now + timedelta(seconds=61)
    assert active_reservations(store.reservation_book, later) == []
    made = reserve(store, bob_task, ["a.py"], ttl_seconds=60, now=later)
    assert [(r.owner, r.task) for r in made] == [("bob", bob_task)]
    assert [(r.owner, r.task) for r in active_reservations(store.reservation_book, later)] == [("bob", bob_task)]


def test_a_finished_tasks_reservation_no_longer_holds(workspace: Path) -> None:
    alice_task = start(workspace, "one", "alice")
    bob_task = start(workspace, "two", "bob")
    store = Store.open(workspace)
    reserve(store, alice_task, ["a.py"])
    store.set_status(alice_task, "completed", token=token_of(workspace, alice_task))
    assert [r.owner for r in reserve(store, bob_task, ["a.py"])] == ["bob"]


def test_reserve_refuses_bad_input_without_writing(workspace: Path) -> None:
    task = start(workspace, "one", "alice")
    unowned = Store.open(workspace).create("nobody's").id
    for args, expected in [
        ((task, "../outside.py"), "not a file inside the workspace"),
        ((task, "/etc/passwd"), "not a file inside the workspace"),
        ((unowned, "a.py"), "has no owner; pass --agent"),
        (("999", "a.py"), "no task with id '999'"),
    ]:
        done = board(workspace, "reserve", *args)
        assert done.returncode == 2, done
        assert expected in done.stderr
    assert not (workspace / ".tasks" / "reservations").exists()
    assert board(workspace, "unreserve", task, "a.py").returncode == 2
    assert board(workspace, "reserve", unowned, "a.py", "--agent", "dave").returncode == 0


def test_a_path_is_reserved_where_its_links_lead_and_refused_when_that_is_outside(workspace: Path) -> None:
    task = start(workspace, "one", "alice")
    (workspace / "src").mkdir()
    (workspace / "src-link").symlink_to("src")
    (workspace / "etc-link").symlink_to("/etc")
    (workspace / "passwd-link").symlink_to("/etc/passwd")
    for raw, leads_to in [
        ("etc-link/passwd", "/etc/passwd"),
        (str(workspace / "etc-link" / "hosts"), "/etc/hosts"),
        ("passwd-link", "/etc/passwd"),
        ("src-link/../etc-link/passwd", "/etc/passwd"),
    ]:
        refused = board(workspace, "reserve", task, "src/app.py", raw)
        assert (refused.returncode, refused.stdout) == (2, ""), refused
        assert refused.stderr.count("\n") == 1
        assert f"' leads to {leads_to}, which is not inside the workspace {workspace}" in refused.stderr
    # all or nothing: src/app.py, named beside them, was not reserved either
    assert not (workspace / ".tasks" / "reservations").exists()
    assert json.loads(board(workspace, "reservations", "--json").stdout) == []

    # A link inside the workspace reserves the file it leads to, and releases it too.
    done = board(workspace, "reserve", task, "src-link/app.py")
    assert done.returncode == 0, done.stderr
    assert "alice reserved src/app.py for write" in done.stdout
    assert [r["path"] for r in json.loads(board(workspace, "reservations", "--json").stdout)] == ["src/app.py"]
    other = start(workspace, "two", "bob")
    refused = board(workspace, "reserve", other, str(workspace / "src" / "app.py"))
    assert refused.returncode == 2 and "src/app.py is reserved for writing by alice" in refused.stderr
    assert board(workspace, "unreserve", task, "src-link/app.py").returncode == 0
    assert json.loads(board(workspace, "reservations", "--json").stdout) == []


def test_touching_a_file_reserved_by_another_agent_raises_an_error_until_released(repos: Repos) -> None:
    alice_task = start(repos.a, "edit the app", "alice", ["src/app.py"])
    bob_task = start(repos.a, "docs", "bob", ["docs/readme.md"])
    assert board(repos.a, "reserve", alice_task, "src/app.py").returncode == 0
    assert board(repos.a, "toolcall", alice_task, "Edit", "--file", "src/app.py").returncode == 0
    assert of_kind(refresh(repos.a), "conflict.reservation") == []  # the holder's own touch

    assert board(repos.a, "toolcall", bob_task, "Edit", "--file", str(repos.a / "src" / "app.py"), "--agent", "bob").returncode == 0
    alerts = of_kind(refresh(repos.a), "conflict.reservation")
    assert len(alerts) == 1
    alert = alerts[0]
    assert alert.severity == "error"
    assert set(alert.tasks) == {alice_task, bob_task}
    assert alert.agents == ("alice", "bob")
    assert alert.files == ("src/app.py",)
    assert alert.message.startswith("bob touched src/app.py")

    assert board(repos.a, "unreserve", alice_task, "src/app.py").returncode == 0
    assert of_kind(refresh(repos.a), "conflict.reservation") == []


def test_a_touch_before_the_reservation_was_taken_is_not_a_conflict(workspace: Path) -> None:
    alice_task = start(workspace, "one", "alice")
    bob_task = start(workspace, "two", "bob")
    store = Store.open(workspace)
    store.record_toolcall(bob_task, "Read", files=["a.py"], agent="bob")
    reserve(store, alice_task, ["a.py"], now=utcnow() + timedelta(seconds=1))
    assert of_kind(refresh(workspace, now=utcnow() + timedelta(seconds=2)), "conflict.reservation") == []


def test_two_agents_on_one_file_raise_conflict_files_until_one_finishes(workspace: Path) -> None:
    alice_task = start(workspace, "one", "alice", ["src/shared.py", "src/a.py"])
    bob_task = start(workspace, "two", "bob", ["src/b.py"])
    assert of_kind(refresh(workspace), "conflict.files") == []

    Store.open(workspace).record_toolcall(bob_task, "Edit", files=["src/shared.py", "src/a.py"], agent="bob")
    alerts = of_kind(refresh(workspace), "conflict.files")
    assert len(alerts) == 1  # one alert for the pair, naming both files
    assert alerts[0].tasks == (alice_task, bob_task)
    assert alerts[0].agents == ("alice", "bob")
    assert alerts[0].files == ("src/a.py", "src/shared.py")
    assert alerts[0].severity == "warning"

    Store.open(workspace).set_status(bob_task, "completed", token=token_of(workspace, bob_task))
    assert of_kind(refresh(workspace), "conflict.files") == []


def test_the_same_agent_on_two_tasks_is_not_a_conflict(workspace: Path) -> None:
    store = Store.open(workspace)
    first = store.create("one", files=["a.py"]).id
    second = store.create("two", files=["a.py"]).id
    store.claim_task(first, "alice")
    store.claim_task(second, "alice")
    assert of_kind(refresh(workspace), "conflict.files") == []


def test_unreserve_only_names_paths_the_task_holds(workspace: Path) -> None:
    task = start(workspace, "one", "alice")
    store = Store.open(workspace)
    reserve(store, task, ["a.py"])
    with pytest.raises(BoardError, match="holds no reservation on b.py"):
        unreserve(store, task, ["a.py", "b.py"])
    assert [r.path for r in active_reservations(store.reservation_book, utcnow())] == ["a.py"]


def test_board_reservations_lists_what_holds(workspace: Path) -> None:
    task = start(workspace, "one", "alice")
    assert board(workspace, "reservations").stdout.strip() == "no reservations"
    assert board(workspace, "reserve", task, "b.py", "a.py", "--mode", "read", "--ttl", "60").returncode == 0
    listed = json.loads(board(workspace, "reservations", "--json").stdout)
    assert [(r["path"], r["owner"], r["task"], r["mode"]) for r in listed] == [("a.py", "alice", task, "read"), ("b.py", "alice", task, "read")]
    assert board(workspace, "reservations").stdout.splitlines()[0].startswith("a.py  read   alice  #" + task)


def test_racing_writers_exactly_one_reservation_wins(workspace: Path) -> None:
    ids = [start(workspace, f"racer {n}", f"agent{n}") for n in range(4)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    racers = [
        started(subprocess.Popen([sys.executable, "-m", "board", "-w", str(workspace), "reserve", task_id, "hot.py"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for task_id in ids
    ]
    outcomes = [(r.wait(timeout=60), r.stderr.read()) for r in racers]
    assert sorted(code for code, _ in outcomes) == [0, 2, 2, 2]
    winner = ids[[code for code, _ in outcomes].index(0)]
    assert all(f"for task #{winner}" in err for code, err in outcomes if code == 2)
    [held] = active_reservations(Store.open(workspace, whole=False).reservation_book, utcnow())
    assert held.task == winner
