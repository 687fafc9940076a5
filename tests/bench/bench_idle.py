"""What an idle dashboard costs: CPU of ``board ui`` in a real terminal (tmux) while nothing changes.

    PYTHONPATH=. python tests/bench/bench_idle.py [--sizes 1000 10000 30000] [--seconds 20] [--dir DIR]

For each board size: the dashboard is opened in a detached tmux session, left to load and
settle, then its process's CPU time (user + system, from /proc) is read over ``--seconds``.
Printed as a share of one core, beside the time until the whole board was read and on
screen (the header's "loading" gone) and the peak RSS. Nothing is asserted: this prints figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.big_board import build_big_board  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def dashboard_pid(session: str) -> int:
    """The python process the tmux pane runs (the pane's shell execs it)."""
    pane = subprocess.run(["tmux", "display-message", "-p", "-t", session, "#{pane_pid}"], capture_output=True, text=True, check=True)
    return int(pane.stdout.strip())


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def idle_share(workspace: Path, seconds: float, settle: float) -> tuple[float, float, float]:
    """(seconds until the board is fully read and on screen, share of a core used while idle,
    peak RSS in MB)."""
    session = f"board-idle-{os.getpid()}"
    env = f"PYTHONPATH={ROOT}"
    command = f"exec env {env} {sys.executable} -m board ui {workspace}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "45", command], check=True)
    try:
        pid = dashboard_pid(session)
        started = time.monotonic()
        deadline = started + 120
        while time.monotonic() < deadline:
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout
            if "done" in screen and "loading" not in screen:
                break
            time.sleep(0.05)
        shown = time.monotonic() - started
        time.sleep(settle)  # first alerts, the first reconcile, garbage collection
        before, clock = cpu_seconds(pid), time.monotonic()
        time.sleep(seconds)
        used = cpu_seconds(pid) - before
        return shown, used / (time.monotonic() - clock), peak_rss_mb(pid)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 30_000])
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to measure each board idle")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds to wait after the board is on screen")
    parser.add_argument("--dir", type=Path, help="where to build the boards (default: a temp dir)")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tmux is needed: the dashboard is measured in a real terminal")
    base = Path(tempfile.mkdtemp(prefix="board-idle-", dir=args.dir))
    try:
        print(f"{'tasks':>7}  {'on screen':>9}  {'idle CPU':>8}  {'peak RSS':>8}")
        for size in args.sizes:
            workspace = base / f"board-{size}"
            workspace.mkdir()
            build_big_board(workspace, size)
            shown, share, rss = idle_share(workspace, args.seconds, args.settle)
            print(f"{size:>7,}  {shown:>8.2f}s  {share * 100:>7.2f}%  {rss:>6.0f} MB", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
