"""Command and simulated workers against a real board, with real processes."""

from __future__ import annotations

import json
import signal
import sys
import time

import pytest

from board.coordinator.simulated import Simulation, SimulatedWorker
from board.coordinator import workers
from board.coordinator.workers import CommandWorker, log_path, substitute
from board.errors import StaleLease
from board.model import Task
from board.status import Status
from board.store import Store

from .helpers import REPO, alive, board_cli, wait_for, write_settings
from tests.conftest import BOTH_BACKENDS

pytestmark = BOTH_BACKENDS

PY = sys.executable


def test_placeholders_are_substituted_inside_their_own_argument_in_one_pass(tmp_path):
    task = Task(id="7", subject="$(touch /tmp/x) ; rm -rf ~ {id}", description="a\nb")
    argv = substitute(["echo", "{id}", "--subject={subject}", "{description}", "{workspace}/x", "{other}"], task, tmp_path)
    assert argv == ["echo", "7", "--subject=$(touch /tmp/x) ; rm -rf ~ {id}", "a\nb", f"{tmp_path}/x", "{other}"]


def test_hostile_subjects_reach_the_command_as_plain_arguments(workspace, tmp_path):
    marker = tmp_path / "pwned"
    store = Store.open(workspace)
    hostile = [f"$(touch {marker})", f"; touch {marker}", f"`touch {marker}`", "; rm -rf ~", "' \" | & > <"]
    for subject in hostile:
        store.create(subject)
    out = tmp_path / "argv.jsonl"
    script = f"import json,sys; open({str(out)!r},'a').write(json.dumps(sys.argv[1:])+'\\n')"
    worker = CommandWorker(workspace, "w1", [PY, "-c", script, "{subject}", "{id}"])
    worker.run(max_tasks=len(hostile))
    seen = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(args[0] for args in seen) == sorted(hostile)
    assert all(len(args) == 2 for args in seen)
    assert not marker.exists()
    store.sync()
    assert all(t.status == Status.COMPLETED for t in store.tasks.values())


def test_exit_zero_completes_the_task_with_its_output_logged_and_its_environment_set(workspace):
    store = Store.open(workspace)
    task = store.create("say hello")
    script = "import os; print('hello from', os.environ['BOARD_TASK_ID'], os.environ['BOARD_AGENT'], os.environ['BOARD_LEASE_TOKEN'], os.environ['BOARD_WORKSPACE'])"
    CommandWorker(workspace, "w1", [PY, "-c", script]).run(max_tasks=1)
    store.sync()
    done = store.get(task.id)
    assert done.status == Status.COMPLETED and done.completed_at is not None
    log = log_path(store.state_dir, task.id).read_text()
    token = [r for r in store.history(task.id) if r["op"] == "claim"][0]["changes"]["lease"][1]["token"]
    assert f"hello from {task.id} w1 {token} {workspace.resolve()}" in log
    assert "exit status 0" in log


def test_a_command_can_record_tool_calls_with_the_environment_it_is_given(workspace, monkeypatch):
    store = Store.open(workspace)
    task = store.create("uses tools")
    script = (
        "import os,subprocess,sys;"
        "subprocess.run([sys.executable,'-m','board','toolcall',os.environ['BOARD_TASK_ID'],'edit','--file','a.py',"
        "'--agent',os.environ['BOARD_AGENT'],'--token',os.environ['BOARD_LEASE_TOKEN'],'-w',os.environ['BOARD_WORKSPACE']],check=True)"
    )
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    CommandWorker(workspace, "w1", [PY, "-c", script]).run(max_tasks=1)
    store.sync()
    assert store.get(task.id).status == Status.COMPLETED
    assert [(c["tool"], c["files"], c["agent"]) for c in store.toolcalls(task.id)] == [("edit", ["a.py"], "w1")]
    from board.agents import read_agent

    assert read_agent(store.agent_records, "w1").tool_calls == 1


def test_non_zero_exit_fails_the_task_with_the_last_stderr_line(workspace):
    store = Store.open(workspace)
    task = store.create("breaks")
    script = "import sys; print('working'); sys.stderr.write('first problem\\nAssertionError: 2 != 3\\n'); sys.exit(4)"
    CommandWorker(workspace, "w1", [PY, "-c", script]).run(max_tasks=1)
    store.sync()
    failed = store.get(task.id)
    assert failed.status == Status.FAILED
    assert failed.error == "AssertionError: 2 != 3"
    assert "exit status 4" in log_path(store.state_dir, task.id).read_text()


def test_a_silent_non_zero_exit_says_the_status(workspace):
    store = Store.open(workspace)
    task = store.create("quiet failure")
    CommandWorker(workspace, "w1", [PY, "-c", "raise SystemExit(3)"]).run(max_tasks=1)
    store.sync()
    assert store.get(task.id).error == "exited with status 3"


def test_a_missing_program_fails_the_task_clearly(workspace):
    store = Store.open(workspace)
    task = store.create("typo")
    CommandWorker(workspace, "w1", ["/nonexistent/agent-binary", "{id}"]).run(max_tasks=1)
    store.sync()
    assert store.get(task.id).status == Status.FAILED
    assert "could not start" in store.get(task.id).error


