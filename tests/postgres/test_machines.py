"""Machines, one board, for real on one host.

Three machines, one board: each machine a network namespace of its own with a link to the
database server, its own workspace directory, and real ``board`` processes. One machine runs
``board run`` (the coordinator and two workers), the others two ``board worker`` each. Midway,
one machine is cut off the network while it holds a task: its lease runs out, the coordinator on
another machine takes the task back and it is done elsewhere; when the link comes back, what
the cut-off worker still believed it held is refused. Every task is completed exactly once.

And the worst moment to lose a machine: while it holds the board's write lock in a transaction.
The server lets go of it, so the other machines' writes go through."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate
from tests.netns import Machine
from tests.conftest import LONG
from tests.pg_cluster import PgCluster
from tests.postgres.machines_server import machine_env, machines_with_a_server, why_no_machines
from tests.postgres.machines_server import machine_url as url_over_link

TASKS = 60
TIMEOUT = 240
SIMULATED = ["--simulate", "--seed", "3", "--fail-rate", "0", "--toolcall-fail-rate", "0", "--task-seconds", "0.1", "0.4", "--steps", "1", "2"]

pytestmark = [LONG, pytest.mark.skipif(why_no_machines is not None, reason=f"several machines on one: {why_no_machines}")]


def wait_for(condition: Callable[[], object], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def machines_and_server(tmp_path: Path) -> Iterator[tuple[list[Machine], PgCluster, str]]:
    """Three machines and a server each of them reaches over its own link (and this host over
    the socket), with an empty board in database ``machines``."""
    with machines_with_a_server(3) as (machines, cluster):
        url = cluster.create_database("machines")
        with connect(url, autocommit=True) as conn:
            migrate(conn)
        yield machines, cluster, url


def machine_url(machine: Machine, cluster: PgCluster) -> str:
    return url_over_link(machine, cluster.port, "machines")


HOLD_THE_LOCK = """
import sys, time
from board.store import Store
store = Store.open(sys.argv[1], db=sys.argv[2])
with store.transaction():
    store.update("1", progress=10)
    print("holding", flush=True)
    time.sleep(3600)
"""


def test_a_machine_cut_off_while_holding_the_write_lock_does_not_stop_the_board(machines_and_server: tuple[list[Machine], PgCluster, str], tmp_path: Path) -> None:
    machines, cluster, url = machines_and_server
    store = Store.open(tmp_path, db=url)
    store.create("shared")
    holder = machines[1].popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(tmp_path / "m1"), machine_url(machines[1], cluster)],
        env=machine_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        machines[1].cut()
        # Blocks until the server lets go of the cut-off machine's transaction, then goes through.
        assert store.update("1", progress=20).progress == 20
        assert store.get("1").version == 2, "the cut-off machine's uncommitted write must not have landed"
        assert [r["changes"].get("progress") for r in store.history("1") if r["op"] != "create"] == [[0, 20]]
    finally:
        machines[1].heal()
        holder.kill()
        holder.wait()
    store.close()


def test_three_machines_share_one_board_and_survive_a_partition(machines_and_server: tuple[list[Machine], PgCluster, str], tmp_path: Path) -> None:
    machines, cluster, here = machines_and_server
    processes: list[subprocess.Popen] = []
    try:
        store = Store.open(tmp_path / "here", db=here)
        previous: list[str] = []
        for n in range(TASKS):
            blockers = previous[-2:] if n % 10 == 9 else []  # a few joins, so order matters too
            previous.append(store.create(f"step {n}", blocked_by=blockers).id)

        env = machine_env()
        for i, machine in enumerate(machines):
            workspace = tmp_path / machine.name
            (workspace / ".tasks").mkdir(parents=True)
            url = machine_url(machine, cluster)
            (workspace / ".tasks" / "board.toml").write_text(f'[store]\nurl = "{url}"\n[lease]\nseconds = 2\n[coordinator]\ntick_seconds = 0.2\n')
            out = open(tmp_path / f"{machine.name}.log", "w")
            if i == 0:
                argv = [sys.executable, "-m", "board", "run", "--workers", "2", "--timeout", str(TIMEOUT), *SIMULATED]
                processes.append(machine.popen(argv, cwd=workspace, env=env, stdout=out, stderr=subprocess.STDOUT))
            else:
                for w in range(2):
                    argv = [sys.executable, "-m", "board", "worker", "--name", f"m{i}-w{w}", *SIMULATED]
                    processes.append(machine.popen(argv, cwd=workspace, env=env, stdout=out, stderr=subprocess.STDOUT))

        # The server's loopback is not a machine's: they reach it only over their links.
        probe = machines[1].run([sys.executable, "-c", f"import socket; socket.create_connection(('127.0.0.1', {cluster.port}), timeout=5)"], timeout=60)
        assert probe.returncode != 0 and "Connection refused" in probe.stderr

        def held_on_machine_1() -> str | None:
            """A task machine-1 holds, once it has done one (the cut, a lease and its margin
            long, may outlast the rest of the board's work)."""
            store.sync()
            if not any(r["op"].startswith("status:completed") and r["actor"].startswith("m1-") for r in store.history()):
                return None
            held = [t.id for t in store.tasks.values() if t.status == "in_progress" and t.owner.startswith("m1-")]
            return held[0] if held else None

        cut_off = ""

        def cut_while_machine_1_holds_a_task() -> bool:
            """Cut machine 1 off while it holds a task: what it holds once cut stays held (it
            can write nothing more), so that task must be taken back. One finished just
            before the cut is no test: heal and try again."""
            nonlocal cut_off
            if held_on_machine_1() is None:
                return False
            machines[1].cut()
            store.sync()
            held = [t.id for t in store.tasks.values() if t.status == "in_progress" and t.owner.startswith("m1-")]
            if held:
                cut_off = held[0]
                return True
            machines[1].heal()
            return False

        wait_for(cut_while_machine_1_holds_a_task, "machine-1 cut off while it holds a task")
        try:
            wait_for(lambda: any(r["op"] == "reclaim" and r["task"] == cut_off for r in store.history(cut_off)), f"#{cut_off} to be taken back from machine-1")
        finally:
            machines[1].heal()
        assert processes[0].wait(timeout=TIMEOUT) == 0, (tmp_path / "machine-0.log").read_text()[-3000:]
        history = store.history()
        store.sync()
        assert all(t.status == "completed" and t.lease is None for t in store.tasks.values())
        completed = Counter(r["task"] for r in history if r["op"].startswith("status:completed"))
        assert set(completed) == set(store.tasks) and max(completed.values()) == 1
        for record in history:
            if record["op"].startswith("status:completed"):
                before = (record["changes"].get("lease") or [None])[0]
                assert before is not None and before["owner"] == record["actor"], f"completed without the lease: {record}"
        # Work was spread over the three machines: each has completions.
        by_machine = Counter("machine-1" if r["actor"].startswith("m1-") else "machine-2" if r["actor"].startswith("m2-") else "machine-0"
                             for r in history if r["op"].startswith("status:completed"))
        assert set(by_machine) == {"machine-0", "machine-1", "machine-2"}, by_machine
        assert store.check() == []
        store.close()
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
