"""The coordinator daemon: tick when the board changes (``Store.follow``), and at least every ``tick_seconds``.

Only one coordinator runs per board: it holds the board's coordinator lock
(``Store.lifetime_lock``: ``.coordinator.lock`` in the store's ``local_dir`` for a board in
files, ``CoordinatorLock``; an advisory lock for a database board) for its lifetime. The lock
goes with the process however it ends, so a killed coordinator can be restarted at once; the
tick keeps no state, so a restarted coordinator simply carries on.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Collection
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from board.agents import list_agents
from board.config import FILE_NAME, BoardSettings, load_settings
from board.coordinator.live_tokens import LiveTranscripts
from board.alerts import Alert
from board.notify import needs_you, notifier_for
from board.coordinator.presence import COORDINATOR_HEARD_EVERY, COORDINATOR_LOCK, LOCK_NAME
from board.coordinator.tick import TickReport, tick
from board.coordinator.processes import end_stale_commands
from board.errors import BoardError, BoardUnavailable, CoordinatorRunning
from board.store import Store
from board.store.base import HeldLock
from board.store.lifetime_lock import LifetimeLock
from board.toolcall_log import AGENT_LOG_SUFFIX

#: A full directory reconcile (for writers that bypass the store) every this many seconds.
RESCAN_SECONDS = 5.0
#: On a busy board file events come many times a second; the alert detectors (git state, every
#: task) run at most this often, or at once when a tick reclaims a lease or fires a policy.
ALERTS_EVERY_SECONDS = 1.0
#: Sub-directories whose changes never need a tick. (``toolcalls/`` does: a call is logged
#: there, not in the task file, and policies judge the calls.)
_QUIET_DIRS = frozenset({"checkpoints", "logs", "reservations", "transcripts"})
#: The same records, as a database board names what changed beside its tasks.
_QUIET_TABLES = frozenset({"checkpoints", "reservations"})


class CoordinatorLock(LifetimeLock):
    """The lock a coordinator holds for its lifetime, on ``.coordinator.lock``."""

    def __init__(self, local_dir: Path) -> None:
        super().__init__(local_dir / LOCK_NAME)


def _matters(path: str) -> bool:
    """Does a file event warrant a tick? Temp files, locks and bulky logs do not."""
    name = Path(path).name
    if name.startswith(".") or name.endswith(".tmp") or name.endswith(AGENT_LOG_SUFFIX):
        return False  # an agent's call log repeats lines its task's log already announced
    return not any(part in _QUIET_DIRS for part in Path(path).parts[-3:-1])


class Coordinator:
    """Owns the store and settings between ticks, and turns events into ticks."""

    def __init__(self, workspace: Path | str, *, log: IO[str] | None = None, clock: Callable[[], datetime] | None = None) -> None:
        kwargs: dict[str, Any] = {"actor": "coordinator"}
        if clock is not None:
            kwargs["clock"] = clock
        self.store = Store.open(workspace, **kwargs)
        self.local_dir = self.store.local_dir
        self.settings: BoardSettings = load_settings(self.local_dir)
        self.log = log or sys.stderr
        self._last_rescan = float("-inf")  # the first tick rescans (and looks for leftover commands)
        self._last_alerts = float("-inf")
        self.live_transcripts = LiveTranscripts(self.store.state_dir)
        #: Tells a person what needs them (``board.notify``); dashboards leave that to it.
        self.notifier = notifier_for(self.store, self.settings.notify, report=self.say)
        self._alerts: list[Alert] = []

    def reload_settings(self) -> None:
        try:
            self.settings = load_settings(self.local_dir)
            self.notifier = notifier_for(self.store, self.settings.notify, report=self.say)
            self.say(f"settings reloaded from {FILE_NAME}")
        except BoardError as error:
            self.say(f"kept the previous settings: {error}")

    def tick_once(self, changed_paths: Collection[str] = frozenset()) -> TickReport | None:
        """Tick, with the settings read again when ``changed_paths`` (already read into the index
        by ``Store.follow``) include them. Errors are logged, not fatal."""
        try:
            if any(Path(p).name == FILE_NAME for p in changed_paths):
                self.reload_settings()
            if time.monotonic() - self._last_rescan > RESCAN_SECONDS:
                self.store.rescan()
                self._last_rescan = time.monotonic()
                swept = self.store.remove_stray_temp_files()
                if swept:
                    self.say(f"removed {len(swept)} temp file(s) left by writers killed mid-write")
                ended = end_stale_commands(self.store.layout.workspace.resolve(), self.store.tasks)
                if ended:
                    self.say(f"ended {len(ended)} process(es) still running tasks that finished or moved to another holder: pids {', '.join(map(str, ended))}")
            alerts_due = time.monotonic() - self._last_alerts >= min(ALERTS_EVERY_SECONDS, self.settings.coordinator.tick_seconds)
            agents = list_agents(self.store.agent_records)
            now = self.store.clock()
            self.live_transcripts.read(agents, now)  # tokens spent so far, before budgets are judged
            report = tick(self.store, agents, self.settings, now, alerts=alerts_due)
            if report.alerts_ran:
                self._last_alerts = time.monotonic()
                self._alerts = [Alert.from_dict(record) for record in report.alerts]
            self.notifier.look(needs_you(self.store.tasks, self._alerts, self.settings.notify.on))
            self.notifier.flush()
        except BoardError as error:
            self.say(f"tick failed, will retry: {error}")
            return None
        for line in report.lines():
            self.say(line)
        return report

    def run(self, stop: threading.Event | None = None) -> int:
        """Tick on changes and on the period until ``stop`` is set (or SIGTERM/SIGINT)."""
        stop = stop or threading.Event()
        lock = self.store.lifetime_lock(COORDINATOR_LOCK)
        if not lock.acquire():
            raise CoordinatorRunning(f"another coordinator is already running on {self.store.layout.workspace} (it holds {lock.path})")
        quiet = threading.Event()
        try:
            self.say(f"coordinating {self.store.layout.workspace} (lease {self.settings.lease.seconds:g} s, tick {self.settings.coordinator.tick_seconds:g} s)")
            self.tick_once()
            lock.keep_heard(quiet, COORDINATOR_HEARD_EVERY)  # dashboards elsewhere trust its alerts while heard
            return self._tick_on_news(lock, stop)
        finally:
            quiet.set()
            lock.release()
            self.say("coordinator stopped")

    def _tick_on_news(self, lock: HeldLock, stop: threading.Event) -> int:
        """Tick on what the board says changed, and at least every ``tick_seconds``. A database
        restart drops the coordinator's lock with its connection: it is taken again, or, if
        another coordinator took it meanwhile, this one stops."""
        last_tick = time.monotonic()
        resuming = False  # the board came back: take the lock again before ticking
        for news in self.store.follow(stop=stop, every=self.settings.coordinator.tick_seconds):
            if stop.is_set():
                break
            if news.lost is not None:
                self.say(f"waiting for the database: {news.lost}")
                continue
            resuming = resuming or news.back
            if resuming:
                try:
                    lock.release()
                    if not lock.acquire():
                        self.say("another coordinator took over while the database was away; stopping")
                        return CoordinatorRunning.exit_code  # not a crash, for board run
                except BoardUnavailable as error:  # away again already: the next batch retries
                    self.say(f"waiting for the database: {error}")
                    continue
                resuming = False
                self.say("the database is back")
            wanted = {str(path) for path in news.paths if _matters(str(path))}
            heard = wanted or news.named or news.side - _QUIET_TABLES or news.whole
            if heard or time.monotonic() - last_tick >= self.settings.coordinator.tick_seconds:
                self.tick_once(wanted)
                last_tick = time.monotonic()
                try:
                    self.store.serve_hooks()
                except BoardError as error:
                    self.say(f"could not bring board hook's calls in, will retry: {error}")
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
