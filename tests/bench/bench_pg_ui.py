"""The dashboard on a board in PostgreSQL (plain script, not collected by pytest): prints
figures, asserts nothing. Starts its own throwaway server (``tests/pg_cluster.py``).

    PYTHONPATH=. python tests/bench/bench_pg_ui.py [latency|open|memory|all] [--tasks N ...] [--rounds N]

- latency: a task written by another connection (another machine, as far as the server knows)
  -> the frame showing it (p50/p95/max), headless; the file store's figure for the same board
  size is printed beside it, from the same run.
- open: the board in a fresh process: first frame, first cards, fully read, peak RSS.
- memory: the board in a fresh process that follows it: resident memory once read, once its
  alerts are evaluated, and after the server restarts under it (read again once it is back).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from board.store.postgres.store import PostgresStore  # noqa: E402
from tests.bench.bench_ui import OPEN_SCRIPT, TimedApp, latency as file_latency, next_frame_after, summary, wait_until  # noqa: E402
from tests.bench.pg_board import fill_database  # noqa: E402
from tests.pg_cluster import PgCluster  # noqa: E402


async def database_latency(workspace: Path, url: str, rounds: int) -> None:
    app = TimedApp(workspace, watch=True, live_clock=False)
    writer = PostgresStore.open(workspace, url=url)
    ids = [t.id for t in writer.tasks.values() if t.status == "pending"][:40]
    samples: list[float] = []
    async with app.run_test(size=(140, 40)):
        await wait_until(lambda: app.loaded, timeout=120)
        await asyncio.sleep(0.5)
        for _ in range(rounds):
            task_id = random.choice(ids)
            progress = (app.graph.tasks[task_id].progress + 7) % 100
            written: list[float] = []
            done: list[int] = []
            # Written from another thread on its own connection, as another process would.
            thread = threading.Thread(target=lambda: (written.append(time.perf_counter()), done.append(writer.update(task_id, progress=progress).version)))
            thread.start()
            thread.join()
            version = done[0]
            await wait_until(lambda: (task_id, version) in app.applied, timeout=10)
            frame = await next_frame_after(app, app.applied[(task_id, version)])
            samples.append(frame - written[0])
            await asyncio.sleep(random.uniform(0.02, 0.08))
    writer.close()
    print(summary(f"database write -> frame ({len(app.graph):,} tasks)", samples))


def open_database_board(workspace: Path, url: str, files: Path) -> None:
    """The database board opened in a fresh process, alternating with the same tasks as files."""
    with_database = {**os.environ, "BOARD_DB": url}
    with_files = {key: value for key, value in os.environ.items() if key != "BOARD_DB"}
    runs: dict[str, list[dict]] = {"database": [], "files": []}
    for _ in range(3):
        for name, where, env in (("database", workspace, with_database), ("files", files, with_files)):
            done = subprocess.run([sys.executable, "-c", OPEN_SCRIPT, str(where), str(ROOT)], capture_output=True, text=True, env=env, timeout=600)
            if done.returncode != 0:
                raise SystemExit(done.stderr)
            runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    for name in ("database", "files"):
        best = min(runs[name], key=lambda r: r["first_frame"])
        print(
            f"open a {best['tasks']:,}-task {name} board (best of 3): first frame {best['first_frame']:.2f} s, "
            f"first cards {best['first_cards']:.2f} s, fully read {min(r['loaded'] for r in runs[name]):.2f} s, "
            f"peak RSS {min(r['rss_mb'] for r in runs[name]):.0f} MB (of the 3: {max(r['rss_mb'] for r in runs[name]):.0f} MB at most)"
        )
    ratio = min(r["loaded"] for r in runs["database"]) / min(r["loaded"] for r in runs["files"])
    print(f"fully read: database / files {ratio:.2f}x")


MEMORY_SCRIPT = r"""
import asyncio, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from tests.bench.bench_ui import TimedApp, wait_until

def rss():
    lines = Path("/proc/self/status").read_text().splitlines()
    return {key: int(line.split()[1]) // 1024 for line in lines for key in ("VmRSS:", "VmHWM:") if line.startswith(key)}

async def main():
    app = TimedApp(Path(sys.argv[1]), watch=True, live_clock=False)
    async with app.run_test(size=(140, 40)):
        await wait_until(lambda: app.loaded, timeout=600)
        read = rss()
        await wait_until(lambda: not app._alerts_pending, timeout=600)
        alerts = rss()
        print("restart", flush=True)
        await wait_until(lambda: app._connection_problem is not None, timeout=120)
        await wait_until(lambda: app._connection_problem is None, timeout=600)
        await asyncio.sleep(5)  # the board read again, and its alerts
        back = rss()
        print(f"{len(app.graph):,} tasks: read {read['VmRSS:']} MB, alerts evaluated {alerts['VmRSS:']} MB, "
              f"after a server restart {back['VmRSS:']} MB (peak {back['VmHWM:']} MB)", flush=True)

asyncio.run(main())
"""


def database_memory(workspace: Path, url: str, cluster: PgCluster) -> None:
    env = {**os.environ, "BOARD_DB": url}
    child = subprocess.Popen([sys.executable, "-c", MEMORY_SCRIPT, str(workspace), str(ROOT)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout is not None
        if child.stdout.readline().strip() != "restart":
            raise SystemExit("the dashboard did not read the board")
        cluster.restart()
        print(child.stdout.readline().strip())
        child.wait(timeout=600)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", nargs="?", default="all", choices=["latency", "open", "memory", "all"])
    parser.add_argument("--tasks", type=int, nargs="+", default=[1_000, 10_000, 100_000], help="board sizes (default 1,000 10,000 100,000)")
    parser.add_argument("--rounds", type=int, default=60, help="writes timed per board (default 60)")
    args = parser.parse_args()
    random.seed(1)
    with PgCluster.running() as cluster, tempfile.TemporaryDirectory() as scratch:
        for count in args.tasks:
            url = cluster.create_database(f"bench_{count}")
            started = time.perf_counter()
            files = Path(scratch) / f"files{count}"
            fill_database(url, count, keep_files=files)
            print(f"{count:,} tasks copied into the database in {time.perf_counter() - started:.1f} s")
            workspace = Path(scratch) / f"ws{count}"
            workspace.mkdir()
            os.environ["BOARD_DB"] = url
            try:
                if args.which in ("latency", "all") and count <= 10_000:
                    asyncio.run(database_latency(workspace, url, args.rounds))
                if args.which in ("open", "all"):
                    open_database_board(workspace, url, files)
                if args.which in ("memory", "all"):
                    database_memory(workspace, url, cluster)
            finally:
                del os.environ["BOARD_DB"]
            if args.which in ("latency", "all") and count <= 10_000:
                asyncio.run(file_latency(files, args.rounds))


if __name__ == "__main__":
    main()
