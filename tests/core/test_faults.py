"""The store under hostile entries and failing disks: never blocked by a special file, never
writing through a link, never leaving a torn line, and always one line for the person."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from board.agents import register_agent
from board.reservations import reserve
from board.store import Store
from board.disk.atomic import SpecialFile
from tests.conftest import REPO
from tests.coordinator.helpers import board_cli, started, wait_for

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def run_board(workspace: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """``board ARGS`` as a real process; a hang is a failure, not a stuck test run."""
    process = started(subprocess.Popen([sys.executable, "-m", "board", "-w", str(workspace), *args], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"board {' '.join(args)} hung") from None
    return subprocess.CompletedProcess(args, process.returncode, out, err)


def plant_special_entries(tasks: Path, outside: Path) -> dict[str, str]:
    """One of each entry a task file must never be; the reason board gives for each."""
    os.mkfifo(tasks / "task_9.json")
    (tasks / "task_10.json").symlink_to("/dev/zero")
    (tasks / "task_11.json").mkdir()
    (tasks / "task_12.json").symlink_to(tasks / "task_12.json")
    (tasks / "task_13.json").symlink_to(outside)
    (tasks / "task_14.json").write_text(json.dumps({"id": "14", "subject": "x", "description": "y" * (2 * 1024 * 1024)}))
    return {
        "9": "a FIFO (named pipe)",
        "10": "a symbolic link",
        "11": "a directory",
        "12": "a symbolic link",
        "13": "a symbolic link",
        "14": "the limit is 1,048,576",
    }


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the board that no board operation may change."""
    path = tmp_path / "precious.txt"
    path.write_text("do not touch\n")
    return path


def test_special_entries_are_reported_and_nothing_hangs_or_crashes(workspace: Path, outside: Path) -> None:
    store = Store.open(workspace)
    store.create("ordinary")
    store.create("also ordinary")
    reasons = plant_special_entries(workspace / ".tasks", outside)

    listing = run_board(workspace, "task", "list")
    assert listing.returncode == 0, listing.stderr
    rows = [line.split() for line in listing.stdout.splitlines()[1:]]
    assert [row[0] for row in rows[:2]] == ["1", "2"] and all(row[1] != "unreadable" for row in rows[:2])
    unreadable = {line.split()[0]: line for line in listing.stdout.splitlines()[3:]}
    assert sorted(unreadable) == sorted(reasons), listing.stdout
    for task_id, reason in reasons.items():
        assert unreadable[task_id].split()[1] == "unreadable" and reason in unreadable[task_id], (task_id, listing.stdout)

    check = run_board(workspace, "check")
    assert check.returncode == 1 and "Traceback" not in check.stderr
    assert len(check.stdout.splitlines()) == len(reasons)

    shown = run_board(workspace, "task", "show", "9")
    assert shown.returncode == 2 and shown.stderr.strip() == f"board: task 9 cannot be read: {workspace / '.tasks' / 'task_9.json'}: a FIFO (named pipe)"
    assert run_board(workspace, "task", "update", "10", "--progress", "5").returncode == 2
    assert run_board(workspace, "claim", "--agent", "alice").stdout.split("\t")[0] == "1"
    assert run_board(workspace, "alerts").returncode == 0
    fixed = run_board(workspace, "check", "--fix")
    assert fixed.returncode == 1  # reported, never removed: they are not board's to delete
    assert (workspace / ".tasks" / "task_9.json").exists() and (workspace / ".tasks" / "task_11.json").is_dir()
    assert outside.read_text() == "do not touch\n"


def test_a_running_coordinator_keeps_working_when_a_fifo_appears(workspace: Path) -> None:
    (workspace / ".tasks" / "board.toml").write_text("[coordinator]\ntick_seconds = 0.2\n")
    store = Store.open(workspace)
    task_id = store.create("left behind").id
    coordinator = board_cli(workspace, "coordinator")
    wait_for(lambda: (workspace / ".tasks" / "alerts.json").exists(), timeout=60, what="the coordinator's first tick")
    os.mkfifo(workspace / ".tasks" / "task_9.json")
    store.claim("ghost", lease_seconds=0.5)
    wait_for(lambda: Store.open(workspace).get(task_id).status == "pending", timeout=60, what="the coordinator to take the lease back after the FIFO appeared")
    wait_for(lambda: "task_9.json" in (workspace / ".tasks" / "alerts.json").read_text(), timeout=60, what="the FIFO to be reported as an alert")
    assert coordinator.poll() is None