def test_a_hung_command_is_killed_with_its_children_at_the_timeout(workspace, tmp_path):
    store = Store.open(workspace)
    task = store.create("hangs")
    pids = tmp_path / "pids"
    script = (
        "import os,subprocess,sys,time;"
        f"child=subprocess.Popen(['sleep','300']); open({str(pids)!r},'w').write(f'{{os.getpid()}} {{child.pid}}');"
        "time.sleep(300)"
    )
    started = time.monotonic()
    CommandWorker(workspace, "w1", [PY, "-c", script], timeout=1.5).run(max_tasks=1)
    assert time.monotonic() - started < 10
    store.sync()
    failed = store.get(task.id)
    assert failed.status == Status.FAILED and "timed out after 1.5 s" in failed.error
    for pid in map(int, pids.read_text().split()):
        assert not alive(pid), f"pid {pid} survived the timeout"


def test_the_simulated_worker_records_tool_calls_progress_and_completes(workspace):
    store = Store.open(workspace)
    task = store.create("simulate me", files=["src/a.py", "src/b.py"])
    simulation = Simulation(seed=1, fail_rate=0, toolcall_fail_rate=0, min_seconds=0.05, max_seconds=0.1, min_steps=3, max_steps=3)
    SimulatedWorker(workspace, "sim", simulation).run(max_tasks=1)
    store.sync()
    done = store.get(task.id)
    assert done.status == Status.COMPLETED and done.progress == 100
    calls = store.toolcalls(task.id)
    assert len(calls) == 3 and done.tool_calls.total == 3
    assert all(set(c["files"]) <= {"src/a.py", "src/b.py"} and c["files"] for c in calls)
    assert [r["changes"]["progress"][1] for r in store.history(task.id) if r["op"] == "toolcall"] == [33, 67, 99]
    from board.agents import read_agent

    assert read_agent(store.agent_records, "sim").tool_calls == 3  # the agents panel counts them


def test_simulated_outcomes_depend_only_on_seed_and_task(workspace):
    store = Store.open(workspace)
    task = store.create("x")
    a = SimulatedWorker(workspace, "a", Simulation(seed=5, fail_rate=0.5)).plan(task)
    b = SimulatedWorker(workspace, "b", Simulation(seed=5, fail_rate=0.5)).plan(task)
    c = SimulatedWorker(workspace, "c", Simulation(seed=6, fail_rate=0.5)).plan(task)
    assert a == b and a != c
    fails = [SimulatedWorker(workspace, "d", Simulation(seed=s, fail_rate=0.3)).plan(task)[2] for s in range(200)]
    assert 30 < sum(fails) < 90


def test_a_retried_simulated_task_gets_a_fresh_draw(workspace):
    """Otherwise a task that failed once fails on every retry, and a demo can never finish."""
    store = Store.open(workspace)
    task = store.create("x")
    worker = SimulatedWorker(workspace, "a", Simulation(seed=5, fail_rate=0.5))
    first_attempts = {worker.plan(task)[2] for _ in range(5)}
    assert len(first_attempts) == 1  # the same attempt is always the same
    retries = [worker.plan(task.model_copy(update={"version": task.version + 3 * n}))[2] for n in range(1, 41)]
    assert 5 < sum(retries) < 35  # later attempts draw again


def test_a_simulated_task_can_fail(workspace):
    store = Store.open(workspace)
    task = store.create("doomed")
    SimulatedWorker(workspace, "s", Simulation(fail_rate=1, min_seconds=0.01, max_seconds=0.02)).run(max_tasks=1)
    store.sync()
    assert store.get(task.id).status == Status.FAILED and "simulated failure" in store.get(task.id).error


def test_a_killed_command_worker_leaves_no_process_and_its_task_is_redone_once(workspace, tmp_path):
    write_settings(workspace, "[lease]\nseconds = 1.5\n")
    store = Store.open(workspace)
    task = store.create("long")
    pids = tmp_path / "pids"
    script = (
        "import os,subprocess,sys,time;"
        f"child=subprocess.Popen(['sleep','300']); open({str(pids)!r},'a').write(f'{{os.getpid()}} {{child.pid}}\\n');"
        "time.sleep(300 if os.environ['BOARD_AGENT'] == 'first' else 0.1)"
    )
    first = board_cli(workspace, "worker", "--name", "first", "--", PY, "-c", script)
    wait_for(lambda: pids.exists() and pids.read_text().strip(), what="the command to start")
    first.send_signal(signal.SIGKILL)
    first.wait()
    command_pid, grandchild = map(int, pids.read_text().split())
    wait_for(lambda: not alive(command_pid), what="the command to die with its worker")

    coordinator = board_cli(workspace, "coordinator")
    second = board_cli(workspace, "worker", "--name", "second", "--", PY, "-c", script)
    try:
        wait_for(lambda: store.sync() is not None and store.get(task.id).status == Status.COMPLETED, timeout=20, what="the task to be redone")
    finally:
        for proc in (second, coordinator):
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)
    history = store.history(task.id)
    assert [r["op"] for r in history].count("status:completed") == 1
    reclaims = [r for r in history if r["op"] == "reclaim"]
    assert len(reclaims) == 1 and "lease of first expired" in reclaims[0]["reason"]
    assert [r["actor"] for r in history if r["op"] == "status:completed"] == ["second"]
    # The sleep the killed command started was ended before the task ran again.
    assert not alive(grandchild)


