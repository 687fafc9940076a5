"""A large synthetic board in a throwaway PostgreSQL database, for the benchmarks: the same
layered DAG as ``big_board`` (written as files, then copied in as the store writes rows)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from board.model import task_to_dict
from board.priority import PRIORITY_RANK
from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate
from tests.bench.big_board import build_big_board


def fill_database(url: str, count: int, *, seed: int = 7) -> None:
    """Migrate the database at ``url`` and copy a ``count``-task board into it."""
    with tempfile.TemporaryDirectory() as scratch:
        files = build_big_board(Path(scratch) / "board", count, seed=seed)
        tasks = list(Store.open(files).tasks.values())
    with connect(url, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction():
            with conn.cursor().copy(
                "copy board.tasks (id, doc, status, owner, priority, version, lease_owner, lease_token, lease_expires_at, updated_at) from stdin"
            ) as copy:
                for task in tasks:
                    lease = task.lease
                    copy.write_row((
                        task.id, json.dumps(task_to_dict(task)), str(task.status), task.owner, PRIORITY_RANK[task.priority], task.version,
                        lease.owner if lease else None, lease.token if lease else None, lease.expires_at if lease else None, task.updated_at,
                    ))
            with conn.cursor().copy("copy board.task_edges (task_id, blocker_id) from stdin") as copy:
                for task in tasks:
                    for blocker in task.blocked_by:
                        copy.write_row((task.id, blocker))
            conn.execute("insert into board.meta (key, value) values ('last_task_id', %s)", (json.dumps(count),))
        conn.execute("analyze")
