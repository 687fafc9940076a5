"""What a board's files are called and how their tasks read, for every reader of them: the file
store, the importer (``board.store.postgres.transfer``) and ``board hook``
(``board.claude.hooks.where``). Standard library only: the hook must never load the task model.

Two shapes of board: board's own ``<workspace>/.tasks/task_<id>.json``, and a Claude Code task
list ``<list>/<id>.json`` with board's own files in ``<list>/.board/``.
"""

from __future__ import annotations

import re
from pathlib import Path

#: A task file in board's own ``.tasks/`` folder, and in a Claude Code task list.
TASK_FILE = re.compile(r"task_([A-Za-z0-9][A-Za-z0-9_-]{0,63})\.json")
CLAUDE_TASK_FILE = re.compile(r"([A-Za-z0-9][A-Za-z0-9_-]{0,63})\.json")
#: Files of a Claude Code task list beside its tasks: the highest id ever issued, the lock.
HIGH_WATER_MARK = ".highwatermark"
LIST_LOCK = ".lock"
#: In board's own folder (``.tasks/``, or ``.board/`` in a Claude Code list): the change log,
#: and the history line a writer is about to append (empty once it has been appended).
HISTORY = "history.jsonl"
PENDING_HISTORY = ".history-pending.json"


def next_integer_id(existing: set[str], floor: int = 0) -> str:
    """One above the highest numeric id among ``existing`` and ``floor``."""
    highest = max((int(t) for t in existing if t.isdigit()), default=0)
    return str(max(highest, floor) + 1)


def looks_like_claude_list(directory: Path) -> bool:
    """A directory of ``<id>.json`` files, a ``.highwatermark`` or a ``.lock``, and no ``.tasks/``."""
    if (directory / ".tasks").is_dir() or not directory.is_dir():
        return False
    if (directory / HIGH_WATER_MARK).exists() or (directory / LIST_LOCK).exists():
        return True
    return any(CLAUDE_TASK_FILE.fullmatch(p.name) for p in directory.glob("*.json"))
