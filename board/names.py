"""The names a task file carries: task ids (agent names follow the same rule) and labels.

Kept free of pydantic and the store: the command line checks its arguments with these before
it knows which command runs, so they must cost nothing to import.
"""

from __future__ import annotations

import re

from board.text import shortened

# Only for annotations, which are never evaluated: ``board hook`` starts faster without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ID_REGEX = r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}"
ID_PATTERN = re.compile(ID_REGEX)
ID_RULE = "letters, digits, '_' or '-', at most 64, not starting with '_' or '-'"
#: A label: one word of up to 40 characters (no spaces or commas, so lists and filters stay plain).
LABEL_REGEX = r"[^\s,]{1,40}"
LABEL_RULE = "1-40 characters, no spaces or commas"


def validate_id(value: Any) -> str:
    """Ids are strings; integers (as seed 001 wrote them) are accepted and turned into strings."""
    if isinstance(value, bool):
        raise ValueError("an id must be a string")
    if isinstance(value, int):
        value = str(value)
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise ValueError(f"'{shortened(str(value))}' is not a valid id ({ID_RULE})")
    return value


def id_sort_key(task_id: str) -> tuple[int, int, str]:
    """Numeric ids in numeric order, then the rest alphabetically (every list of tasks, and the
    claim order's last tie-break)."""
    return (0, int(task_id), "") if task_id.isdigit() else (1, 0, task_id)