def test_a_spare_replaced_by_a_link_is_never_written_through(workspace: Path, outside: Path) -> None:
    """A long-lived writer keeps old versions as spares to fill again; one swapped for a link
    to a file outside the board must not make the writer overwrite that file."""
    store = Store.open(workspace)
    task_id = store.create("busy").id
    for progress in range(1, 4):
        store.update(task_id, progress=progress)
    spares = [p for p in (workspace / ".tasks").iterdir() if p.name.startswith(".write.")]
    assert spares, "the writer kept no spare: nothing to attack"
    for spare in spares:
        spare.unlink()
        spare.symlink_to(outside)
    import time

    time.sleep(1.1)  # past the quarantine after which a spare is filled again (the condition under test)
    for progress in range(4, 30):
        store.update(task_id, progress=progress)
    assert outside.read_text() == "do not touch\n"
    assert Store.open(workspace).get(task_id).progress == 29


@pytest.mark.parametrize("name", [".history-pending.json", "history.jsonl", ".synced"])
def test_a_board_file_replaced_by_a_link_is_never_written_through(workspace: Path, outside: Path, name: str) -> None:
    store = Store.open(workspace)
    store.create("first")
    target = workspace / ".tasks" / name
    target.unlink()
    target.symlink_to(outside)
    done = run_board(workspace, "task", "create", "second")
    assert done.returncode == 2, done
    assert done.stderr.count("\n") == 1 and "symbolic link" in done.stderr and "Traceback" not in done.stderr
    assert outside.read_text() == "do not touch\n"


def test_agent_and_reservation_files_replaced_by_links_are_never_written_through(workspace: Path, outside: Path) -> None:
    store = Store.open(workspace)
    task_id = store.create("first").id
    register_agent(store.agent_records, "alice")
    agent_file = store.state_dir / "agents" / "alice.json"
    agent_file.unlink()
    agent_file.symlink_to(outside)
    beat = run_board(workspace, "heartbeat", "--agent", "alice")
    assert "Traceback" not in beat.stderr
    assert outside.read_text() == "do not touch\n"

    reserve(store, task_id, ["src/a.py"], agent="alice")
    for file in (store.state_dir / "reservations").iterdir():
        file.unlink()
        file.symlink_to(outside)
    again = run_board(workspace, "reserve", task_id, "src/a.py", "--agent", "alice")
    assert "Traceback" not in again.stderr
    assert outside.read_text() == "do not touch\n"


def test_reading_never_follows_a_link_nor_blocks_on_a_fifo(tmp_path: Path) -> None:
    from board.disk.atomic import read_bytes_retrying, read_regular

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to("/dev/zero")
    for path, reason in ((fifo, "a FIFO"), (link, "a symbolic link"), (tmp_path, "a directory")):
        for read in (read_regular, read_bytes_retrying):
            with pytest.raises(SpecialFile, match=reason):
                read(path)


def test_a_file_that_holds_more_than_its_size_said_is_read_whole_and_within_its_limit(tmp_path: Path) -> None:
    """A read asks for one byte more than the size the file had when opened: a file that grew
    since (here a /proc file, whose size says 0) is read to its end all the same, and one past
    the limit is still refused."""
    from board.disk.atomic import read_regular

    whole = read_regular("/proc/self/status", None)
    assert whole.startswith(b"Name:") and b"\nPid:" in whole and len(whole) > 100
    with pytest.raises(SpecialFile, match="over 5 bytes"):
        read_regular("/proc/self/status", 5)
    for size in (0, 1, 4096, 65535, 65536, 70000):
        (tmp_path / "f").write_bytes(b"x" * size)
        assert read_regular(tmp_path / "f", None) == read_regular(tmp_path / "f", size) == b"x" * size
        if size:
            with pytest.raises(SpecialFile, match=f"file is {size:,} bytes"):
                read_regular(tmp_path / "f", size - 1)


FILL = """
import sys
from board.store import Store
from board.errors import BoardError
store = Store.open(sys.argv[1], actor=sys.argv[2])
failures = 0
for n in range(100000):
    try:
        store.record_toolcall(sys.argv[3], "Edit", files=[f"src/{sys.argv[2]}/file_{n}.py"], agent=sys.argv[2])
        failures = 0
    except (OSError, BoardError):
        failures += 1
        if failures > 20:
            break
"""


