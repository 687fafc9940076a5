"""Waiting for a ``flock`` held by another process, for at most so long: a lock anyone who can
open the file can take and keep, to stall whoever waits on it."""

from __future__ import annotations

import fcntl
import time

#: The first and the longest pause between tries of a lock held by someone else.
_FIRST_PAUSE, _LAST_PAUSE = 0.0001, 0.005


def flock_within(fd: int, operation: int, seconds: float) -> None:
    """``fcntl.flock(fd, operation)``, waited for at most ``seconds``; TimeoutError (an OSError)
    after that. A lock free at once is one call, as a blocking ``flock`` is."""
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    deadline = time.monotonic() + seconds
    pause = _FIRST_PAUSE
    while True:
        time.sleep(pause)
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"a lock held by another process for over {seconds:g} s") from None
            pause = min(pause * 2, _LAST_PAUSE)
