"""``board run``, ``board coordinator`` and ``board demo`` as a user runs them: real processes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from board.coordinator.demo import prepare_demo_workspace, shift_timestamps
from board.coordinator.run import board_progress
from board.status import Status
from board.store import Store

from .helpers import REPO, alive, board_cli, identify, started, wait_for, write_settings

FAST = ["--simulate", "--task-seconds", "0.05", "0.15", "--fail-rate", "0"]


def make_chain_board(workspace: Path, count: int = 12) -> Store:
    store = Store.open(workspace)
    previous = None
    for i in range(count):
        blockers = [previous] if previous and i % 3 == 0 else []
        previous = store.create(f"task {i}", blocked_by=blockers).id
    return store


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_run_completes_every_task_exactly_once_and_exits_zero(workspace):
    store = make_chain_board(workspace)
    done = subprocess.run(
        [sys.executable, "-m", "board", "run", "--workers", "3", *FAST, "--seed", "4", "-w", str(workspace)],
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "done: all 12 tasks completed" in done.stdout
    store.sync()
    assert all(t.status == Status.COMPLETED for t in store.tasks.values())
    ops = [r["op"] for r in store.history()]
    assert ops.count("status:completed") == 12
    assert subprocess.run([sys.executable, "-m", "board", "check", "-w", str(workspace)], env={"PYTHONPATH": str(REPO)}, capture_output=True).returncode == 0


def test_run_exits_non_zero_and_says_what_failed(workspace):
    store = Store.open(workspace)
    store.create("will fail")
    store.create("never starts", blocked_by=["1"])
    done = subprocess.run(
        [sys.executable, "-m", "board", "run", "-w", str(workspace), "--workers", "1", "--", sys.executable, "-c", "import sys; sys.exit('compile error in ' + sys.argv[1])", "{id}"],
        env={"PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "#1: failed: compile error in 1" in done.stdout
    assert "#2: waits on #1" in done.stdout


def test_run_refuses_bad_input_with_one_line(workspace):
    for args in (["run"], ["run", "--simulate", "--", "echo"], ["run", "--workers", "0", "--simulate"], ["run", "--", "no-such-program-xyz"]):
        done = subprocess.run([sys.executable, "-m", "board", *args, "-w", str(workspace)] if "--" not in args else [sys.executable, "-m", "board", "-w", str(workspace), *args], env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=30)
        assert done.returncode == 2, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "Traceback" not in done.stderr


def test_ctrl_c_stops_every_child_and_hands_tasks_back(workspace):
    store = make_chain_board(workspace, count=6)
    run = board_cli(workspace, "run", "--workers", "3", "--simulate", "--task-seconds", "30", "30", stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wait_for(lambda: len(children_of(run.pid)) == 4, what="coordinator and 3 workers")
    wait_for(lambda: store.sync() is not None and board_progress(store.graph).running == 3, what="three tasks to start")
    children = identify(children_of(run.pid))
    run.send_signal(signal.SIGINT)
    assert run.wait(timeout=20) == 130
    output = run.stdout.read().decode()
    assert "interrupted" in output
    for pid in children:
        assert not alive(pid), f"child {pid.pid} survived Ctrl-C"
    store.sync()
    assert board_progress(store.graph).running == 0
    assert sum(1 for r in store.history() if r["op"].startswith("release (worker")) == 3


CTRL_C_WHILE_SPAWNING = """
import os, signal, subprocess, sys
from pathlib import Path

real_popen = subprocess.Popen
workers = 0


class CtrlCAsItReturns(real_popen):
    # Ctrl-C lands while the second worker is being started: after its fork, before Popen returns.
    def __init__(self, argv, *args, **kwargs):
        global workers
        super().__init__(argv, *args, **kwargs)
        workers += "worker" in argv
        if workers == 2:
            os.kill(os.getpid(), signal.SIGINT)


