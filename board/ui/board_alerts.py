"""Which alerts the dashboard shows, and how it sums them up. Textual-free.

The alerts themselves are ``board.alerts``'s: while a coordinator runs, the alerts it stores
every tick (``store.alert_board``; it also sees git); otherwise the dashboard evaluates them
from its own store, without git, so graph, file and conflict problems still show.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from functools import cached_property
from datetime import datetime
from pathlib import Path
from typing import Any

from board.alerts import Alert, Severity
from board.config import BoardSettings
from board.errors import BoardUnavailable
from board.coordinator.presence import coordinator_running
from board.graph import TaskGraph
from board.model import Task
from board.store import Store
from board.store.layout import BoardPlace
from board.store.side import AgentRecords, AlertBoard, CheckpointBook, ReservationBook

#: Alerts are re-checked this often without any file event (a coordinator started or stopped).
ALERTS_RECHECK_SECONDS = 2.0
#: Without a coordinator, alerts are re-evaluated this often even when nothing changed on disk
#: (some clear with time: a refused write, a reclaimed lease, a long wait for a person)...
LOCAL_ALERTS_SECONDS = 60.0
#: ... or less often on a board so large that doing so would take more than this share of a
#: core: on 30,000 tasks an evaluation costs 0.1 to 0.3 s, and once a minute it was most of
#: what an idle dashboard spent. A change on disk is evaluated at once all the same.
IDLE_ALERTS_SHARE = 0.001
#: ... and at most this often when the board keeps changing.
LOCAL_ALERTS_GAP = 0.25
#: Past this many alerts of one kind, the panel shows one line for the kind (enter expands it).
GROUP_ABOVE = 3
SEVERITY_LABELS = ((Severity.ERROR, "error", "errors"), (Severity.WARNING, "warning", "warnings"), (Severity.INFO, "info", "info"))


def coordinator_holds_lock(local_dir: Path) -> bool:
    """Does a coordinator run on this board (so the alerts it stores are current)?"""
    return coordinator_running(local_dir)


@dataclass
class StoreSnapshot:
    """What ``gather_inputs`` reads from a ``Store``, copied in a moment under the store's lock,
    so the slow part (graph checks, checkpoint hashes) runs without holding up the board reader."""

    #: ``tasks`` is this snapshot's own copy, which nothing changes: readers keep it as it is
    #: rather than copy 100,000 entries again.
    tasks_are_a_copy = True

    layout: BoardPlace
    state_dir: Path
    history: list[dict[str, Any]]
    touches: list[tuple[str, dict[str, Any]]]
    tasks: Mapping[str, Task]
    invalid: Mapping[str, str]
    agent_records: AgentRecords
    reservation_book: ReservationBook
    checkpoint_book: CheckpointBook

    @classmethod
    def of(cls, store: Store) -> StoreSnapshot:
        from board.alerts.evaluate import HISTORY_OPS  # the evaluation loads once it is first asked for

        return cls(
            store.layout, store.state_dir, store.recent_history(HISTORY_OPS), store.touching_calls(), dict(store.tasks), dict(store.invalid),
            store.agent_records, store.reservation_book, store.checkpoint_book,
        )

    def recent_history(self, ops: frozenset[str]) -> list[dict[str, Any]]:
        return [record for record in self.history if record.get("op") in ops]

    def touching_calls(self) -> list[tuple[str, dict[str, Any]]]:
        return self.touches

    @cached_property
    def graph(self) -> TaskGraph:
        return TaskGraph(self.tasks.values(), missing_blocker_done=self.layout.missing_blocker_done)


def evaluate_without_git(snapshot: StoreSnapshot, *, now: datetime, settings: BoardSettings, previous: list[Alert]) -> list[Alert]:
    """``evaluate_alerts`` on a snapshot, without git (the dashboard never runs git)."""
    from board.alerts.evaluate import carry_since, detect_all, gather_inputs

    inputs = gather_inputs(snapshot, now=now, git=None, settings=settings)
    return carry_since(detect_all(inputs, now=now, settings=settings), previous, now)


def severity_counts(alerts: list[Alert]) -> Counter[Severity]:
    return Counter(alert.severity for alert in alerts)


def counts_label(counts: Counter[Severity]) -> list[tuple[Severity, str]]:
    """``[(ERROR, "2 errors"), (WARNING, "3 warnings")]``: the header's parts, worst first."""
    return [
        (severity, f"{counts[severity]:,} {one if counts[severity] == 1 else many}")
        for severity, one, many in SEVERITY_LABELS
        if counts[severity]
    ]


def worst(alerts: list[Alert]) -> Severity:
    return max((a.severity for a in alerts), key=lambda s: s.rank)