def test_a_worker_that_stalls_loses_its_lease_and_cannot_write(workspace, tmp_path):
    write_settings(workspace, "[lease]\nseconds = 1\n")
    store = Store.open(workspace)
    task = store.create("stall")
    started = tmp_path / "started"
    script = f"import time; open({str(started)!r},'w').write('x'); time.sleep(300)"
    stalled = board_cli(workspace, "worker", "--name", "stalled", "--", PY, "-c", script)
    try:
        wait_for(started.exists, what="the command to start")
        store.sync()
        token = store.get(task.id).lease.token
        stalled.send_signal(signal.SIGSTOP)
        from board.coordinator.tick import tick
        from board.config import load_settings

        reclaimed: list[str] = []
        wait_for(lambda: reclaimed.extend(r.task for r in tick(store, [], load_settings(store.state_dir)).reclaimed) or reclaimed, what="the lease to run out and be taken back")
        assert reclaimed == [task.id]
        newer = store.claim("other", lease_seconds=60)
        assert newer.lease.token > token
        with pytest.raises(StaleLease):
            store.set_status(task.id, "completed", token=token)
        stalled.send_signal(signal.SIGCONT)
        wait_for(lambda: "lease was taken back" in log_path(store.state_dir, task.id).read_text(), what="the stalled worker to notice")
    finally:
        stalled.send_signal(signal.SIGCONT)
        stalled.send_signal(signal.SIGTERM)
        stalled.wait(timeout=10)
    store.sync()
    after = store.get(task.id)
    assert (after.status, after.owner, after.lease.token) == (Status.IN_PROGRESS, "other", newer.lease.token)
    assert not any(r["actor"] == "stalled" for r in store.history(task.id) if r["version"] > newer.version)


def test_a_stopped_worker_hands_its_task_back(workspace):
    store = Store.open(workspace)
    task = store.create("interrupted")
    worker = board_cli(workspace, "worker", "--name", "w", "--simulate", "--task-seconds", "30", "30")
    try:
        wait_for(lambda: store.sync() is not None and store.get(task.id).status == Status.IN_PROGRESS, what="the claim")
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=10) == 0
    store.sync()
    back = store.get(task.id)
    assert (back.status, back.owner, back.lease) == (Status.PENDING, "", None)
    assert any(r["op"] == "release (worker w stopped)" for r in store.history(task.id))


def test_a_command_that_ends_as_its_lease_is_taken_back_leaves_its_result_in_history(workspace, tmp_path, monkeypatch):
    """The command finishes its work, its lease is taken back while a child of its own still
    holds its output open, and the worker's next renewal finds the lease gone: the result is
    still reported (and refused, since the task is another's now), never dropped unsaid."""
    write_settings(workspace, "[lease]\nseconds = 1\n")
    store = Store.open(workspace)
    task = store.create("ends as its lease goes")
    # The command exits at once. A child it leaves behind holds its output open and, once the
    # worker has seen the command exit (and reaped it), takes the lease back, as a coordinator
    # would after an outage. The worker reads that output for a long while, so a renewal comes
    # meanwhile however loaded the machine.
    take_back = (
        "import os, time\n"
        "from board.store import Store\n"
        "store = Store.open(os.environ['BOARD_WORKSPACE'])\n"
        "command = os.getppid()\n"
        "print('ready', flush=True)\n"
        "while True:\n"
        "    try:\n"
        "        os.kill(command, 0)\n"
        "    except ProcessLookupError:\n"
        "        break\n"
        "    time.sleep(0.01)\n"
        "task = os.environ['BOARD_TASK_ID']\n"
        "store.release(task, actor='person', force=True, reason='taken back')\n"
        "store.claim_task(task, 'other', lease_seconds=60)\n"
        "time.sleep(30)\n"
    )
    script = f"import subprocess, sys; child = subprocess.Popen([sys.executable, '-c', {take_back!r}], stdout=subprocess.PIPE); child.stdout.readline()"
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setattr(workers, "OUTPUT_DRAIN_SECONDS", 20.0)
    worker = CommandWorker(workspace, "w1", [PY, "-c", script])
    assert worker.heartbeat_every < 1
    worker.run(max_tasks=1)
    store.sync()
    after = store.get(task.id)
    assert (after.status, after.owner) == (Status.IN_PROGRESS, "other")
    refused = [r["attempted"] for r in store.history(task.id) if r["op"] == "refused" and r["actor"] == "w1"]
    # The result, refused once; a renewal made after the take-back and before the command was
    # seen to end is refused too, and kept (whether one comes depends on the machine's pace).
    assert refused.count("status:completed") == 1 and set(refused) <= {"status:completed", "heartbeat"}, store.history(task.id)
    assert refused[-1] == "status:completed"
