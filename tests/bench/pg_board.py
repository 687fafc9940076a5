"""A large synthetic board in a throwaway PostgreSQL database, for the benchmarks: the same
layered DAG as ``big_board``, written as files and brought in by ``board import``'s own code.

(Copying the rows in one by one, as this once did, fired the claim columns' triggers for every
row: each walked the remaining paths upstream, and 100,000 tasks took more than ten minutes.
The import fills those columns once, for the whole board.)"""

from __future__ import annotations

import tempfile
from pathlib import Path

from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate
from board.store.postgres.transfer import import_board
from tests.bench.big_board import build_big_board


def fill_database(url: str, count: int, *, seed: int = 7, keep_files: Path | None = None) -> None:
    """Migrate the database at ``url`` and import a ``count``-task board into it; with
    ``keep_files``, the same board stays there as files, to compare the two stores."""
    with connect(url, autocommit=True) as conn:
        migrate(conn)
    if keep_files is not None:
        import_board(url, build_big_board(keep_files, count, seed=seed))
    else:
        with tempfile.TemporaryDirectory() as scratch:
            import_board(url, build_big_board(Path(scratch) / "board", count, seed=seed))
    with connect(url, autocommit=True) as conn:
        conn.execute("analyze")