@dataclass(frozen=True)
class AlertGroup:
    """Several alerts of one kind, shown as one line until expanded."""

    kind: str
    alerts: tuple[Alert, ...]

    @property
    def severity(self) -> Severity:
        return worst(list(self.alerts))

    @property
    def key(self) -> str:
        return f"group:{self.kind}"


def panel_rows(alerts: list[Alert], expanded: set[str]) -> list[Alert | AlertGroup]:
    """Worst first; a kind with many alerts is one ``AlertGroup`` row, followed by its alerts
    when its key is in ``expanded``."""
    by_kind: dict[str, list[Alert]] = {}
    for alert in sorted(alerts, key=Alert.sort_key):
        by_kind.setdefault(alert.kind, []).append(alert)
    rows: list[Alert | AlertGroup] = []
    for kind, members in by_kind.items():
        if len(members) <= GROUP_ABOVE:
            rows.extend(members)
            continue
        group = AlertGroup(kind, tuple(members))
        rows.append(group)
        if group.key in expanded:
            rows.extend(members)
    return rows


def main_task(alert: Alert) -> str | None:
    """The task a jump from this alert goes to: the first it names."""
    return alert.tasks[0] if alert.tasks else None


def alerts_document_key(alerts: list[Alert]) -> tuple[tuple[Alert, datetime | None], ...]:
    """Equal when two readings show the same thing (``since`` is not part of ``Alert``'s equality)."""
    return tuple((alert, alert.since) for alert in alerts)


class AlertsFollower:
    """Keeps a board's alerts current for a screen: the alerts a coordinator stores while one
    runs, else an evaluation of the board's own files (no git). ``run`` loops in a thread until
    ``stop``; it wakes when told the board changed (``wake``), and every
    ``ALERTS_RECHECK_SECONDS`` to notice a coordinator come or go. Each change of what should be
    shown is handed to ``show``."""

    def __init__(self, alert_board: AlertBoard, local_dir: Path, coordinator_running: Callable[[], bool] | None = None) -> None:
        self.alert_board = alert_board
        self.local_dir = local_dir
        #: Whether a coordinator keeps the stored alerts current (on a database board it may run
        #: on another machine); by default, the coordinator lock in ``local_dir``.
        self.coordinator_running = coordinator_running or (lambda: coordinator_holds_lock(local_dir))
        self._due = threading.Event()
        self._stopped = threading.Event()
        #: Why the last look failed, while the board is out of reach (None once it answers).
        self.unavailable: str | None = None

    def wake(self) -> None:
        """Something alerts depend on changed on disk."""
        self._due.set()

    def stop(self) -> None:
        self._stopped.set()
        self._due.set()

    def run(
        self,
        snapshot: Callable[[], StoreSnapshot],
        show: Callable[[list[Alert], bool], None],
        *,
        now: Callable[[], datetime],
        settings: BoardSettings,
        once: bool = False,
    ) -> None:
        from board.alerts.evaluate import read_alerts  # in this worker, once the board is on screen

        shown: tuple[object, ...] | None = None
        previous: list[Alert] = []
        read_stamp: Hashable | None = None
        evaluated_at = float("-inf")
        cost = 0.0
        while not self._stopped.is_set():
            woken = self._due.wait(ALERTS_RECHECK_SECONDS)
            self._due.clear()
            if self._stopped.is_set():
                return
            try:
                stamp = self.alert_board.stamp()
                self.unavailable = None
                from_coordinator = stamp is not None and self.coordinator_running()
                if from_coordinator:
                    if stamp == read_stamp and shown is not None:
                        continue
                    read_stamp = stamp
                    alerts = read_alerts(self.alert_board)
                else:
                    read_stamp = None
                    if not woken and time.monotonic() - evaluated_at < max(LOCAL_ALERTS_SECONDS, cost / IDLE_ALERTS_SHARE) and shown is not None:
                        continue
                    # On a big busy board an evaluation costs a fraction of a second: space them out
                    # (changes arriving meanwhile join the next one) so they take at most a fifth of the time.
                    pause = evaluated_at + max(LOCAL_ALERTS_GAP, 4 * cost) - time.monotonic()
                    if pause > 0 and self._stopped.wait(pause):
                        return
                    self._due.clear()
                    evaluated_at = time.monotonic()
                    alerts = evaluate_without_git(snapshot(), now=now(), settings=settings, previous=previous)
                    cost = time.monotonic() - evaluated_at
            except BoardUnavailable as error:
                # The alerts shown stay; the next round (a wake, or the recheck) tries again.
                self.unavailable = str(error)
                continue
            previous = alerts
            reading = (from_coordinator, alerts_document_key(alerts))
            if reading != shown:
                shown = reading
                show(alerts, from_coordinator)
            if once:
                return
