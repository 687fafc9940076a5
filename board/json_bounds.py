"""JSON that other processes wrote, bounded in depth as board's reads are bounded in size.

Python's parser, pydantic's encoder and ``copy.deepcopy`` all recurse, each with a limit of its
own: a value nested a few hundred levels deep reads, then fails to be written back; nested a
thousand deep, it raises ``RecursionError`` in the middle of a command. A task or record nested
deeper than ``MAX_DEPTH`` is therefore malformed, read or written, like one that is too large:
one line naming the file, and everything else goes on. No document board itself writes comes
near the limit.

Standard library only: ``board hook`` imports it.
"""

from __future__ import annotations

import json
from typing import Any

#: How deep objects and arrays may nest in a document board reads or writes.
MAX_DEPTH = 64


class TooDeep(ValueError):
    """A document nested deeper than ``MAX_DEPTH`` (a ValueError, as malformed JSON is)."""

    def __init__(self) -> None:
        super().__init__(f"nested more than {MAX_DEPTH} levels deep; the limit is {MAX_DEPTH}")


def loads(raw: bytes | str) -> Any:
    """``json.loads``, refusing with ``TooDeep`` a document nested deeper than ``MAX_DEPTH``."""
    try:
        value = json.loads(raw)
    except RecursionError:
        raise TooDeep() from None
    if _few_brackets(raw):
        return value  # cannot nest deeper than it has brackets: no walk (most lines, every claim)
    if deeper_than_allowed(value):
        raise TooDeep()
    return value


def _few_brackets(raw: bytes | str) -> bool:
    """Whether a text holds at most ``MAX_DEPTH`` opening brackets, counting those inside
    strings too: such a text cannot nest deeper than the limit, and counting is a C loop where
    walking the parsed value is a Python one."""
    if isinstance(raw, str):
        return raw.count("{") + raw.count("[") <= MAX_DEPTH
    return raw.count(b"{") + raw.count(b"[") <= MAX_DEPTH


def where_broken(error: json.JSONDecodeError) -> str:
    """What is wrong with a JSON text and where, for a message: "Expecting value at line 1
    column 7" (Python's own wording ends some reasons in "at", said once here)."""
    return f"{error.msg.removesuffix(' at')} at line {error.lineno} column {error.colno}"


def deeper_than_allowed(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` (already ``depth`` levels inside a document) nests objects and arrays
    deeper than ``MAX_DEPTH``. Without recursion, so that it cannot fail on what it measures;
    a flat value costs one type check."""
    if not isinstance(value, (dict, list)):
        return False
    pending = [(value, depth + 1)]
    while pending:
        item, level = pending.pop()
        if level > MAX_DEPTH:
            return True
        for inner in item.values() if isinstance(item, dict) else item:
            if isinstance(inner, (dict, list)):
                pending.append((inner, level + 1))
    return False
