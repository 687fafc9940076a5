"""Start-up benchmark: what the commands a hook or script calls often cost, whole process.

Run: python tests/bench/bench_startup.py [--quick] [--dir DIR] [--runs N]
Prints the median wall time of each command beside the interpreter's own start-up, measured in
the same rounds (every command on every board once a round, in turn): ``python -c pass`` and
``python -c 'import json'``, the floor any Python command stands on, and the import of
pydantic's core, which checks and writes every task document, and, for comparison, of
pydantic's models (the task documents are not: see board/document.py). Fails on nothing.
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
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from big_board import build_big_board  # noqa: E402

PYTHON = sys.executable
#: The installed entry point, as a hook runs it; ``python -m board`` when there is none.
BOARD = [str(Path(PYTHON).with_name("board"))] if Path(PYTHON).with_name("board").exists() else [PYTHON, "-m", "board"]


class Cell(NamedTuple):
    """One command to time: its argv, where it runs, the exit codes that count as done."""

    argv: list[str]
    cwd: Path
    ok: tuple[int, ...] = (0,)
    env: dict[str, str] | None = None


def time_once(cell: Cell) -> float:
    """Wall time of one run of ``cell``, in milliseconds."""
    env = {**os.environ, "BOARD_AGENT": "bench", **(cell.env or {})}
    started = time.perf_counter()
    done = subprocess.run(cell.argv, cwd=cell.cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode not in cell.ok:
        raise SystemExit(f"{' '.join(cell.argv)} failed ({done.returncode}): {done.stderr.decode(errors='replace').strip()}")
    return elapsed


def medians_interleaved(cells: dict[str, Cell], runs: int) -> dict[str, float]:
    """Median wall time of each cell over ``runs`` rounds, after one warm-up run of each. Each
    round runs every cell once, in an order rotated from round to round: this machine's speed
    swings by a third within minutes, and a command timed in a block of its own runs took a
    slow minute alone, which its ratio to a yardstick timed in another minute then carried."""
    names = list(cells)
    for name in names:
        time_once(cells[name])
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(runs):
        turn = round_ % len(names)
        for name in names[turn:] + names[:turn]:
            times[name].append(time_once(cells[name]))
    return {name: statistics.median(taken) for name, taken in times.items()}


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


def sized_cells(root: Path, count: int, *, history_lines: int = 0) -> dict[str, Cell]:
    """The commands about one task, and the ready list, on a generated board of ``count``
    tasks, where agent ``w`` claimed one task through board (as a worker would); with
    ``history_lines`` lines of other agents' history before the board's own."""
    big = build_big_board(root / f"board{count}-{history_lines}", count)
    if history_lines:
        lengthen_history(big, history_lines)
    claimed = subprocess.run(board("claim", "--agent", "w", "--lease", "3600"), cwd=big, check=True, capture_output=True, text=True)
    task_id, token = claimed.stdout.split()[:2]
    return {
        "toolcall": Cell(board("toolcall", task_id, "Edit", "--agent", "w"), big),
        "heartbeat": Cell(board("heartbeat", "--agent", "w"), big),
        "claim, refused: holds one": Cell(board("claim", "--agent", "w"), big, ok=(2,)),
        # Each run takes the next best ready task (the generated boards have hundreds).
        "claim, takes one": Cell(board("claim", "--agent", "c", "--max", "1000000"), big),
        "task update --progress": Cell(board("task", "update", task_id, "--progress", "5", "--token", token), big),
        "task show": Cell(board("task", "show", task_id), big),
        "task list --ready": Cell(board("task", "list", "--ready"), big),
    }


def database_cells(cluster: Any, root: Path, sizes: list[int]) -> dict[int, dict[str, Cell]]:
    """``task list --ready`` on the same generated boards kept in PostgreSQL (a throwaway
    server of its own, as the tests start), brought in by ``board import``'s code."""
    from tests.bench.pg_board import fill_database

    cells = {}
    for count in sizes:
        url = cluster.create_database(f"bench_{count}")
        fill_database(url, count)
        workspace = root / f"database{count}"
        (workspace / ".tasks").mkdir(parents=True)
        cells[count] = {"task list --ready (PostgreSQL)": Cell(board("task", "list", "--ready"), workspace, env={"BOARD_DB": url})}
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, no 10,000-task board")
    parser.add_argument("--dir", default=".", help="where to make the boards (default: current directory)")
    parser.add_argument("--runs", type=int, help="rounds, each running every command once (default 15, 7 with --quick)")
    parser.add_argument("--sizes", type=int, nargs="+", help="generated boards' sizes (default 100 1000 10000; 100 1000 with --quick)")
    parser.add_argument("--postgres", action="store_true", help="also the ready list of the same boards kept in PostgreSQL")
    parser.add_argument("--history", action="store_true", help=f"also the smallest board with {HISTORY_LINES:,} lines of history before its own")
    args = parser.parse_args()
    runs = args.runs or (7 if args.quick else 15)
    root = Path(tempfile.mkdtemp(dir=args.dir, prefix="bench-startup-"))
    sizes = args.sizes or ([100, 1_000] if args.quick else [100, 1_000, 10_000])
    cluster_held = contextlib.ExitStack()
    try:
        small = small_board(root / "small")
        fixed = {
            "python -c pass": Cell([PYTHON, "-c", "pass"], small),
            "python -c 'import json'": Cell([PYTHON, "-c", "import json"], small),
            # What any command that reads a task file stands on: the core that checks it.
            "python -c 'import pydantic_core'": Cell([PYTHON, "-c", "import pydantic_core"], small),
            # What it would stand on were the task documents pydantic models (board/document.py).
            "python -c 'from pydantic import BaseModel'": Cell([PYTHON, "-c", "from pydantic import BaseModel"], small),
            "board --version": Cell(board("--version"), small),
            "board --help": Cell(board("--help"), small),
            "toolcall (6 tasks)": Cell(board("toolcall", "1", "Edit", "--agent", "a1"), small),
            # The same every run: a1 holds its one task, so the claim reads the board and refuses (exit 2).
            "claim, refused: holds one (6 tasks)": Cell(board("claim", "--agent", "a1"), small, ok=(2,)),
            "heartbeat (6 tasks)": Cell(board("heartbeat", "--agent", "a1"), small),
            "task update --progress (6 tasks)": Cell(board("task", "update", "2", "--progress", "5"), small),
            "task show (6 tasks)": Cell(board("task", "show", "2"), small),
            "task list (6 tasks)": Cell(board("task", "list"), small),
        }
        by_size = {count: sized_cells(root, count) for count in sizes}
        # On a board of the smallest size, whose history is long: the same commands.
        long = sized_cells(root, min(sizes), history_lines=HISTORY_LINES) if args.history else {}
        if args.postgres:
            sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
            from tests.pg_cluster import PgCluster

            cluster = cluster_held.enter_context(PgCluster.running())
            for count, cells in database_cells(cluster, root, sizes).items():
                by_size[count].update(cells)
        # Every command on every board timed in the same rounds, so that each ratio below is of
        # figures taken side by side.
        cells = {**{("", name): cell for name, cell in fixed.items()}, **{(str(count), name): cell for count, named in by_size.items() for name, cell in named.items()}}
        cells.update({("history", name): cell for name, cell in long.items()})
        timed = medians_interleaved({f"{where}|{name}": cell for (where, name), cell in cells.items()}, runs)
        cluster_held.close()
        floor = timed["|python -c 'import json'"]
        print(f"median wall time of {runs} rounds, every command once a round ({PYTHON}, {sys.version.split()[0]})")
        for name in fixed:
            ms = timed[f"|{name}"]
            print(f"  {name:<42} {ms:8.1f} ms  {ms / floor:5.1f}x import json")
        smallest = min(sizes)
        print(f"generated boards (x: against {smallest:,} tasks, same command; load average {os.getloadavg()[0]:.1f})")
        for count, named in by_size.items():
            for name in named:
                ms = timed[f"{count}|{name}"]
                print(f"  {name + f' ({count:,} tasks)':<42} {ms:8.1f} ms  {ms / floor:5.1f}x import json  {ms / timed[f'{smallest}|{name}']:5.2f}x")
        if long:
            print(f"the {smallest:,}-task board with {HISTORY_LINES:,} lines of other agents' history (x: against its short history)")
            for name in long:
                ms = timed[f"history|{name}"]
                print(f"  {name:<42} {ms:8.1f} ms  {ms / floor:5.1f}x import json  {ms / timed[f'{smallest}|{name}']:5.2f}x")
    finally:
        cluster_held.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
