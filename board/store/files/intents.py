"""Which ready tasks other processes are about to claim (``FileStore.claim``)."""

from __future__ import annotations

import errno
import fcntl
import os
import zlib
from pathlib import Path

from board.disk.atomic import KeptOpen


class ClaimIntents:
    """Which ready tasks other processes are about to claim, so that concurrent claimers work
    on different ones instead of all preparing the best and all but one starting over.

    One byte-range lock per task id on ``.claiming`` in the board's state folder (a file that is
    never deleted); the kernel drops them when a process dies. Only a hint: the claim itself
    is checked under the board lock, so a collision of ids on one byte, or two stores of one
    process (whose record locks never conflict), costs a retry, never a double claim.
    """

    def __init__(self, path: Path) -> None:
        self._file = KeptOpen(path)

    def reserve(self, task_id: str) -> bool:
        try:
            fcntl.lockf(self._file.descriptor(), fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _intent_offset(task_id), os.SEEK_SET)
        except OSError as error:
            if error.errno in (errno.EAGAIN, errno.EACCES):
                return False
            raise
        return True

    def release(self, task_id: str) -> None:
        if self._file.fd is not None:
            fcntl.lockf(self._file.fd, fcntl.LOCK_UN, 1, _intent_offset(task_id), os.SEEK_SET)


def _intent_offset(task_id: str) -> int:
    return zlib.crc32(task_id.encode("utf-8"))
