"""Tool calls on one busy task: what recording a call costs as the calls its document has not
yet counted pile up (an agent that calls tools all day and reports no progress).

Run: python tests/bench/bench_toolcalls.py [--calls 3000] [--dir DIR]

One process records --calls calls on one task of a file board through ``Store.record_toolcall``
(as ``board mcp`` does) and prints the time per call over each stretch; then ``board toolcall``
as a whole command on that task, beside the same command on a task with no calls, in the same
run. Prints figures; fails on nothing.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from board.store import Store

PYTHON = sys.executable
BOARD = [str(Path(PYTHON).with_name("board"))] if Path(PYTHON).with_name("board").exists() else [PYTHON, "-m", "board"]


def command_ms(workspace: Path, task_id: str, runs: int = 7) -> float:
    times = []
    for _ in range(runs + 1):
        began = time.perf_counter()
        subprocess.run([*BOARD, "toolcall", task_id, "Edit", "--agent", "bench"], cwd=workspace, check=True, stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000, help="calls recorded on the busy task (default 3,000)")
    parser.add_argument("--dir", default=".", help="where to make the board (default: the current directory)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(dir=args.dir, prefix="bench-toolcalls-"))
    try:
        store = Store.open(root, create=True)
        busy, quiet = store.create("busy").id, store.create("quiet").id
        print(f"{args.calls:,} calls recorded one after another on one task, in one process:")
        stretch = max(1, args.calls // 6)
        began = time.perf_counter()
        for n in range(1, args.calls + 1):
            store.record_toolcall(busy, "Edit", ok=bool(n % 7), files=[f"src/{n % 50}.py"], agent="bench")
            if n % stretch == 0:
                now = time.perf_counter()
                print(f"  calls {n - stretch + 1:>6,}-{n:<6,} {(now - began) / stretch * 1000:7.2f} ms a call")
                began = now
        counted = Store.open(root).get(busy).tool_calls.total
        print(f"  a fresh reader counts {counted:,} calls")
        print("board toolcall as a whole command (median of 7):")
        print(f"  on the task with {counted:,} calls not yet in its file  {command_ms(root, busy):7.1f} ms")
        print(f"  on a task with none                         {command_ms(root, quiet):7.1f} ms")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
