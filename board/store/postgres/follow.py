"""Following a database board live: what changed, as the server announces it (LISTEN/NOTIFY).

The tables' triggers (``migrations``) notify ``board_tasks`` with a task's id on every change to
it, and ``board_side`` with a table's name on changes to the agents, alerts, reservations and
tool calls. A follower listens on a connection of its own and hands out batches: the ids heard
within a few milliseconds of each other, so a burst of writes is one redraw. No polling beyond
a slow reconcile (a catch-up through history, for anything a dropped connection missed).

When the connection breaks, the follower says so once (``lost``), tries again every second or
two, and once it is back says so (``back``): the reader then reads the board again, since
whatever happened meanwhile was not heard.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

from board.errors import BoardError
from board.store.base import BoardNews, Store
from board.store.postgres.connect import DatabaseUnavailable, connect


#: The channels the triggers notify.
TASKS_CHANNEL = "board_tasks"
SIDE_CHANNEL = "board_side"
#: Notifications arriving this close together make one batch.
BATCH_SECONDS = 0.01
#: How often the follower wakes to check it was asked to stop.
WAKE_SECONDS = 0.25
#: Waits between attempts to reconnect.
RETRY_SECONDS = (0.5, 1.0, 2.0)


@dataclass
class Heard:
    """One batch: the tasks that changed (``everything`` after a truncate or a reconnect), the
    side tables that changed, and whether the connection was just lost or is back."""

    task_ids: set[str] = field(default_factory=set)
    side: set[str] = field(default_factory=set)
    everything: bool = False
    reconcile: bool = False
    lost: str | None = None
    back: bool = False


class DatabaseFollower:
    """Batches of changes to the board in the database ``url``, until ``stop``."""

    def __init__(self, url: str, *, reconcile_seconds: float = 30.0, stop: threading.Event | None = None) -> None:
        self.url = url
        self.reconcile_seconds = reconcile_seconds
        #: Set by ``stop()``, or by the reader's own event when given one.
        self._stopped = stop if stop is not None else threading.Event()

    def stop(self) -> None:
        self._stopped.set()

    def batches(self) -> Iterator[Heard]:
        import psycopg

        lost: str | None = None
        attempt = 0
        while not self._stopped.is_set():
            try:
                conn = connect(self.url, autocommit=True, application_name="board follower")
            except BoardError as error:
                if lost is None:
                    lost = str(error)
                    yield Heard(lost=lost)
                self._stopped.wait(RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)])
                attempt += 1
                continue
            try:
                conn.execute(f"listen {TASKS_CHANNEL}")
                conn.execute(f"listen {SIDE_CHANNEL}")
                if lost is not None:
                    lost, attempt = None, 0
                    yield Heard(everything=True, back=True)
                else:
                    # Listening now: what was written after the reader read the board and
                    # before this was announced to no one. Catch up through history.
                    yield Heard(reconcile=True)
                yield from self._listen(conn)
            except psycopg.OperationalError as error:
                lost = f"lost the connection to the board's database ({str(error).strip().splitlines()[0] if str(error).strip() else 'closed'})"
                yield Heard(lost=lost)
            finally:
                try:
                    conn.close()
                except Exception:
                    pass

    def _listen(self, conn: object) -> Iterator[Heard]:
        next_reconcile = time.monotonic() + self.reconcile_seconds
        while not self._stopped.is_set():
            heard = Heard()
            wait = min(WAKE_SECONDS, max(0.0, next_reconcile - time.monotonic()))
            for note in conn.notifies(timeout=wait, stop_after=1):  # type: ignore[attr-defined]
                self._add(heard, note)
            if heard.task_ids or heard.side or heard.everything:
                # Gather the rest of a burst before handing it out.
                for note in conn.notifies(timeout=BATCH_SECONDS):  # type: ignore[attr-defined]
                    self._add(heard, note)
            if time.monotonic() >= next_reconcile:
                heard.reconcile = True
                next_reconcile = time.monotonic() + self.reconcile_seconds
            if heard.task_ids or heard.side or heard.everything or heard.reconcile:
                yield heard

    @staticmethod
    def _add(heard: Heard, note: object) -> None:
        channel, payload = note.channel, note.payload  # type: ignore[attr-defined]
        if channel == TASKS_CHANNEL:
            if payload == "*":
                heard.everything = True
            else:
                heard.task_ids.add(payload)
        elif channel == SIDE_CHANNEL:
            heard.side.add(payload)


def follow_database(
    store: Store, url: str, *, stop: threading.Event, every: float, guard: AbstractContextManager[object] | None = None,
) -> Iterator[BoardNews]:
    """``Store.follow`` for a database board: the tasks its server names read again, everything
    after a reconnect (until that read succeeds: a store's connection may fail after the
    follower's came back), and a catch-up through history every ``every`` seconds."""
    guard = guard if guard is not None else nullcontext()
    whole_pending = False
    for heard in DatabaseFollower(url, reconcile_seconds=every, stop=stop).batches():
        if heard.lost is not None:
            yield BoardNews(lost=heard.lost)
            continue
        back = heard.back or whole_pending
        whole = back or heard.everything
        try:
            with guard:
                if whole:
                    # The tasks that did not change stay the objects readers hold: the board is
                    # not held twice, and only what changed is news.
                    changes = store.reload()
                else:
                    changes = store.reread_tasks(heard.task_ids)
                    if heard.reconcile:
                        changes.merge(store.sync())
        except DatabaseUnavailable as error:
            whole_pending = True
            yield BoardNews(lost=str(error))
            continue
        whole_pending = False
        yield BoardNews(changes=changes, named=heard.task_ids, side=heard.side, whole=whole, back=back)

