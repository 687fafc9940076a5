"""Crash-safe file primitives: a crash at any point leaves the old file or the new one."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import sys
import time
from collections import deque
from collections.abc import Callable
from functools import cache
from pathlib import Path
from _thread import allocate_lock  # ``threading.Lock`` itself, without loading threading
from typing import Any

from board import json_bounds
from board.disk import confine
from board.disk.confine import LinkedFolder, SpecialFile  # noqa: F401  (SpecialFile is imported from here)

#: A spare is filled again no sooner than this after it left its task path. The open-file check
#: (``SparePool``) cannot see a reader that has looked the path up but not yet opened it, inside
#: one system call; this wait outlasts any such reader.
SPARE_QUARANTINE_SECONDS = 1.0
#: Spares one pool keeps; past this, old versions are deleted as a plain rename would.
SPARE_POOL_LIMIT = 256
#: Spares unused this long are deleted, so that a burst of writes leaves no lasting clutter.
SPARE_IDLE_SECONDS = 60.0


#: What tells one version of a file from another without reading it: (mtime ns, size, inode).
Stamp = tuple[int, int, int]

_pid = os.getpid()

#: Added to every open of a file in a board's folders. Never through a symbolic link: a link
#: planted in ``.tasks/`` would make board read, truncate or append to any file its user can.
#: Never blocking: opening a FIFO for reading waits for a writer, forever, and then reading it
#: does too. Never inherited by the commands workers start.
SAFE_OPEN = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: What board reads of one small file (a task, an agent record, a reservation...) at most.
SMALL_FILE_LIMIT = 1024 * 1024


_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFDIR: "a directory",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def open_regular(path: Path | str, flags: int = os.O_RDONLY, mode: int = 0o644, *, follow: bool = False) -> int:
    """Open ``path`` with ``SAFE_OPEN``; a descriptor of a regular file, or ``SpecialFile``.
    FileNotFoundError (and FileExistsError with O_EXCL) pass through untouched. ``follow``
    lets a link be followed (a workspace's own files, never a board's)."""
    return _opened_regular(path, flags, mode, follow=follow)[0]


def _opened_regular(path: Path | str, flags: int, mode: int, *, follow: bool, folder: confine.OpenFolder | None = None) -> tuple[int, os.stat_result]:
    """``open_regular``, with the ``fstat`` it checked the file by (opened through ``folder``
    when given, the folder held open that holds it)."""
    try:
        if follow:
            fd = os.open(path, flags | (SAFE_OPEN & ~os.O_NOFOLLOW), mode)
        elif folder is not None:
            fd = folder.open_file(path, flags | SAFE_OPEN, mode)
        else:
            fd = confine.open_file(path, flags | SAFE_OPEN, mode)
    except LinkedFolder:
        raise
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise SpecialFile(path, "a symbolic link (board never follows links in its folders)", errno.ELOOP) from None
        if error.errno in (errno.EACCES, errno.EPERM):
            raise SpecialFile(path, "unreadable: permission denied" if flags & os.O_ACCMODE == os.O_RDONLY else "permission denied", error.errno) from None
        if error.errno in (errno.EISDIR, errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
            raise SpecialFile(path, describe_entry(path), error.errno) from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise SpecialFile(path, _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file"))
    return fd, info


def describe_entry(path: Path | str) -> str:
    """What kind of entry ``path`` is, without following it or opening it."""
    try:
        info = os.lstat(path)
    except OSError as error:
        return error.strerror or "unreadable"
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link (board never follows links in its folders)"
    return _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")


def stat_stamp(path: Path | str) -> Stamp | None:
    """The file's ``Stamp`` now; None when there is nothing there to stat."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def read_regular(path: Path | str, limit: int | None = SMALL_FILE_LIMIT, *, folder: confine.OpenFolder | None = None, follow: bool = False) -> bytes:
    """The bytes of a regular file, at most ``limit`` of them (``SpecialFile`` beyond);
    ``folder``: the folder that holds it, held open to read many of its files. Never waits on
    a FIFO or a device planted in its place. ``follow`` lets a link be followed (the user's own
    settings, often linked from a dotfiles folder; never a board's files)."""
    fd, info = _opened_regular(path, os.O_RDONLY, 0o644, follow=follow, folder=folder)
    try:
        size = info.st_size
        if limit is not None and size > limit:
            raise SpecialFile(path, f"file is {size:,} bytes; the limit is {limit:,}", errno.EFBIG)
        # One read asks for a byte more than the file held when opened: exactly its size back
        # is the whole file, without a last read to hear the end (a board's import reads each
        # of its task files so). Anything else (it grew, a short read) goes on as before.
        first = os.read(fd, size + 1) if size < 65536 else b""
        if first and len(first) == size:
            return first
        chunks, total = [first], len(first)
        if limit is not None and total > limit:
            raise SpecialFile(path, f"file is over {limit:,} bytes; the limit is {limit:,}", errno.EFBIG)
        while chunk := os.read(fd, 65536 if limit is None else min(65536, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if limit is not None and total > limit:
                raise SpecialFile(path, f"file is over {limit:,} bytes; the limit is {limit:,}", errno.EFBIG)
        return b"".join(chunks)
    finally:
        os.close(fd)


def current_pid() -> int:
    """This process's pid, without a system call each time (it is asked for on every write)."""
    return _pid


def _note_fork() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_note_fork)


class TempFile:
    """A temp file beside the file it will replace: made (or taken from a ``SparePool``), then
    filled (written and fsynced), then moved into place with one rename.

    Its name carries the writer's pid, so ``board check`` can tell a live writer's file from one
    left by a writer that was killed.
    """

    def __init__(self, directory: Path) -> None:
        self.path = str(directory / f".write.{current_pid()}-{os.urandom(6).hex()}.tmp")
        self._fd: int | None = confine.open_file(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | SAFE_OPEN, 0o644)
        self._recycled = False
        self._state = "empty"  # -> "filled" -> "moved", or "discarded" / "pooled"

    @classmethod
    def reopened(cls, path: str, fd: int) -> TempFile:
        """An existing spare, open for writing, to be filled over."""
        temp = cls.__new__(cls)
        temp.path, temp._fd, temp._recycled, temp._state = path, fd, True, "empty"
        return temp

    @property
    def empty(self) -> bool:
        return self._state == "empty"

    def set_mode(self, mode: int) -> None:
        """The permissions the file will have in place (through its descriptor, as made)."""
        assert self._state == "empty" and self._fd is not None
        try:
            os.fchmod(self._fd, mode)
        except BaseException:
            self.discard()
            raise

    @property
    def unused(self) -> bool:
        """Not yet moved into place nor thrown away."""
        return self._state in ("empty", "filled")

    @property
    def recycled(self) -> bool:
        """A spare filled over, rather than a file made for this write."""
        return self._recycled

    def fill(self, data: bytes) -> None:
        """Write ``data`` and fsync it, so that once renamed it is whole even after a crash."""
        assert self._state == "empty" and self._fd is not None
        try:
            view, offset = memoryview(data), 0
            while offset < len(view):
                offset += os.pwrite(self._fd, view[offset:], offset)
            if self._recycled:
                os.ftruncate(self._fd, len(data))
            os.fsync(self._fd)
            info = os.fstat(self._fd)
        except BaseException:
            self.discard()
            raise
        # A rename keeps all three, so this is the stamp of the task file it becomes.
        self.stamp: Stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        os.close(self._fd)
        self._fd = None
        self._state = "filled"

    def move_to(self, path: Path | str) -> None:
        """Rename over ``path``. The caller fsyncs the directory before reporting the write done."""
        assert self._state == "filled"
        try:
            confine.replace(self.path, path)
        except BaseException:
            self.discard()
            raise
        self._state = "moved"

    def swap_into(self, path: Path | str) -> None:
        """Exchange names with ``path`` in one atomic step: ``path`` gets the new version and
        this file's name the one it replaced. Raises OSError (``exchange_names``) untouched."""
        exchange = exchange_names()
        assert self._state == "filled" and exchange is not None
        exchange(self.path, str(path))
        self._state = "moved"

    def set_aside(self) -> None:
        """Close without deleting: the file stays, to be filled over later."""
        self._close()
        self._state = "pooled"

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def discard(self) -> None:
        self._close()
        if self.unused:
            _unlink_quietly(self.path)
            self._state = "discarded"


@cache
def exchange_names() -> Callable[[str, str], None] | None:
    """``renameat2(RENAME_EXCHANGE)``: swap two names in one atomic step; None where the C
    library has no such call (not Linux, or a libc older than 2.28). Loaded on the first call,
    once."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here, not at the top: a command that writes nothing starts without it

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    at_fdcwd, rename_exchange = -100, 2

    def exchange(first: str, second: str) -> None:
        if confine.locate(second) is None:
            folder, first_name, second_name = at_fdcwd, first, second
        else:  # in a folder below a board's root: reached without following links
            folder, second_name = confine.folder_fd_of(second)
            first_name = os.path.basename(first)
        try:
            if renameat2(folder, os.fsencode(first_name), folder, os.fsencode(second_name), rename_exchange) != 0:
                code = ctypes.get_errno()
                raise OSError(code, os.strerror(code), first, None, second)
        finally:
            if folder != at_fdcwd:
                os.close(folder)

    return exchange


class SparePool:
    """Old versions of task files, kept to be written over instead of making new files.

    Replacing a file by renaming a new one over it frees the old inode, and the next write
    makes a new one. On ext4 without a journal, making a file steps over every inode freed in
    the last minute (five while the inode table is not yet written back): at a few hundred
    writes a second that cost more than the rest of a write, and grew with the rate. So the
    new version is swapped in with one atomic ``renameat2(RENAME_EXCHANGE)``; the temp file's
    name then holds the old version, a spare that a later write of this process fills again.

    A spare is filled only once nobody can be reading the old version through it: it left its
    task path at least ``SPARE_QUARANTINE_SECONDS`` ago, and no process has it open, which the
    kernel tells by refusing a write lease while any descriptor is open. The store's own
    readers also check that a file did not change while they read it. Where exchange or
    leases are missing (another OS, another filesystem), every write makes a new file.

    A pool's first move is a plain rename: a command that writes one task would only delete
    its spare at exit, and it starts without loading ``ctypes`` for the exchange.
    """

    def __init__(self, directory: Path, *, enabled: bool = True) -> None:
        self.directory = directory
        # Whether exchange works here is asked on the second move (see ``exchange_names``).
        self._enabled = enabled
        self._moved = False
        self._held = _Spares()
        self._guard = allocate_lock()
        self._removes_at_exit = False

    def take(self) -> TempFile:
        """A temp file to fill: an old enough spare nobody has open, else a new file."""
        if self._enabled:
            with self._guard:
                spares = self._held.mine()
                now = time.monotonic()
                while spares and spares[0][0] <= now:
                    usable_from, path = spares.popleft()
                    if usable_from < now - SPARE_IDLE_SECONDS:
                        _unlink_quietly(path)
                        continue
                    temp = self._reopen_unread(path)
                    if temp is not None:
                        return temp
        return TempFile(self.directory)

    def _reopen_unread(self, path: str) -> TempFile | None:
        try:
            fd = open_regular(path, os.O_WRONLY)
        except FileNotFoundError:
            return None  # removed by hand or by 'board check --fix'
        except SpecialFile:
            return None  # replaced by something else (a link, a FIFO): never written through, left for 'board check'
        if os.fstat(fd).st_nlink != 1:
            os.close(fd)  # another name points at it: writing would change that file too
            return None
        try:
            # A lease break signals the holder, SIGIO by default, which would end this process;
            # SIGURG is ignored unless handled. Only opening the spare by its own name while
            # the lease is held (microseconds) breaks it.
            import signal  # here: only a process that writes again and again recycles spares

            fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
        except OSError as error:
            os.close(fd)
            _unlink_quietly(path)  # a reader keeps the old version it has open
            if error.errno != errno.EAGAIN:
                self._enabled = False  # no leases here: we cannot tell, so never recycle
            return None
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        return TempFile.reopened(path, fd)

    def move(self, temp: TempFile, path: Path) -> None:
        """Put the filled ``temp`` in place of ``path`` in one atomic step; what it replaced
        becomes a spare. The caller fsyncs the directory."""
        moved_before, self._moved = self._moved, True
        if not (self._enabled and moved_before) or exchange_names() is None:
            temp.move_to(path)
            return
        try:
            temp.swap_into(path)
        except FileNotFoundError:
            temp.move_to(path)  # nothing to replace (a new task), or the temp was removed
            return
        except OSError as error:
            if error.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM):
                temp.discard()
                raise
            self._enabled = False  # this filesystem cannot exchange names
            temp.move_to(path)
            return
        self._keep(temp.path, time.monotonic() + SPARE_QUARANTINE_SECONDS)

    def give_back(self, temp: TempFile) -> None:
        """A temp file that was not put in place. A spare goes back to the pool, to be filled
        again at once (what it holds now was never at a task path); a file made for this write
        is deleted, so that a refused write leaves the directory as it found it."""
        if not (self._enabled and temp.recycled and temp.unused):
            temp.discard()
            return
        temp.set_aside()
        self._keep(temp.path, 0.0)

    def _keep(self, path: str, usable_from: float) -> None:
        if not self._removes_at_exit:
            # Spares are removed when the pool is collected or the process exits normally; a
            # killed process's spares are stray files for ``board check --fix``. Arranged at
            # the first spare: a process that keeps none starts without ``weakref``.
            import weakref

            weakref.finalize(self, _Spares.remove_all, self._held)
            self._removes_at_exit = True
        with self._guard:
            spares = self._held.mine()
            if len(spares) >= SPARE_POOL_LIMIT:
                _unlink_quietly(path)
            elif usable_from:
                spares.append((usable_from, path))
            else:
                spares.appendleft((usable_from, path))

    def close(self) -> None:
        """Delete this process's spares now."""
        with self._guard:
            self._held.remove_all()


class _Spares:
    """A pool's spares, oldest first, as (monotonic time usable from, path), and the process
    they belong to: after a fork the child starts with none and leaves the parent's alone."""

    def __init__(self) -> None:
        self.pid = current_pid()
        self.queue: deque[tuple[float, str]] = deque()

    def mine(self) -> deque[tuple[float, str]]:
        if self.pid != current_pid():
            self.pid, self.queue = current_pid(), deque()
        return self.queue

    def remove_all(self) -> None:
        if self.pid == current_pid():
            while self.queue:
                _unlink_quietly(self.queue.pop()[1])


def _unlink_quietly(path: str) -> None:
    try:
        confine.unlink(path)
    except (FileNotFoundError, LinkedFolder):
        pass  # gone, or only reachable through a planted link: nothing of ours to remove


def _maker_pid(name: str) -> int | None:
    """The pid a temp file's name carries: ``.write.<pid>-<random>.tmp`` (``TempFile``), or
    ``.<file>.<pid>.tmp`` (``active_work.replace_file``, the hook's small rewrites); None else."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return None
    if name.startswith(".write."):
        pid, dash, _ = name[len(".write."):-len(".tmp")].partition("-")
        return int(pid) if dash and pid.isdigit() else None
    stem, dot, pid = name[1:-len(".tmp")].rpartition(".")
    return int(pid) if stem and dot and pid.isdigit() else None


def name_names_a_process(name: str) -> bool:
    """Whether a temp file's name carries the pid of the process that made it."""
    return _maker_pid(name) is not None


def made_by_running_process(name: str) -> bool:
    """Whether a temp file's name names a process that is running, whose file (a write in
    progress or a spare) it may still be."""
    pid = _maker_pid(name)
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


class KeptOpen:
    """A small file of board's own that this process keeps open between uses (made if missing):
    opening a file anew costs more than most of what is done with it.

    After a fork the inherited descriptor is the parent's, so the file is opened again.
    ``descriptor(recheck=True)`` also re-opens it when the path now names another file (the
    board's directory deleted and made again). The descriptor is closed when the object is
    collected. With ``create=False`` a missing file is not made: ``descriptor`` raises
    FileNotFoundError.
    """

    def __init__(self, path: Path, *, make_parent: bool = False, flags: int = os.O_RDWR, create: bool = True) -> None:
        self.path = path
        self._make_parent = make_parent
        self._flags = (flags | os.O_CREAT) if create else flags
        self._fd: int | None = None
        self._pid = 0
        self._identity = (0, 0)
        #: The descriptor to close, taken by one ``close`` alone (``list.pop`` is atomic).
        self._to_close: list[int] = []

    @property
    def fd(self) -> int | None:
        """The descriptor this process opened, or None."""
        return self._fd if self._pid == current_pid() else None

    def descriptor(self, *, recheck: bool = False) -> int:
        fd = self.fd
        if fd is not None and recheck and not self.is_current():
            self.close()
            fd = None
        if fd is None:
            try:
                fd = open_regular(self.path, self._flags)
            except FileNotFoundError:
                if not (self._make_parent and self._flags & os.O_CREAT):
                    raise
                confine.make_folders(self.path.parent)
                fd = open_regular(self.path, self._flags)
            held = os.fstat(fd)
            self._fd, self._pid, self._identity = fd, current_pid(), (held.st_ino, held.st_dev)
            self._to_close = [fd]
        return fd

    def describes(self, info: os.stat_result) -> bool:
        """Whether ``info`` (a stat of some path) is of the file this process holds open."""
        return self.fd is not None and (info.st_ino, info.st_dev) == self._identity

    def is_current(self) -> bool:
        """Whether the open file is still the one at ``path``."""
        try:
            return self.describes(os.stat(self.path))
        except FileNotFoundError:
            return False

    def close(self) -> None:
        self._fd = None
        try:
            fd = self._to_close.pop()
        except IndexError:
            return  # closed already, here or by another thread
        close_if_mine(fd, self._pid)

    def __del__(self) -> None:
        # A plain ``__del__``, not ``weakref.finalize``: a command that writes one task starts
        # without ``weakref``, and a descriptor needs no closing at exit, which ends them all.
        try:
            self.close()
        except Exception:  # noqa: BLE001  at exit, this module may be torn down already
            pass


def close_if_mine(fd: int, pid: int) -> None:
    """Close a descriptor this process opened; a forked child leaves its parent's copies be."""
    if current_pid() == pid:
        os.close(fd)


class SharedDirectorySync:
    """Directory fsyncs shared between the writers of one board (a group commit).

    Every write renames a file into the task directory and must fsync that directory before it
    returns. One fsync makes durable every rename made before it began, so a writer whose
    rename an fsync by another writer already covers can skip its own. The board's ``.synced``
    file holds two counters: renames so far, bumped under the board lock, and renames known
    durable. One writer at a time (``flock`` on the same file) reads the first, fsyncs, and
    raises the second; the others wait for it and then find themselves covered, or fsync next
    for everyone who waited. The counters are only ever a reason to skip an fsync when one
    that began after the rename has ended, so a lost or reset file costs fsyncs, never
    durability.
    """

    #: How long a writer waits for another's fsync before making its own without waiting more.
    WAIT_SECONDS = 0.05

    def __init__(self, path: Path) -> None:
        self._file = KeptOpen(path, make_parent=True)

    def note_rename(self) -> int:
        """Count a rename; called under the board lock. Returns its number."""
        fd = self._file.descriptor()
        renamed = self._counters(fd)[0] + 1
        os.pwrite(fd, renamed.to_bytes(8, "little"), 0)
        return renamed

    def make_durable(self, directory: Path, rename: int) -> None:
        """Return once ``directory`` was fsynced after rename number ``rename``."""
        fd = self._file.descriptor()
        pause, deadline = 0.0001, time.monotonic() + self.WAIT_SECONDS
        while True:
            if self._counters(fd)[1] >= rename:
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break
                time.sleep(pause)
                pause = min(pause * 2, 0.001)
                continue
            try:
                renamed, durable = self._counters(fd)
                if durable < rename:
                    # Only the holder of the flock raises the durable count, so it is still ours.
                    fsync_directory(directory)
                    os.pwrite(fd, renamed.to_bytes(8, "little"), 8)
                return
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        fsync_directory(directory)

    @staticmethod
    def _counters(fd: int) -> tuple[int, int]:
        raw = os.pread(fd, 16, 0).ljust(16, b"\0")
        renamed, durable = int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little")
        return renamed, min(durable, renamed)  # more durable than renamed: a damaged file, trust neither


def write_atomic(path: Path, data: bytes, *, lasting: bool = True, mode: int | None = None) -> None:
    """Write to a temp file beside ``path``, fsync, rename over, fsync the directory.
    ``lasting=False`` leaves the directory unsynced: after a crash the file is whole, the old
    version or the new one, for a record whose latest version need not outlive the machine.
    ``mode``: the new file's permissions (default 0644 less the umask).

    The temp file's name is drawn at random and made anew (``TempFile``): nothing planted
    beside ``path`` under a name known in advance is written through, in the user's own
    folders (``~/.claude``, ``~/.cache``) as in a board's."""
    temp = TempFile(path.parent)
    if mode is not None:
        temp.set_mode(mode)
    temp.fill(data)
    temp.move_to(path)
    if lasting:
        fsync_directory(path.parent)


def write_json_atomic(path: Path, value: Any) -> None:
    write_atomic(path, (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))


def fsync_directory(directory: Path) -> None:
    confine.fsync_folder(directory)


def json_line(record: dict[str, Any]) -> bytes:
    """One record as a compact JSON line, as every board log writes them."""
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def append_to(fd: int, line: bytes) -> range:
    """Append ``line`` with one write() to an O_APPEND descriptor; where it went in the file.

    All of it or none: a write cut short (a full disk, a quota) is taken back by truncating to
    where the line began, and raises ENOSPC, so a reader never sees a torn line nor a line
    spliced with the next writer's. Callers append under the board lock, so nobody appends
    after it meanwhile.
    """
    written = os.write(fd, line)
    end = os.lseek(fd, 0, os.SEEK_CUR)
    if written != len(line):
        os.ftruncate(fd, end - written)
        raise OSError(errno.ENOSPC, f"only {written} of {len(line)} bytes could be written (disk full?); the line was taken back")
    return range(end - len(line), end)


def read_bytes_retrying(path: Path | str, *, attempts: int = 3, pause: float = 0.002, limit: int = SMALL_FILE_LIMIT) -> tuple[bytes, Stamp] | None:
    """Read a whole file without locking, with the (mtime, size, inode) of what was read.

    None when it stays missing. Writers rename complete files into place, so a read sees a
    whole version; the retry covers the moment between an external writer's unlink and
    create. A file whose inode changed while it was read (ctime) is read again. The stamp
    comes from the open descriptor, so it describes exactly these bytes. Anything but a
    regular file of at most ``limit`` bytes raises ``SpecialFile``.
    """
    for attempt in range(attempts):
        try:
            fd = open_regular(path)
        except FileNotFoundError:
            if attempt == attempts - 1:
                return None
            time.sleep(pause)
            continue
        try:
            info = os.fstat(fd)
            if info.st_size > limit:
                raise SpecialFile(path, f"file is {info.st_size:,} bytes; the limit is {limit:,}", errno.EFBIG)
            want = info.st_size + 1
            data = os.read(fd, want)
            if len(data) == want:  # it grew since the fstat: read on to the end
                chunks, total = [data], len(data)
                while chunk := os.read(fd, 65536):
                    chunks.append(chunk)
                    total += len(chunk)
                    if total > limit:
                        raise SpecialFile(path, f"file is over {limit:,} bytes; the limit is {limit:,}", errno.EFBIG)
                data = b"".join(chunks)
            changed = os.fstat(fd).st_ctime_ns != info.st_ctime_ns
        finally:
            os.close(fd)
        if changed and attempt < attempts - 1:
            continue  # moved out (a spare may be refilled) or written in place while we read
        return data, (info.st_mtime_ns, info.st_size, info.st_ino)
    return None


def read_jsonl(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """Complete lines from ``offset``; returns the records and the offset after the last full line."""
    try:
        fd = open_regular(path)
    except (FileNotFoundError, LinkedFolder):
        return [], 0  # a log in a folder planted as a link is not the board's: none (check names it)
    with os.fdopen(fd, "rb") as handle:
        handle.seek(offset)
        chunk = handle.read()
    return parse_lines(chunk, offset)


def parse_lines(chunk: bytes, offset: int) -> tuple[list[dict[str, Any]], int]:
    """The records on the complete lines of ``chunk`` (read from ``offset`` of a log), and the
    offset after the last complete line."""
    end = chunk.rfind(b"\n")
    if end < 0:
        return [], offset
    records = []
    for raw in chunk[: end + 1].splitlines():
        try:
            record = json_bounds.loads(raw)
        except ValueError:
            continue  # a torn line from a crashed writer; the task files stay the truth
        if isinstance(record, dict):
            records.append(record)
    return records, offset + end + 1
