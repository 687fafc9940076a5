"""Task text on a terminal: shown, never obeyed.

Subjects, descriptions, owners, errors and every other string from a task file or an agent's
record can hold control characters. Written raw, ``ESC ] 0 ;…BEL`` retitles the terminal,
``ESC [ 2 J`` wipes it, and bidirectional overrides make text read other than it is. Every
place that puts such text on a terminal passes it through here: control characters become
visible escapes (``\\x1b``); JSON output keeps its own escapes and gets ``\\u`` ones for what
JSON leaves raw.
"""

from __future__ import annotations

import io

# Only for annotations, which are never evaluated: ``board hook`` starts faster without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

_CONTROLS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
#: Bidirectional embeddings, overrides and isolates, and the invisible direction marks.
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]

_SINGLE_LINE = {cp: f"\\x{cp:02x}" for cp in _CONTROLS} | {cp: f"\\u{cp:04x}" for cp in _BIDI}
_MULTI_LINE = {cp: text for cp, text in _SINGLE_LINE.items() if cp not in (0x09, 0x0A)}
#: In JSON text: what ``json.dumps`` leaves raw (DEL, C1, bidi), as ``\\u`` escapes.
_JSON = {cp: f"\\u{cp:04x}" for cp in [0x7F, *range(0x80, 0xA0), *_BIDI]}


def printable(text: str, *, multiline: bool = False) -> str:
    """``text`` with control characters (and, unless ``multiline``, newlines and tabs) shown as
    escapes."""
    if text.isprintable():
        return text
    return text.translate(_MULTI_LINE if multiline else _SINGLE_LINE)


def shortened(text: str, limit: int = 60) -> str:
    """``text`` for quoting in a message: printable, one line, at most ``limit`` characters."""
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class EscapingStream(io.TextIOBase):
    """A text stream that writes everything through ``printable`` (newlines and tabs kept),
    or, for JSON output, escapes what JSON leaves raw."""

    def __init__(self, stream: TextIO, *, json: bool = False) -> None:
        self._stream = stream
        self._table = _JSON if json else _MULTI_LINE

    def write(self, text: str) -> int:
        self._stream.write(text if text.isprintable() else text.translate(self._table))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding
