"""Reading and writing boards. ``Store`` is the only way in (``board.store.base``: the rules);
``FileStore`` keeps a board in files (``board.store.files``).

The names below load on first use (PEP 562): the command line reads ``DEFAULT_LEASE_SECONDS``
and ``board.disk.atomic`` without paying for pydantic, the task model and the whole store.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from board.store.leases import DEFAULT_LEASE_SECONDS

_HOMES = {
    "ChangeSet": "board.store.base",
    "Store": "board.store.opening",  # the rules, with the opener that knows every backend
    "FileStore": "board.store.files",
    "ClaudeTaskListLayout": "board.store.claude",
    "Layout": "board.store.layout",
    "TasksDirLayout": "board.store.layout",
    "detect_layout": "board.store.layout",
}

if TYPE_CHECKING:
    from board.store.claude import ClaudeTaskListLayout
    from board.store.layout import Layout, TasksDirLayout, detect_layout
    from board.store.base import ChangeSet, Store
    from board.store.files import FileStore

__all__ = ["DEFAULT_LEASE_SECONDS", "ChangeSet", "ClaudeTaskListLayout", "FileStore", "Layout", "Store", "TasksDirLayout", "detect_layout"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'board.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