def test_a_full_disk_never_tears_a_log_and_is_one_line(small_disk: Path) -> None:
    workspace = small_disk
    store = Store.open(workspace, create=True)
    ids = [store.create(f"task {n}").id for n in range(4)]
    writers = [
        started(subprocess.Popen([sys.executable, "-c", FILL, str(workspace), f"agent{n}", ids[n]], env=ENV, stderr=subprocess.PIPE))
        for n in range(4)
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err.decode()[-2000:]

    # The writers' spares went with them: fill what they freed, then try once more.
    filler = os.open(workspace / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(filler, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(filler)
    refused = run_board(workspace, "task", "create", "one more", "--description", "x" * 5000)
    assert refused.returncode == 2
    assert refused.stderr.startswith("board: no space left on the device") and refused.stderr.count("\n") == 1, refused.stderr

    # Every line of every log is whole, and every task file is valid.
    logs = [workspace / ".tasks" / "history.jsonl", *(workspace / ".tasks" / "toolcalls").glob("*.jsonl")]
    lines = 0
    for log in logs:
        raw = log.read_bytes()
        assert raw.endswith(b"\n") or not raw, f"{log.name} ends mid-line"
        for line in raw.splitlines():
            json.loads(line)
            lines += 1
    assert lines > 100, "the disk filled before anything was written: nothing was tested"
    for path in (workspace / ".tasks").glob("task_*.json"):
        json.loads(path.read_bytes())
    # The counts agree with the lines that were kept: no call counted twice or lost.
    reread = Store.open(workspace)
    for task_id in ids:
        calls = reread.toolcalls(task_id)
        assert reread.get(task_id).tool_calls.total >= len(calls)


def test_a_read_only_board_is_one_line(small_disk: Path) -> None:
    workspace = small_disk
    Store.open(workspace, create=True).create("first")
    remounted = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True, text=True)
    if remounted.returncode != 0:
        pytest.skip(f"cannot remount read-only here: {remounted.stderr.strip()}")
    listing = run_board(workspace, "task", "list")
    assert listing.returncode == 0 and "first" in listing.stdout
    refused = run_board(workspace, "task", "update", "1", "--progress", "5")
    assert refused.returncode == 2
    assert refused.stderr.startswith("board: the file system is read-only") and refused.stderr.count("\n") == 1, refused.stderr


def test_temp_files_of_killed_writers_are_reported_at_once_and_removed_in_every_folder(workspace: Path) -> None:
    """Writers SIGKILLed mid-write leave temp files in each folder board writes; they are
    reported as soon as their writer is gone, and 'check --fix' (or the coordinator) removes
    them all, leaving the board whole."""
    import signal

    store = Store.open(workspace)
    task_id = store.create("busy").id
    register_agent(store.agent_records, "alice")
    reserve(store, task_id, ["src/a.py"], agent="alice")
    from board.checkpoints import write_checkpoint

    write_checkpoint(store, task_id, reason="test", note="first", actor="alice")
    folders = [store.state_dir, store.state_dir / "agents", store.state_dir / "reservations", next((store.state_dir / "checkpoints").iterdir())]
    for folder in folders:
        # A real process that made a temp file the way board does, then was SIGKILLed.
        maker = started(subprocess.Popen(
            [sys.executable, "-c", "import sys, time; from pathlib import Path; from board.disk.atomic import TempFile; TempFile(Path(sys.argv[1])); print('made', flush=True); time.sleep(300)", str(folder)],
            env=ENV, stdout=subprocess.PIPE,
        ))
        assert maker.stdout.readline() == b"made\n"
        maker.send_signal(signal.SIGKILL)
        maker.wait(timeout=60)
    strays = [p for folder in folders for p in folder.iterdir() if p.name.startswith(".write.") and p.name.endswith(".tmp")]
    assert len(strays) == len(folders)

    check = run_board(workspace, "check")
    assert check.returncode == 1
    for stray in strays:
        assert f"{stray}: a temp file left by a writer killed mid-write" in check.stdout
    fixed = run_board(workspace, "check", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert not any(stray.exists() for stray in strays)
    assert run_board(workspace, "task", "show", task_id).returncode == 0


def test_a_small_rewrite_cut_short_by_a_kill_is_swept_at_once(workspace: Path) -> None:
    """``replace_file`` (active.json, the hook's records) names its temp file after its process
    too (``.active.json.<pid>.tmp``): once that process is gone, ``check --fix`` removes it at
    once, not only when it has aged."""
    Store.open(workspace).create("busy")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    stray = workspace / ".tasks" / f".active.json.{gone.stdout.strip()}.tmp"
    stray.write_text("{")  # what a writer SIGKILLed mid-write leaves
    fixed = run_board(workspace, "check", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert not stray.exists()


def test_sparse_files_of_a_terabyte_planted_as_a_log_or_the_pending_note_fail_nothing(tmp_path: Path) -> None:
    """A sparse file costs its planter nothing: one planted as a task's call log or an agent's,
    or as the note of a write under way, was read whole into memory, and every command that read
    the board, or wrote, ended in a MemoryError."""
    store = Store.open(tmp_path, create=True)
    task = store.claim_task(store.create("a").id, "ann")
    store.record_toolcall(task.id, "Edit", agent="ann")
    store.close()
    tasks = tmp_path / ".tasks"
    for planted in (tasks / "toolcalls" / f"{task.id}.jsonl", tasks / ".history-pending.json", *(tasks / "agents").glob("*.calls.jsonl")):
        with open(planted, "ab") as handle:
            handle.truncate(1 << 40)
    again = Store.open(tmp_path)
    assert again.get(task.id).tool_calls.total == 1
    assert again.create("b").id == "2"
    again.load()  # the whole board read again, each log counted
    assert sorted(again.tasks) == ["1", "2"] and again.get(task.id).tool_calls.total == 1
    again.close()
