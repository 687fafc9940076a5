"""What a database board keeps on each machine: ``active.json``, which ``board hook`` reads
without a database connection, follows the writes made here and is rebuilt from the board."""

from __future__ import annotations

from pathlib import Path

import pytest

from board.active_work import read_active
from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate


def test_active_work_follows_writes_here_and_is_rebuilt_from_the_database(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "here"))  # each machine's own state directory
    here = Store.open(tmp_path / "here", db=pg_url)
    here.create("schema", files=["db/schema.sql"])
    here.create("docs")
    task = here.claim("ann", lease_seconds=60)
    assert task is not None and read_active(here.state_dir) == {"1": {"owner": "ann", "files": ["db/schema.sql"]}}
    # Another machine (another workspace folder, the same database) starts a task.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "there"))
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


def test_a_database_board_used_from_a_bare_folder_keeps_this_machines_files_in_the_state_directory(pg_url: str, tmp_path: Path) -> None:
    """``board --db URL init`` makes no ``.tasks/`` where it runs: a database board's files of
    this machine (active work, logs, call logs) go in one folder per database under
    ``$XDG_STATE_HOME``, never in whatever folder a command runs in."""
    import os
    import subprocess
    import sys

    from board.claude.hooks.where import find_board
    from tests.conftest import REPO

    state = tmp_path / "state"
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_STATE_HOME": str(state)}
    env.pop("BOARD_DB", None)

    def board(*args: str, cwd: Path = project) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "board", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)

    for args in (["--db", pg_url, "init"], ["--db", pg_url, "task", "create", "schema"], ["--db", pg_url, "claim", "--agent", "ann"]):
        done = board(*args)
        assert done.returncode == 0, (args, done.stderr)
    assert not (project / ".tasks").exists()
    kept = list((state / "board").iterdir())
    assert len(kept) == 1 and read_active(kept[0]) == {"1": {"owner": "ann", "files": []}}

    elsewhere = board("task", "list", cwd=project / "sub")
    assert elsewhere.returncode != 0 and "no board" in elsewhere.stderr, elsewhere

    hooked = find_board({"cwd": str(project)}, {"BOARD_DB": pg_url, "XDG_STATE_HOME": str(state)})
    assert hooked is not None and hooked.database and hooked.state_dir == kept[0]
