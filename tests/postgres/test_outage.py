"""A database server down for a while, not a blink: ``board run``, its coordinator and its workers
wait it out and finish the board, every task exactly once."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate
from tests.conftest import REPO
from tests.pg_cluster import PgCluster

TASKS = 40
TIMEOUT = 240


def test_a_run_waits_out_a_stopped_server_and_finishes_the_board(pg_url: str, pg_cluster: PgCluster, tmp_path: Path) -> None:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    (tmp_path / ".tasks").mkdir()
    (tmp_path / ".tasks" / "board.toml").write_text(f'[store]\nurl = "{pg_url}"\n[coordinator]\ntick_seconds = 0.5\n')
    store = Store.open(tmp_path)
    for n in range(TASKS):
        store.create(f"step {n}", blocked_by=[str(n)] if n % 4 else [])
    env = {k: v for k, v in os.environ.items() if k != "BOARD_DB"} | {"PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "board", "run", "--workers", "2", "--simulate", "--seed", "5", "--fail-rate", "0", "--toolcall-fail-rate", "0", "--task-seconds", "0.1", "0.3", "--steps", "1", "2"]
    said = tmp_path / "run.out"  # what the run itself prints, read while it runs
    run = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=open(said, "w"), stderr=subprocess.STDOUT, text=True)
    log = tmp_path / ".tasks" / "logs" / "run.log"

    def logged(text: str) -> int:
        return log.read_text().count(text) if log.exists() else 0

    def wait_for(condition, what: str) -> None:  # noqa: ANN001
        deadline = time.monotonic() + TIMEOUT
        while not condition():
            assert run.poll() is None, f"the run ended while waiting for {what}: {said.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.1)

    try:
        wait_for(lambda: logged(" completed\n") >= 3, "the first tasks to be done")
        pg_cluster.stop()
        try:
            # Down long enough that both workers and the run itself have met the outage.
            wait_for(lambda: logged("waiting for the board") >= 2, "both workers to meet the outage")
            wait_for(lambda: "board: waiting for the board" in said.read_text(), "the run to meet the outage")
        finally:
            pg_cluster.start()
        run.wait(timeout=TIMEOUT)
        output = said.read_text()
        assert run.returncode == 0, output[-3000:]
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert "waiting for the board" in output and "the board is back" in output
    assert logged("the board is back") >= 2 and "coordinator: the database is back" in log.read_text()
    store = Store.open(tmp_path)
    assert all(t.status == "completed" for t in store.tasks.values())
    completions = Counter(r["task"] for r in store.history() if r["op"].startswith("status:completed"))
    assert set(completions) == set(store.tasks) and max(completions.values()) == 1
    assert store.check() == []
    store.close()
