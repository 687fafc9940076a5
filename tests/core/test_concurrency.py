"""Several OS processes writing one board at once; SIGKILL in the middle of writes."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from board.model import parse_task
from board.store import Store

from tests.conftest import REPO
from tests.coordinator.helpers import started
from tests.disk import history


def spawn(*args: str, stdin=None) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return started(subprocess.Popen(
        [sys.executable, "-m", "tests.core.writer_process", *args],
        cwd=REPO, env=env, stdin=stdin, stdout=subprocess.PIPE, text=True,
    ))


def test_no_update_is_lost_when_eight_processes_read_modify_write_the_same_tasks(store: Store, workspace: Path) -> None:
    for n in range(3):
        store.create(f"shared {n}")
    agents, rounds = [f"agent{i}" for i in range(8)], 150
    procs = [spawn("increment", str(workspace), agent, str(rounds), "1,2,3") for agent in agents]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    fresh = Store.open(workspace)
    for agent in agents:
        assert sum(fresh.tasks[t].metadata.get(agent, 0) for t in ("1", "2", "3")) == rounds
    versions = Counter(h["task"] for h in history(workspace) if h["op"] == "increment")
    assert sum(versions.values()) == len(agents) * rounds
    for task_id in ("1", "2", "3"):
        assert fresh.tasks[task_id].version == 1 + versions[task_id]  # every write bumped it exactly once


def test_eight_processes_racing_claim_each_task_exactly_once(store: Store, workspace: Path) -> None:
    for n in range(500):
        store.create(f"job {n}")
    procs = [spawn("claim", str(workspace), f"agent{i}", stdin=subprocess.PIPE) for i in range(8)]
    time.sleep(0.5)
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    claimed: list[str] = []
    per_agent = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        got = json.loads(out)
        per_agent.append(len(got))
        claimed += got
    assert len(claimed) == 500 and set(claimed) == {str(n) for n in range(1, 501)}
    assert sum(1 for n in per_agent if n > 0) >= 2, "the race did not happen"
    claims = Counter(h["task"] for h in history(workspace) if h["op"] == "claim")
    assert set(claims.values()) == {1}
    owners = {t.id: t.owner for t in Store.open(workspace).tasks.values()}
    assert all(owner.startswith("agent") for owner in owners.values())


def test_a_writer_killed_mid_write_never_leaves_a_corrupt_or_partial_file(store: Store, workspace: Path) -> None:
    for n in range(5):
        store.create(f"rewritten {n}")
    rng = random.Random(3)
    last_versions = {str(n): 1 for n in range(1, 6)}
    for _ in range(25):
        proc = spawn("rewrite", str(workspace))
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.005, 0.08))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for path in sorted((workspace / ".tasks").glob("task_*.json")):
            task = parse_task(path.read_bytes(), str(path))  # raises on a torn file
            assert task.version >= last_versions[task.id]
            last_versions[task.id] = task.version
    reopened = Store.open(workspace)
    assert reopened.invalid == {} and len(reopened.tasks) == 5
    assert sum(last_versions.values()) > 5 + 25, "the writer never got to write"
    # Temp files from killed writers are ignored, and the board is still writable.
    reopened.update("1", description="after the crashes")
    final = Store.open(workspace)
    assert final.tasks["1"].description == "after the crashes"
    # The history tells every version of every task, even of writes killed before they logged.
    for task_id, task in final.tasks.items():
        logged = sorted({h["version"] for h in history(workspace) if h["task"] == task_id})
        assert logged == list(range(1, task.version + 1)), task_id


def test_a_claimer_skips_a_task_another_process_is_about_to_claim(store: Store, workspace: Path) -> None:
    for subject in ("first", "second"):
        store.create(subject, priority="high" if subject == "first" else "medium")
    other = spawn("reserve", str(workspace), "1", stdin=subprocess.PIPE)
    try:
        assert other.stdout.readline().strip() == "reserved"
        assert store.claim("alice").id == "2"  # #1 is better, but reserved by the other process
    finally:
        other.stdin.write("done\n")
        other.stdin.flush()
        other.wait(timeout=30)
    assert store.claim("bob").id == "1"  # the reservation died with its process


def test_a_task_assigned_while_a_claim_waits_for_the_lock_counts_against_the_agents_limit(store: Store, workspace: Path) -> None:
    """Under the lock a claim re-reads only what decides it; a task the coordinator gave the
    same agent meanwhile is part of that, or the agent would end up holding two."""
    import threading

    from board.errors import BoardError

    store.create("first")
    store.create("second")
    coordinator = Store.open(workspace)
    tasks_dir = workspace / ".tasks"
    outcome: list = []

    def claim() -> None:
        try:
            outcome.append(store.claim("alice", max_held=1))
        except BoardError as error:
            outcome.append(error)

    with coordinator.layout.lock():
        claimer = threading.Thread(target=claim)
        claimer.start()
        _wait_until_a_claim_is_prepared(tasks_dir, claimer)  # the claim of #1
        coordinator.claim_task("2", "alice")
    claimer.join(timeout=30)
    assert isinstance(outcome[0], BoardError) and "already holds #2" in str(outcome[0])
    assert [t.id for t in Store.open(workspace).held_by("alice")] == ["2"]


def test_an_optimistic_claim_never_overwrites_a_change_made_while_it_waited_for_the_lock(store: Store, workspace: Path) -> None:
    """The claim is written to a temp file before the lock is taken; if the task changes in
    between, publishing it would lose that change. It must be worked out again instead."""
    import threading

    store.create("job")
    other = Store.open(workspace)
    tasks_dir = workspace / ".tasks"
    claimed: list = []
    with other.layout.lock():
        claimer = threading.Thread(target=lambda: claimed.append(store.claim("alice")))
        claimer.start()
        _wait_until_a_claim_is_prepared(tasks_dir, claimer)
        other.update("1", description="changed while alice waited")
    claimer.join(timeout=30)
    task = claimed[0]
    assert (task.owner, task.status, task.description, task.version) == ("alice", "in_progress", "changed while alice waited", 3)
    on_disk = json.loads((tasks_dir / "task_1.json").read_text())
    assert on_disk["description"] == "changed while alice waited" and on_disk["owner"] == "alice"
    assert [h["op"] for h in history(workspace)] == ["create", "update", "claim"]
    store.close()
    other.close()
    assert not list(tasks_dir.glob(".write.*.tmp"))


def _wait_until_a_claim_is_prepared(tasks_dir: Path, claimer) -> None:
    """Until the claiming thread has written its claimed version to a temp file, before the lock."""
    deadline = time.monotonic() + 30
    while not any(p.stat().st_size for p in tasks_dir.glob(".write.*.tmp")):
        assert time.monotonic() < deadline and claimer.is_alive()
        time.sleep(0.005)
