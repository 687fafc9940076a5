"""The board's schema: created once, by exactly one of several racing processes, refused when newer,
and the notifications live screens listen for."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from board.errors import BoardError
from board.model import PRIORITY_RANK, Lease, Priority, Task, task_to_dict
from board.store.postgres.connect import connect
from board.store.postgres.migrations import LATEST, MIGRATIONS, SIDE_CHANNEL, TASK_CHANNEL, check_schema, migrate, schema_version
from tests.coordinator.helpers import started

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'board[postgres]'")
from psycopg.types.json import Jsonb  # noqa: E402

TABLES = {"migrations", "tasks", "task_edges", "history", "tool_calls", "agents", "reservations", "checkpoints", "alerts", "archive", "meta"}
NOTIFY_TIMEOUT = 30.0


def catalog(conn: psycopg.Connection) -> list[tuple]:
    """Everything a migration could change: the board schema's objects and the migrations record."""
    objects = conn.execute(
        "select c.relname, c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace"
        " where n.nspname = 'board' order by 1"
    ).fetchall()
    functions = conn.execute("select proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'board' order by 1").fetchall()
    triggers = conn.execute("select tgname from pg_trigger where not tgisinternal order by 1").fetchall()
    record = conn.execute("select * from board.migrations order by version").fetchall() if schema_version(conn) is not None else []
    return objects + functions + triggers + record


def insert_task(conn: psycopg.Connection, task: Task) -> None:
    """A task row the way a store writes one: the document and its query columns together."""
    doc = task_to_dict(task)
    lease = task.lease
    conn.execute(
        "insert into board.tasks (id, doc, status, owner, priority, version, lease_owner, lease_token, lease_expires_at, updated_at)"
        " values (%s, %s, %s, %s, %s, %s, %s, %s, %s, now())",
        (task.id, Jsonb(doc), str(task.status), task.owner, PRIORITY_RANK[task.priority], task.version,
         lease.owner if lease else None, lease.token if lease else None, lease.expires_at if lease else None),
    )


def test_init_on_an_empty_database_creates_every_table_and_records_every_version(pg_url: str) -> None:
    with connect(pg_url) as conn:
        assert schema_version(conn) is None
        assert migrate(conn) == [1, 2, 3, 4]
        tables = {name for (name,) in conn.execute("select tablename from pg_tables where schemaname = 'board'")}
        assert tables == TABLES
        indexes = {name for (name,) in conn.execute("select indexname from pg_indexes where schemaname = 'board'")}
        assert {
            "tasks_claimable", "tasks_lease_owner", "tasks_lease_expiry", "tasks_in_progress_owner", "task_edges_blocker", "history_task",
            "tool_calls_task", "tool_calls_agent", "tasks_claim_order", "tasks_parent",
        } <= indexes
        assert conn.execute("select version, description from board.migrations order by version").fetchall() == [
            (1, MIGRATIONS[0].description), (2, MIGRATIONS[1].description), (3, MIGRATIONS[2].description), (4, MIGRATIONS[3].description)
        ]
        assert schema_version(conn) == LATEST == 4
        assert check_schema(conn) == 4


def test_migrating_twice_changes_nothing(pg_url: str) -> None:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
        before = catalog(conn)
        assert migrate(conn) == []
        assert catalog(conn) == before


