"""``board import`` of a generated board into PostgreSQL, beside the least such a copy can be
(plain script, not collected by pytest): prints figures, asserts nothing. Starts its own
throwaway server (``tests/pg_cluster.py``).

    PYTHONPATH=. python tests/bench/bench_pg_import.py [--tasks N ...] [--rounds N]

Each round, alternating on fresh databases:

- ``board import`` run as a user runs it (a fresh process, the whole command), wall time and
  the peak memory of that process;
- the bare copy: a fresh process reads the same task files and ``COPY``s each one's bytes as a
  ``jsonb`` document into a table of (id, document) with its primary key, in one transaction.
  No checking, no dependencies, no history, logs, claim order or indexes of board's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from board.store.postgres.connect import connect  # noqa: E402
from board.store.postgres.migrations import migrate  # noqa: E402
from tests.bench.big_board import build_big_board  # noqa: E402
from tests.pg_cluster import PgCluster  # noqa: E402

BARE_COPY = r"""
import os, sys
import psycopg
folder = os.path.join(sys.argv[1], ".tasks")
with psycopg.connect(sys.argv[2]) as conn:
    conn.execute("create table bare (id text primary key, doc jsonb not null)")
    with conn.cursor() as cursor, cursor.copy("copy bare (id, doc) from stdin") as copy:
        for name in os.listdir(folder):
            if name.startswith("task_") and name.endswith(".json"):
                with open(os.path.join(folder, name), "rb") as handle:
                    copy.write_row((name[5:-5], handle.read().decode()))
"""


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one command run to its end."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, for its usage
        if child.returncode:
            errors.seek(0)
            raise SystemExit(f"{command[:4]} failed: {errors.read().decode(errors='replace')}")
    return seconds, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[100_000], help="board sizes (default 100,000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the two, alternating (default 3)")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("BOARD_DB", None)
    with PgCluster.running() as cluster, tempfile.TemporaryDirectory() as scratch:
        for count in args.tasks:
            files = build_big_board(Path(scratch) / f"board{count}", count)
            figures: dict[str, list[tuple[float, float]]] = {"board import": [], "bare COPY": []}
            for round_ in range(args.rounds):
                for name in figures:
                    url = cluster.create_database(f"import_{count}_{round_}_{name.split()[0]}")
                    if name == "board import":
                        with connect(url, autocommit=True) as conn:
                            migrate(conn)
                        command = [sys.executable, "-m", "board", "import", str(files), "--db", url]
                    else:
                        command = [sys.executable, "-c", BARE_COPY, str(files), url]
                    figures[name].append(timed(command, env))
            for name, runs in figures.items():
                print(f"{count:,} tasks, {name}: median {statistics.median(s for s, _ in runs):.2f} s "
                      f"({', '.join(f'{s:.2f}' for s, _ in runs)}), peak RSS {max(m for _, m in runs):.0f} MB")
            ratio = statistics.median(s for s, _ in figures["board import"]) / statistics.median(s for s, _ in figures["bare COPY"])
            load = os.getloadavg()[0]
            print(f"{count:,} tasks: board import / bare COPY {ratio:.2f}x (target <= 3x), load average {load:.1f}")


if __name__ == "__main__":
    main()
