"""Start-up benchmark: what the commands a hook or script calls often cost, whole process.

Run: python tests/bench/bench_startup.py [--quick] [--dir DIR] [--runs N]
Prints the median wall time of each command beside the interpreter's own start-up, measured in
the same run (``python -c pass`` and ``python -c 'import json'``, the floor any Python command
stands on, and the import of pydantic's core, which checks and writes every task document,
and, for comparison, of pydantic's models (the task documents are not: see board/document.py));
fails on nothing.
Small-board commands run on a board of six tasks; the commands about one task (a tool call,
a heartbeat, a claim refused, a progress update, ``task show``) and ``task list --ready`` also on
generated boards of 100, 1,000 and 10,000 tasks (``--sizes``), each beside its figure on the
100-task board: a command about one task should cost the same on a board of any size, and
(``--history``) on one whose history log is long.
Boards are made under --dir (default: the current directory), as real boards live there.
With --postgres, the ready list also on the same boards kept in PostgreSQL.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from big_board import build_big_board  # noqa: E402

PYTHON = sys.executable
#: The installed entry point, as a hook runs it; ``python -m board`` when there is none.
BOARD = [str(Path(PYTHON).with_name("board"))] if Path(PYTHON).with_name("board").exists() else [PYTHON, "-m", "board"]


def median_ms(argv: list[str], runs: int, cwd: Path, ok: tuple[int, ...] = (0,), env: dict[str, str] | None = None) -> float:
    """Median wall time of ``runs`` runs of ``argv`` (after one warm-up run), in milliseconds."""
    env = {**os.environ, "BOARD_AGENT": "bench", **(env or {})}
    times = []
    for attempt in range(runs + 1):
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = (time.perf_counter() - started) * 1000
        if done.returncode not in ok:
            raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode(errors='replace').strip()}")
        if attempt:
            times.append(elapsed)
    return statistics.median(times)


def board(*args: str) -> list[str]:
    return [*BOARD, *args]


def small_board(root: Path) -> Path:
    """Six tasks, one of them claimed by ``a1`` (the one tool calls are recorded on)."""
    root.mkdir()
    for argv in (board("init"), *(board("task", "create", f"task {n}") for n in range(1, 6)), board("task", "create", "dep", "--blocked-by", "1"), board("claim", "--agent", "a1", "--lease", "3600")):
        subprocess.run(argv, cwd=root, check=True, stdout=subprocess.DEVNULL)
    return root


#: A week of ten agents heartbeating twice a minute, as history lines about other tasks.
HISTORY_LINES = 200_000


def lengthen_history(workspace: Path, lines: int) -> None:
    """Put ``lines`` lines written by other agents about other tasks before the board's own
    history: a command about one task must not read them. The tasks they name are done and
    archived (ids the board no longer has), so that each line stays one version above the
    last of its task, as a store writes it."""
    history = workspace / ".tasks" / "history.jsonl"
    line = ('{"ts":"2026-11-20T09:00:00.000000Z","task":"done-%d","version":%d,"file":"0badc0de","actor":"agent-%d","op":"heartbeat",'
            '"changes":{"lease":[{"owner":"agent-%d","token":1,"expiresAt":"2026-11-20T09:10:00.000000Z","seconds":600.0},'
            '{"owner":"agent-%d","token":1,"expiresAt":"2026-11-20T09:10:30.000000Z","seconds":600.0}]}}\n')
    old = history.read_bytes() if history.exists() else b""
    history.write_bytes("".join(line % (n % 10, n // 10 + 2, n % 10, n % 10, n % 10) for n in range(lines)).encode() + old)


def sized_rows(root: Path, count: int, runs: int, *, history_lines: int = 0) -> dict[str, float]:
    """The commands about one task, and the ready list, on a generated board of ``count``
    tasks, where agent ``w`` claimed one task through board (as a worker would); with
    ``history_lines`` lines of other agents' history before the board's own."""
    big = build_big_board(root / f"board{count}-{history_lines}", count)
    if history_lines:
        lengthen_history(big, history_lines)
    claimed = subprocess.run(board("claim", "--agent", "w", "--lease", "3600"), cwd=big, check=True, capture_output=True, text=True)
    task_id, token = claimed.stdout.split()[:2]
    return {
        "toolcall": median_ms(board("toolcall", task_id, "Edit", "--agent", "w"), runs, big),
        "heartbeat": median_ms(board("heartbeat", "--agent", "w"), runs, big),
        "claim, refused: holds one": median_ms(board("claim", "--agent", "w"), runs, big, ok=(2,)),
        # Each run takes the next best ready task (the generated boards have hundreds).
        "claim, takes one": median_ms(board("claim", "--agent", "c", "--max", "1000000"), runs, big),
        "task update --progress": median_ms(board("task", "update", task_id, "--progress", "5", "--token", token), runs, big),
        "task show": median_ms(board("task", "show", task_id), runs, big),
        "task list --ready": median_ms(board("task", "list", "--ready"), runs, big),
    }


def database_rows(root: Path, sizes: list[int], runs: int) -> dict[int, dict[str, float]]:
    """``task list --ready`` on the same generated boards kept in PostgreSQL (a throwaway
    server of its own, as the tests start), brought in by ``board import``'s code."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.bench.pg_board import fill_database
    from tests.pg_cluster import PgCluster

    rows = {}
    with PgCluster.running() as cluster:
        for count in sizes:
            url = cluster.create_database(f"bench_{count}")
            fill_database(url, count)
            workspace = root / f"database{count}"
            (workspace / ".tasks").mkdir(parents=True)
            rows[count] = {"task list --ready (PostgreSQL)": median_ms(board("task", "list", "--ready"), runs, workspace, env={"BOARD_DB": url})}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, no 10,000-task board")
    parser.add_argument("--dir", default=".", help="where to make the boards (default: current directory)")
    parser.add_argument("--runs", type=int, help="runs per command (default 15, 7 with --quick)")
    parser.add_argument("--sizes", type=int, nargs="+", help="generated boards' sizes (default 100 1000 10000; 100 1000 with --quick)")
    parser.add_argument("--postgres", action="store_true", help="also the ready list of the same boards kept in PostgreSQL")
    parser.add_argument("--history", action="store_true", help=f"also the smallest board with {HISTORY_LINES:,} lines of history before its own")
    args = parser.parse_args()
    runs = args.runs or (7 if args.quick else 15)
    root = Path(tempfile.mkdtemp(dir=args.dir, prefix="bench-startup-"))
    try:
        small = small_board(root / "small")
        rows: list[tuple[str, float]] = [
            ("python -c pass", median_ms([PYTHON, "-c", "pass"], runs, small)),
            ("python -c 'import json'", median_ms([PYTHON, "-c", "import json"], runs, small)),
            # What any command that reads a task file stands on: the core that checks it.
            ("python -c 'import pydantic_core'", median_ms([PYTHON, "-c", "import pydantic_core"], runs, small)),
            # What it would stand on were the task documents pydantic models (board/document.py).
            ("python -c 'from pydantic import BaseModel'", median_ms([PYTHON, "-c", "from pydantic import BaseModel"], runs, small)),
            ("board --version", median_ms(board("--version"), runs, small)),
            ("board --help", median_ms(board("--help"), runs, small)),
            ("toolcall (6 tasks)", median_ms(board("toolcall", "1", "Edit", "--agent", "a1"), runs, small)),
            # The same every run: a1 holds its one task, so the claim reads the board and refuses (exit 2).
            ("claim, refused: holds one (6 tasks)", median_ms(board("claim", "--agent", "a1"), runs, small, ok=(2,))),
            ("heartbeat (6 tasks)", median_ms(board("heartbeat", "--agent", "a1"), runs, small)),
            ("task update --progress (6 tasks)", median_ms(board("task", "update", "2", "--progress", "5"), runs, small)),
            ("task show (6 tasks)", median_ms(board("task", "show", "2"), runs, small)),
            ("task list (6 tasks)", median_ms(board("task", "list"), runs, small)),
        ]
        floor = rows[1][1]
        print(f"median wall time of {runs} runs each ({PYTHON}, {sys.version.split()[0]})")
        for name, ms in rows:
            print(f"  {name:<42} {ms:8.1f} ms  {ms / floor:5.1f}x import json")
        sizes = args.sizes or ([100, 1_000] if args.quick else [100, 1_000, 10_000])
        by_size = {count: sized_rows(root, count, runs) for count in sizes}
        if args.history:
            # On a board of the smallest size, whose history is long: the same commands.
            long = sized_rows(root, min(sizes), runs, history_lines=HISTORY_LINES)
        if args.postgres:
            for count, figures in database_rows(root, sizes, runs).items():
                by_size[count].update(figures)
        smallest = by_size[min(sizes)]
        print(f"generated boards (x: against {min(sizes):,} tasks, same command; load average {os.getloadavg()[0]:.1f})")
        for count, figures in by_size.items():
            for name, ms in figures.items():
                print(f"  {name + f' ({count:,} tasks)':<42} {ms:8.1f} ms  {ms / floor:5.1f}x import json  {ms / smallest[name]:5.2f}x")
        if args.history:
            print(f"the {min(sizes):,}-task board with {HISTORY_LINES:,} lines of other agents' history (x: against its short history)")
            for name, ms in long.items():
                print(f"  {name:<42} {ms:8.1f} ms  {ms / floor:5.1f}x import json  {ms / smallest[name]:5.2f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
