"""Two ``board run`` on one board, started together: they share the work and never touch each
other's processes.

Both runs choose their workers' names before either run's workers hold them, as happens when a
user starts two runs at once. A gate makes that certain: every worker waits, before it takes
its name, until the test has seen all six spawned (``sitecustomize.py`` runs in every Python
process the runs start, and holds back only ``board worker``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from board.status import Status
from board.store import Store

from .helpers import REPO, Proc, alive, identify, started, wait_for

#: Held back until the gate file exists (at most a minute, so nothing waits for ever).
GATE = """\
import os, time
if open("/proc/self/cmdline", "rb").read().split(b"\\0")[3:4] == [b"worker"]:
    deadline = time.monotonic() + 60
    while not os.path.exists(os.environ["WORKER_GATE"]) and time.monotonic() < deadline:
        time.sleep(0.01)
"""

#: One line when a task's command starts and one when it ends, naming the run (the parent of
#: the worker that started it); ``exec`` makes the logged pid the sleeping command's own.
COMMAND = """\
run=$(sed 's/.*) //' /proc/$PPID/stat | cut -d' ' -f2)
echo "start $1 $BOARD_AGENT $run $$" >> "$SIDE"
[ "$2" = forever ] && exec sleep 300
sleep 1
echo "end $1 $BOARD_AGENT $run $$" >> "$SIDE"
"""


def spawned_workers(run_pids: list[int]) -> list[int]:
    """The ``board worker`` processes the runs started (children of those runs alone)."""
    found = []
    for pid in run_pids:
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            try:
                argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[3:4] == [b"worker"]:
                found.append(child)
    return found


def start_two_runs(workspace: Path, tmp_path: Path, *command: str) -> tuple[list[subprocess.Popen], Path]:
    """Two ``board run --workers 3`` on the board, whose workers all start together once both
    runs have spawned theirs. Returns the runs and the log their commands write."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(GATE)
    (tmp_path / "command.sh").write_text(COMMAND)
    side = tmp_path / "side"
    side.touch()
    gate = tmp_path / "gate"
    env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{hooks}", WORKER_GATE=str(gate), SIDE=str(side))
    argv = [sys.executable, "-m", "board", "run", "--workers", "3", "-w", str(workspace), "--", "sh", str(tmp_path / "command.sh"), "{id}", *command]
    runs = []
    for number in (1, 2):
        with open(tmp_path / f"run{number}.out", "w") as output:
            runs.append(started(subprocess.Popen(argv, env=env, cwd=workspace, stdout=output, stderr=subprocess.STDOUT)))
    wait_for(lambda: len(spawned_workers([run.pid for run in runs])) == 6, timeout=60, what="both runs to spawn their three workers")
    gate.touch()
    return runs, side


def log_lines(side: Path) -> list[list[str]]:
    return [line.split() for line in side.read_text().splitlines()]


def outputs(tmp_path: Path) -> str:
    return "\n".join(f"--- {path.name}\n{path.read_text()}" for path in sorted(tmp_path.glob("run*.out")))


def test_two_runs_started_together_share_the_board_and_both_finish(workspace, tmp_path):
    store = Store.open(workspace)
    for number in range(1, 11):
        store.create(f"task {number}")
    runs, side = start_two_runs(workspace, tmp_path)
    for run in runs:
        run.wait(timeout=120)
    said = outputs(tmp_path)
    assert [run.returncode for run in runs] == [0, 0], said
    assert said.count("done: all 10 tasks completed") == 2, said
    assert "killed" not in said, said
    assert said.count("took the name") >= 3, said  # the runs did meet over names
    lines = log_lines(side)
    starts = Counter(line[1] for line in lines if line[0] == "start")
    ends = Counter(line[1] for line in lines if line[0] == "end")
    every_task = Counter({task_id: 1 for task_id in store.tasks})
    assert starts == every_task and ends == every_task, lines  # each command ran once, to its end
    names_by_run: dict[str, set[str]] = {}
    for line in lines:
        names_by_run.setdefault(line[3], set()).add(line[2])
    assert set(names_by_run) == {str(run.pid) for run in runs}, names_by_run  # each run did its share
    first, second = names_by_run.values()
    assert not first & second, names_by_run  # and under names of its own
    store.sync()
    assert all(task.status == Status.COMPLETED for task in store.tasks.values())


def test_interrupting_one_of_two_runs_leaves_the_other_runs_commands_running(workspace, tmp_path):
    store = Store.open(workspace)
    for number in range(1, 7):
        store.create(f"task {number}")
    runs, side = start_two_runs(workspace, tmp_path, "forever")

    def running_by_run() -> dict[str, list[Proc]]:
        found: dict[str, list[Proc]] = {}
        for line in log_lines(side):
            found.setdefault(line[3], []).extend(identify([int(line[4])]))
        return {run: [p for p in procs if alive(p)] for run, procs in found.items()}

    wait_for(
        lambda: sum(map(len, running_by_run().values())) == 6 and len(running_by_run()) == 2,
        timeout=60,
        what="a command of each run to be running on every task",
    )
    # The run to interrupt is one that lost a name to the other: the name it gave its worker
    # is the other run's, and so are the task and the command leased to it.
    said = [path.read_text() for path in (tmp_path / "run1.out", tmp_path / "run2.out")]
    stopped, kept = runs if "took the name" in said[0] else runs[::-1]
    store.sync()
    leases_before = {task.id: (task.lease.owner, task.lease.token) for task in store.tasks.values() if task.lease}
    commands_of_kept = running_by_run()[str(kept.pid)]

    stopped.send_signal(signal.SIGINT)
    assert stopped.wait(timeout=60) == 130, outputs(tmp_path)
    assert all(alive(command) for command in commands_of_kept), outputs(tmp_path)
    store.sync()
    kept_names = {line[2] for line in log_lines(side) if line[3] == str(kept.pid)}
    for task in store.tasks.values():
        if task.lease is not None and task.lease.owner in kept_names:
            assert task.status == Status.IN_PROGRESS and (task.lease.owner, task.lease.token) == leases_before[task.id]
    assert sum(1 for task in store.tasks.values() if task.status == Status.IN_PROGRESS) == len(commands_of_kept)

    kept.send_signal(signal.SIGINT)
    assert kept.wait(timeout=60) == 130, outputs(tmp_path)
    wait_for(lambda: not any(alive(command) for commands in running_by_run().values() for command in commands), what="every command to end with its run")
