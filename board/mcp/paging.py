"""``task_list`` a page at a time: the cursor that says where the next page starts.

A cursor names the task the page before ended on and its offset, with a digest of the filters
it was given for; it is opaque to a client (base64 of that JSON), and one a client edited or
carried over to other filters is refused naming the argument, never followed somewhere else.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from board.errors import BoardError
from board.graph import id_sort_key
from board.model import Task
from board.text import shortened


def cursor_after(task_id: str, offset: int, asked: list[Any]) -> str:
    """A ``task_list`` cursor: where the next page starts (after this task, at this offset),
    for these filters. Opaque to a client; a client's edit of it is refused, not followed."""
    content = json.dumps({"after": task_id, "at": offset, "asked": filters_key(asked)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(content.encode()).decode().rstrip("=")


def resumed_at(cursor: str, asked: list[Any], chosen: list[Task], *, in_id_order: bool) -> int:
    """Where the page ``cursor`` asks for starts in ``chosen``: after the task the last page
    ended on, wherever it is now, so tasks created or deleted meanwhile shift no page. When
    that task left the listing: after the ids before it (``in_id_order``), else at the offset."""
    try:
        content = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        after, offset, key = content["after"], content["at"], content["asked"]
        if not (isinstance(after, str) and isinstance(offset, int) and offset >= 0 and isinstance(key, str)):
            raise ValueError
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError):
        raise BoardError(f"cursor: {shortened(cursor)!r} is not a cursor task_list gave; call it without cursor to start again") from None
    if key != filters_key(asked):
        raise BoardError("cursor: it was given for other filters; pass the same filters as the page before it, or no cursor to start again")
    for position, task in enumerate(chosen):
        if task.id == after:
            return position + 1
    if in_id_order:
        return next((position for position, task in enumerate(chosen) if id_sort_key(task.id) > id_sort_key(after)), len(chosen))
    return min(offset, len(chosen))


def filters_key(asked: list[Any]) -> str:
    """A short digest of a listing's filters, so a cursor is followed only with the ones it was given for."""
    return hashlib.sha256(json.dumps(asked, sort_keys=True, default=str).encode()).hexdigest()[:12]
