"""A heartbeat the database refuses half-way renews nothing and says so: it never reports a
lease renewed that the database did not keep."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from board.errors import BoardUnavailable
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate
from board.store.postgres.store import PostgresStore
from tests.pg_cluster import find_bindir

pytestmark = pytest.mark.skipif(find_bindir() is None, reason="PostgreSQL's programs are not installed")


def leases(url: str) -> dict[str, str]:
    with psycopg.connect(url) as conn:
        return dict(conn.execute("select id, doc->'lease'->>'expiresAt' from board.tasks order by id").fetchall())


def test_a_heartbeat_whose_second_task_the_database_refuses_renews_neither_and_fails(pg_url: str, tmp_path: Path) -> None:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    store = PostgresStore.open(tmp_path, url=pg_url)
    store.create("first")
    store.create("second")
    held = [store.claim("a1", max_held=None), store.claim("a1", max_held=None)]
    assert all(task is not None for task in held)
    before = leases(pg_url)
    # Another session holds the second task's row; the heartbeat's session gives up waiting
    # for it after a moment, as a server under a statement timeout does.
    other = psycopg.connect(pg_url)
    try:
        other.execute("select doc from board.tasks where id = %s for update", (held[1].id,))  # type: ignore[union-attr]
        separator = "&" if "?" in pg_url else "?"
        impatient = PostgresStore.open(tmp_path, url=pg_url + separator + "options=-c%20statement_timeout%3D300", whole=False)
        with pytest.raises(BoardUnavailable):
            impatient.heartbeat("a1")
    finally:
        other.rollback()
        other.close()
    assert leases(pg_url) == before
