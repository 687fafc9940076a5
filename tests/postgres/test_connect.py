"""Connecting: every way of naming a database, and every failure as one line without a password."""

from __future__ import annotations

import subprocess
import sys

import pytest

from board.errors import BoardError
from board.store.postgres.connect import NOT_INSTALLED, connect, redact
from tests.pg_cluster import PASSWORD_ROLE, PgCluster, free_port

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'board[postgres]'")

SECRET = "s3cret-Pw"


def refusal(url: str) -> BoardError:
    with pytest.raises(BoardError) as refused:
        connect(url)
    error = refused.value
    message = str(error)
    assert "\n" not in message
    assert SECRET not in message
    # Raised "from None": a command line printing it shows no chained psycopg traceback.
    assert error.__cause__ is None and error.__suppress_context__
    return error


def test_a_dead_port_is_one_line_naming_the_host_without_the_password() -> None:
    port = free_port()
    message = str(refusal(f"postgresql://ann:{SECRET}@127.0.0.1:{port}/board"))
    assert message == f"cannot connect to PostgreSQL at 127.0.0.1:{port}: connection refused: is PostgreSQL running there?"


def test_a_missing_socket_names_the_socket(tmp_path) -> None:
    message = str(refusal(f"host={tmp_path} port=5999 dbname=board password={SECRET}"))
    assert message == f"cannot connect to PostgreSQL at socket {tmp_path}/.s.PGSQL.5999: no such file or directory: is PostgreSQL running there?"


def test_a_wrong_password_is_refused_without_showing_it(pg_cluster: PgCluster) -> None:
    with psycopg.connect(pg_cluster.socket_url(), autocommit=True) as admin:
        admin.execute(f"create role {PASSWORD_ROLE} login password 'the-right-one'")
    try:
        message = str(refusal(f"postgres://{PASSWORD_ROLE}:{SECRET}@127.0.0.1:{pg_cluster.port}/postgres"))
        assert message == f'cannot connect to PostgreSQL at 127.0.0.1:{pg_cluster.port}: password authentication failed for user "{PASSWORD_ROLE}"'
        with connect(f"postgres://{PASSWORD_ROLE}:the-right-one@127.0.0.1:{pg_cluster.port}/postgres") as conn:
            assert conn.execute("select current_user").fetchone() == (PASSWORD_ROLE,)
    finally:
        with psycopg.connect(pg_cluster.socket_url(), autocommit=True) as admin:
            admin.execute(f"drop role {PASSWORD_ROLE}")


def test_a_missing_database_is_named(pg_cluster: PgCluster) -> None:
    message = str(refusal(pg_cluster.tcp_url("no_such_board")))
    assert message == f'cannot connect to PostgreSQL at 127.0.0.1:{pg_cluster.port}: database "no_such_board" does not exist'


def test_a_url_that_does_not_parse_is_one_line_without_the_password() -> None:
    message = str(refusal(f"postgresql://ann:{SECRET}@[::1/board"))
    assert message.startswith("not a PostgreSQL URL or connection string: ")
    message = str(refusal(f"host=x password={SECRET} nonsense=1"))
    assert message == 'not a PostgreSQL URL or connection string: invalid connection option "nonsense"'


def test_every_way_of_naming_a_database_connects(pg_cluster: PgCluster, pg_url: str) -> None:
    name = psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]
    port = pg_cluster.port
    for url in (
        pg_url,
        pg_cluster.tcp_url(name),
        f"postgres://postgres@127.0.0.1:{port}/{name}",
        f"host={pg_cluster.base} port={port} user=postgres dbname={name}",
    ):
        with connect(url, application_name="board-test") as conn:
            assert conn.execute("select current_database(), current_setting('application_name')").fetchone() == (name, "board-test")
            assert not conn.autocommit
    with connect(pg_url, autocommit=True) as conn:
        assert conn.autocommit
        assert conn.execute("select current_setting('application_name')").fetchone() == ("board",)


def test_without_psycopg_the_message_says_what_to_install() -> None:
    # A Python where psycopg cannot be imported, in a process of its own.
    program = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from board.errors import BoardError\n"
        "import board.store.postgres, board.store.postgres.migrations\n"
        "from board.store.postgres.connect import connect\n"
        "try:\n    connect('postgresql://localhost/board')\n"
        "except BoardError as error:\n    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == NOT_INSTALLED + "\n" == "PostgreSQL support is not installed: pip install 'board[postgres]'\n"


def test_importing_the_package_does_not_import_psycopg() -> None:
    program = "import sys, board.store.postgres, board.store.postgres.connect, board.store.postgres.migrations; print('psycopg' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://ann:pw@db.example:5432/board", "postgresql://ann:***@db.example:5432/board"),
        ("postgres://ann:p%40ss@db/board?sslmode=require", "postgres://ann:***@db/board?sslmode=require"),
        ("postgresql://db/board?user=ann&password=pw&sslmode=require", "postgresql://db/board?user=ann&password=***&sslmode=require"),
        ("postgresql://ann@db/board", "postgresql://ann@db/board"),
        ("postgresql:///board?host=/run/postgresql", "postgresql:///board?host=/run/postgresql"),
        ("host=db password=pw dbname=board", "host=db password=*** dbname=board"),
        ("host=db password = 'two words' dbname=board", "host=db password = *** dbname=board"),
        ("host=db dbname=board", "host=db dbname=board"),
    ],
)
def test_redact_hides_passwords_only(url: str, shown: str) -> None:
    assert redact(url) == shown


def test_a_connection_lost_mid_transaction_lets_go_of_its_locks_unless_the_url_says_otherwise(pg_cluster: PgCluster) -> None:
    """A board connection tells the server to end a transaction left idle (a client that died or
    lost its network holding the board's lock), and to probe a quiet TCP peer; a URL's own
    settings win."""
    settings = "select current_setting('idle_in_transaction_session_timeout'), current_setting('tcp_keepalives_idle'), current_setting('tcp_user_timeout')"
    with connect(pg_cluster.tcp_url()) as conn:
        assert conn.execute(settings).fetchone() == ("15s", "5", "15000")
        assert conn.info.get_parameters()["keepalives"] == "1"
    with connect(pg_cluster.tcp_url() + "?options=-c%20idle_in_transaction_session_timeout%3D2min&keepalives_idle=60") as conn:
        assert conn.execute(settings).fetchone()[:2] == ("2min", "5")
        assert conn.info.get_parameters()["keepalives_idle"] == "60"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"postgresql://ann:{SECRET}@db.example/plan", "database plan on db.example:5432"),
        ("postgresql://ann@db.example:6000/plan?sslmode=require", "database plan on db.example:6000"),
        ("postgresql://postgres@/demo?host=/tmp/pg&port=5433", "database demo on this machine"),
        (f"host=/run/postgresql dbname=plan password={SECRET}", "database plan on this machine"),
    ],
)
def test_the_dashboard_names_the_database_without_its_password(url: str, shown: str) -> None:
    from board.store.postgres.connect import describe

    assert describe(url) == shown
