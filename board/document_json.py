"""Documents written as JSON by plain Python, exactly as pydantic's core writes them.

pydantic's core asks its Python package for a sentinel the first time it serializes anything,
and that package loads its typing helpers: about 17 ms of a command's start, as much as a
command that writes one task spends on everything else it imports. So the first documents a
process writes are written here; a process that writes many (a worker, the coordinator, the
dashboard) then loads the package once and uses the core, which is several times faster
(``WRITTEN_HERE_AT_MOST``). Either way the bytes are the same: what this module cannot write
exactly as the core does (a float in exponent form, a time zone with seconds, a type it does
not know, a value the core refuses) it leaves to the core, by returning None.
"""

from __future__ import annotations

import sys
from datetime import datetime
from enum import Enum
from json.encoder import encode_basestring
from math import isfinite
from typing import Any

from board.document import Document

#: Documents a process writes here before it loads the core's package and writes with the core.
WRITTEN_HERE_AT_MOST = 64

_written = 0


class _NotPlain(Exception):
    """A value the core may write differently: the core writes the whole document."""


def plain_dict(document: Document) -> dict[str, Any] | None:
    """``document.model_dump(mode="json", by_alias=True)``, or None when the core should make it
    (its package is loaded already, this process wrote enough here, or a value is not plain)."""
    global _written
    if "pydantic_core" in sys.modules or _written >= WRITTEN_HERE_AT_MOST:
        return None
    try:
        data = _document(document)
    except _NotPlain:
        return None
    _written += 1
    return data


def _document(document: Document) -> dict[str, Any]:
    values = document.__dict__
    data = {spec.alias: _value(values[name]) for name, spec in type(document).model_fields.items() if not spec.exclude}
    extra = document.__pydantic_extra__
    if extra:
        for key, value in extra.items():
            if type(key) is not str:
                raise _NotPlain
            data[key] = _value(value)
    return data


def _value(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        # The core writes 1e-05 as 0.00001 and leaves out non-finite numbers.
        if not isfinite(value) or "e" in repr(value):
            raise _NotPlain
        return value
    if kind is list:
        return [_value(item) for item in value]
    if kind is dict:
        if not all(type(key) is str for key in value):
            raise _NotPlain
        return {key: _value(item) for key, item in value.items()}
    if isinstance(value, Document):
        return _document(value)
    if isinstance(value, Enum) and type(value.value) is str:
        return value.value
    if kind is datetime:
        offset = value.utcoffset()
        if offset is not None and offset.seconds % 60:
            raise _NotPlain  # the core writes whole minutes of an offset
        text = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    raise _NotPlain


def indented(value: Any, indent: str = "") -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2)`` of what ``plain_dict`` made (which is
    what the core writes with ``indent=2``), its strings encoded by the standard library's C
    encoder: the library encodes an indented form in Python, a call per value."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is dict:
        if not value:
            return "{}"
        inner = indent + "  "
        return "{\n" + ",\n".join(f"{inner}{encode_basestring(key)}: {indented(item, inner)}" for key, item in value.items()) + f"\n{indent}}}"
    if kind is list:
        if not value:
            return "[]"
        inner = indent + "  "
        return "[\n" + ",\n".join(inner + indented(item, inner) for item in value) + f"\n{indent}]"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        return float.__repr__(value)
    raise TypeError(f"plain_dict makes no {kind.__name__}")
