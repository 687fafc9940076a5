"""Locks a process holds for its lifetime on a database board (the file board's ``LifetimeLock``).

A session-level advisory lock on a connection of its own: the server drops it when the process
dies or its connection does, as the kernel drops a file lock. Several machines share one
database, so the coordinator's "only one per board" must be decided there, not on a disk.
"""

from __future__ import annotations

import threading
import zlib

from board.errors import BoardError
from board.store.postgres.connect import connect, only_row, redact

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
        #: One user of the connection at a time: ``keep_heard`` touches it from a thread of its own.
        self._using = threading.Lock()

    @property
    def path(self) -> str:
        """Where the lock is, for messages (a file lock names its file)."""
        return f"the {self.name} lock in {redact(self.url)}"

    def acquire(self) -> bool:
        """Take the lock if no other session holds it; False if one does."""
        with self._using:
            return self._acquire()

    def _acquire(self) -> bool:
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return True
        import psycopg

        from board.store.postgres.connect import DatabaseUnavailable

        try:
            conn = connect(self.url, autocommit=True, application_name=f"board {self.name}")
            got = only_row(conn.execute("select pg_try_advisory_lock(%s)", (self.key,)))[0]
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

        with self._using:
            if self._conn is None or self._conn.closed:
                return False
            try:
                self._conn.execute("select 1")
            except psycopg.OperationalError:
                return False
            return True

    def keep_heard(self, stop: threading.Event, every: float) -> threading.Thread:
        """Until ``stop``, say something on the lock's connection every ``every`` seconds: the
        server stamps the session's last activity, and ``held_elsewhere(heard_within=...)`` tells a
        holder still talking from one cut off from the database (whose lock the server keeps
        until it finds the connection dead, many seconds later)."""

        def touch() -> None:
            while not stop.wait(every):
                self.still_held()

        thread = threading.Thread(target=touch, name=f"board {self.name} lock", daemon=True)
        thread.start()
        return thread

    def held_elsewhere(self, *, heard_within: float | None = None) -> bool | None:
        """``held_elsewhere`` for this lock's name in its database."""
        return held_elsewhere(self.url, self.name, heard_within=heard_within)

    def release(self) -> None:
        with self._using:
            self._release()

    def _release(self) -> None:
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


#: ... and said something within the last so many seconds (``SessionLock.keep_heard``). A session
#: whose activity another role may not see (``state_change`` is null then) counts as heard.
_HEARD = """
select exists (select 1 from pg_locks l left join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted
    and l.database = (select oid from pg_database where datname = current_database())
    and l.classid = %s::bigint::oid and l.objid = %s::bigint::oid and l.objsubid = 1
    and (a.state_change is null or a.state_change > clock_timestamp() - make_interval(secs => %s)))
"""


def held_elsewhere(url: str, name: str, *, heard_within: float | None = None) -> bool | None:
    """Does some other session hold the lock ``name`` right now? None: unknown, the database is
    out of reach (a machine cut off from it cannot tell; it must not conclude that nobody does).
    With ``heard_within``, only a holder that said something within that many seconds counts
    (one that keeps itself heard, ``SessionLock.keep_heard``).
    A probe: takes nothing. One that took the lock for a moment, as a try-and-release would,
    could make a coordinator starting at that moment believe another holds it."""
    key = SessionLock(url, name).key
    query, arguments = (_HELD, (key >> 32, key & 0xFFFFFFFF)) if heard_within is None else (_HEARD, (key >> 32, key & 0xFFFFFFFF, heard_within))
    try:
        with connect(url, autocommit=True, application_name="board probe") as conn:
            return bool(only_row(conn.execute(query, arguments))[0])
    except BoardError:
        return None
