"""A folder's changes as Linux's inotify reports them, waited for without waking.

watchfiles checks for changes every ``step`` milliseconds (a dashboard needs a few, to show a
change within 50 ms): about 250 wake-ups a second, each taking the GIL, which cost an idle
dashboard about 0.4 % of a core before it drew anything. Here the follower's thread blocks in
``select`` on the inotify descriptor until something changes, the period it asked for passes,
or it is stopped; between changes it does not run at all. Where inotify cannot be had (another
OS, the kernel's limit on watches reached), ``watch`` says so and the follower uses watchfiles.

Every folder under the root is watched (a folder made later as soon as its creation is heard,
with what it already holds reported as changed); links are never followed. A queue that
overflowed is reported as ``LOST``: the reader then looks at everything.
"""

from __future__ import annotations

import ctypes
import errno
import os
import select
import struct
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

#: Reported in place of the changes when the kernel's queue overflowed and events were lost.
LOST = "<events lost>"

_IN_MODIFY = 0x00000002
_IN_ATTRIB = 0x00000004
_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_FROM = 0x00000040
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_DELETE = 0x00000200
_IN_DELETE_SELF = 0x00000400
_IN_MOVE_SELF = 0x00000800
_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_ISDIR = 0x40000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_MASK = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
    | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR | _IN_DONT_FOLLOW
)  # fmt: skip
_EVENT = struct.Struct("iIII")


class Unavailable(Exception):
    """No inotify here (another OS, or the limit on watches or instances reached)."""


def _libc() -> ctypes.CDLL:
    if not sys.platform.startswith("linux"):
        raise Unavailable(f"no inotify on {sys.platform}")
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError as error:
        raise Unavailable(str(error)) from None


class FolderWatch:
    """The changes under ``root`` (its files, and its folders' files), read as they come."""

    def __init__(self, root: Path) -> None:
        self._libc = _libc()
        fd = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            raise Unavailable(os.strerror(ctypes.get_errno()))
        self._fd = fd
        self._root = os.fspath(root)
        # A stop is heard at once: a write to this pipe wakes the select.
        self._wake_read, self._wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._folders: dict[int, str] = {}
        self._pending: set[str] = set()
        self._lost = False
        try:
            self._watch_tree(self._root, report=False)
        except Unavailable:
            self.close()
            raise

    def close(self) -> None:
        for fd in (self._fd, self._wake_read, self._wake_write):
            try:
                os.close(fd)
            except OSError:
                pass
        self._fd = -1

    def wake(self) -> None:
        """Make a waiting ``changes`` return now (from another thread)."""
        try:
            os.write(self._wake_write, b"x")
        except OSError:
            pass

    # -- folders ----------------------------------------------------------------------------

    def _watch_tree(self, top: str, *, report: bool) -> None:
        """Watch ``top`` and every folder under it (links are not followed); with ``report``,
        what they hold already counts as changed (a folder made, then filled, before its
        watch was added)."""
        self._watch_one(top)
        for folder, dirs, files in os.walk(top, followlinks=False):
            for name in dirs:
                path = os.path.join(folder, name)
                self._watch_one(path)
                if report:
                    self._pending.add(path)
            if report:
                self._pending.update(os.path.join(folder, name) for name in files)

    def _watch_one(self, path: str) -> None:
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _MASK)
        if wd < 0:
            code = ctypes.get_errno()
            if code in (errno.ENOSPC, errno.ENOMEM):
                raise Unavailable(f"inotify: {os.strerror(code)} (the limit on watches: fs.inotify.max_user_watches)")
            return  # gone already, not a folder, a link: nothing to watch
        self._folders[wd] = path

    # -- events -----------------------------------------------------------------------------

    def _read_events(self) -> bool:
        """Take what the kernel has; True if the root itself went (deleted, moved)."""
        gone = False
        while True:
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                return gone
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                if mask & _IN_Q_OVERFLOW:
                    self._lost = True
                    continue
                folder = self._folders.get(wd)
                if folder is None:
                    continue
                if mask & _IN_IGNORED:
                    del self._folders[wd]
                    gone = gone or folder == self._root
                    continue
                if mask & (_IN_DELETE_SELF | _IN_MOVE_SELF):
                    gone = gone or folder == self._root
                    continue
                path = os.path.join(folder, os.fsdecode(name)) if name else folder
                self._pending.add(path)
                if mask & _IN_ISDIR and mask & (_IN_CREATE | _IN_MOVED_TO):
                    self._watch_tree(path, report=True)

    def _wait(self, seconds: float) -> bool:
        """Until the kernel has something, or ``seconds`` pass, or ``wake``: True if woken."""
        ready, _, _ = select.select([self._fd, self._wake_read], [], [], max(0.0, seconds))
        if self._wake_read in ready:
            try:
                os.read(self._wake_read, 64)
            except OSError:
                pass
            return True
        return False

    def changes(self, *, timeout: float, debounce: float, quiet: float, stop: threading.Event) -> Iterator[set[str]]:
        """Batches of changed paths (``{LOST}`` when events were lost), and an empty batch each
        ``timeout`` with nothing changed. A batch closes after ``quiet`` without a change, or
        ``debounce`` after its first. Ends when ``stop`` is set (``wake`` hurries it) or the
        root goes."""
        while not stop.is_set():
            if self._wait(timeout) or stop.is_set():
                if stop.is_set():
                    return
                continue
            gone = self._read_events()
            if self._pending or self._lost:
                closes = time.monotonic() + debounce
                while not gone and not stop.is_set():
                    left = closes - time.monotonic()
                    if left <= 0 or not select.select([self._fd], [], [], min(quiet, left))[0]:
                        break
                    gone = self._read_events()
            batch = {LOST} if self._lost else set(self._pending)
            self._pending.clear()
            self._lost = False
            yield batch
            if gone:
                return
