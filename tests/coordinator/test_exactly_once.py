"""A task's command runs once at a time, whoever starts workers and however they die.

Every command here is ``execution.sh``: it takes a lock named after its task with ``flock``
(held by the command and everything it started, for as long as any of them runs) and writes
``concurrent <id>`` when another execution of the same task still holds it, then ``start`` and,
after its work, ``end`` lines to a side-effect log. The log, not the board, says how often a
task really ran.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from board.agents import read_agent
from board.coordinator.presence import coordinator_running
from board.coordinator.run import MAX_RESTARTS_PER_SLOT, RESTART_WINDOW_SECONDS, Supervisor
from board.coordinator.processes import commands_of
from board.status import Status
from board.store import Store

from .helpers import alive, board_cli, identify, started, wait_for, write_settings
from tests.conftest import LONG, BOTH_BACKENDS, files_only

pytestmark = [LONG, BOTH_BACKENDS]

EXECUTION = """\
exec 9>>"$SIDE/lock.$1"
flock -n 9 || echo "concurrent $1 $BOARD_AGENT" >> "$SIDE/log"
echo "start $1 $BOARD_AGENT $BOARD_LEASE_TOKEN" >> "$SIDE/log"
if [ -n "$FIRST_RUN_HANGS" ] && [ ! -e "$SIDE/ran.$1" ]; then
  touch "$SIDE/ran.$1"
  sleep 120
fi
sleep "${WORK_SECONDS:-0.3}"
if [ -n "$HOLD_UNTIL" ]; then
  while [ ! -e "$HOLD_UNTIL" ]; do sleep 0.05; done
