"""Reading and writing boards on disk. ``Store`` is the only way in."""

from board.store.claude import ClaudeTaskListLayout
from board.store.layout import Layout, TasksDirLayout, detect_layout
from board.store.store import DEFAULT_LEASE_SECONDS, ChangeSet, Store

__all__ = ["DEFAULT_LEASE_SECONDS", "ChangeSet", "ClaudeTaskListLayout", "Layout", "Store", "TasksDirLayout", "detect_layout"]
