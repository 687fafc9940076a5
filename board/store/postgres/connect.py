"""Opening a connection to a board's database, with every failure as one line a person can act on.

A database is named the way libpq names one: a ``postgresql://`` (or ``postgres://``) URL, or a
``key=value`` string such as ``host=/run/postgresql dbname=board``; the ``PG*`` environment
variables and ``~/.pgpass`` fill in what it leaves out. Messages name the host or socket and the
cause, never a password.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from board.errors import BoardError, BoardUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:
    import psycopg

NOT_INSTALLED = "PostgreSQL support is not installed: pip install 'board[postgres]'"
#: libpq waits as long as the operating system does (minutes) for a host that does not answer.
DEFAULT_CONNECT_TIMEOUT = 10
#: A machine cut off the network mid-transaction would otherwise hold its locks (the board's
#: write lock among them) until TCP gives up, two hours by default: every board stops with it.
#: The board's own transactions never wait on anything but the database, for milliseconds, so
#: the server ends one left idle this long, and both ends probe a quiet TCP connection (first
#: after 5 s, then every 2 s, 3 unanswered: gone) and drop one whose data goes unacknowledged
#: for 15 s. A machine that died or lost its link so lets go of its locks, its agent names and
#: the coordinator's place within about 15 s. A URL that sets any of these keeps its value.
IDLE_IN_TRANSACTION_SECONDS = 15
_CLIENT_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3, "tcp_user_timeout": 15_000}
_SERVER_SETTINGS = {
    "idle_in_transaction_session_timeout": f"{IDLE_IN_TRANSACTION_SECONDS}s",
    "tcp_keepalives_idle": "5",
    "tcp_keepalives_interval": "2",
    "tcp_keepalives_count": "3",
    "tcp_user_timeout": "15000",
}

_URL_PASSWORD = re.compile(r"^(?P<head>postgres(?:ql)?://[^@/?#:]*):(?P<password>[^@/?#]*)@", re.IGNORECASE)
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&]password=)(?P<password>[^&#]*)", re.IGNORECASE)
_KEYWORD_PASSWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)(?P<password>'(?:[^'\\]|\\.)*'|[^\s']\S*)", re.IGNORECASE)
#: libpq's "connection to server at "HOST", port N failed: CAUSE" and its socket form.
_SERVER_FAILED = re.compile(
    r'connection to server (?:at "(?P<host>[^"]*)"(?: \([^)]*\))?, port (?P<port>\d+)|on socket "(?P<socket>[^"]*)") failed: (?P<cause>.*)'
)


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***``, safe to print or log."""
    url = _URL_PASSWORD.sub(r"\g<head>:***@", url)
    if "://" in url:
        return _QUERY_PASSWORD.sub(r"\g<head>***", url)
    return _KEYWORD_PASSWORD.sub(r"\g<head>***", url)


def connect(url: str, *, autocommit: bool = False, application_name: str = "board") -> psycopg.Connection:
    """A new connection to the database ``url`` names.

    Raises BoardError with one line when psycopg is not installed, when ``url`` does not parse,
    or when the server cannot be reached, refuses the login or has no such database. Unless the
    URL or ``PGCONNECT_TIMEOUT`` says otherwise, a server gets 10 s to answer.
    """
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        raise BoardError(NOT_INSTALLED) from None
    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:
        raise BoardError(f"not a PostgreSQL URL or connection string: {_scrubbed(_first_line(error), url)}") from None
    options: dict[str, Any] = {"application_name": application_name}
    if "connect_timeout" not in params and not os.environ.get("PGCONNECT_TIMEOUT"):
        options["connect_timeout"] = DEFAULT_CONNECT_TIMEOUT
    options.update({key: value for key, value in _CLIENT_KEEPALIVES.items() if key not in params})
    given = str(params.get("options") or os.environ.get("PGOPTIONS") or "")
    settings = " ".join(f"-c {name}={value}" for name, value in _SERVER_SETTINGS.items() if name not in given)
    if settings:
        options["options"] = f"{given} {settings}".strip()
    try:
        return psycopg.connect(url, autocommit=autocommit, **options)
    except psycopg.Error as error:
        raise BoardError(_connect_failure(error, params, url)) from None


