"""Reading and writing boards on disk. ``Store`` is the only way in."""

from board.store.layout import Layout, TasksDirLayout
from board.store.store import DEFAULT_LEASE_SECONDS, ChangeSet, Store

__all__ = ["DEFAULT_LEASE_SECONDS", "ChangeSet", "Layout", "Store", "TasksDirLayout"]