subprocess.Popen = CtrlCAsItReturns
from board.cli import main

status = main(sys.argv[1:])
me = str(os.getpid())
left = []
for stat in Path("/proc").glob("[0-9]*/stat"):
    try:
        state, parent = stat.read_text().rsplit(")", 1)[1].split()[:2]
    except (OSError, IndexError):
        continue
    if parent == me and state not in ("Z", "X"):
        left.append(stat.parent.name)
print("status", status, "left", " ".join(left))
"""


def test_ctrl_c_while_a_worker_is_being_started_stops_that_worker_too(workspace):
    make_chain_board(workspace, count=4)
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_WHILE_SPAWNING, "run", "--workers", "3", "--simulate", "--task-seconds", "30", "30", "-w", str(workspace)],
        env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=60,
    )
    assert done.stdout.strip().splitlines()[-1] == "status 130 left", done.stdout + done.stderr


def test_a_killed_supervisor_takes_its_children_with_it(workspace):
    make_chain_board(workspace, count=4)
    run = board_cli(workspace, "run", "--workers", "2", "--simulate", "--task-seconds", "30", "30")
    wait_for(lambda: len(children_of(run.pid)) == 3, what="coordinator and 2 workers")
    children = identify(children_of(run.pid))
    run.send_signal(signal.SIGKILL)
    run.wait()
    wait_for(lambda: not any(alive(pid) for pid in children), timeout=15, what="orphaned children to exit")


def test_only_one_coordinator_runs_per_board_and_a_killed_one_can_be_restarted(workspace):
    first = board_cli(workspace, "coordinator", stderr=subprocess.PIPE)
    try:
        from board.coordinator.presence import coordinator_running

        wait_for(lambda: coordinator_running(workspace / ".tasks"), timeout=60, what="the coordinator to hold its lock")
        second = subprocess.run([sys.executable, "-m", "board", "coordinator", "-w", str(workspace)], env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=30)
        assert second.returncode == 4 and "another coordinator is already running" in second.stderr
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    store = Store.open(workspace)
    store.create("after the crash")
    write_settings(workspace, "[lease]\nseconds = 1\n")
    store.claim("ghost", lease_seconds=1)
    restarted = board_cli(workspace, "coordinator")
    try:
        wait_for(lambda: store.sync() is not None and store.get("1").status == Status.PENDING, what="the restarted coordinator to reclaim")
    finally:
        restarted.send_signal(signal.SIGTERM)
        assert restarted.wait(timeout=10) == 0


def test_coordinator_once_reports_what_it_did(sample):
    done = subprocess.run([sys.executable, "-m", "board", "coordinator", "--once", "--json", "-w", str(sample)], env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(r["task"] for r in report["reclaimed"]) == ["11", "7", "8"]
    assert all(state == "stale" for state in report["agents"].values())
    assert sorted((a["kind"], a["tasks"][0]) for a in report["alerts"]) == [
        ("human.waiting", "20"), ("lease.expired", "11"), ("lease.expired", "7"), ("lease.expired", "8"),
    ]
    written = json.loads((sample / ".tasks" / "alerts.json").read_text())["alerts"]
    assert len(written) == 4


def test_the_demo_board_is_moved_to_the_present(tmp_path):
    from datetime import UTC, datetime, timedelta

    now = datetime(2027, 3, 1, 9, 0, tzinfo=UTC)
    workspace = prepare_demo_workspace(tmp_path / "demo", now=now)
    store = Store.open(workspace)
    latest = max(t.updated_at for t in store.tasks.values())
    assert now - timedelta(minutes=10) < latest <= now
    assert all(t.lease.expires_at < now for t in store.tasks.values() if t.lease)
    assert store.history()[-1]["ts"].startswith("2027-03-01")
    assert shift_timestamps(workspace / ".tasks", now) == timedelta(0)  # already there
    assert store.check() == []


def test_demo_without_ui_runs_the_sample_to_a_settled_board_and_leaves_no_process():
    demo = started(subprocess.Popen(
        [sys.executable, "-m", "board", "demo", "--no-ui", "--keep", "--workers", "4", "--pace", "0.05"],
        env={"PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ))
    try:
        output, _ = demo.communicate(timeout=90)
    finally:
        demo.kill()
    assert demo.returncode == 0, output
    workspace = Path(output.split("demo board: ", 1)[1].splitlines()[0])
    try:
        assert "reclaim" in " ".join(r["op"] for r in Store.open(workspace).history())
        store = Store.open(workspace)
        progress = board_progress(store.graph)
        assert progress.settled and progress.counts.get(Status.COMPLETED, 0) >= 20
        assert not processes_mentioning(str(workspace)), "a demo process outlived the demo"
    finally:
        import shutil

        shutil.rmtree(workspace.parent, ignore_errors=True)


def processes_mentioning(text: str) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().decode(errors="replace") and alive(int(cmdline.parent.name)):
                found.append(int(cmdline.parent.name))
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return found


def test_quitting_the_demo_dashboard_stops_every_child(monkeypatch, capsys):
    """The dashboard runs in the demo's own process; when it returns (the user quit), every
    child the demo started must be gone."""
    import os
    import types

    from board.cli import main

    seen: dict[str, object] = {}

    def demo_children(workspace: Path) -> list[int]:
        # This test's process is the demo: of its children, only those on the demo's board
        # (another test in this process may have left one of its own).
        named = os.fsencode(str(workspace))
        return [pid for pid in children_of(os.getpid()) if named in _cmdline(pid)]

    def fake_dashboard(workspace, readonly, remember_choices):
        wait_for(lambda: len(demo_children(workspace)) >= 5, what="coordinator and 4 workers")
        wait_for(lambda: board_progress(Store.open(workspace).graph).running >= 4, what="the workers to start work")
        seen.update(workspace=workspace, readonly=readonly, remember=remember_choices, children=identify(demo_children(workspace)))

    # The dashboard stood in for, in a terminal it asks for as the real one does.
    monkeypatch.setitem(sys.modules, "board.ui", types.SimpleNamespace(run_dashboard=fake_dashboard, no_terminal=lambda: None))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    assert main(["demo"]) == 0
    assert seen["readonly"] is False and len(seen["children"]) == 5
    assert seen["remember"] is False  # a demo never writes the user's config
    for pid in seen["children"]:
        assert not alive(pid), f"child {pid.pid} outlived the dashboard"
    assert not Path(seen["workspace"]).exists()  # the temp board is removed unless --keep


def test_ctrl_c_in_the_demo_stops_every_child():
    demo = started(subprocess.Popen([sys.executable, "-m", "board", "demo", "--no-ui"], env={"PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    wait_for(lambda: len(children_of(demo.pid)) == 5, timeout=60, what="coordinator and 4 workers")
    children = identify(children_of(demo.pid))
    workspace = Path(demo.stdout.readline().split("demo board: ", 1)[1].strip())
    wait_for(lambda: board_progress(Store.open(workspace).graph).running > 0, timeout=60, what="the demo's workers to start work")
    demo.send_signal(signal.SIGINT)
    output, _ = demo.communicate(timeout=90)
    assert demo.returncode == 130, output
    for pid in children:
        assert not alive(pid), f"child {pid.pid} survived Ctrl-C"


def test_run_with_events_tells_the_story(workspace):
    store = Store.open(workspace)
    store.create("first")
    store.create("second", blocked_by=["1"])
    done = subprocess.run(
        [sys.executable, "-m", "board", "run", "--workers", "1", "--events", *FAST, "-w", str(workspace)],
        env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    story = done.stderr
    import re

    start = re.search(r"#1 (claimed by|assigned to) worker-1 \(first\)", story)
    assert start is not None, story
    assert start.start() < story.index("#1 completed by worker-1") < story.index("#2 ")


def test_a_sigkilled_command_worker_leaves_no_orphan_under_board_run(workspace, tmp_path):
    """The command dies with its worker, and what it started is ended before the task runs again."""
    store = Store.open(workspace)
    store.create("spawns a helper")
    pids = tmp_path / "pids"
    script = (
        "import os,subprocess,time;"
        f"child=subprocess.Popen(['sleep','300']); open({str(pids)!r},'a').write(f'{{os.getpid()}} {{child.pid}}\\n');"
        "time.sleep(300)"
    )
    write_settings(workspace, "[lease]\nseconds = 2\n")
    run = board_cli(workspace, "run", "--workers", "1", "--timeout", "60", "--", sys.executable, "-c", script)
    try:
        wait_for(lambda: pids.exists() and pids.read_text().strip(), what="the command and its helper")
        command, helper = map(int, pids.read_text().split()[:2])
        worker = next(pid for pid in children_of(run.pid) if "worker" in Path(f"/proc/{pid}/cmdline").read_text())
        os_kill(worker, signal.SIGKILL)
        wait_for(lambda: not alive(command) and not alive(helper), timeout=15, what="the dead worker's command and helper to be ended")
        wait_for(lambda: len(pids.read_text().split()) >= 4, timeout=20, what="the task to be reclaimed and run again")
    finally:
        run.send_signal(signal.SIGINT)
        run.wait(timeout=30)
    for pid in map(int, pids.read_text().split()):
        assert not alive(pid), f"pid {pid} outlived the run"
    history = store.history("1")
    assert any(r["op"] == "reclaim" for r in history)


def os_kill(pid: int, signum: int) -> None:
    import os

    os.kill(pid, signum)


def test_the_block_policy_fires_during_a_run_and_the_summary_says_so(workspace):
    store = Store.open(workspace)
    store.create("always failing tools")
    write_settings(workspace, "[policies]\nblock_after_failures = 2\n")
    done = subprocess.run(
        [sys.executable, "-m", "board", "run", "--workers", "1", "--simulate", "--task-seconds", "3", "3", "--steps", "6", "6", "--toolcall-fail-rate", "1", "--fail-rate", "0", "-w", str(workspace)],
        env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "#1: blocked: policy block_after_failures=2: 2 consecutive failed tool calls" in done.stdout
    store.sync()
    assert store.get("1").policy.name == "block_after_failures"


def test_the_coordinator_reacts_to_changes_without_waiting_for_its_period(workspace):
    write_settings(workspace, "[coordinator]\ntick_seconds = 60\n")
    store = Store.open(workspace)
    coordinator = board_cli(workspace, "coordinator")
    try:
        from board.agents import register_agent

        # Its first tick writes alerts.json; it watches the board right after.
        wait_for(lambda: (workspace / ".tasks" / "alerts.json").exists(), timeout=60, what="the coordinator's first tick")
        store.create("new work")
        started = time.monotonic()

        def assigned() -> bool:
            register_agent(store.agent_records, "idle-agent", kind="test")  # each write is a file event
            return store.sync() is not None and store.get("1").owner == "idle-agent"

        wait_for(assigned, timeout=40, what="the assignment")
        assert time.monotonic() - started < 40  # the period is 60 s: only the file events explain this
    finally:
        coordinator.send_signal(signal.SIGTERM)
        coordinator.wait(timeout=10)


def test_a_worker_shows_in_the_registry_as_working_then_stopped(workspace):
    from board.agents import AgentState, agent_state, read_agent
    from board.model import utcnow
    from datetime import timedelta

    store = Store.open(workspace)
    store.create("job")
    worker = board_cli(workspace, "worker", "--name", "reg", "--simulate", "--task-seconds", "30", "30")
    try:
        wait_for(lambda: (r := read_agent(store.agent_records, "reg")) is not None and r.task == "1", what="the record to show the task")
        record = read_agent(store.agent_records, "reg")
        assert agent_state(record, utcnow(), timedelta(seconds=30)) == AgentState.WORKING and record.kind == "simulated"
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=10)
    record = read_agent(store.agent_records, "reg")
    assert record.stopped and record.task is None
    assert agent_state(record, utcnow(), timedelta(seconds=30)) == AgentState.STALE


def test_run_refuses_a_broken_board_toml_before_starting_anything(workspace):
    Store.open(workspace).create("job")
    write_settings(workspace, "[lease]\nseconds = 'soon'\n")
    done = subprocess.run([sys.executable, "-m", "board", "run", "--simulate", "-w", str(workspace)], env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "board.toml: setting 'lease.seconds'" in done.stderr
    assert "Traceback" not in done.stderr and Store.open(workspace).get("1").status == Status.PENDING


def test_run_uses_a_coordinator_that_is_already_running(workspace):
    make_chain_board(workspace, count=3)
    coordinator = board_cli(workspace, "coordinator")
    try:
        from board.coordinator.presence import coordinator_running

        wait_for(lambda: coordinator_running(workspace / ".tasks"), what="the coordinator")
        done = subprocess.run([sys.executable, "-m", "board", "run", "--workers", "2", *FAST, "-w", str(workspace)], env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "a coordinator is already running on this board; using it" in done.stderr
        assert coordinator.poll() is None
    finally:
        coordinator.send_signal(signal.SIGTERM)
        coordinator.wait(timeout=10)


def test_run_outside_a_board_is_an_error_and_creates_nothing(tmp_path):
    done = subprocess.run([sys.executable, "-m", "board", "run", "--simulate", "-w", str(tmp_path)], env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "no board in" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_run_on_an_empty_board_is_done_at_once(workspace):
    done = subprocess.run([sys.executable, "-m", "board", "run", "--simulate", "-w", str(workspace)], env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "done: the board has no tasks" in done.stdout


def test_the_summary_says_when_a_done_board_has_cancelled_tasks(workspace):
    from board.coordinator.run import final_summary

    store = Store.open(workspace)
    for subject in ("one", "two", "three"):
        store.create(subject)
    for task_id in ("1", "2"):
        store.start(task_id, "alice")
        store.set_status(task_id, "completed", actor="alice")
    store.set_status("3", "cancelled", actor="alice")
    assert final_summary(board_progress(store.graph)) == ["done: all 3 tasks completed or cancelled (1 cancelled)"]
    store.set_status("3", "pending", actor="alice")
    store.start("3", "alice")
    store.set_status("3", "completed", actor="alice")
    assert final_summary(board_progress(store.graph)) == ["done: all 3 tasks completed"]


def test_demo_without_a_terminal_shows_the_run_as_text() -> None:
    """Started from a script (no terminal on stdin or stdout), the demo cannot draw its
    dashboard: it says so and shows the run as ``--no-ui`` does; Ctrl-C still ends it whole."""
    demo = started(subprocess.Popen(
        [sys.executable, "-m", "board", "demo", "--workers", "2", "--pace", "0.05"],
        env={"PYTHONPATH": str(REPO)}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    ))
    lines: list[str] = []
    try:
        assert demo.stdout is not None
        for line in demo.stdout:  # up to the run's first event: workers and coordinator started
            lines.append(line)
            if len(lines) > 2 and lines[1].startswith("demo board: "):
                break
        demo.send_signal(signal.SIGINT)
        rest, _ = demo.communicate(timeout=60)
    finally:
        demo.kill()
    assert "the dashboard needs a terminal" in lines[0] and "showing the run as text instead" in lines[0], lines
    assert demo.returncode == 130, "".join(lines) + rest
    workspace = lines[1].split("demo board: ", 1)[1].strip()
    assert not processes_mentioning(workspace), "a demo process outlived the demo"
