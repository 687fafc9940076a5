"""A throwaway PostgreSQL server for tests and benchmarks: its own data directory and socket in
a temp directory, TCP on 127.0.0.1 at a free port, trust authentication, fsync on.

Tests use the ``pg_cluster`` and ``pg_url`` fixtures (``tests/conftest.py`` imports them for
every folder: one server per session); a benchmark starts one itself::

    with PgCluster.running() as cluster:
        url = cluster.create_database("bench")

PostgreSQL refuses to run as root, so under root the server's commands run as the ``postgres``
user (``nobody`` when there is none) and the temp directory is handed to that user.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

NO_BINARIES = "PostgreSQL binaries not found (initdb/pg_ctl): install PostgreSQL to run these tests"
NO_PSYCOPG = "psycopg is not installed: pip install 'board[postgres]'"
#: A loaded 2-core CI machine can take a while to start, stop or restart a server.
TIMEOUT = 60.0
SUPERUSER = "postgres"
#: A role that must give a password over TCP (every other role is trusted), so a test can fail a login.
PASSWORD_ROLE = "board_password_check"


class ClusterError(RuntimeError):
    """A server that could not be set up, started or stopped: an error in a test, never a skip."""


def find_bindir() -> Path | None:
    """The directory holding initdb and pg_ctl: on PATH, else ``pg_config --bindir``, else the
    newest ``/usr/lib/postgresql/*/bin`` (where Debian puts them, off PATH)."""
    candidates: list[Path] = []
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(initdb).parent)
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            found = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=TIMEOUT)
            if found.returncode == 0 and found.stdout.strip():
                candidates.append(Path(found.stdout.strip()))

    def version(path: str) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", Path(path).parent.name))

    candidates += [Path(path) for path in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True)]
    for directory in candidates:
        if all(os.access(directory / name, os.X_OK) for name in ("initdb", "pg_ctl")):
            return directory
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _server_account() -> pwd.struct_passwd | None:
    """The account the server runs as when we are root (None: as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise ClusterError("running as root and there is no 'postgres' (or 'nobody') user to run PostgreSQL as")


def _as_account(account: pwd.struct_passwd | None) -> list[str]:
    if account is None:
        return []
    if shutil.which("runuser"):
        return ["runuser", "-u", account.pw_name, "--"]
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--init-groups", "--"]
    raise ClusterError("running as root and neither runuser nor setpriv is here to run PostgreSQL as another user")


class PgCluster:
    """One PostgreSQL server in a temp directory of its own, made by ``initdb``.

    ``start()``, ``stop()`` and ``restart()`` drive it with ``pg_ctl``; ``close()`` stops it and
    removes the directory. Connect with ``socket_url(db)`` or ``tcp_url(db)``.
    """

    def __init__(self, bindir: Path, base: Path, account: pwd.struct_passwd | None) -> None:
        self.bindir = bindir
        self.base = base
        self.data = base / "data"
        self.log = base / "server.log"
        self.account = account
        self.port = 0

    # -- life -------------------------------------------------------------------------------

    @classmethod
    def create(cls, bindir: Path | None = None) -> PgCluster:
        """initdb a new cluster in a new temp directory (not started yet)."""
        bindir = bindir or find_bindir()
        if bindir is None:
            raise ClusterError(NO_BINARIES)
        account = _server_account()
        # Short and directly in the temp folder: a Unix socket's path is limited to 107 bytes, and
        # under root the server's user must reach it (pytest's own tmp folders are root-only).
        base = Path(tempfile.mkdtemp(prefix="board-pg-"))
        cluster = cls(bindir, base, account)
        try:
            if account is not None:
                os.chown(base, account.pw_uid, account.pw_gid)
            cluster._initdb()
        except BaseException:
            shutil.rmtree(base, ignore_errors=True)
            raise
        return cluster

    @classmethod
    @contextlib.contextmanager
    def running(cls, bindir: Path | None = None) -> Iterator[PgCluster]:
        """A started cluster, stopped and removed when the block ends, however it ends."""
        cluster = cls.create(bindir)
        try:
            cluster.start()
            yield cluster
        finally:
            cluster.close()

    def _initdb(self) -> None:
        self._run(
            "initdb",
            ["-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8", "--locale=C"],
        )
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(
                "\n# board's test cluster\n"
                "listen_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{self.base}'\n"
                # Benchmarks run 64 and more clients at once.
                "max_connections = 200\n"
                # A real test of a real server: commits reach the disk.
                "fsync = on\n"
                "synchronous_commit = on\n"
                "full_page_writes = on\n"
            )
        # The first matching line wins: one role must log in with a password over TCP, so
        # a failed login can be tested; everything else is trusted.
        (self.data / "pg_hba.conf").write_text(
            f"host  all  {PASSWORD_ROLE}  127.0.0.1/32  scram-sha-256\n"
            "local all  all                     trust\n"
            "host  all  all  127.0.0.1/32  trust\n",
            encoding="utf-8",
        )

    def start(self) -> None:
        """Start the server and wait until it accepts connections: on a free port the first time,
        and on the same port again after ``stop()``, so URLs handed out keep working."""
        for attempt in range(5):
            if not self.port or attempt:
                self.port = free_port()
                self._set_port()
            logged = self.log.stat().st_size if self.log.exists() else 0
            started = self._run("pg_ctl", ["-D", str(self.data), "-l", str(self.log), "-w", "-t", str(int(TIMEOUT)), "start"], check=False)
            if started.returncode == 0:
                break
            # Someone else took the port between our probe (or our last run) and the server's bind.
            if "could not bind" in self._log_since(logged) and attempt < 4:
                continue
            raise ClusterError(self._failure("pg_ctl start", started))
        self.wait_until_ready()

    def stop(self) -> None:
        """Stop the server (fast shutdown: sessions are ended, commits kept) and wait for it."""
        if not self.is_running():
            return
        pid = self.pid
        stopped = self._run("pg_ctl", ["-D", str(self.data), "-m", "fast", "-w", "-t", str(int(TIMEOUT)), "stop"], check=False)
        if stopped.returncode != 0 and pid is not None and _alive(pid):
            # pg_ctl gave up: an immediate shutdown of this one postmaster, by its pid.
            os.kill(pid, signal.SIGQUIT)
        # pg_ctl returns once the pid file is gone, which the postmaster removes a moment
        # before it exits: stopped means the process is gone too.
        if pid is not None and not _wait_for(lambda: not _alive(pid), TIMEOUT):
            raise ClusterError(self._failure("pg_ctl stop", stopped))

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every session is cut, the data stays; waits until ready."""
        restarted = self._run("pg_ctl", ["-D", str(self.data), "-l", str(self.log), "-m", "fast", "-w", "-t", str(int(TIMEOUT)), "restart"], check=False)
        if restarted.returncode != 0:
            raise ClusterError(self._failure("pg_ctl restart", restarted))
        self.wait_until_ready()

    def close(self) -> None:
        """Stop the server if it runs and remove its directory."""
        try:
            self.stop()
        finally:
            if not self.is_running():
                shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> PgCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- state ------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The postmaster's pid while it runs (the first line of ``postmaster.pid``)."""
        try:
            first = (self.data / "postmaster.pid").read_text().split("\n", 1)[0]
        except FileNotFoundError:
            return None
        return int(first) if first.strip().isdigit() else None

    def is_running(self) -> bool:
        return self._run("pg_ctl", ["-D", str(self.data), "status"], check=False).returncode == 0

    def wait_until_ready(self, timeout: float = TIMEOUT) -> None:
        """Poll a real connection until the server answers (``pg_ctl -w`` only reads its pid file)."""
        import psycopg

        last: Exception | None = None

        def answers() -> bool:
            nonlocal last
            try:
                with psycopg.connect(self.socket_url("postgres"), connect_timeout=5) as conn:
                    conn.execute("select 1")
                return True
            except psycopg.OperationalError as error:
                last = error
                return False

        if not _wait_for(answers, timeout):
            raise ClusterError(f"the server did not accept connections within {timeout:.0f} s: {last}\n{self._log_tail()}")

    # -- connecting -------------------------------------------------------------------------

    def socket_url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@/{quote(dbname, safe='')}?host={quote(str(self.base))}&port={self.port}"

    def tcp_url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{quote(dbname, safe='')}"

    def create_database(self, name: str) -> str:
        """A new empty database; returns its socket URL."""
        from psycopg import sql

        with self._admin() as conn:
            conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
        return self.socket_url(name)

    def drop_database(self, name: str) -> None:
        """Drop a database, ending any session still in it."""
        from psycopg import sql

        with self._admin() as conn:
            conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))

    def _admin(self):  # noqa: ANN202 - psycopg is imported lazily
        import psycopg

        return psycopg.connect(self.socket_url("postgres"), autocommit=True, connect_timeout=int(TIMEOUT))

    # -- running the server's commands -----------------------------------------------------

    def _set_port(self) -> None:
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(f"port = {self.port}\n")

    def _run(self, program: str, args: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [*_as_account(self.account), str(self.bindir / program), *args]
        # cwd: the server's user may not be allowed into ours.
        done = subprocess.run(command, cwd=self.base, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=TIMEOUT * 2)
        if check and done.returncode != 0:
            raise ClusterError(self._failure(program, done))
        return done

    def _failure(self, what: str, done: subprocess.CompletedProcess[str]) -> str:
        who = f" (as user {self.account.pw_name})" if self.account else ""
        output = (done.stderr or done.stdout).strip()
        return f"{what}{who} failed with exit status {done.returncode}: {output}\n{self._log_tail()}"

    def _log_since(self, offset: int) -> str:
        with open(self.log, "rb") as log:
            log.seek(offset)
            return log.read().decode(errors="replace")

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs. A zombie does not: a server's postmaster is reparented to pid 1,
    which in some containers reaps late."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return False
        try:  # no /proc (macOS): a zombie counts as alive there
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[0] != "Z"


def _wait_for(condition, timeout: float) -> bool:  # noqa: ANN001
    """Poll ``condition`` until it holds or ``timeout`` seconds pass, backing off to 0.2 s."""
    deadline = time.monotonic() + timeout
    pause = 0.01
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


# -- pytest fixtures: import both into a folder's conftest.py to use them there -------------------

_database_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """One PostgreSQL server for the session, stopped (by pg_ctl, by its pid) when it ends."""
    bindir = find_bindir()
    if bindir is None:
        pytest.skip(NO_BINARIES)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip(NO_PSYCOPG)
    cluster = PgCluster.create(bindir)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> Iterator[str]:
    """A fresh empty database for one test (its socket URL), dropped afterwards."""
    if not pg_cluster.is_running():  # a test before this one stopped the server
        pg_cluster.start()
    name = f"test_{next(_database_numbers)}"
    url = pg_cluster.create_database(name)
    try:
        yield url
    finally:
        if not pg_cluster.is_running():
            pg_cluster.start()
        pg_cluster.drop_database(name)
