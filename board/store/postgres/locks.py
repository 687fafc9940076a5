"""Locks a process holds for its lifetime on a database board (the file board's ``LifetimeLock``).

A session-level advisory lock on a connection of its own: the server drops it when the process
dies or its connection does, as the kernel drops a file lock. Several machines share one
database, so the coordinator's "only one per board" must be decided there, not on a disk.
"""

from __future__ import annotations

import zlib

from board.errors import BoardError
from board.store.postgres.connect import connect, redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    import psycopg


class SessionLock:
    """The advisory lock named ``name`` in the board's database, held while this lives."""

    def __init__(self, url: str, name: str) -> None:
        self.url = url
        self.name = name
        # Advisory locks take a 64-bit key; the name's checksum in the high half keeps board's
        # locks apart from the write lock and the migrations' (fixed keys) and from each other.
        self.key = (zlib.crc32(f"board lock {name}".encode()) << 31) | 1
        self._conn: psycopg.Connection | None = None

    @property
    def path(self) -> str:
        """Where the lock is, for messages (a file lock names its file)."""
        return f"the {self.name} lock in {redact(self.url)}"

    def acquire(self) -> bool:
        """Take the lock if no other session holds it; False if one does."""
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return True
        import psycopg

        from board.store.postgres.connect import DatabaseUnavailable

        try:
            conn = connect(self.url, autocommit=True, application_name=f"board {self.name}")
            got = conn.execute("select pg_try_advisory_lock(%s)", (self.key,)).fetchone()[0]
        except (BoardError, psycopg.OperationalError) as error:  # out of reach: the caller may wait
            raise DatabaseUnavailable(str(error).strip().splitlines()[0]) from None
        if not got:
            conn.close()
            return False
        self._conn = conn
        return True

    def still_held(self) -> bool:
        """Whether the lock is still ours (a server restart drops it with the connection)."""
        import psycopg

        if self._conn is None or self._conn.closed:
            return False
        try:
            self._conn.execute("select 1")
        except psycopg.OperationalError:
            return False
        return True

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None or conn.closed:
            return
        try:
            # Unlock before closing: a closed connection's server process lets go of its locks
            # only when it has exited, a moment later, and a coordinator starting again at once
            # (or on another machine) would find the lock still held by a process now gone.
            conn.execute("select pg_advisory_unlock(%s)", (self.key,))
        except Exception:
            pass
        try:
            conn.close()  # ends the session, and any lock with it
        except Exception:
            pass


#: Whether a session holds an advisory lock taken with a 64-bit key: the server lists it with the
#: key's high and low halves as classid and objid, and objsubid 1.
_HELD = """
select exists (select 1 from pg_locks where locktype = 'advisory' and granted
    and database = (select oid from pg_database where datname = current_database())
    and classid = %s::bigint::oid and objid = %s::bigint::oid and objsubid = 1)
"""


def held_elsewhere(url: str, name: str) -> bool | None:
    """Does some other session hold the lock ``name`` right now? None: unknown, the database is
    out of reach (a machine cut off from it cannot tell; it must not conclude that nobody does).
    A probe: takes nothing. One that took the lock for a moment, as a try-and-release would,
    could make a coordinator starting at that moment believe another holds it."""
    key = SessionLock(url, name).key
    try:
        with connect(url, autocommit=True, application_name="board probe") as conn:
            return bool(conn.execute(_HELD, (key >> 32, key & 0xFFFFFFFF)).fetchone()[0])
    except BoardError:
        return None
