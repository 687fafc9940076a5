"""An idle browser session of ``board web`` (plain script, not collected by pytest): the CPU its
dashboard process and the server use while the page is open and nothing happens, beside the
same dashboard in a terminal (tmux) in the same run. Needs Debian's Chromium and chromedriver.

    PYTHONPATH=. python tests/bench/bench_web.py [--tasks N] [--settle S] [--seconds S]
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
from tests.web.test_web import Page, WebServer  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def share(pids: list[int], seconds: float) -> list[float]:
    """Each process's CPU over ``seconds``, in percent of one core."""
    before = [cpu_seconds(pid) for pid in pids]
    time.sleep(seconds)
    return [100 * (cpu_seconds(pid) - start) / seconds for pid, start in zip(pids, before)]


def terminal_dashboard(workspace: Path) -> tuple[str, int]:
    session = f"bench-web-{os.getpid()}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "45", f"{sys.executable} -m board ui {workspace}"], check=True)
    pid = int(subprocess.run(["tmux", "list-panes", "-t", session, "-F", "#{pane_pid}"], capture_output=True, text=True, check=True).stdout.split()[0])
    # The pane's shell may have started the dashboard as its child rather than become it.
    if b"board" not in Path(f"/proc/{pid}/cmdline").read_bytes():
        pid = int(Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0])
    return session, pid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000, help="tasks on the generated board (default 1,000; 0: the sample board)")
    parser.add_argument("--settle", type=float, default=65, help="seconds open before measuring (default 65: ages in seconds stop ticking)")
    parser.add_argument("--seconds", type=float, default=30, help="seconds measured (default 30)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        if args.tasks:
            workspace = build_big_board(Path(scratch) / "board", args.tasks)
        else:
            workspace = Path(scratch) / "sample"
            shutil.copytree(ROOT / "sample_workspace", workspace)
        server = WebServer(workspace)
        page = Page(server.address, 1400, 900)
        session, pane = terminal_dashboard(workspace)
        try:
            (dashboard,) = server.dashboard_pids(1)
            time.sleep(args.settle)
            web_dashboard, web_server, terminal = share([dashboard, server.process.pid, pane], args.seconds)
            load = os.getloadavg()[0]
            print(
                f"{args.tasks or 'sample'} tasks, idle for {args.seconds:.0f} s after {args.settle:.0f} s open: "
                f"served dashboard {web_dashboard:.2f} %, server {web_server:.2f} %, the same dashboard in tmux {terminal:.2f} % "
                f"of one core (load average {load:.1f})"
            )
        finally:
            page.close()
            server.stop()
            subprocess.run(["tmux", "kill-session", "-t", session], check=False)


if __name__ == "__main__":
    main()