def test_four_processes_migrating_at_once_apply_the_schema_exactly_once(pg_url: str) -> None:
    migrators = [
        started(subprocess.Popen([sys.executable, "-m", "tests.postgres.migrator", pg_url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for _ in range(4)
    ]
    try:
        for migrator in migrators:
            assert migrator.stdout.readline().strip() == "ready", migrator.stderr.read()
        for migrator in migrators:
            migrator.stdin.write("go\n")
            migrator.stdin.flush()
        results = []
        for migrator in migrators:
            out, err = migrator.communicate(timeout=120)
            assert migrator.returncode == 0, err
            results.append(json.loads(out))
    finally:
        for migrator in migrators:
            if migrator.poll() is None:
                migrator.kill()
                migrator.wait()
    # Each step was applied by exactly one of them (one may apply the first, another the next).
    assert sorted(version for applied in results for version in applied) == [step.version for step in MIGRATIONS]
    with connect(pg_url) as conn:
        assert conn.execute("select version from board.migrations order by version").fetchall() == [(1,), (2,), (3,), (4,)]
        assert check_schema(conn) == 4


def test_a_newer_schema_is_refused_and_left_as_it_is(pg_url: str) -> None:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
        conn.execute("insert into board.migrations (version, description) values (99, 'from the future')")
        before = catalog(conn)
        message = f"the database's board schema is version 99, newer than this board ({LATEST}); upgrade board"
        with pytest.raises(BoardError) as refused:
            migrate(conn)
        assert str(refused.value) == message
        with pytest.raises(BoardError) as refused:
            check_schema(conn)
        assert str(refused.value) == message
        assert catalog(conn) == before


def test_a_newer_record_alone_gets_no_tables_either(pg_url: str) -> None:
    with connect(pg_url, autocommit=True) as conn:
        conn.execute("create schema board")
        conn.execute("create table board.migrations (version int primary key, description text not null, applied_at timestamptz not null default now())")
        conn.execute("insert into board.migrations (version, description) values (99, 'from the future')")
        with pytest.raises(BoardError, match="newer than this board"):
            migrate(conn)
        assert conn.execute("select tablename from pg_tables where schemaname = 'board'").fetchall() == [("migrations",)]


def test_check_schema_on_an_empty_database_says_to_run_init(pg_url: str) -> None:
    with connect(pg_url) as conn:
        with pytest.raises(BoardError) as refused:
            check_schema(conn)
        assert str(refused.value) == "no board in this database: run 'board --db URL init'"
        # Looking changed nothing, and left no transaction open.
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert conn.execute("select count(*) from pg_namespace where nspname = 'board'").fetchone() == (0,)


def test_check_schema_on_an_older_schema_says_to_migrate_and_init_does(pg_url: str) -> None:
    with connect(pg_url, autocommit=True) as conn:
        conn.execute("create schema board")
        conn.execute("create table board.migrations (version int primary key, description text not null, applied_at timestamptz not null default now())")
        conn.execute("insert into board.migrations (version, description) values (0, 'before the first release')")
        with pytest.raises(BoardError) as refused:
            check_schema(conn)
        assert str(refused.value) == f"the database's board schema is version 0, older than this board ({LATEST}): run 'board --db URL init' to migrate"
        assert migrate(conn) == [1, 2, 3, 4]
        assert check_schema(conn) == 4


def test_migrate_refuses_to_run_inside_a_callers_transaction(pg_url: str) -> None:
    with connect(pg_url) as conn:
        conn.execute("select 1")  # opens a transaction (not autocommit)
        with pytest.raises(RuntimeError, match="no transaction open"):
            migrate(conn)
        conn.rollback()
        assert schema_version(conn) is None


def test_a_failed_step_is_one_line_and_leaves_nothing_half_made(pg_url: str) -> None:
    with connect(pg_url, autocommit=True) as conn:
        # Something else already owns a table the first step creates.
        conn.execute("create schema board")
        conn.execute("create table board.history (anything int)")
        with pytest.raises(BoardError) as failed:
            migrate(conn)
        assert str(failed.value) == 'could not migrate the board schema to version 1: relation "history" already exists'
        assert conn.execute("select tablename from pg_tables where schemaname = 'board'").fetchall() == [("history",)]


def test_the_query_columns_must_agree_with_the_document(pg_url: str) -> None:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
        now = datetime.now(UTC)
        for number, priority in enumerate(Priority):
            lease = Lease(owner="ann", token=7, expires_at=now + timedelta(minutes=5))
            insert_task(conn, Task(id=f"p{number}", subject="ranked", priority=priority, status="in_progress", owner="ann", lease=lease, version=3))
        ranks = dict(conn.execute("select doc ->> 'priority', priority from board.tasks").fetchall())
        assert ranks == {str(priority): rank for priority, rank in PRIORITY_RANK.items()}

        doc = task_to_dict(Task(id="x1", subject="drifted", version=2))
        good = {"id": "x1", "doc": Jsonb(doc), "status": "pending", "owner": "", "priority": 2, "version": 2, "lease_owner": None, "lease_token": None}
        wrongs = [("status", "completed"), ("owner", "bob"), ("priority", 0), ("version", 3), ("lease_owner", "bob"), ("lease_token", 1), ("id", "x2")]
        # A document without the field, or with a value no rank is known for, fails too.
        wrongs += [("doc", Jsonb({k: v for k, v in doc.items() if k != "status"})), ("doc", Jsonb(dict(doc, priority="urgent"))), ("doc", Jsonb(dict(doc, id=None)))]
        for column, wrong in wrongs:
            row = dict(good, **{column: wrong})
            with pytest.raises(psycopg.errors.CheckViolation):
                conn.execute(
                    "insert into board.tasks (id, doc, status, owner, priority, version, lease_owner, lease_token)"
                    " values (%(id)s, %(doc)s, %(status)s, %(owner)s, %(priority)s, %(version)s, %(lease_owner)s, %(lease_token)s)",
                    row,
                )
        conn.execute(
            "insert into board.tasks (id, doc, status, owner, priority, version, lease_owner, lease_token)"
            " values (%(id)s, %(doc)s, %(status)s, %(owner)s, %(priority)s, %(version)s, %(lease_owner)s, %(lease_token)s)",
            good,
        )
        # An id written as a JSON integer (seed 001) matches its text key too.
        doc = task_to_dict(Task(id="7", subject="numbered")) | {"id": 7}
        conn.execute("insert into board.tasks (id, doc, status, priority, version) values ('7', %s, 'pending', 2, 0)", (Jsonb(doc),))
        # Edges go with their task.
        conn.execute("insert into board.task_edges values ('x1', '7'), ('x1', 'gone')")
        conn.execute("delete from board.tasks where id = 'x1'")
        assert conn.execute("select count(*) from board.task_edges").fetchone() == (0,)


def received(listener: psycopg.Connection, count: int) -> list[tuple[str, str]]:
    """The next ``count`` notifications, waiting up to NOTIFY_TIMEOUT in all."""
    got = [(n.channel, n.payload) for n in listener.notifies(timeout=NOTIFY_TIMEOUT, stop_after=count)]
    assert len(got) == count, f"only {got} within {NOTIFY_TIMEOUT} s"
    return got


def test_task_changes_notify_their_id(pg_url: str) -> None:
    with connect(pg_url, autocommit=True) as writer, connect(pg_url, autocommit=True) as listener:
        migrate(writer)
        listener.execute(f"listen {TASK_CHANNEL}")
        with writer.transaction():
            insert_task(writer, Task(id="t-42", subject="watched"))
        assert received(listener, 1) == [(TASK_CHANNEL, "t-42")]
        writer.execute("update board.tasks set updated_at = now() where id = 't-42'")
        assert received(listener, 1) == [(TASK_CHANNEL, "t-42")]
        writer.execute("delete from board.tasks")
        assert received(listener, 1) == [(TASK_CHANNEL, "t-42")]
        writer.execute("truncate board.tasks cascade")
        assert received(listener, 1) == [(TASK_CHANNEL, "*")]


def test_an_uncommitted_change_notifies_nobody(pg_url: str) -> None:
    with connect(pg_url, autocommit=True) as writer, connect(pg_url, autocommit=True) as listener:
        migrate(writer)
        listener.execute(f"listen {TASK_CHANNEL}")
        with pytest.raises(ZeroDivisionError), writer.transaction():
            insert_task(writer, Task(id="rolled-back", subject="never there"))
            1 / 0  # noqa: B018
        insert_task(writer, Task(id="kept", subject="there"))
        # Notifications arrive in commit order: the rolled-back one would have come first.
        assert received(listener, 1) == [(TASK_CHANNEL, "kept")]


def test_side_tables_notify_their_name(pg_url: str) -> None:
    with connect(pg_url, autocommit=True) as writer, connect(pg_url, autocommit=True) as listener:
        migrate(writer)
        listener.execute(f"listen {SIDE_CHANNEL}")
        now = datetime.now(UTC)
        writer.execute("insert into board.alerts values ('stale:1', '{}'), ('stale:2', '{}')")
        writer.execute("insert into board.agents values ('ann', '{}', now())")
        writer.execute("insert into board.tool_calls (task_id, agent, at, record) values ('1', 'ann', now(), '{}')")
        writer.execute("insert into board.reservations values ('a.py', '1', 'ann', 'write', %s, %s)", (now + timedelta(minutes=5), now))
        writer.execute("delete from board.alerts")
        assert received(listener, 5) == [(SIDE_CHANNEL, table) for table in ("alerts", "agents", "tool_calls", "reservations", "alerts")]
