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


def test_reading_the_whole_board_again_keeps_the_tasks_that_did_not_change(board_db: str, tmp_path: Path) -> None:
    import board.store.postgres.store as postgres_store

    reader = Store.open(tmp_path, db=board_db)
    writer = Store.open(tmp_path, db=board_db)
    try:
        for n in range(7):
            writer.create(f"task {n + 1}")
        reader.sync()
        held = dict(reader.graph.tasks)
        # Missed while the connection was down: a change, a new task, a deletion, a row made
        # unreadable by hand; read back over pages smaller than the board.
        writer.update("2", progress=40)
        writer.create("task 8", blocked_by=["3"])
        writer.delete("5")
        with connect(board_db, autocommit=True) as conn:
            conn.execute("update board.tasks set doc = jsonb_set(doc, '{progress}', '\"lots\"') where id = '6'")
        postgres_store.RELOAD_PAGE, page = 3, postgres_store.RELOAD_PAGE
        try:
            changes = reader.reload()
        finally:
            postgres_store.RELOAD_PAGE = page
        assert changes.changed == {"2", "3", "8"} and changes.removed == {"5", "6"} and len(changes.invalid) == 1
        assert reader.graph.tasks["2"].progress == 40 and not reader.graph.is_ready("8")
        assert all(reader.graph.tasks[i] is held[i] for i in ("1", "4", "7"))  # 3 now lists 8 in blocks
        assert list(reader.invalid) == [str(reader.layout.task_path("6"))]
        assert reader.reload() == postgres_store.ChangeSet(invalid=changes.invalid)  # nothing more to read
    finally:
        reader.close()
        writer.close()
