"""A board in PostgreSQL when the server goes away: one clear line, nothing half written, and
back by itself once the server is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from board.store import Store
from board.store.postgres.connect import DatabaseUnavailable, connect
from board.store.postgres.migrations import migrate
from tests.conftest import REPO
from tests.pg_cluster import PgCluster


@pytest.fixture
def board_db(pg_cluster: PgCluster, pg_url: str, tmp_path: Path) -> str:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    return pg_url


def board(workspace: Path, url: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "BOARD_DB": url}
    return subprocess.run([sys.executable, "-m", "board", "-w", str(workspace), *argv], capture_output=True, text=True, env=env, timeout=120)


def test_a_store_reconnects_by_itself_after_the_server_restarts(board_db: str, pg_cluster: PgCluster, tmp_path: Path) -> None:
    store = Store.open(tmp_path, db=board_db)
    store.create("before the restart")
    pg_cluster.restart()
    # The write in hand when the connection turned out broken is refused whole, in one line...
    with pytest.raises(DatabaseUnavailable, match="lost the connection to the board's database .*nothing was written"):
        store.create("during the restart")
    # ...and the next one goes through on a new connection; the refused one left nothing.
    store.create("after the restart")
    reader = Store.open(tmp_path, db=board_db)
    assert [t.subject for t in reader.tasks.values()] == ["before the restart", "after the restart"]
    assert [r["op"] for r in reader.history()] == ["create", "create"]
    store.close()
    reader.close()


def test_a_command_against_a_stopped_server_is_one_line_and_exit_2(board_db: str, pg_cluster: PgCluster, tmp_path: Path) -> None:
    assert board(tmp_path, board_db, "task", "create", "one").returncode == 0
    pg_cluster.stop()
    try:
        done = board(tmp_path, board_db, "task", "list")
        assert done.returncode == 2
        assert len(done.stderr.strip().splitlines()) == 1 and "cannot connect to PostgreSQL" in done.stderr
        assert "Traceback" not in done.stderr
    finally:
        pg_cluster.start()
    listed = board(tmp_path, board_db, "task", "list")
    assert listed.returncode == 0 and "one" in listed.stdout
