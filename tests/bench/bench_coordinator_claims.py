"""End-to-end claims per second through ``board run``: coordinator + worker processes, real files.

    PYTHONPATH=. python tests/bench/bench_coordinator_claims.py [--tasks 400] [--workers 1 2 4]

Tasks have no dependencies and no work (simulated, zero tool calls), so the figure is the cost of
the machinery: claim (or assignment by the coordinator), agent record, completion, checkpoint,
each write fsynced under the board lock. Two modes per worker count:

- ``self-claim``: workers claim for themselves, the coordinator also assigns to idle ones (default);
- ``assigned``: workers only run what the coordinator assigns (``--no-self-claim``).

Throughput is counted from the first claim to the last completion in the history log, so
process start-up is left out. Duplicates and losses are checked, not assumed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from board.coordinator.run import Supervisor  # noqa: E402
from board.store import Store  # noqa: E402


def measure(tasks: int, workers: int, self_claim: bool, directory: Path) -> tuple[float, int, int]:
    store = Store.open(directory, create=True)
    for i in range(tasks):
        store.create(f"task {i}")
    (directory / ".tasks" / "board.toml").write_text("[coordinator]\ntick_seconds = 0.2\n")
    worker_args = ["--simulate", "--fail-rate", "0", "--steps", "0", "0", *([] if self_claim else ["--no-self-claim"])]
    supervisor = Supervisor(directory, workers=workers, worker_args=worker_args, child_output=subprocess.DEVNULL, log=open("/dev/null", "w"))
    try:
        supervisor.start()
        supervisor.wait_until_settled(poll_seconds=0.1, quiet=True)
    finally:
        supervisor.stop()
    history = store.history()
    claims = [r for r in history if r["op"] == "claim"]
    completions = Counter(r["task"] for r in history if r["op"] == "status:completed")
    first = _parse(claims[0]["ts"])
    last = max(_parse(r["ts"]) for r in history if r["op"] == "status:completed")
    duplicates = sum(n - 1 for n in completions.values() if n > 1)
    lost = tasks - len(completions)
    return len(claims) / (last - first).total_seconds(), duplicates, lost


def _parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=400)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    print(f"{args.tasks} tasks, no work per task; claims/s from first claim to last completion")
    print(f"{'mode':<11}{'workers':>8}{'claims/s':>10}{'dupes':>7}{'lost':>6}{'wall s':>8}")
    with tempfile.TemporaryDirectory() as scratch:
        for self_claim in (True, False):
            for workers in args.workers:
                started = time.monotonic()
                rate, duplicates, lost = measure(args.tasks, workers, self_claim, Path(scratch, f"{self_claim}-{workers}"))
                mode = "self-claim" if self_claim else "assigned"
                print(f"{mode:<11}{workers:>8}{rate:>10.1f}{duplicates:>7}{lost:>6}{time.monotonic() - started:>8.1f}")


if __name__ == "__main__":
    main()
