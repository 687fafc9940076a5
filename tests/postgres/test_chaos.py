"""Chaos on a board in PostgreSQL: 200 tasks, 8 real worker processes SIGKILLed at random, and
the server itself restarted once mid-run. Every task completes exactly once, never two holders
at once, only the holder finishes or renews, every reclaim says why, nothing half written."""

from __future__ import annotations

import random
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from board.coordinator.run import Supervisor, board_progress
from board.status import Status
from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate
from tests.coordinator.helpers import Proc, alive, identify, write_settings
from tests.coordinator.test_chaos import KILLS, SEED, TASKS, WORKERS, build_random_dag
from tests.pg_cluster import PgCluster
from tests.conftest import LONG

pytestmark = LONG


@pytest.fixture
def database_workspace(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    monkeypatch.setenv("BOARD_DB", pg_url)  # the supervisor's coordinator and workers inherit it
    (tmp_path / ".tasks").mkdir()  # this machine's files and settings, beside the workspace
    Store.open(tmp_path).close()
    return tmp_path


def test_chaos_on_postgres_with_sigkills_and_a_server_restart(database_workspace: Path, pg_cluster: PgCluster) -> None:
    workspace = database_workspace
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
    restarted = False
    deadline = time.monotonic() + 240
    try:
        supervisor.start()
        next_kill = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            assert not supervisor.check_children(), "a worker slot was given up on"
            every_pid += [p for p in identify(supervisor.pids()) if p not in every_pid]
            try:
                progress = supervisor.progress()
            except Exception:
                time.sleep(0.1)  # the server is restarting: the supervisor's own read failed
                continue
            if progress.settled:
                break
            done = progress.counts.get(Status.COMPLETED, 0)
            if not restarted and done >= TASKS * 0.4:
                pg_cluster.restart()  # every connection of every process drops at once
                restarted = True
            due = len(kills) < KILLS and done >= len(kills) * TASKS * 0.8 / KILLS
            if due and time.monotonic() >= next_kill:
                victim = rng.choice([c for c in supervisor.children if c.role == "worker" and c.restarts < 3])
                victim.process.send_signal(signal.SIGKILL)
                kills.append(victim.name)
                next_kill = time.monotonic() + rng.uniform(0.05, 0.3)
            time.sleep(0.05)
    finally:
        supervisor.stop()
        if not pg_cluster.is_running():
            pg_cluster.start()

    assert restarted and len(kills) == KILLS
    store = Store.open(workspace)
    progress = board_progress(store.graph)
    assert progress.all_done, progress.unfinished
    history = store.history()
    # Each write is one transaction with its history row: no gaps, no half writes, even for
    # writers killed mid-write or cut off by the restart. A conflict or a refusal (a stale
    # token, say, from a worker whose task was taken back) names the version it found and
    # writes nothing.
    versions: dict[str, list[int]] = {}
    for record in history:
        if record["op"] not in ("conflict", "refused"):
            versions.setdefault(record["task"], []).append(record["version"])
    for task_id, seen in versions.items():
        assert seen == list(range(1, store.get(task_id).version + 1)), (task_id, seen)
    completions = Counter(r["task"] for r in history if r["op"].startswith("status:completed"))
    assert set(completions) == set(store.tasks) and max(completions.values()) == 1
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
    assert store.check() == []
    assert all(t.status == Status.COMPLETED and t.lease is None for t in store.tasks.values())
    for pid in every_pid:
        assert not alive(pid), f"pid {pid.pid} outlived the run"
    store.close()
