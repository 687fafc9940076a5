"""Many files read by a child process, their bytes handed over in order through a pipe.

A board's import reads every task file, then checks each: for 100,000 files the reading (four
system calls a file, 0.4 s) and the checking (0.9 s) took turns on one core while the other sat
idle. A child forked to read does the one while this process does the other: here each file
costs two reads from a buffered pipe. The child reads exactly as ``read_regular`` reads (links
refused, the size limit held), and what it could not read comes back as the error it met.

Standard library only. Reads here instead, one file after another, when there are few files,
when this system cannot fork, or when another thread runs (a forked child holds only this one).
"""

from __future__ import annotations

import fcntl
import os
import struct
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from board.disk.atomic import read_regular
from board.disk.confine import LinkedFolder, OpenFolder, SpecialFile

#: Below this many files a child costs more than it saves.
MANY = 2000
#: What each file's record says it holds.
_BYTES, _MISSING, _SPECIAL, _LINKED_FOLDER, _FAILED = b"B", b"M", b"S", b"L", b"F"
#: A record: its kind, its code (an error's errno), the length of what follows.
_HEADER = struct.Struct("<cii")
_PIPE_BYTES = 1 << 20

Read = bytes | None | OSError


def read_ahead(paths: Sequence[Path | str], *, limit: int | None, folder: OpenFolder | None = None) -> Iterator[Read]:
    """For each path in order: its bytes (``read_regular(path, limit, folder=folder)``), None
    when it is missing, or the ``OSError`` reading it raised (a ``SpecialFile`` for a link, a
    FIFO, a file over ``limit``...)."""
    if len(paths) < MANY or not hasattr(os, "fork") or threading.active_count() > 1:
        yield from _read_here(paths, limit, folder)
        return
    read_end, write_end = os.pipe()
    try:
        fcntl.fcntl(write_end, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
    except OSError:
        pass  # a smaller pipe only means more turns
    pid = os.fork()
    if pid == 0:  # the child: read, write, and leave without running anything of the parent's
        code = 1
        try:
            os.close(read_end)
            _send(write_end, paths, limit, folder)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    done = 0
    try:
        with open(read_end, "rb", buffering=_PIPE_BYTES) as stream:
            for path in paths:
                header = stream.read(_HEADER.size)
                if len(header) < _HEADER.size:
                    break  # the child stopped short: the rest is read here
                kind, code, length = _HEADER.unpack(header)
                body = stream.read(length)
                if len(body) < length:
                    break
                yield _received(kind, code, body, path)
                done += 1
    finally:
        # Closed: a child still writing meets a broken pipe and leaves.
        os.waitpid(pid, 0)
    yield from _read_here(paths[done:], limit, folder)


def _read_here(paths: Sequence[Path | str], limit: int | None, folder: OpenFolder | None) -> Iterator[Read]:
    for path in paths:
        try:
            yield read_regular(path, limit, folder=folder)
        except FileNotFoundError:
            yield None
        except OSError as error:
            yield error


def _send(fd: int, paths: Sequence[Path | str], limit: int | None, folder: OpenFolder | None) -> None:
    with open(fd, "wb", buffering=_PIPE_BYTES) as stream:
        for path, read in zip(paths, _read_here(paths, limit, folder)):
            if isinstance(read, bytes):
                stream.write(_HEADER.pack(_BYTES, 0, len(read)))
                stream.write(read)
            elif read is None:
                stream.write(_HEADER.pack(_MISSING, 0, 0))
            else:
                kind = _LINKED_FOLDER if isinstance(read, LinkedFolder) else _SPECIAL if isinstance(read, SpecialFile) else _FAILED
                reason = read.reason if isinstance(read, SpecialFile) else read.strerror or str(read)
                # The error's own path: a link in place of a folder names the folder.
                text = f"{read.filename if read.filename is not None else path}\0{reason}".encode("utf-8", "surrogateescape")
                stream.write(_HEADER.pack(kind, read.errno or 0, len(text)))
                stream.write(text)


def _received(kind: bytes, code: int, body: bytes, path: Path | str) -> Read:
    if kind == _BYTES:
        return body
    if kind == _MISSING:
        return None
    where, _, reason = body.decode("utf-8", "surrogateescape").partition("\0")
    if kind == _LINKED_FOLDER:
        return LinkedFolder(where, reason, code)
    if kind == _SPECIAL:
        return SpecialFile(where, reason, code)
    return OSError(code, reason, where)
