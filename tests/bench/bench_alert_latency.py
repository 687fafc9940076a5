"""How long a new condition takes to reach ``alerts.json`` with a ticking process refreshing alerts.

A separate process plays the coordinator's alert step: ``refresh_alerts`` once per
``coordinator.tick_seconds`` (default settings: 1 s). This process then creates conditions
(a broken task file, two agents touching one file, a file reserved by another agent) and
polls ``read_alerts`` as the dashboard would, timing each until its alert is there.
The dashboard adds only its own file-watch latency on top. Run:

    PYTHONPATH=. python tests/bench/bench_alert_latency.py [--rounds 10] [--files 10000]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from board.alerts import read_alerts
from board.reservations import reserve
from board.store import Store
from board.store.side import AlertBoard

TICKER = """
import sys, time
from board.alerts import refresh_alerts
from board.config import load_settings
from board.store import Store
store = Store.open(sys.argv[1])
settings = load_settings(store.local_dir)
while True:
    started = time.monotonic()
    store.sync()
    refresh_alerts(store, now=store.clock(), settings=settings)
    time.sleep(max(0.0, settings.coordinator.tick_seconds - (time.monotonic() - started)))
"""


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=600)


def make_workspace(root: Path, files: int) -> Path:
    work = root / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    git(work, "config", "user.name", "bench")
    git(work, "config", "user.email", "bench@example.invalid")
    for index in range(files):
        directory = work / "src" / f"pkg{index // 100:03d}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"mod{index:05d}.py").write_text(f"value = {index}\n")
    (work / ".gitignore").write_text(".tasks/\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "files")
    Store.open(work, create=True)
    return work


def wait_for(board: AlertBoard, key_prefix: str, timeout: float = 10.0) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if any(a.key.startswith(key_prefix) for a in read_alerts(board)):
            return time.perf_counter() - started
        time.sleep(0.005)
    raise SystemExit(f"{key_prefix} did not appear within {timeout} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--files", type=int, default=10000, help="tracked files in the workspace's repository")
    args = parser.parse_args()
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    samples: dict[str, list[float]] = {"file.invalid": [], "conflict.files": [], "conflict.reservation": []}
    with tempfile.TemporaryDirectory() as temp:
        os.environ["HOME"] = temp
        work = make_workspace(Path(temp), args.files)
        state = work / ".tasks"
        alert_board = Store.open(work, whole=False).alert_board
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        ticker = subprocess.Popen([sys.executable, "-c", TICKER, str(work)], env=env)
        try:
            store = Store.open(work)
            for round_ in range(args.rounds):
                time.sleep(random.uniform(0, 1.0))  # land anywhere in the tick
                broken = state / f"task_broken{round_}.json"
                broken.write_text("{not json")
                samples["file.invalid"].append(wait_for(alert_board, f"file.invalid:.tasks/{broken.name}"))
                broken.unlink()

                time.sleep(random.uniform(0, 1.0))
                path = f"src/pkg000/mod{round_:05d}.py"
                first = store.create(f"a{round_}", files=[path])
                second = store.create(f"b{round_}")
                first_token = store.claim_task(first.id, f"alice{round_}").lease.token
                second_token = store.claim_task(second.id, f"bob{round_}").lease.token
                reserve(store, first.id, [path])
                store.record_toolcall(second.id, "Edit", files=[path], agent=f"bob{round_}")
                samples["conflict.files"].append(wait_for(alert_board, f"conflict.files:{first.id},{second.id}"))
                samples["conflict.reservation"].append(wait_for(alert_board, f"conflict.reservation:{path}:bob{round_}"))
                store.set_status(first.id, "completed", token=first_token)
                store.set_status(second.id, "completed", token=second_token)
        finally:
            ticker.terminate()
            ticker.wait(timeout=10)
    print(f"repository of {args.files} files, tick 1 s (default), {args.rounds} rounds; seconds from the change to alerts.json:")
    for kind, values in samples.items():
        values.sort()
        p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
        print(f"  {kind:<22} median {statistics.median(values):.3f}  p95 {p95:.3f}  max {values[-1]:.3f}")


if __name__ == "__main__":
    main()
