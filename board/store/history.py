"""``history.jsonl``: one line per change, appended under the board lock, read on by every store.

Each store follows the log from where it last read, to learn which tasks other processes
changed. Both ends keep the file open: a claim reads the log twice and appends to it once,
and opening it anew each time cost more than reading the few lines that are new.
"""

from __future__ import annotations

import os
from _thread import allocate_lock  # ``threading.Lock``, without loading threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from board.disk.atomic import KeptOpen, append_to, open_regular, parse_lines, read_jsonl


class HistoryLog:
    """The board's change log, as one store reads and appends to it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # The board's own folder in a Claude Code list is made on the first write.
        self._appender = KeptOpen(path, make_parent=True, flags=os.O_WRONLY | os.O_APPEND)
        self._reader = KeptOpen(path, flags=os.O_RDONLY, create=False)  # reading never makes the log

    def size(self) -> int:
        info = self._stat()
        return 0 if info is None else info.st_size

    def end(self) -> int:
        """Where the log ends now; reading on from here sees only later lines."""
        self._reader.close()
        info = self._stat()
        if info is None:
            return 0
        try:
            self._reader.descriptor()
        except FileNotFoundError:
            return 0
        return info.st_size

    def read_on(self, offset: int) -> tuple[list[dict[str, Any]], int] | None:
        """The records of the complete lines after ``offset`` and the offset after them; None
        when the log was truncated or replaced since ``offset`` was taken (read it all again)."""
        info = self._stat()
        if info is None:
            return ([], 0) if offset == 0 else None
        if self._reader.fd is not None and not self._reader.describes(info):
            return None  # replaced; ``end`` follows the new file
        if info.st_size == offset:
            return [], offset
        if info.st_size < offset:
            return None
        try:
            fd = self._reader.descriptor()
        except FileNotFoundError:
            return None
        if not self._reader.describes(info):
            return None  # replaced between the stat and the open
        return parse_lines(os.pread(fd, info.st_size - offset, offset), offset)

    def chunks_forward(self, end: int, size: int = 1 << 20) -> Iterator[bytes]:
        """The log's first ``end`` bytes in whole lines, a chunk at a time from its start (none
        when there is no log yet). A line longer than ``LINE_MOST`` is left out: no store writes
        one, and a sparse file of a terabyte planted as the log was read whole into memory."""
        try:
            fd = self._reader.descriptor()
        except FileNotFoundError:
            return
        offset, head, skipping = 0, b"", False
        while offset < end:
            chunk = os.pread(fd, min(size, end - offset), offset)
            if not chunk:
                return
            offset += len(chunk)
            if skipping:  # inside a line too long to keep: on from its end
                cut = chunk.find(b"\n")
                if cut < 0:
                    continue
                chunk, skipping = chunk[cut + 1 :], False
            cut = chunk.rfind(b"\n") + 1
            if cut == 0:
                head += chunk
                if len(head) > LINE_MOST:
                    head, skipping = b"", True
                continue
            yield head + chunk[:cut]
            head = chunk[cut:]
        if head and not skipping:
            yield head  # a last line not ended yet, as the bytes up to ``end`` hold it

    def chunks_back(self, end: int, size: int = 1 << 16) -> Iterator[bytes]:
        """The log's first ``end`` bytes (which end a line) in whole lines, a chunk at a time,
        the last chunk first: what a question about one task's latest lines reads."""
        try:
            fd = self._reader.descriptor()
        except FileNotFoundError:
            return
        while end > 0:
            start = max(0, end - size)
            chunk = os.pread(fd, end - start, start)
            if len(chunk) < end - start:
                return  # the log was cut short meanwhile: the caller sees it shorter than ``end``
            if start > 0:
                cut = chunk.find(b"\n", 0, len(chunk) - 1)  # where the chunk's first whole line starts
                if cut < 0:
                    size *= 2  # one line longer than the chunk: read further back at once
                    continue
                chunk, end = chunk[cut + 1 :], start + cut + 1
            else:
                end = 0
            yield chunk

    def all_records(self) -> list[dict[str, Any]]:
        return read_jsonl(self.path)[0]

    def append(self, line: bytes) -> range:
        """Append one encoded line (called under the board lock); where it went in the file."""
        return append_to(self._appender.descriptor(recheck=True), line)

    def close(self) -> None:
        self._reader.close()
        self._appender.close()

    def _stat(self) -> os.stat_result | None:
        try:
            return os.stat(self.path)
        except FileNotFoundError:
            return None


#: On a first read of recent lines, only this much of the log's end is parsed.
TAIL_BYTES = 4 << 20


class PendingNote:
    """The history line a writer is about to append, for the next writer should this one die.

    Read and written only under the board lock, through a descriptor kept open: truncating
    and rewriting a file through a fresh ``open`` makes ext4 flush it on close, which cost
    more than the rest of a claim. Not fsynced: it is a note for this machine's other
    processes, and a crash of the machine may lose it.
    """

    def __init__(self, path: Path) -> None:
        self._file = KeptOpen(path, make_parent=True)  # board's own folder in a Claude Code list

    def read(self) -> bytes:
        """The note; called first under each hold of the lock, so it also re-checks the file.
        b"" (no note) for a file larger than any note (a sparse file planted in its place was
        read whole into memory, and failed every write)."""
        fd = self._file.descriptor(recheck=True)
        size = os.fstat(fd).st_size
        return os.pread(fd, size, 0) if size <= PENDING_NOTE_MOST else b""

    def write(self, data: bytes) -> None:
        fd = self._file.descriptor()
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))

    def clear(self) -> None:
        os.ftruncate(self._file.descriptor(), 0)


#: Far larger than any note: a task document's limit twice over (a change's old and new value).
PENDING_NOTE_MOST = 16 * 1024 * 1024


#: The longest history line read: a task document's limit several times over.
LINE_MOST = 64 * 1024 * 1024


class RecentHistory:
    """The newest history lines of some kinds (the alert detectors' claims, reclaims and
    conflicts), read on from where the last read stopped; a first read parses only the log's end."""

    def __init__(self, ops: frozenset[str]) -> None:
        self.ops = ops
        self._files: dict[Path, tuple[int, int, list[dict[str, Any]]]] = {}
        self._lock = allocate_lock()

    def read(self, path: Path) -> list[dict[str, Any]]:
        with self._lock:
            return self._read(path)

    def _read(self, path: Path) -> list[dict[str, Any]]:
        try:
            info = path.stat()
        except FileNotFoundError:
            return []
        inode, offset, known = self._files.get(path, (info.st_ino, -1, []))
        if inode != info.st_ino or info.st_size < offset:
            offset, known = -1, []
        if offset < 0:
            offset = _line_start(path, max(0, info.st_size - TAIL_BYTES))
        if info.st_size > offset:
            records, offset = read_jsonl(path, offset)
            known = known + [r for r in records if r.get("op") in self.ops]
            if len(known) > 20000:
                known = known[-10000:]  # far older than any window the detectors use
        self._files[path] = (info.st_ino, offset, known)
        return known


def _line_start(path: Path, offset: int) -> int:
    """The first line boundary at or after ``offset``, so a tail read never starts mid-line."""
    if offset == 0:
        return 0
    with os.fdopen(open_regular(path), "rb") as handle:
        handle.seek(offset - 1)
        chunk = handle.read(1 << 16)
    newline = chunk.find(b"\n")
    return offset + newline if newline >= 0 else offset + len(chunk)
