"""The coordinator daemon: tick when the board changes on disk, and at least every ``tick_seconds``.

Only one coordinator runs per board: it holds ``.tasks/.coordinator.lock`` for its lifetime
(the operating system drops the lock when the process dies, so a killed coordinator can be
restarted at once; ``CoordinatorLock``). The tick keeps no state, so a restarted coordinator simply carries on.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import watchfiles

from board.agents import list_agents
from board.config import FILE_NAME, BoardSettings, load_settings
from board.coordinator.tick import TickReport, tick
from board.errors import BoardError
from board.store import Store

LOCK_NAME = ".coordinator.lock"
#: Changes closer together than this are handled by one tick.
DEBOUNCE_MS = 30
#: A full directory reconcile (for writers that bypass the store) every this many seconds.
RESCAN_SECONDS = 5.0
#: On a busy board file events come many times a second; the alert detectors (git state, every
#: task) run at most this often, or at once when a tick reclaims a lease or fires a policy.
ALERTS_EVERY_SECONDS = 1.0
#: Sub-directories whose changes never need a tick.
_QUIET_DIRS = frozenset({"checkpoints", "toolcalls", "logs", "reservations"})


#: ``struct flock`` as Linux lays it out on 64-bit machines (two shorts, two off_t, a pid_t).
_FLOCK = struct.Struct("@hhqqixxxx")


class CoordinatorLock:
    """The lock a coordinator holds for its lifetime: an open-file-description lock on
    ``.coordinator.lock`` (never deleted). The kernel drops it when the holder dies, closing
    another descriptor of the file never drops it, and ``coordinator_running`` can test it
    without taking it, so a probe never makes a coordinator that starts at that instant give up.
    """

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock; False when another coordinator holds it."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EAGAIN, errno.EACCES):
                return False
            raise
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor of the description drops the lock
            self._fd = None


def coordinator_running(state_dir: Path) -> bool:
    """Does some process hold this board's coordinator lock right now? Tests the lock with
    ``F_OFD_GETLK``, which reports a conflicting holder and takes nothing."""
    try:
        fd = os.open(state_dir / LOCK_NAME, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        answer = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, _FLOCK.pack(fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0))
    finally:
        os.close(fd)
    return _FLOCK.unpack(answer)[0] != fcntl.F_UNLCK


def _matters(change: watchfiles.Change, path: str) -> bool:
    """Does a file event warrant a tick? Temp files, locks and bulky logs do not."""
    name = Path(path).name
    if name.startswith(".") or name.endswith(".tmp"):
        return False
    return not any(part in _QUIET_DIRS for part in Path(path).parts[-3:-1])


class Coordinator:
    """Owns the store and settings between ticks, and turns events into ticks."""

    def __init__(self, workspace: Path | str, *, log: IO[str] | None = None, clock: Callable[[], datetime] | None = None) -> None:
        kwargs: dict[str, Any] = {"actor": "coordinator"}
        if clock is not None:
            kwargs["clock"] = clock
        self.store = Store.open(workspace, **kwargs)
        self.state_dir = self.store.state_dir
        self.settings: BoardSettings = load_settings(self.state_dir)
        self.log = log or sys.stderr
        self._last_rescan = time.monotonic()
        self._last_alerts = float("-inf")

    def reload_settings(self) -> None:
        try:
            self.settings = load_settings(self.state_dir)
            self.say(f"settings reloaded from {FILE_NAME}")
        except BoardError as error:
            self.say(f"kept the previous settings: {error}")

    def tick_once(self, changed_paths: set[str] = frozenset()) -> TickReport | None:  # type: ignore[assignment]
        """Bring the index up to date with what changed, then tick. Errors are logged, not fatal."""
        try:
            if any(Path(p).name == FILE_NAME for p in changed_paths):
                self.reload_settings()
            if changed_paths:
                self.store.reread(Path(p) for p in changed_paths)
            if time.monotonic() - self._last_rescan > RESCAN_SECONDS:
                self.store.rescan()
                self._last_rescan = time.monotonic()
            alerts_due = time.monotonic() - self._last_alerts >= min(ALERTS_EVERY_SECONDS, self.settings.coordinator.tick_seconds)
            report = tick(self.store, list_agents(self.state_dir), self.settings, self.store.clock(), alerts=alerts_due)
            if report.alerts_ran:
                self._last_alerts = time.monotonic()
        except BoardError as error:
            self.say(f"tick failed, will retry: {error}")
            return None
        for line in report.lines():
            self.say(line)
        return report

    def run(self, stop: threading.Event | None = None) -> int:
        """Tick on changes and on the period until ``stop`` is set (or SIGTERM/SIGINT)."""
        stop = stop or threading.Event()
        lock = CoordinatorLock(self.state_dir)
        if not lock.acquire():
            raise BoardError(f"another coordinator is already running on {self.store.layout.workspace} (it holds {lock.path})")
        try:
            self.say(f"coordinating {self.store.layout.workspace} (lease {self.settings.lease.seconds:g} s, tick {self.settings.coordinator.tick_seconds:g} s)")
            self.tick_once()
            period_ms = int(self.settings.coordinator.tick_seconds * 1000)
            for changes in watchfiles.watch(
                self.state_dir,
                watch_filter=_matters,
                debounce=DEBOUNCE_MS,
                step=10,
                rust_timeout=period_ms,
                yield_on_timeout=True,
                stop_event=stop,
                raise_interrupt=False,
            ):
                if stop.is_set():
                    break
                self.tick_once({path for _, path in changes})
        finally:
            lock.release()
            self.say("coordinator stopped")
        return 0

    def say(self, message: str) -> None:
        stamp = datetime.now().strftime("%H:%M:%S")
        self.log.write(f"{stamp} coordinator: {message}\n")
        self.log.flush()


def stop_on_signals(stop: threading.Event) -> None:
    """SIGTERM, SIGINT and SIGHUP end the daemon after the tick in progress."""

    def handler(signum: int, frame: Any) -> None:
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, handler)
