"""Whether a coordinator runs on a board: a probe that takes nothing.

Kept apart from the daemon so that what only asks (the dashboard, ``board run``) does not load
the coordinator's tick, detectors and workers to do so.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from board.store.lifetime_lock import held_elsewhere

if TYPE_CHECKING:
    from board.store import Store

#: The coordinator's lock file in a board's local folder (``Store.local_dir``).
LOCK_NAME = ".coordinator.lock"
#: The name of the coordinator's lock in a board's database (``SessionLock``).
COORDINATOR_LOCK = "coordinator"
#: A coordinator on a database board says something on its lock's connection this often...
COORDINATOR_HEARD_EVERY = 1.0
#: ... and one silent for this long is taken for cut off from the database: the alerts it stored
#: are no longer kept current. (The server keeps its lock until it finds the connection dead.)
COORDINATOR_SILENT_AFTER = 5.0


def coordinator_running(local_dir: Path) -> bool:
    """Does some process hold this board's coordinator lock right now? (A probe: takes nothing.)
    ``local_dir`` is the store's (``Store.local_dir``)."""
    return held_elsewhere(local_dir / LOCK_NAME)


def coordinator_running_on(store: Store) -> bool | None:
    """Does a coordinator run on ``store``'s board, on this machine or, for a board in a
    database, on any machine? None while the database is out of reach: unknown. (A probe:
    takes nothing.)"""
    return store.lifetime_lock(COORDINATOR_LOCK).held_elsewhere()


def coordinator_heard_on(store: Store) -> bool | None:
    """``coordinator_running_on``, and heard from lately: a coordinator whose alerts are current.
    On a database board, one cut off from the database still holds its lock for a while; the
    dashboard elsewhere should evaluate the board itself meanwhile."""
    return store.lifetime_lock(COORDINATOR_LOCK).held_elsewhere(heard_within=COORDINATOR_SILENT_AFTER)
