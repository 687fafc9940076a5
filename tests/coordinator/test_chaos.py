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
        next_kill = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            assert not supervisor.check_children(), "a worker slot was given up on"
            every_pid += [pid for pid in supervisor.pids() if pid not in every_pid]
            progress = supervisor.progress()
            if progress.settled:
                break
            if len(kills) < KILLS and time.monotonic() >= next_kill:
                victim = rng.choice([c for c in supervisor.children if c.role == "worker" and c.restarts < 3])
                victim.process.send_signal(signal.SIGKILL)
                kills.append(victim.name)
                next_kill = time.monotonic() + rng.uniform(0.2, 0.8)
            time.sleep(0.05)
    finally:
        supervisor.stop()

    # Every task completed, exactly once.
    store.sync()
    progress = board_progress(store.graph)
    assert progress.all_done, progress.unfinished
    history = store.history()
    completions = Counter(r["task"] for r in history if r["op"].startswith("status:completed"))
    assert set(completions) == set(store.tasks) and set(completions.values()) == {1}

    # Never two holders at once, and no write from a holder after its lease was taken back.
    holder: dict[str, str | None] = {}
    revoked: dict[str, set[str]] = {}
    reclaims = 0
    for record in history:
        task, op, actor = record["task"], record["op"], record["actor"]
        if op == "claim":
            assert holder.get(task) is None, f"#{task} claimed while {holder[task]} held it"
            holder[task] = record["changes"]["lease"][1]["owner"]
            revoked.get(task, set()).discard(holder[task])
        elif op == "reclaim":
            reclaims += 1
            assert record.get("reason", "").startswith("lease of "), record
            assert holder.get(task) is not None
            revoked.setdefault(task, set()).add(holder[task])
            holder[task] = None
        elif op.startswith(("status:", "release")):
            if op.startswith("status:completed"):
                assert actor == holder.get(task), f"#{task} completed by {actor}, held by {holder.get(task)}"
            holder[task] = None
        if actor in revoked.get(task, set()):
            raise AssertionError(f"{actor} wrote #{task} ({op}) after its lease was reclaimed")
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