fi
echo "end $1 $BOARD_AGENT" >> "$SIDE/log"
"""


def side_effects(tmp_path: Path) -> Path:
    side = tmp_path / "side"
    side.mkdir()
    (side / "log").touch()
    (tmp_path / "execution.sh").write_text(EXECUTION)
    return side


def log_lines(side: Path) -> list[list[str]]:
    return [line.split() for line in (side / "log").read_text().splitlines()]


def run_command(workspace: Path, tmp_path: Path, workers: int, *extra: str) -> list[str]:
    return ["run", "--workers", str(workers), *extra, "--", "sh", str(tmp_path / "execution.sh"), "{id}"]


def environment(side: Path, **more: str) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), SIDE=str(side), **more)


def assert_each_ran_once(side: Path, ids: list[str]) -> None:
    lines = log_lines(side)
    assert [line for line in lines if line[0] == "concurrent"] == [], "two executions of one task ran at once"
    ends = Counter(line[1] for line in lines if line[0] == "end")
    assert ends == Counter({task_id: 1 for task_id in ids}), ends


def test_a_second_run_on_the_same_board_adds_its_own_workers_and_never_runs_a_task_twice(workspace, tmp_path):
    write_settings(workspace, "[lease]\nseconds = 5\n[coordinator]\ntick_seconds = 0.2\n")
    store = Store.open(workspace)
    ids = [store.create(f"task {n}").id for n in range(12)]
    side = side_effects(tmp_path)
    # No command ends before the second run has been stopped: on a slow machine the first run
    # would otherwise finish the board before the second one's workers start.
    env = environment(side, HOLD_UNTIL=str(side / "second-stopped"))
    first = board_cli(workspace, *run_command(workspace, tmp_path, 2), env=env, stderr=subprocess.PIPE)
    wait_for(lambda: any(line[0] == "start" for line in log_lines(side)), timeout=60, what="the first run to start a task")
    second = board_cli(workspace, *run_command(workspace, tmp_path, 2), env=env, stderr=subprocess.PIPE)
    # The second run is stopped while its workers run tasks: it hands back its own, never the first run's.
    wait_for(lambda: any(line[0] == "start" and line[2] in ("worker-3", "worker-4") for line in log_lines(side)), timeout=60, what="the second run's workers to start a task")
    second.send_signal(signal.SIGINT)
    _, second_err = second.communicate(timeout=60)
    (side / "second-stopped").touch()
    _, first_err = first.communicate(timeout=120)
    assert first.returncode == 0, first_err.decode()
    assert "this run adds its own: worker-3, worker-4" in second_err.decode()
    assert_each_ran_once(side, ids)
    agents = {line[2] for line in log_lines(side) if line[0] == "start"}
    assert agents <= {"worker-1", "worker-2", "worker-3", "worker-4"} and {"worker-1", "worker-2"} <= agents
    store.sync()
    assert all(task.status == Status.COMPLETED for task in store.tasks.values())


def test_an_agent_name_is_held_by_one_live_process(workspace):
    first = board_cli(workspace, "worker", "--name", "solo", "--simulate")
    records = Store.open(workspace, whole=False).agent_records
    wait_for(lambda: (record := read_agent(records, "solo")) is not None and record.pid == first.pid, timeout=60, what="the first worker to register")
    second = board_cli(workspace, "worker", "--name", "solo", "--simulate", stderr=subprocess.PIPE)
    _, err = second.communicate(timeout=60)
    assert second.returncode == 3
    assert err.decode().strip().splitlines() == [f"board: agent name 'solo' is in use by another live process on this board (pid {first.pid} on {os.uname().nodename}); pick another --name"]
    first.send_signal(signal.SIGTERM)
    first.wait(timeout=60)
    again = board_cli(workspace, "worker", "--name", "solo", "--simulate")  # free again once the holder is gone
    wait_for(lambda: (record := read_agent(records, "solo")) is not None and record.pid == again.pid and not record.stopped, timeout=60, what="the name to be taken again")


def test_a_worker_renews_a_lease_left_to_its_name_before_running_the_task(workspace, tmp_path):
    """A task leased to ``w`` (by a process of that name that died) whose lease is about to run
    out: ``w`` renews it, under its own lease length, before the command starts, so the
    coordinator never hands it to ``other`` while ``w`` runs it."""
    write_settings(workspace, "[lease]\nseconds = 6\n[coordinator]\ntick_seconds = 0.1\n")
    store = Store.open(workspace)
    task_id = store.create("resume me").id
    side = side_effects(tmp_path)
    env = environment(side, WORK_SECONDS="2.5")
    command = ["--", "sh", str(tmp_path / "execution.sh"), "{id}"]
    resumer = board_cli(workspace, "worker", "--name", "w", "--no-self-claim", "--max-tasks", "1", *command, env=env)
    wait_for(lambda: (record := read_agent(store.agent_records, "w")) is not None and record.pid == resumer.pid, timeout=60, what="w to be running")
    store.claim("w", lease_seconds=1.0)  # what w's previous process left: a lease a second from its end
    board_cli(workspace, "coordinator", env=env)
    board_cli(workspace, "worker", "--name", "other", *command, env=env)
    wait_for(lambda: any(line[0] == "end" for line in log_lines(side)), timeout=60, what="the task to be done")
    wait_for(lambda: Store.open(workspace).get(task_id).status == Status.COMPLETED, timeout=60, what="the completion to be recorded")
    assert_each_ran_once(side, [task_id])
    runs = [line for line in log_lines(side) if line[0] == "start"]
    assert [run[2] for run in runs] == ["w"], runs


def test_a_command_orphaned_with_its_worker_and_run_is_ended_before_the_task_runs_again(workspace, tmp_path):
    """Worker and supervisor SIGKILLed together: the command's shell dies with its worker, its
    child does not. The next run ends that child before it runs the task again, and no
    process of the board outlives the run."""
    write_settings(workspace, "[lease]\nseconds = 2\n[coordinator]\ntick_seconds = 0.2\n")
    store = Store.open(workspace)
    task_id = store.create("long job").id
    side = side_effects(tmp_path)
    env = environment(side, FIRST_RUN_HANGS="1")
    run = board_cli(workspace, *run_command(workspace, tmp_path, 1), env=env)
    wait_for(lambda: (side / f"ran.{task_id}").exists(), timeout=60, what="the command to start")
    worker = read_agent(store.agent_records, "worker-1")
    assert worker is not None and worker.pid
    os.kill(worker.pid, signal.SIGKILL)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=60)
    wait_for(lambda: not alive(worker.pid), timeout=60, what="the worker to die")
    workspace_path = workspace.resolve()
    wait_for(lambda: commands_of(workspace_path, task_id) and all(not _is_shell(pid) for pid in commands_of(workspace_path, task_id)), timeout=60, what="the shell to die with its worker")
    orphans = identify(commands_of(workspace_path, task_id))
    assert orphans, "the command's child should have outlived its worker (that is what is tested)"

    again = board_cli(workspace, *run_command(workspace, tmp_path, 1), env=env, stderr=subprocess.PIPE)
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err.decode()
    assert_each_ran_once(side, [task_id])
    for pid in orphans:
        assert not alive(pid), f"orphan {pid.pid} outlived the run"
    assert commands_of(workspace_path, task_id) == []


def _is_shell(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == "sh"
    except OSError:
        return False


def test_the_restart_budget_counts_only_recent_deaths(workspace):
    supervisor = Supervisor(workspace, workers=1, worker_args=["--simulate"])
    spread = RESTART_WINDOW_SECONDS / MAX_RESTARTS_PER_SLOT
    # A death now and then over a long run never uses the budget up...
    assert not any(supervisor._gives_up(1, n * spread * 1.5) for n in range(50))
    # ...deaths in quick succession do.
    assert [supervisor._gives_up(2, 1000.0 + n) for n in range(MAX_RESTARTS_PER_SLOT + 1)] == [False] * MAX_RESTARTS_PER_SLOT + [True]


@files_only("temp files in .tasks/ churn the file watcher; a database board's coordinator follows notifications")
def test_a_temp_file_storm_never_delays_a_reclaim(workspace, tmp_path):
    """A process making and removing temp files in ``.tasks/`` all the time (as idle workers
    polling for work do): the coordinator still ticks on its period and takes back a lease
    that ran out."""
    write_settings(workspace, "[lease]\nseconds = 30\n[coordinator]\ntick_seconds = 0.2\n")
    store = Store.open(workspace)
    task_id = store.create("left behind").id
    board_cli(workspace, "coordinator")
    wait_for(lambda: coordinator_running(workspace / ".tasks"), timeout=60, what="the coordinator")
    begun = tmp_path / "storm-begun"
    storm = started(subprocess.Popen([sys.executable, "-c", STORM, str(workspace / ".tasks"), str(begun)]))
    # Each temp file lives a moment only: the storm says when it has made its first ones.
    wait_for(begun.exists, timeout=60, what="the storm to begin")
    store.claim("ghost", lease_seconds=0.5)
    wait_for(lambda: Store.open(workspace).get(task_id).status == Status.PENDING, timeout=30, what="the expired lease to be taken back during the storm")
    assert storm.poll() is None, "the storm ended before the reclaim: nothing was tested"

    def reclaimed() -> list[str]:
        return [r["task"] for r in Store.open(workspace).history() if r["op"] == "reclaim"]

    # The task's file is in place a moment before its history line (a loaded machine stretches
    # that moment): the line is waited for, then counted.
    wait_for(lambda: bool(reclaimed()), timeout=30, what="the reclaim's history line")
    assert reclaimed() == [task_id]


STORM = """
import os, sys, time
directory = sys.argv[1]
n = 0
while True:
    path = os.path.join(directory, f".write.storm-{n % 4}.tmp")
    with open(path, "w") as handle:
        handle.write("x")
    os.unlink(path)
    n += 1
    if n == 10:
        open(sys.argv[2], "w").close()
    time.sleep(0.02)
