"""The board lock: ``flock`` on ``.tasks/.lock``, a file that is never deleted.

Every write of every process goes through this lock, so what it costs bounds how many claims a
board can take per second. The descriptor stays open between writes: opening the file anew
each time (as the filelock package does) costs about a hundred times more than the ``flock``
call itself. Other tools that take the same file with filelock or ``flock(1)`` exclude us and
we them, since all of them use ``flock``.
"""

from __future__ import annotations

import fcntl
import os
import time
# The lock of ``threading.RLock`` itself: a command that writes one task starts without the
# threading module (and without ``random``, for the jitter below).
from _thread import RLock
from pathlib import Path

from board.errors import BoardError
from board.disk.atomic import KeptOpen

#: How long a writer waits for the board lock before giving up with a clear error.
LOCK_TIMEOUT_SECONDS = 30.0
#: Waiting writers retry after a pause that doubles from the first to the last value. A fixed
#: short poll keeps many waiters spinning on few cores and starves the holder; a long one
#: leaves the lock idle after its holder lets go.
LOCK_FIRST_PAUSE = 0.0001
LOCK_LAST_PAUSE = 0.004


class BoardLock:
    """An exclusive lock shared by every process writing one board.

    Reentrant within a thread (a locked pass may call store methods that lock again); other
    threads of the same process wait, like other processes do.
    """

    def __init__(self, path: Path, *, timeout: float = LOCK_TIMEOUT_SECONDS) -> None:
        self.path = path
        self.timeout = timeout
        self._threads = RLock()
        self._depth = 0
        self._file = KeptOpen(path)

    def __enter__(self) -> BoardLock:
        if not self._threads.acquire(timeout=self.timeout):
            raise self._timed_out()
        if self._depth:
            self._depth += 1
            return self
        try:
            self._acquire()
        except BaseException:
            self._threads.release()
            raise
        self._depth = 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._file.fd is not None:
            fcntl.flock(self._file.fd, fcntl.LOCK_UN)
        self._threads.release()

    def _acquire(self) -> None:
        deadline = time.monotonic() + self.timeout
        pause = LOCK_FIRST_PAUSE
        while True:
            fd = self._descriptor()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise self._timed_out() from None
                time.sleep(pause * (0.5 + os.urandom(1)[0] / 255))  # jittered: waiters do not retry in step
                pause = min(pause * 2, LOCK_LAST_PAUSE)
                continue
            if self._file.is_current():
                return
            # The board's directory was deleted and made again while we waited: the file we
            # locked is no longer the one other writers lock. Let go and take the new one.
            fcntl.flock(fd, fcntl.LOCK_UN)
            self._file.close()

    def _descriptor(self) -> int:
        try:
            return self._file.descriptor()
        except FileNotFoundError:
            raise BoardError(f"the board at {self.path.parent} is gone (deleted or moved); nothing was written") from None

    def _timed_out(self) -> BoardError:
        return BoardError(f"the board is locked by another writer for over {self.timeout:.0f} s ({self.path}); try again")
