"""``history.jsonl``: one line per change, appended under the board lock, read on by every store.

Each store follows the log from where it last read, to learn which tasks other processes
changed. Both ends keep the file open: a claim reads the log twice and appends to it once,
and opening it anew each time cost more than reading the few lines that are new.
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import Any

from board.store.atomic import KeptOpen, append_to, close_if_mine, current_pid, parse_lines, read_jsonl


class HistoryLog:
    """The board's change log, as one store reads and appends to it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # The board's own folder in a Claude Code list is made on the first write.
        self._appender = KeptOpen(path, make_parent=True, flags=os.O_WRONLY | os.O_APPEND)
        self._reader: int | None = None
        self._reader_identity = (0, 0)
        self._reader_closer: weakref.finalize | None = None

    def size(self) -> int:
        try:
            return os.stat(self.path).st_size
        except FileNotFoundError:
            return 0

    def end(self) -> int:
        """Where the log ends now; reading on from here sees only later lines."""
        info = self._stat()
        if info is None:
            self._forget()
            return 0
        self._follow(info)
        return info.st_size

    def read_on(self, offset: int) -> tuple[list[dict[str, Any]], int] | None:
        """The records of the complete lines after ``offset`` and the offset after them; None
        when the log was truncated or replaced since ``offset`` was taken (read it all again)."""
        info = self._stat()
        if info is None:
            return ([], 0) if offset == 0 else None
        if self._reader is not None and (info.st_ino, info.st_dev) != self._reader_identity:
            self._follow(info)
            return None
        if info.st_size == offset:
            return [], offset
        if info.st_size < offset:
            return None
        if self._reader is None:
            self._follow(info)
        assert self._reader is not None
        return parse_lines(os.pread(self._reader, info.st_size - offset, offset), offset)

    def all_records(self) -> list[dict[str, Any]]:
        return read_jsonl(self.path)[0]

    def append(self, line: bytes) -> range:
        """Append one encoded line (called under the board lock); where it went in the file."""
        return append_to(self._appender.descriptor(recheck=True), line)

    def close(self) -> None:
        self._forget()
        self._appender.close()

    def _forget(self) -> None:
        if self._reader_closer is not None:
            self._reader_closer()
        self._reader = self._reader_closer = None

    def _stat(self) -> os.stat_result | None:
        try:
            return os.stat(self.path)
        except FileNotFoundError:
            return None

    def _follow(self, info: os.stat_result) -> None:
        """Read from now on the file that ``info`` describes."""
        self._forget()
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        held = os.fstat(fd)
        self._reader, self._reader_identity = fd, (held.st_ino, held.st_dev)
        self._reader_closer = weakref.finalize(self, close_if_mine, fd, current_pid())
        if (held.st_ino, held.st_dev) != (info.st_ino, info.st_dev):
            self._reader_identity = (0, 0)  # replaced again between the stat and the open: look again next time
