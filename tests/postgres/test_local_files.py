"""What a database board keeps on each machine: ``active.json``, which ``board hook`` reads
without a database connection, follows the writes made here and is rebuilt from the board."""

from __future__ import annotations

from pathlib import Path

from board.active_work import read_active
from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate


def test_active_work_follows_writes_here_and_is_rebuilt_from_the_database(pg_url: str, tmp_path: Path) -> None:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    here = Store.open(tmp_path / "here", db=pg_url)
    here.create("schema", files=["db/schema.sql"])
    here.create("docs")
    task = here.claim("ann", lease_seconds=60)
    assert task is not None and read_active(here.state_dir) == {"1": {"owner": "ann", "files": ["db/schema.sql"]}}
    # Another machine (another workspace folder, the same database) starts a task.
    there = Store.open(tmp_path / "there", db=pg_url)
    there.set_status("2", "in_progress", owner="bob")
    assert "2" not in read_active(here.state_dir)  # not heard of here yet
    here.sync()
    assert here.refresh_active() is True
    assert read_active(here.state_dir) == {"1": {"owner": "ann", "files": ["db/schema.sql"]}, "2": {"owner": "bob", "files": []}}
    assert here.refresh_active() is False  # nothing changed: nothing written
    assert task.lease is not None
    here.set_status("1", "completed", token=task.lease.token)
    assert read_active(here.state_dir) == {"2": {"owner": "bob", "files": []}}
    here.close()
    there.close()