"""


def test_the_coordinator_ends_commands_left_running_on_finished_or_moved_tasks(workspace):
    """Processes started for tasks of this board (they carry its variables) outlived their
    worker: the coordinator ends those whose task finished or moved to a newer lease, and leaves
    the current holder's command and other boards' processes alone."""
    store = Store.open(workspace)
    finished, moved, current = (store.create(name).id for name in ("finished", "moved", "current"))
    store.claim("a", lease_seconds=300)
    actions_token = store.get(finished).lease.token
    store.set_status(finished, Status.COMPLETED, actor="a", token=actions_token)
    old = store.claim("b", lease_seconds=300)
    store.release(moved, actor="b", token=old.lease.token)
    newer = store.claim("c", lease_seconds=300)
    holder = store.claim("d", lease_seconds=300)
    assert (newer.id, holder.id) == (moved, current)
    root = str(workspace.resolve())

    def command(task_id: str, token: int, board_root: str = root) -> subprocess.Popen:
        env = dict(os.environ, BOARD_TASK_ID=task_id, BOARD_WORKSPACE=board_root, BOARD_LEASE_TOKEN=str(token))
        return started(subprocess.Popen(["sleep", "300"], env=env))

    leftover_finished = command(finished, actions_token)
    leftover_moved = command(moved, old.lease.token)
    running = command(current, holder.lease.token)
    elsewhere = command(finished, actions_token, board_root=root + "-other")
    board_cli(workspace, "coordinator")
    wait_for(lambda: leftover_finished.poll() is not None and leftover_moved.poll() is not None, timeout=60, what="the leftover commands to be ended")
    assert running.poll() is None and elsewhere.poll() is None
