"""How long a new alert condition takes to show in the dashboard, with the real coordinator running.

The coordinator runs as its own process (``python -m board coordinator -w DIR``, default
settings: tick 1 s, woken early by file changes); the dashboard runs headless in this process
(``BoardApp.run_test()``, default settings: file watcher on). Each round creates a condition on
disk, times it until the dashboard has the alert on screen (applied to the panel, header and
cards), then ends the condition and waits for the alert to clear:

- ``file.invalid``: a task file that does not parse;
- ``conflict.files``: two tasks of different owners, both in progress, declaring the same file.

Run (target: p95 <= 2 s with default settings):

    PYTHONPATH=. python tests/bench/bench_alerts_to_screen.py [--rounds 10] [--no-coordinator]

``--no-coordinator`` measures the dashboard's own evaluation instead (no git, no coordinator).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from board.store import Store
from board.ui.app import BoardApp

REPO = Path(__file__).resolve().parents[2]


async def until(pilot: Pilot, condition: Callable[[], bool], what: str, timeout: float = 15.0) -> float:
    """Seconds until ``condition`` holds, checked between the app's message handling."""
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > timeout:
            raise SystemExit(f"{what}: not on screen after {timeout:.0f} s")
        await pilot.pause(0.002)
    return time.perf_counter() - started


def shown(app: BoardApp, key: str) -> bool:
    return any(alert.key == key for alert in app.alerts) and any(row.key == key or key in {a.key for a in getattr(row, "alerts", ())} for row in app.alerts_panel.rows)


async def measure(workspace: Path, rounds: int, with_coordinator: bool) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"file.invalid": [], "conflict.files": []}
    store = Store.open(workspace, actor="bench")
    app = BoardApp(workspace)
    async with app.run_test(size=(150, 42)) as pilot:
        await until(pilot, lambda: app.loaded and not app._alerts_pending, "first load")
        if with_coordinator:
            await until(pilot, lambda: app.alerts_from_coordinator, "the coordinator's alerts.json")
        for round_ in range(rounds):
            await asyncio.sleep(random.uniform(0.2, 1.2))  # land anywhere in the coordinator's tick
            broken = workspace / ".tasks" / f"task_broken{round_}.json"
            key = f"file.invalid:.tasks/{broken.name}"
            started = time.perf_counter()
            broken.write_text("{not json")
            await until(pilot, lambda: shown(app, key), key)
            samples["file.invalid"].append(time.perf_counter() - started)
            broken.unlink()
            await until(pilot, lambda: not shown(app, key), f"{key} cleared")

            await asyncio.sleep(random.uniform(0.2, 1.2))
            path = f"src/module_{round_}.py"
            first = store.create(f"first {round_}", files=[path])
            second = store.create(f"second {round_}", files=[path])
            store.start(first.id, f"alice{round_}")
            started = time.perf_counter()
            store.start(second.id, f"bob{round_}")  # the moment the condition holds
            key = f"conflict.files:{first.id},{second.id}"
            await until(pilot, lambda: shown(app, key), key)
            samples["conflict.files"].append(time.perf_counter() - started)
            store.set_status(first.id, "completed")
            store.set_status(second.id, "completed")
            await until(pilot, lambda: not shown(app, key), f"{key} cleared")
            if with_coordinator and not app.alerts_from_coordinator:
                raise SystemExit("the dashboard stopped reading the coordinator's alerts.json")
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--no-coordinator", action="store_true", help="measure the dashboard's own evaluation")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        os.environ["XDG_CONFIG_HOME"] = str(Path(temp) / "config")  # keep the user's theme choice out of it
        workspace = Path(temp) / "work"
        Store.open(workspace, create=True)
        coordinator = None
        if not args.no_coordinator:
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            coordinator = subprocess.Popen([sys.executable, "-m", "board", "coordinator", "-w", str(workspace)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            samples = asyncio.run(measure(workspace, args.rounds, not args.no_coordinator))
        finally:
            if coordinator is not None:
                coordinator.terminate()
                coordinator.wait(timeout=10)
    source = "dashboard's own evaluation, no coordinator" if args.no_coordinator else "coordinator process, default settings (tick 1 s)"
    print(f"{source}; {args.rounds} rounds; seconds from the change on disk to the alert in the dashboard:")
    for kind, values in samples.items():
        values.sort()
        p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
        print(f"  {kind:<16} median {statistics.median(values):.3f}  p95 {p95:.3f}  max {values[-1]:.3f}")


if __name__ == "__main__":
    main()
