"""One coordinator per board, wherever it runs: a second workspace on the same database (another
machine, as far as the board knows) uses the coordinator already running instead of starting
one that cannot take the lock, and its dashboard shows the alerts that coordinator keeps."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.locks import held_elsewhere
from board.store.postgres.migrations import migrate
from tests.conftest import REPO
from tests.coordinator.helpers import wait_for
from tests.ui.conftest import make_app, settled
from tests.ui.conftest import wait_for as wait_on_screen

TIMEOUT = 120


@pytest.fixture
def two_workspaces(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    monkeypatch.delenv("BOARD_DB", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    spaces = []
    for name in ("here", "there"):
        (tmp_path / name / ".tasks").mkdir(parents=True)
        (tmp_path / name / ".tasks" / "board.toml").write_text(f'[store]\nurl = "{pg_url}"\n[coordinator]\ntick_seconds = 0.3\n')
        spaces.append(tmp_path / name)
    return spaces[0], spaces[1]


def start_coordinator(workspace: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "BOARD_DB"} | {"PYTHONPATH": str(REPO)}
    output = open(workspace / "coordinator.out", "w")
    return subprocess.Popen([sys.executable, "-m", "board", "coordinator"], cwd=workspace, env=env, stdout=output, stderr=subprocess.STDOUT)


def wait_for_the_coordinator(coordinator: subprocess.Popen, workspace: Path, url: str) -> None:
    def holding() -> bool:
        assert coordinator.poll() is None, f"the coordinator ended: {(workspace / 'coordinator.out').read_text()[-2000:]}"
        return held_elsewhere(url, "coordinator")

    try:
        wait_for(holding, timeout=TIMEOUT, what="the coordinator here to hold the board's lock")
    except AssertionError as error:
        raise AssertionError(f"{error}; it said: {(workspace / 'coordinator.out').read_text()[-2000:]}") from None


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def test_a_run_on_another_workspace_uses_the_coordinator_already_running(two_workspaces: tuple[Path, Path], pg_url: str) -> None:
    here, there = two_workspaces
    store = Store.open(there)
    for n in range(6):
        store.create(f"step {n}")
    coordinator = start_coordinator(here)
    try:
        wait_for_the_coordinator(coordinator, here, pg_url)
        env = {k: v for k, v in os.environ.items() if k != "BOARD_DB"} | {"PYTHONPATH": str(REPO)}
        argv = [sys.executable, "-m", "board", "run", "--workers", "2", "--simulate", "--fail-rate", "0", "--toolcall-fail-rate", "0", "--task-seconds", "0.05", "0.1"]
        run = subprocess.run(argv, cwd=there, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "a coordinator is already running on this board; using it" in run.stderr
        log = (there / ".tasks" / "logs" / "run.log").read_text()
        assert "coordinator:" not in log, "this run started a coordinator of its own"
        assert coordinator.poll() is None, "the coordinator that was running was disturbed"
    finally:
        stop(coordinator)


@pytest.mark.anyio
async def test_a_dashboard_elsewhere_shows_the_alerts_the_running_coordinator_keeps(two_workspaces: tuple[Path, Path], pg_url: str) -> None:
    here, there = two_workspaces
    Store.open(there).create("needs a person")
    coordinator = start_coordinator(here)
    try:
        wait_for_the_coordinator(coordinator, here, pg_url)
        app = make_app(there, watch=True)
        async with app.run_test(size=(140, 40)) as pilot:
            await settled(pilot)
            app.alerts_follower.wake()
            await wait_on_screen(pilot, lambda: app.alerts_from_coordinator, timeout=60, message="the coordinator's alerts on screen")
    finally:
        stop(coordinator)


@pytest.mark.anyio
async def test_a_dashboard_elsewhere_stops_trusting_a_coordinator_gone_silent(two_workspaces: tuple[Path, Path], pg_url: str) -> None:
    """A coordinator on a machine cut off from the database keeps its lock until the server
    notices the dead connection (many seconds); its stored alerts stop changing meanwhile. The
    dashboard elsewhere evaluates the board itself once the coordinator has been silent a while
    (SIGSTOP is such a machine: the connection stays up, nothing comes through it)."""
    here, there = two_workspaces
    Store.open(there).create("needs a person")
    coordinator = start_coordinator(here)
    try:
        wait_for_the_coordinator(coordinator, here, pg_url)
        app = make_app(there, watch=True)
        async with app.run_test(size=(140, 40)) as pilot:
            await settled(pilot)
            app.alerts_follower.wake()
            await wait_on_screen(pilot, lambda: app.alerts_from_coordinator, timeout=60, message="the coordinator's alerts on screen")
            coordinator.send_signal(signal.SIGSTOP)
            await wait_on_screen(pilot, lambda: not app.alerts_from_coordinator, timeout=60, message="the board's own alerts once the coordinator went silent")
            assert held_elsewhere(pg_url, "coordinator"), "the silent coordinator still holds its lock"
            coordinator.send_signal(signal.SIGCONT)
            await wait_on_screen(pilot, lambda: app.alerts_from_coordinator, timeout=60, message="the coordinator's alerts again once it is heard from")
    finally:
        coordinator.send_signal(signal.SIGCONT)
        stop(coordinator)


def test_probing_for_a_coordinator_never_keeps_one_from_starting(pg_url: str) -> None:
    """Dashboards and runs ask often whether a coordinator holds the board; a probe that took
    the lock for a moment would make a coordinator starting at that moment give up."""
    import threading

    from board.store.postgres.locks import SessionLock

    stop = threading.Event()
    probes = 0

    def probe() -> None:
        nonlocal probes
        while not stop.is_set():
            held_elsewhere(pg_url, "coordinator")
            probes += 1

    prober = threading.Thread(target=probe)
    prober.start()
    refused = 0
    try:
        wait_for(lambda: probes > 0, timeout=TIMEOUT, what="the first probe")
        for _ in range(300):
            lock = SessionLock(pg_url, "coordinator")
            if lock.acquire():
                lock.release()
            else:
                refused += 1
    finally:
        stop.set()
        prober.join(timeout=TIMEOUT)
    assert probes > 10 and refused == 0, f"{refused} of 300 starts refused while {probes} probes ran"


def test_a_released_coordinator_lock_is_free_at_once(pg_url: str) -> None:
    """A coordinator that stops and one that starts right after (here or on another machine)
    must not find the lock still held: closing a connection lets its lock go only once the
    server process behind it has exited, later still while other sessions come and go."""
    import threading

    from board.store.postgres.connect import connect
    from board.store.postgres.locks import SessionLock

    stop = threading.Event()

    def come_and_go() -> None:
        while not stop.is_set():
            connect(pg_url, autocommit=True).close()

    others = threading.Thread(target=come_and_go)
    others.start()
    refused = 0
    try:
        for _ in range(300):
            first = SessionLock(pg_url, "coordinator")
            assert first.acquire()
            first.release()
            second = SessionLock(pg_url, "coordinator")
            if second.acquire():
                second.release()
            else:
                refused += 1
    finally:
        stop.set()
        others.join(timeout=TIMEOUT)
    assert refused == 0, f"{refused} of 300 starts found the lock just released still held"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