def describe(url: str) -> str:
    """A short name for the database ``url`` names, for a title: "database plan on db.example"."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        params = conninfo_to_dict(url)
    except Exception:  # noqa: BLE001 - a name for a title; the connection reports real problems
        return "a PostgreSQL database"
    name = str(params.get("dbname") or os.environ.get("PGDATABASE") or params.get("user") or "")
    where = _where(params)
    where = "this machine" if where.startswith(("socket", "the default socket")) else where
    return f"database {name} on {where}" if name else f"PostgreSQL on {where}"


def _connect_failure(error: Exception, params: Mapping[str, object], url: str) -> str:
    message = _first_line(error)
    failed = _SERVER_FAILED.search(message)
    if failed:
        where = f"{failed['host']}:{failed['port']}" if failed["host"] is not None else f"socket {failed['socket']}"
        cause = failed["cause"]
    else:
        where = _where(params)
        cause = re.sub(r"^connection (?:failed|is bad): ", "", message)
    cause = re.sub(r"^(?:FATAL|ERROR):\s+", "", cause.strip())
    cause = cause[:1].lower() + cause[1:]
    if cause in ("connection refused", "no such file or directory"):
        cause += ": is PostgreSQL running there?"
    return _scrubbed(f"cannot connect to PostgreSQL at {where}: {cause}", url)


def _where(params: Mapping[str, object]) -> str:
    """Where libpq went, from the connection string and environment, for messages."""
    host = str(params.get("host") or params.get("hostaddr") or os.environ.get("PGHOST") or "")
    port = str(params.get("port") or os.environ.get("PGPORT") or "5432")
    if not host:
        return f"the default socket (port {port})"
    if host.startswith("/"):
        return f"socket {host}/.s.PGSQL.{port}"
    return f"{host}:{port}"


def _first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return lines[0].strip() if lines else type(error).__name__


def _scrubbed(message: str, url: str) -> str:
    """``message`` with ``url`` shown redacted and its password nowhere: libpq quotes the parts
    of a connection string it cannot parse, which may hold it."""
    message = message.replace(url, redact(url))
    for pattern in (_URL_PASSWORD, _QUERY_PASSWORD, _KEYWORD_PASSWORD):
        for found in pattern.finditer(url):
            password = found["password"].strip("'")
            if not password:
                continue
            message = re.sub(r'"[^"]*"', lambda quoted: '"***"' if password in quoted[0] else quoted[0], message)
            if len(password) >= 4:  # a shorter one would mangle every word that holds its letters
                message = message.replace(password, "***")
    return message


class DatabaseUnavailable(BoardUnavailable):
    """The connection to the board's database broke (the server restarted, the network went);
    whatever the statement was part of was rolled back."""


def only_row(cursor: psycopg.Cursor[Any]) -> Any:
    """The row of a statement that always returns one (an aggregate, ``returning``, a claim's
    outcome): none at all is the server failing, said in one line."""
    row = cursor.fetchone()
    if row is None:
        raise DatabaseUnavailable("the database answered a statement that always returns a row with none")
    return row


class BoardConnection:
    """A store's connection, which opens a new one on the next use after it broke.

    A broken connection fails the statement in hand as ``DatabaseUnavailable`` (one line;
    the transaction it was in is rolled back by the server, so nothing is half applied) and
    the next statement outside a transaction reconnects. Anything else is psycopg's own.
    """

    def __init__(self, url: str, *, application_name: str = "board") -> None:
        self.url = url
        self.application_name = application_name
        self._conn: psycopg.Connection | None = connect(url, autocommit=True, application_name=application_name)
        self._depth = 0

    @property
    def raw(self) -> psycopg.Connection:
        """The connection now, reopened if it broke (never inside a transaction)."""
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self._depth:
                raise self._unavailable("the connection broke inside a transaction")
            self._drop()
            try:
                self._conn = connect(self.url, autocommit=True, application_name=self.application_name)
            except BoardError as error:  # the server is still out of reach: the same one line
                raise DatabaseUnavailable(str(error)) from None
        return self._conn

    @property
    def closed(self) -> bool:
        return self._conn is None or self._conn.closed

    def close(self) -> None:
        self._drop()

    def execute(self, query: Any, params: Any = None) -> psycopg.Cursor[Any]:
        """Run one statement. Outside a transaction a statement only reads (the store writes in
        transactions), so after a broken connection it is tried once more on a new one."""
        import psycopg

        try:
            return self.raw.execute(query, params)
        except psycopg.OperationalError as error:
            failure = self._failed(error)
            if self._depth or self._conn is None or not (self._conn.broken or self._conn.closed):
                raise failure from None
        try:
            return self.raw.execute(query, params)
        except psycopg.OperationalError as error:
            raise self._failed(error) from None

    @contextmanager
    def without_retry(self) -> Iterator[None]:
        """Reads that fail on a broken connection as a transaction's statements would, with
        ``DatabaseUnavailable``, rather than being tried again on a new connection: for reads
        that are the first step of a write. A connection known broken before is reopened first."""
        self.raw  # noqa: B018 - reopens a connection that broke before
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    def executemany(self, query: Any, params_seq: Any) -> None:
        import psycopg

        try:
            self.raw.cursor().executemany(query, params_seq)
        except psycopg.OperationalError as error:
            raise self._failed(error) from None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        import psycopg

        conn = self.raw
        self._depth += 1
        try:
            with conn.transaction():
                yield
        except psycopg.OperationalError as error:
            raise self._failed(error) from None
        finally:
            self._depth -= 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)

    def _failed(self, error: Exception) -> DatabaseUnavailable:
        if self._conn is not None and (self._conn.broken or self._conn.closed):
            return self._unavailable(_first_line(error))
        return DatabaseUnavailable(_scrubbed(f"the database refused: {_first_line(error)}", self.url))

    def _unavailable(self, cause: str) -> DatabaseUnavailable:
        cause = cause[:1].lower() + cause[1:]
        return DatabaseUnavailable(_scrubbed(f"lost the connection to the board's database at {redact(self.url)} ({cause}); nothing was written, try again", self.url))

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            try:
                conn.close()
            except Exception:
                pass
