"""Locks a process holds for as long as it lives: one coordinator per board, one process per agent name.

An open-file-description lock (``F_OFD_SETLK``) on a file that is never deleted. The kernel
drops it when the holder dies, however it dies, so a killed holder can be replaced at once;
closing some other descriptor of the file never drops it (unlike classic ``fcntl`` locks); and
``held_elsewhere`` tests it with ``F_OFD_GETLK``, which takes nothing, so a probe never makes a
process that starts at that instant give up.
"""

from __future__ import annotations

import errno
import fcntl
import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from board.disk import confine

if TYPE_CHECKING:
    import struct
    import threading


@cache
def _flock() -> struct.Struct:
    """``struct flock`` as Linux lays it out on 64-bit machines (two shorts, two off_t, a pid_t);
    made on first use, so the commands that only import this module start without ``struct``."""
    import struct

    return struct.Struct("@hhqqixxxx")


_OPEN_FLAGS = os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK


class LifetimeLock:
    """An exclusive lock on ``path``, held from ``acquire`` until ``release`` or the process ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> bool:
        """Take the lock; False when another process (or another ``LifetimeLock``) holds it."""
        if self._fd is not None:
            return True
        fd = confine.open_file(self.path, os.O_RDWR | os.O_CREAT | _OPEN_FLAGS, 0o644)
        try:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _flock().pack(fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EAGAIN, errno.EACCES):
                return False
            raise
        self._fd = fd
        return True

    def keep_heard(self, stop: threading.Event, every: float) -> None:
        """Nothing to do: whoever asks ``held_elsewhere`` hears from the kernel, which drops the
        lock the moment its holder dies."""

    def held_elsewhere(self, *, heard_within: float | None = None) -> bool:
        """``held_elsewhere(self.path)``: a holder on this machine is heard from by the kernel."""
        return held_elsewhere(self.path)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor of the description drops the lock
            self._fd = None


def held_elsewhere(path: Path) -> bool:
    """Does some open file description other than the caller's hold the lock on ``path`` now?"""
    try:
        fd = confine.open_file(path, os.O_RDONLY | _OPEN_FLAGS)
    except FileNotFoundError:
        return False
    try:
        answer = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, _flock().pack(fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0))
    finally:
        os.close(fd)
    return _flock().unpack(answer)[0] != fcntl.F_UNLCK
