"""Crash-safe file primitives: a crash at any point leaves the old file or the new one."""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path
from typing import Any


class TempFile:
    """A temp file beside the file it will replace: made, then filled (written and fsynced),
    then moved into place with one rename.

    Making a file (a new inode) costs several times more than writing, fsyncing and renaming
    one on the filesystems we measured, so the store makes it before taking the board lock.
    """

    def __init__(self, directory: Path) -> None:
        self.path = directory / f".write.{secrets.token_hex(6)}.tmp"
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        self._state = "empty"  # -> "filled" -> "moved", or "discarded"

    @property
    def empty(self) -> bool:
        return self._state == "empty"

    def fill(self, data: bytes) -> None:
        """Write ``data`` and fsync it, so that once renamed it is whole even after a crash."""
        assert self._state == "empty" and self._fd is not None
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
            os.fsync(self._fd)
        except BaseException:
            self.discard()
            raise
        os.close(self._fd)
        self._fd = None
        self._state = "filled"

    def move_to(self, path: Path) -> None:
        """Rename over ``path``. The caller fsyncs the directory before reporting the write done."""
        assert self._state == "filled"
        try:
            os.replace(self.path, path)
        except BaseException:
            self.discard()
            raise
        self._state = "moved"

    def discard(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._state in ("empty", "filled"):
            self.path.unlink(missing_ok=True)
            self._state = "discarded"


class KeptOpen:
    """A small file of board's own that this process keeps open between uses (read-write, made
    if missing): opening a file anew costs more than most of what is done with it.

    After a fork the inherited descriptor is the parent's, so the file is opened again.
    ``descriptor(recheck=True)`` also re-opens it when the path now names another file (the
    board's directory deleted and made again).
    """

    def __init__(self, path: Path, *, make_parent: bool = False) -> None:
        self.path = path
        self._make_parent = make_parent
        self._fd: int | None = None
        self._pid = 0

    @property
    def fd(self) -> int | None:
        """The descriptor this process opened, or None."""
        return self._fd if self._pid == os.getpid() else None

    def descriptor(self, *, recheck: bool = False) -> int:
        fd = self.fd
        if fd is not None and recheck and not self.is_current():
            self.close()
            fd = None
        if fd is None:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except FileNotFoundError:
                if not self._make_parent:
                    raise
                self.path.parent.mkdir(exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            self._fd, self._pid = fd, os.getpid()
        return fd

    def is_current(self) -> bool:
        """Whether the open file is still the one at ``path``."""
        fd = self.fd
        if fd is None:
            return False
        try:
            on_disk = os.stat(self.path)
        except FileNotFoundError:
            return False
        held = os.fstat(fd)
        return (on_disk.st_ino, on_disk.st_dev) == (held.st_ino, held.st_dev)

    def close(self) -> None:
        fd = self.fd
        if fd is not None:
            os.close(fd)
        self._fd = None


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temp file beside ``path``, fsync, rename over, fsync the directory."""
    temp = TempFile(path.parent)
    temp.fill(data)
    temp.move_to(path)
    fsync_directory(path.parent)


def write_json_atomic(path: Path, value: Any) -> None:
    write_atomic(path, (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))


def fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_line(path: Path, record: dict[str, Any], *, durable: bool = False) -> range:
    """Append one JSON line with a single write() on an O_APPEND descriptor; returns where it went.

    A single write of a short line to an O_APPEND file is not interleaved with other
    appenders on a local filesystem, so concurrent appenders never tear each other's lines.
    Logs are not fsynced by default: the task files are the durable truth, and running
    processes see appended lines through the page cache whether or not they reached the disk.
    """
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line)
        end = os.lseek(fd, 0, os.SEEK_CUR)
        if durable:
            os.fdatasync(fd)
    finally:
        os.close(fd)
    return range(end - len(line), end)


Stamp = tuple[int, int, int]


def read_bytes_retrying(path: Path | str, *, attempts: int = 3, pause: float = 0.002) -> tuple[bytes, Stamp] | None:
    """Read a whole file without locking, with the (mtime, size, inode) of what was read.

    None when it stays missing. Writers rename complete files into place, so a read sees a
    whole version; the retry covers the moment between an external writer's unlink and
    create. The stamp comes from the open descriptor, so it describes exactly these bytes.
    """
    for attempt in range(attempts):
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            if attempt == attempts - 1:
                return None
            time.sleep(pause)
            continue
        try:
            info = os.fstat(fd)
            want = info.st_size + 1
            data = os.read(fd, want)
            if len(data) == want:  # it grew since the fstat: read on to the end
                chunks = [data]
                while chunk := os.read(fd, 65536):
                    chunks.append(chunk)
                data = b"".join(chunks)
        finally:
            os.close(fd)
        return data, (info.st_mtime_ns, info.st_size, info.st_ino)
    return None


def read_jsonl(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """Complete lines from ``offset``; returns the records and the offset after the last full line."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            chunk = handle.read()
    except FileNotFoundError:
        return [], 0
    end = chunk.rfind(b"\n")
    if end < 0:
        return [], offset
    records = []
    for raw in chunk[: end + 1].splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue  # a torn line from a crashed writer; the task files stay the truth
        if isinstance(record, dict):
            records.append(record)
    return records, offset + end + 1
