"""A worker cut off from its board's database: it stops its command before its lease can be
taken back, gives the task back when the server answers, keeps a late result on record, and
gives up its name when another process took it meanwhile.

The server is stopped, or its sessions ended, to cut the worker off: the link itself is cut in
``test_partitions_cut.py`` and ``test_partitions_links.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate
from tests.conftest import REPO
from tests.pg_cluster import ClusterError, PgCluster, find_bindir

pytestmark = pytest.mark.skipif(find_bindir() is None, reason="PostgreSQL's programs are not installed")

LEASE = 3
TIMEOUT = 120
#: The job: says when it starts, when it is told to stop and when it ends, each line one write.
JOB = """
import os, signal, sys, time
log = sys.argv[1]
def say(what):
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{what} {os.environ['BOARD_TASK_ID']} {os.getpid()} {time.time()}\\n".encode())
    os.close(fd)
def stopped(signum, frame):
    say("stopped")
    sys.exit(143)
signal.signal(signal.SIGTERM, stopped)
say("start")
go = sys.argv[2]
while not os.path.exists(go):
    time.sleep(0.05)
say("end")
"""


@pytest.fixture
def board_on_its_own_server(tmp_path: Path) -> Iterator[tuple[PgCluster, Path]]:
    """A workspace whose board is in a server of its own (the test stops and starts it)."""
    cluster = PgCluster.create()
    try:
        try:
            cluster.start()
        except ClusterError as error:
            pytest.fail(str(error))
        url = cluster.create_database("fencing")
        with connect(url, autocommit=True) as conn:
            migrate(conn)
        workspace = tmp_path / "workspace"
        (workspace / ".tasks").mkdir(parents=True)
        (workspace / ".tasks" / "board.toml").write_text(f'[store]\nurl = "{url}"\n[lease]\nseconds = {LEASE}\nclock_skew_seconds = 0.5\n')
        yield cluster, workspace
    finally:
        cluster.close()


def wait_for(condition: Callable[[], object], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def lines(log: Path) -> list[tuple[str, str, int, float]]:
    if not log.exists():
        return []
    return [(what, task, int(pid), float(at)) for what, task, pid, at in (line.split() for line in log.read_text().splitlines())]


def start_worker(workspace: Path, name: str, job: Path, log: Path, go: Path, *, out: str | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "BOARD_DB"} | {"PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "board", "worker", "--name", name, "--", sys.executable, str(job), str(log), str(go)]
    return subprocess.Popen(argv, cwd=workspace, env=env, stdout=open(workspace / f"{out or name}.out", "w"), stderr=subprocess.STDOUT, start_new_session=True)


def end(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_a_worker_cut_off_stops_its_command_within_its_lease_and_gives_the_task_back(board_on_its_own_server: tuple[PgCluster, Path], tmp_path: Path) -> None:
    cluster, workspace = board_on_its_own_server
    Store.open(workspace).create("a long job")
    job, log, go = tmp_path / "job.py", tmp_path / "job.log", tmp_path / "go"
    job.write_text(JOB)
    worker = start_worker(workspace, "w", job, log, go)
    try:
        wait_for(lambda: [line[0] for line in lines(log)] == ["start"], "the job to start")
        renewed_by = time.time()  # the lease was last renewed before this, and lasts LEASE s from then
        cluster.stop()
        try:
            wait_for(lambda: len(lines(log)) == 2, "the job to be stopped", timeout=LEASE + 30)
            stop = lines(log)[1]
            assert stop[0] == "stopped", lines(log)
            # Stopped by the lease's end at the latest (SIGTERM comes first), though the worker
            # could not reach the board to learn that anyone else might take the task.
            assert stop[3] <= renewed_by + LEASE + 0.5, (stop[3] - renewed_by, (workspace / "w.out").read_text())
        finally:
            cluster.start()
        store = Store.open(workspace)
        wait_for(lambda: any(r["op"].startswith("release") for r in store.history("1")), "the task to be given back")
        given_back = [r for r in store.history("1") if r["op"].startswith("release")]
        assert "lost the board and stopped its command" in given_back[0]["op"], given_back
        assert "the lease could not be renewed" in (workspace / ".tasks" / "logs" / "1.log").read_text()
        # The worker goes on working: the task runs again, to its end.
        go.write_text("")
        wait_for(lambda: Store.open(workspace).get("1").status == "completed", "the task to be done")
        assert [line[0] for line in lines(log)] == ["start", "stopped", "start", "end"]
    finally:
        end(worker)


def test_a_result_whose_lease_was_taken_back_meanwhile_is_on_record_not_lost(board_on_its_own_server: tuple[PgCluster, Path], tmp_path: Path) -> None:
    cluster, workspace = board_on_its_own_server
    Store.open(workspace).create("a job that finishes during an outage")
    job, log, go = tmp_path / "job.py", tmp_path / "job.log", tmp_path / "go"
    job.write_text(JOB)
    worker = start_worker(workspace, "w", job, log, go)
    try:
        wait_for(lambda: [line[0] for line in lines(log)] == ["start"], "the job to start")
        cluster.stop()
        go.write_text("")  # the job finishes at once, while the board is away
        wait_for(lambda: [line[0] for line in lines(log)] == ["start", "end"], "the job to finish")
        wait_for(lambda: "waiting for the board" in (workspace / "w.out").read_text(), "the worker to wait with its result")
        os.killpg(worker.pid, signal.SIGSTOP)  # held while the board takes the task back
        try:
            cluster.start()
            store = Store.open(workspace)
            wait_for(lambda: store.reclaim_expired() != [] or store.get("1").status == "pending", "the lease to be taken back")
        finally:
            os.killpg(worker.pid, signal.SIGCONT)
        wait_for(lambda: any(r["op"] == "refused" for r in store.history("1")), "the late result to be written down")
        refused = [r for r in store.history("1") if r["op"] == "refused"][0]
        assert refused["actor"] == "w" and refused["attempted"].startswith("status:completed"), refused
        worker_pid = Store.open(workspace).agent_records.read("w")["pid"]
        assert refused["process"] == f"{os.uname().nodename}:{worker_pid}", refused
        wait_for(lambda: "but its lease had been taken back meanwhile" in (workspace / "w.out").read_text(), "the worker to say so")
    finally:
        end(worker)


def test_a_worker_whose_name_was_taken_while_it_was_cut_off_stops(board_on_its_own_server: tuple[PgCluster, Path], tmp_path: Path) -> None:
    cluster, workspace = board_on_its_own_server
    job, log, go = tmp_path / "job.py", tmp_path / "job.log", tmp_path / "go"
    job.write_text(JOB)
    first = start_worker(workspace, "w", job, log, go)
    second = None
    try:
        store = Store.open(workspace)
        wait_for(lambda: store.agent_records.name_in_use("w"), "the first worker to hold its name")
        # The server ends the first worker's sessions, as it does for a machine cut off long
        # enough: its name's lock goes with them, and another process takes the name while the
        # first, cut off (stopped, here), cannot know.
        os.killpg(first.pid, signal.SIGSTOP)
        try:
            with connect(store.url, autocommit=True) as conn:
                conn.execute("select pg_terminate_backend(pid) from pg_stat_activity where pid <> pg_backend_pid() and application_name like 'board%'")
            second = start_worker(workspace, "w", job, tmp_path / "second.log", go, out="second")
            wait_for(lambda: (record := store.agent_records.read("w")) is not None and record.get("pid") == second.pid, "the second worker to take the name")
        finally:
            os.killpg(first.pid, signal.SIGCONT)
        wait_for(lambda: first.poll() is not None, "the first worker to stop")
        assert first.returncode == 3, (workspace / "w.out").read_text()
        assert "was taken by another process" in (workspace / "w.out").read_text()
        assert second.poll() is None  # the name is the second's now
        store.create("one more job")
        wait_for(lambda: [line[0] for line in lines(tmp_path / "second.log")] == ["start"], "the second worker to work")
        assert lines(log) == []  # the first never started anything after losing its name
    finally:
        end(first)
        if second is not None:
            end(second)


def test_history_names_the_process_behind_each_line(board_on_its_own_server: tuple[PgCluster, Path]) -> None:
    _, workspace = board_on_its_own_server
    store = Store.open(workspace)
    store.create("x")
    record = store.history("1")[0]
    assert record["process"] == f"{os.uname().nodename}:{os.getpid()}", json.dumps(record)
