"""Chaos: 200 tasks, 8 real worker processes, workers SIGKILLed at random while they work.

Every task must complete exactly once, no task may ever have two holders at once, no write may
come from a holder whose lease was taken back, every reclaim must say why, no file may be
corrupt, and no process may outlive the run.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

from board.checkpoints import list_checkpoints, read_checkpoint
from board.coordinator.run import MAX_RESTARTS_PER_SLOT, Supervisor, board_progress
from board.agents import list_agents, read_agent
from board.status import Status
from board.store import Store

from .helpers import Proc, alive, board_cli, identify, write_settings
from tests.conftest import LONG

pytestmark = LONG

TASKS = 200
WORKERS = 8
KILLS = 16
SEED = 2026


def build_random_dag(store: Store, count: int, rng: random.Random) -> None:
    ids: list[str] = []
    for i in range(count):
        blockers = rng.sample(ids[-30:], k=min(len(ids[-30:]), rng.choice([0, 0, 1, 1, 2])))
        ids.append(store.create(f"chaos task {i}", blocked_by=blockers, files=[f"src/m{i % 17}.py"], priority=rng.choice(["low", "medium", "high"])).id)


def test_chaos_every_task_done_exactly_once_despite_random_sigkills(workspace):
    write_settings(workspace, "[lease]\nseconds = 2\n[coordinator]\ntick_seconds = 0.2\n")
    rng = random.Random(SEED)
    store = Store.open(workspace)
    build_random_dag(store, TASKS, rng)
    supervisor = Supervisor(
        workspace,
        workers=WORKERS,
        worker_args=["--simulate", "--seed", "1", "--fail-rate", "0", "--toolcall-fail-rate", "0", "--task-seconds", "0.02", "0.08", "--steps", "1", "2"],
        name_prefix="chaos",
        child_output=subprocess.DEVNULL,
        log=open(workspace / "supervisor.log", "w"),
    )
    every_pid: list[Proc] = []
    kills: list[str] = []
    deadline = time.monotonic() + 90
    try:
        supervisor.start()
        next_kill = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            assert not supervisor.check_children(), "a worker slot was given up on"
            every_pid += [p for p in identify(supervisor.pids()) if p not in every_pid]
            progress = supervisor.progress()
            if progress.settled:
                break
            # Kills are spread over the first 80% of the work, not over wall-clock time: on a
            # fast machine the board may finish before a clock-based schedule has run out.
            done = progress.counts.get(Status.COMPLETED, 0)
            due = len(kills) < KILLS and done >= len(kills) * TASKS * 0.8 / KILLS
            if due and time.monotonic() >= next_kill:
                victim = rng.choice([c for c in supervisor.children if c.role == "worker" and c.restarts < 3])
                victim.process.send_signal(signal.SIGKILL)
                kills.append(victim.name)
                next_kill = time.monotonic() + rng.uniform(0.05, 0.3)
            time.sleep(0.05)
    finally:
        supervisor.stop()

    # Every task completed, exactly once. Each history line carries the diff the store computed
    # under the lock against the file on disk, so each line is checked on its own: a worker
    # SIGKILLed between replacing a task file and appending its history line leaves a gap in
    # that task's versions (the file is right, the line is missing); gaps are allowed, at most
    # one per kill, and are counted, never papered over.
    store.sync()
    progress = board_progress(store.graph)
    assert progress.all_done, progress.unfinished
    history = store.history()
    completions = Counter(r["task"] for r in history if r["op"].startswith("status:completed"))
    assert max(completions.values()) == 1, [t for t, n in completions.items() if n > 1]
    versions: dict[str, list[int]] = {}
    for record in history:
        versions.setdefault(record["task"], []).append(record["version"])
    gaps = {t: sorted(set(range(1, store.get(t).version + 1)) - set(v)) for t, v in versions.items()}
    gaps = {t: missing for t, missing in gaps.items() if missing}
    assert sum(len(m) for m in gaps.values()) <= len(kills), gaps
    for task_id in set(store.tasks) - set(completions):
        assert task_id in gaps, f"#{task_id} is completed on disk but its history neither logs nor misses the completion"

    # Never two holders at once, and only the holder finishes or renews a task.
    reclaims = 0
    for record in history:
        op, actor, changes = record["op"], record["actor"], record["changes"]
        before_lease = (changes.get("lease") or [None, None])[0]
        if op == "claim":
            assert before_lease is None and changes["status"][0] == "pending", f"#{record['task']} claimed while held: {record}"
        elif op == "reclaim":
            reclaims += 1
            assert record.get("reason", "").startswith("lease of ") and before_lease is not None, record
        elif op.startswith("status:completed"):
            assert before_lease is not None and before_lease["owner"] == actor, f"#{record['task']} completed by {actor} without its lease: {record}"
        elif op == "heartbeat":
            after_lease = changes["lease"][1]
            assert before_lease["owner"] == actor and after_lease["token"] == before_lease["token"], record
    assert reclaims >= 1, "the kills never cost a lease: the test did not test anything"
    assert len(kills) == KILLS

    # Nothing on disk is corrupt: task files, history lines, checkpoints, agent records. A
    # worker killed mid-write leaves its temp files: reported at once, removed by --fix.
    store.close()
    assert {p.kind for p in store.check()} <= {"file.stray_temp"}
    store.remove_stray_temp_files()
    assert store.check() == []
    raw_lines = (workspace / ".tasks" / "history.jsonl").read_text().splitlines()
    assert len(raw_lines) == len(history) and all(json.loads(line) for line in raw_lines)
    for task_id in store.tasks:
        for seq in list_checkpoints(store.checkpoint_book, task_id):
            read_checkpoint(store.checkpoint_book, task_id, seq)  # raises CorruptCheckpoint
    assert len(list_agents(store.agent_records)) == len(list((workspace / ".tasks" / "agents").glob("*.json")))

    # No process outlived the run.
    for pid in every_pid:
        assert not alive(pid), f"pid {pid.pid} outlived the run"
    assert all(t.status == Status.COMPLETED and t.lease is None for t in store.tasks.values())


COMMAND = """\
exec 9>>"$SIDE/lock.$1"
flock -n 9 || echo "concurrent $1 $BOARD_AGENT" >> "$SIDE/log"
echo "start $1 $BOARD_AGENT $(date +%s.%N)" >> "$SIDE/log"
sleep 0.3 && { trap '' TERM; echo "end $1 $BOARD_AGENT" >> "$SIDE/log"; }
"""


def test_chaos_runs_restarted_and_doubled_every_command_runs_exactly_once(workspace, tmp_path):
    """Two ``board run`` on one board (the second started mid-way), workers SIGKILLed while
    their command runs, coordinators and whole runs SIGKILLed and runs started again: every
    task's command completes exactly once (counted in a log the commands write), never two at
    once, no process of the board outlives the runs, and no file is corrupt or left behind."""
    write_settings(workspace, "[lease]\nseconds = 2\n[coordinator]\ntick_seconds = 0.2\n")
    rng = random.Random(SEED + 1)
    store = Store.open(workspace)
    build_random_dag(store, TASKS, rng)
    side = tmp_path / "side"
    side.mkdir()
    (side / "log").touch()
    (tmp_path / "command.sh").write_text(COMMAND)
    env = dict(os.environ, SIDE=str(side))
    argv = ["run", "--workers", str(WORKERS // 2), "--", "sh", str(tmp_path / "command.sh"), "{id}"]

    def lines() -> list[list[str]]:
        return [line.split() for line in (side / "log").read_text().splitlines()]

    def completed() -> int:
        return sum(1 for line in lines() if line[0] == "end")

    def start_run() -> subprocess.Popen:
        output = open(tmp_path / f"run{len(runs)}.out", "w")
        return board_cli(workspace, *argv, env=env, stdout=output, stderr=subprocess.STDOUT)

    def outputs() -> str:
        return "\n".join(path.read_text() for path in sorted(tmp_path.glob("run*.out")))

    runs: list[subprocess.Popen] = []
    runs.append(start_run())
    every_pid: list[Proc] = []
    done_kinds: Counter[str] = Counter()
    deaths: Counter[tuple[int, str]] = Counter()  # kills per run and worker slot (or its coordinator)
    deadline = time.monotonic() + 240
    second_started = False
    run_deaths = [0.35, 0.55]  # the share of tasks done when a whole run is killed and started again
    while time.monotonic() < deadline and any(run.poll() is None for run in runs):
        live = [run for run in runs if run.poll() is None]
        for run in live:
            every_pid += [p for p in identify(descendants(run.pid)) if p not in every_pid]
        done = completed()
        if not second_started and done >= TASKS * 0.2:
            runs.append(start_run())
            second_started = True
        if run_deaths and done >= TASKS * run_deaths[0] and len(live) > 1:
            # A whole run dies at once (its workers stop and hand back their tasks); another is started.
            run_deaths.pop(0)
            victim = rng.choice(live)
            victim.send_signal(signal.SIGKILL)
            victim.wait(timeout=60)
            runs.append(start_run())
            done_kinds["run"] += 1
        elif done < TASKS * 0.8 and rng.random() < 0.15:
            kind = rng.choice(["worker", "worker", "worker", "coordinator"])
            if kind == "worker":
                # A worker dies while its command sleeps: the command dies with it, unfinished.
                fresh = [line for line in lines()[-WORKERS:] if line[0] == "start" and time.time() - float(line[3]) < 0.12]
                record = read_agent(store.agent_records, fresh[-1][2]) if fresh else None
                if record is not None and record.pid and alive(record.pid) and not record.stopped:
                    slot = (parent_of(record.pid), re.sub(r"r\d+$", "", record.name))  # worker-3r2 fills slot worker-3
                    if deaths[slot] < MAX_RESTARTS_PER_SLOT - 1:  # a run gives up on a slot that keeps dying
                        os.kill(record.pid, signal.SIGKILL)
                        deaths[slot] += 1
                        done_kinds[kind] += 1
            elif kind == "coordinator":
                for run in live:
                    coordinators = [p for p in descendants(run.pid) if b"coordinator" in _cmdline(p)]
                    if coordinators and deaths[(run.pid, "coordinator")] < MAX_RESTARTS_PER_SLOT - 1:
                        os.kill(coordinators[0], signal.SIGKILL)
                        deaths[(run.pid, "coordinator")] += 1
                        done_kinds[kind] += 1
                        break
        time.sleep(0.05)
    for run in runs:
        if run.poll() is None:
            run.send_signal(signal.SIGINT)
            run.wait(timeout=60)
    assert time.monotonic() < deadline, "the runs did not finish the board in time"
    killed = [run for run in runs if run.returncode == -signal.SIGKILL]
    assert len(killed) == done_kinds["run"] and all(run.returncode == 0 for run in runs if run not in killed), outputs()

    log = lines()
    assert [line for line in log if line[0] == "concurrent"] == [], "two executions of one task ran at once"
    ends = Counter(line[1] for line in log if line[0] == "end")
    store.sync()
    assert ends == Counter({task_id: 1 for task_id in store.tasks}), {t: n for t, n in ends.items() if n != 1}
    assert all(task.status == Status.COMPLETED for task in store.tasks.values())
    assert done_kinds["worker"] >= 3 and done_kinds["run"] == 2, done_kinds  # the chaos happened

    for pid in every_pid:
        assert not alive(pid), f"pid {pid.pid} ({_cmdline(pid.pid)!r}) outlived the runs"
    store.close()  # this test's own spares (a live writer's) go too
    fixed = subprocess.run([sys.executable, "-m", "board", "check", "--fix", "-w", str(workspace)], env=env, capture_output=True, text=True, timeout=60)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert Store.open(workspace).check() == []
    for path in (workspace / ".tasks").rglob("*"):
        assert not path.name.endswith(".tmp"), f"stray temp file {path}"
    for line in (workspace / ".tasks" / "history.jsonl").read_text().splitlines():
        json.loads(line)


def descendants(pid: int) -> list[int]:
    """Every live process under ``pid``."""
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found.append(child)
            frontier.append(child)
    return found


def parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return b""
