"""Edit -> screen in a real terminal: a task's progress rewritten on disk, timed until tmux shows it.

    PYTHONPATH=. python tests/bench/bench_terminal.py [--tasks 10000] [--rounds 60] [--dir DIR]

``board ui`` runs in a detached tmux session; this process rewrites the progress of the first
card in progress (as an agent would, through the store) and polls ``tmux capture-pane`` until
the new percentage is on the screen. The figure includes tmux's own redraw and one capture
(a few milliseconds); the headless figure is ``bench_ui.py latency``. Prints p50/p95/max.
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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from board.status import Status  # noqa: E402
from board.store import Store  # noqa: E402
from tests.bench.big_board import build_big_board  # noqa: E402


def screen(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def measure(workspace: Path, rounds: int) -> list[float]:
    store = Store.open(workspace, actor="bench")
    # The in-progress card the kanban shows first: the lane is sorted by wave, then priority.
    watched = min((t for t in store.tasks.values() if t.status == Status.IN_PROGRESS), key=lambda t: int(t.id))
    session = f"board-terminal-{os.getpid()}"
    command = f"exec env PYTHONPATH={ROOT} {sys.executable} -m board ui {workspace}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "200", "-y", "60", command], check=True)
    try:
        deadline = time.monotonic() + 120
        while "done" not in screen(session) or "loading" in screen(session):
            if time.monotonic() > deadline:
                raise SystemExit("the dashboard did not load")
            time.sleep(0.1)
        subprocess.run(["tmux", "send-keys", "-t", session, "/"], check=True)  # show only that card
        time.sleep(1)
        subprocess.run(["tmux", "send-keys", "-t", session, "-l", f"#{watched.id}"], check=True)
        subprocess.run(["tmux", "send-keys", "-t", session, "Enter"], check=True)
        time.sleep(3)
        seconds = []
        for n in range(rounds):
            value = 11 + (n % 80)
            if value == watched.progress:
                value += 1
            token = watched.lease.token if watched.lease else None
            started = time.perf_counter()
            watched = store.update(watched.id, progress=value, token=token, force=token is None, actor="bench")
            wanted = f"{value}%"
            while wanted not in screen(session):
                if time.perf_counter() - started > 10:
                    raise SystemExit(f"round {n}: {wanted} never showed")
            seconds.append(time.perf_counter() - started)
            time.sleep(0.25)  # let the board go idle again, as between an agent's reports
        return seconds
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--dir", type=Path, help="where to build the board (default: a temp dir)")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tmux is needed: the dashboard is measured in a real terminal")
    base = Path(tempfile.mkdtemp(prefix="board-terminal-", dir=args.dir))
    try:
        workspace = base / "board"
        workspace.mkdir()
        build_big_board(workspace, args.tasks)
        empty = time.perf_counter()
        screen("no-such-session")
        capture = time.perf_counter() - empty
        seconds = measure(workspace, args.rounds)
        ms = [s * 1000 for s in seconds]
        print(f"edit -> terminal ({args.tasks:,} tasks): n={len(ms)} p50={statistics.median(ms):.1f} ms "
              f"p95={percentile(ms, 0.95):.1f} ms max={max(ms):.1f} ms (one tmux capture costs {capture * 1000:.1f} ms)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
