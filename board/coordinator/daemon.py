"""The coordinator daemon: tick when the board changes on disk, and at least every ``tick_seconds``.

Only one coordinator runs per board on this machine: it holds ``.coordinator.lock`` in the
store's ``local_dir`` (``.tasks/``) for its lifetime
(the operating system drops the lock when the process dies, so a killed coordinator can be
restarted at once; ``CoordinatorLock``). The tick keeps no state, so a restarted coordinator simply carries on.
"""

from __future__ import annotations

import signal
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
from board.coordinator.live_tokens import LiveTranscripts
from board.coordinator.presence import COORDINATOR_HEARD_EVERY, COORDINATOR_LOCK, LOCK_NAME
from board.coordinator.tick import TickReport, tick
from board.coordinator.workers import end_stale_commands
from board.errors import BoardError, BoardUnavailable, CoordinatorRunning
from board.store import Store
from board.store.lifetime_lock import LifetimeLock
from board.store.postgres.locks import SessionLock
from board.toolcall_log import AGENT_LOG_SUFFIX

#: Changes closer together than this are handled by one tick.
DEBOUNCE_MS = 30
#: A full directory reconcile (for writers that bypass the store) every this many seconds.
RESCAN_SECONDS = 5.0
#: On a busy board file events come many times a second; the alert detectors (git state, every
#: task) run at most this often, or at once when a tick reclaims a lease or fires a policy.
ALERTS_EVERY_SECONDS = 1.0
#: Sub-directories whose changes never need a tick. (``toolcalls/`` does: a call is logged
#: there, not in the task file, and policies judge the calls.)
_QUIET_DIRS = frozenset({"checkpoints", "logs", "reservations", "transcripts"})


class CoordinatorLock(LifetimeLock):
    """The lock a coordinator holds for its lifetime, on ``.coordinator.lock``."""

    def __init__(self, local_dir: Path) -> None:
        super().__init__(local_dir / LOCK_NAME)


def _matters(change: watchfiles.Change, path: str) -> bool:
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

    def reload_settings(self) -> None:
        try:
            self.settings = load_settings(self.local_dir)
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
        except BoardError as error:
            self.say(f"tick failed, will retry: {error}")
            return None
        for line in report.lines():
            self.say(line)
        return report

    def run(self, stop: threading.Event | None = None) -> int:
        """Tick on changes and on the period until ``stop`` is set (or SIGTERM/SIGINT)."""
        stop = stop or threading.Event()
        database = getattr(self.store, "url", None)
        lock = SessionLock(database, COORDINATOR_LOCK) if database else CoordinatorLock(self.local_dir)
        if not lock.acquire():
            raise CoordinatorRunning(f"another coordinator is already running on {self.store.layout.workspace} (it holds {lock.path})")
        try:
            self.say(f"coordinating {self.store.layout.workspace} (lease {self.settings.lease.seconds:g} s, tick {self.settings.coordinator.tick_seconds:g} s)")
            self.tick_once()
            if database:
                return self._follow_database(database, lock, stop)
            last_tick = time.monotonic()
            # Every batch of file events comes back here, wanted or not, and so does a quiet
            # period: the tick's period holds however much the directory churns (a filter in
            # the watcher would restart its timeout on every unwanted event, and a worker
            # polling for work makes a temp file many times a second). The board's folder is
            # the signal of a board in files (board.toml, in local_dir, is the same folder).
            for changes in watchfiles.watch(
                self.store.state_dir,
                watch_filter=None,
                debounce=DEBOUNCE_MS,
                step=10,
                rust_timeout=int(self.settings.coordinator.tick_seconds * 1000),
                yield_on_timeout=True,
                stop_event=stop,
                raise_interrupt=False,
            ):
                if stop.is_set():
                    break
                wanted = {path for change, path in changes if _matters(change, path)}
                if wanted or time.monotonic() - last_tick >= self.settings.coordinator.tick_seconds:
                    self.tick_once(wanted)
                    last_tick = time.monotonic()
        finally:
            lock.release()
            self.say("coordinator stopped")
        return 0

    def _follow_database(self, url: str, lock: SessionLock, stop: threading.Event) -> int:
        """Tick on what the database announces, and at least every ``tick_seconds``. A server
        restart drops the coordinator's lock with its connection: it is taken again, or, if
        another coordinator took it meanwhile, this one stops."""
        from board.store.postgres.follow import DatabaseFollower

        follower = DatabaseFollower(url, reconcile_seconds=self.settings.coordinator.tick_seconds)
        threading.Thread(target=lambda: (stop.wait(), follower.stop()), daemon=True).start()
        quiet = threading.Event()
        lock.keep_heard(quiet, COORDINATOR_HEARD_EVERY)  # dashboards elsewhere trust its alerts while heard
        try:
            return self._tick_on_notifications(follower, lock, stop)
        finally:
            quiet.set()

    def _tick_on_notifications(self, follower: Any, lock: SessionLock, stop: threading.Event) -> int:
        last_tick = time.monotonic()
        resuming = False  # the database came back: take the lock again and reread before ticking
        for heard in follower.batches():
            if stop.is_set():
                break
            if heard.lost is not None:
                self.say(f"waiting for the database: {heard.lost}")
                continue
            resuming = resuming or heard.back
            if resuming:
                try:
                    lock.release()
                    if not lock.acquire():
                        self.say("another coordinator took over while the database was away; stopping")
                        return CoordinatorRunning.exit_code  # not a crash, for board run
                    self.store.load()
                except BoardUnavailable as error:  # away again already: the next batch retries
                    self.say(f"waiting for the database: {error}")
                    continue
                resuming = False
                self.say("the database is back")
            if heard.task_ids or heard.side or heard.back or heard.everything or time.monotonic() - last_tick >= self.settings.coordinator.tick_seconds:
                self.tick_once()
                last_tick = time.monotonic()
                try:
                    self.store.serve_hooks()  # type: ignore[attr-defined]
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
