"""The partition tests' own instruments, checked on their own: a harness that cannot see an
overlap, or a proxy that does not delay, would let those tests pass whatever board does."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.delay_proxy import DelayingProxy
from tests.execution_log import Execution, ExitWatch, overlaps, write_job


def execution(task: str, pid: int, started: float, ended: float | None) -> Execution:
    return Execution(task, "m", "a", 1, pid, 0, started, ended, "end" if ended else None)


def test_overlaps_are_runs_of_one_task_by_two_processes_at_once() -> None:
    runs = [
        execution("1", 10, 0.0, 5.0),
        execution("1", 11, 4.0, 8.0),  # overlaps the first
        execution("1", 12, 8.0, 9.0),  # starts as the second ends: one after the other
        execution("2", 13, 0.0, None),  # still running
        execution("2", 14, 100.0, 101.0),  # so this one overlaps it
        execution("3", 15, 0.0, 5.0),
        execution("4", 16, 1.0, 2.0),  # another task at the same time: fine
    ]
    found = {(a.pid, b.pid) for a, b in overlaps(runs)}
    assert found == {(10, 11), (13, 14)}


def wait_until(condition, timeout: float = 20.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize("signum, how", [(None, "end"), (signal.SIGTERM, "stopped"), (signal.SIGKILL, "gone")])
def test_a_job_ends_by_its_own_word_or_by_its_exit_seen_from_outside(tmp_path: Path, signum: int | None, how: str) -> None:
    log = tmp_path / "executions.log"
    job = write_job(tmp_path, log)
    with ExitWatch(log) as watch:
        process = subprocess.Popen([sys.executable, str(job), "7", "0.5" if signum is None else "30"])
        try:
            wait_until(lambda: watch.executions())
            if signum is not None:
                process.send_signal(signum)
            signalled = time.time()
            process.wait(timeout=20)
            wait_until(lambda: watch.executions()[0].ended is not None)
        finally:
            process.kill()
            process.wait()
        [run] = watch.executions()
    assert (run.task, run.pid, run.how) == ("7", process.pid, how)
    assert run.ended is not None and run.started < run.ended
    if signum is not None:
        assert signalled - 0.5 < run.ended < signalled + 2.0


def round_trip(port: int) -> float:
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        began = time.monotonic()
        conn.sendall(b"ping")
        assert conn.recv(16) == b"ping"
        return time.monotonic() - began


@pytest.fixture
def echo_server():  # noqa: ANN201
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=echo, args=(conn,), daemon=True).start()

    def echo(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):  # the proxy resets it when it drops connections
            while data := conn.recv(4096):
                conn.sendall(data)

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def test_the_proxy_delays_each_way_when_slow_and_drops_connections(echo_server: int) -> None:
    with DelayingProxy(("127.0.0.1", 0), ("127.0.0.1", echo_server)) as proxy:
        assert round_trip(proxy.port) < 0.5
        proxy.delay = 0.4
        assert round_trip(proxy.port) >= 0.8  # there and back
        proxy.delay = 0.0
        # The round trips' connections are closed: gone from the proxy once it has seen them go.
        deadline = time.monotonic() + 60
        while proxy.open_connections and time.monotonic() < deadline:
            time.sleep(0.01)
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=20) as conn:
            conn.sendall(b"x")
            assert conn.recv(16) == b"x"
            assert proxy.drop_connections() == 1
            with pytest.raises(ConnectionResetError):
                conn.sendall(b"y")
                conn.recv(16)
