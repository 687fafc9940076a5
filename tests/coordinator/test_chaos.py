"""Chaos: 200 tasks, 8 real worker processes, workers SIGKILLed at random while they work.

Every task must complete exactly once, no task may ever have two holders at once, no write may
come from a holder whose lease was taken back, every reclaim must say why, no file may be
corrupt, and no process may outlive the run.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from collections import Counter

from board.checkpoints import list_checkpoints, read_checkpoint
from board.coordinator.run import Supervisor, board_progress
from board.agents import list_agents
from board.status import Status
from board.store import Store

from .helpers import alive, write_settings

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
    every_pid: list[int] = []
    kills: list[str] = []
    deadline = time.monotonic() + 90
    try:
        supervisor.start()
        next_kill = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            assert not supervisor.check_children(), "a worker slot was given up on"
            every_pid += [pid for pid in supervisor.pids() if pid not in every_pid]
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

    # Nothing on disk is corrupt: task files, history lines, checkpoints, agent records.
    assert store.check() == []
    raw_lines = (workspace / ".tasks" / "history.jsonl").read_text().splitlines()
    assert len(raw_lines) == len(history) and all(json.loads(line) for line in raw_lines)
    for task_id in store.tasks:
        for path in list_checkpoints(store.state_dir, task_id):
            read_checkpoint(path)  # raises CorruptCheckpoint
    assert len(list_agents(store.state_dir)) == len(list((workspace / ".tasks" / "agents").glob("*.json")))
    # A worker killed mid-write may leave a .*.tmp file behind: ignored by every reader (SPEC section 1).

    # No process outlived the run.
    for pid in every_pid:
        assert not alive(pid), f"pid {pid} outlived the run"
    assert all(t.status == Status.COMPLETED and t.lease is None for t in store.tasks.values())
