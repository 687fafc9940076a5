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


def coordinator_running(local_dir: Path) -> bool:
    """Does some process hold this board's coordinator lock right now? (A probe: takes nothing.)
    ``local_dir`` is the store's (``Store.local_dir``)."""
    return held_elsewhere(local_dir / LOCK_NAME)


def coordinator_running_on(store: Store) -> bool | None:
    """Does a coordinator run on ``store``'s board, on this machine or, for a board in a
    database, on any machine? None while the database is out of reach: unknown. (A probe:
    takes nothing.)"""
    database = getattr(store, "url", None)
    if database:
        from board.store.postgres.locks import held_elsewhere as held_in_database

        return held_in_database(database, COORDINATOR_LOCK)
    return coordinator_running(store.local_dir)
