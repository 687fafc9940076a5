"""One coordinator per board, and a probe for it that never gets in a starting coordinator's way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from board.coordinator.daemon import CoordinatorLock
from board.coordinator.presence import coordinator_running

from .helpers import REPO, board_cli, started, wait_for

PROBE_FOREVER = """
import sys
from pathlib import Path
from board.coordinator.presence import coordinator_running
state_dir = Path(sys.argv[1])
print("probing", flush=True)
while True:
    coordinator_running(state_dir)
"""


def test_probing_never_makes_a_starting_coordinator_give_up(workspace: Path) -> None:
    state_dir = workspace / ".tasks"
    (state_dir / ".coordinator.lock").touch()
    probes = [
        started(subprocess.Popen([sys.executable, "-c", PROBE_FOREVER, str(state_dir)], env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, text=True))
        for _ in range(2)
    ]
    try:
        for probe in probes:
            assert probe.stdout is not None and probe.stdout.readline().strip() == "probing"
        refused = 0
        for _ in range(2000):  # a coordinator starting, again and again, while two processes probe
            lock = CoordinatorLock(state_dir)
            if not lock.acquire():
                refused += 1
            lock.release()
        assert refused == 0
    finally:
        for probe in probes:
            probe.kill()
            probe.wait()


def test_the_probe_sees_a_running_coordinator_and_not_a_killed_one(workspace: Path) -> None:
    state_dir = workspace / ".tasks"
    assert not coordinator_running(state_dir)
    coordinator = board_cli(workspace, "coordinator")
    try:
        wait_for(lambda: coordinator_running(state_dir), timeout=60, what="the coordinator to hold its lock")
        assert coordinator_running(state_dir)  # probing twice leaves the lock with its holder
        mine = CoordinatorLock(state_dir)
        assert not mine.acquire()  # and it is really held
    finally:
        coordinator.send_signal(signal.SIGKILL)
        coordinator.wait()
    assert not coordinator_running(state_dir)  # the kernel dropped it with the process
    restarted = CoordinatorLock(state_dir)
    assert restarted.acquire()
    restarted.release()


def test_a_lock_held_in_this_process_is_seen_by_its_own_probe(workspace: Path) -> None:
    state_dir = workspace / ".tasks"
    lock = CoordinatorLock(state_dir)
    assert lock.acquire()
    try:
        assert coordinator_running(state_dir)  # the dashboard and a coordinator thread share a process in tests
    finally:
        lock.release()
    assert not coordinator_running(state_dir)
