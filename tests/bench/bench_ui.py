"""Dashboard benchmarks (plain script, not collected by pytest). Prints figures; asserts nothing.

    PYTHONPATH=. python tests/bench/bench_ui.py [latency|open|update|scroll|all]

- latency: a task file rewritten on disk -> the frame showing it written out (p50/p95/max).
- open: a 10,000-task board in a fresh process: first frame, first cards, fully read, peak RSS.
- update: one task update on the 10,000-task board: time in ``apply_tasks`` plus the next frame.
- scroll: scroll a column of ~2,000 cards card by card; time per frame.
- claude [N ...]: the same generated board as board's own files and as a Claude Code task
  list, each opened in a fresh process, alternating: fully read and peak RSS, and their ratio
  (default 30,000 and 100,000 tasks).

Headless (``App.run_test``), so "frame" means the compositor rendered the update; a real
terminal adds the time to write the escape codes.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from board.model import dump_task  # noqa: E402
from board.store import Store  # noqa: E402
from board.disk.atomic import write_atomic  # noqa: E402
from board.ui.app import BoardApp  # noqa: E402
from board.ui.card import CARD_HEIGHT  # noqa: E402
from board.ui.lanes import Lane  # noqa: E402
from board.ui.messages import BoardChanged  # noqa: E402
from tests.bench.big_board import build_big_board  # noqa: E402


class TimedApp(BoardApp):
    """The dashboard, noting when each frame is produced and when task versions are applied."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.frames: list[float] = []
        self.applied: dict[tuple[str, int], float] = {}
        self.apply_seconds: list[float] = []
        #: When the lanes first held a card.
        self.first_cards_at: float | None = None

    def _display(self, screen, renderable) -> None:  # type: ignore[override]
        if renderable is not None and not self._batch_count:
            self.frames.append(time.perf_counter())
        super()._display(screen, renderable)

    def apply_tasks(self, tasks, removed=(), *, observed=None):  # type: ignore[override]
        tasks = list(tasks)
        started = time.perf_counter()
        changed = super().apply_tasks(tasks, removed, observed=observed)
        ended = time.perf_counter()
        self.apply_seconds.append(ended - started)
        if self.first_cards_at is None and len(self.lanes):
            self.first_cards_at = ended
        for task in tasks:
            self.applied.setdefault((task.id, task.version), ended)
        return changed


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def summary(label: str, seconds: list[float]) -> str:
    ms = [s * 1000 for s in seconds]
    return (
        f"{label}: n={len(ms)} p50={statistics.median(ms):.1f} ms p95={percentile(ms, 0.95):.1f} ms "
        f"max={max(ms):.1f} ms"
    )


async def next_frame_after(app: TimedApp, moment: float, timeout: float = 5.0) -> float:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        for frame in reversed(app.frames):
            if frame >= moment:
                return frame
        await asyncio.sleep(0.001)
    raise TimeoutError("no frame")


async def wait_until(predicate, timeout: float = 30.0) -> None:
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError
        await asyncio.sleep(0.005)


# -- latency ------------------------------------------------------------------------------------


async def latency(workspace: Path, rounds: int = 60) -> None:
    app = TimedApp(workspace, watch=True, live_clock=False, reconcile_seconds=30)
    store = Store.open(workspace)
    ids = [t.id for t in store.tasks.values() if t.status == "in_progress"][:20] or list(store.tasks)[:20]
    samples: list[float] = []
    async with app.run_test(size=(140, 40)):
        await wait_until(lambda: app.loaded)
        await asyncio.sleep(0.5)
        for round_number in range(rounds):
            task_id = random.choice(ids)
            current = app.graph.tasks[task_id]
            updated = current.model_copy(update={"version": current.version + 1, "progress": (current.progress + 7) % 100})
            path = workspace / ".tasks" / f"task_{task_id}.json"
            data = dump_task(updated)
            written: list[float] = []
            # Write from another thread, as another process would, timing the rename.
            thread = threading.Thread(target=lambda: (written.append(time.perf_counter()), write_atomic(path, data)))
            thread.start()
            await wait_until(lambda: (task_id, updated.version) in app.applied, timeout=10)
            thread.join()
            frame = await next_frame_after(app, app.applied[(task_id, updated.version)])
            samples.append(frame - written[0])
            await asyncio.sleep(random.uniform(0.02, 0.08))
    print(summary(f"file change -> frame ({len(app.graph):,} tasks)", samples))


# -- open ---------------------------------------------------------------------------------------

OPEN_SCRIPT = r"""
import time
STARTED = time.perf_counter()
import asyncio, json, resource, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from tests.bench.bench_ui import TimedApp

async def main():
    app = TimedApp(Path(sys.argv[1]), watch=False, live_clock=False)
    async with app.run_test(size=(140, 40)):
        while not app.frames:
            await asyncio.sleep(0.002)
        first_frame = app.frames[0] - STARTED
        while app.first_cards_at is None or not [f for f in app.frames if f >= app.first_cards_at]:
            await asyncio.sleep(0.002)
        first_cards = [f for f in app.frames if f >= app.first_cards_at][0] - STARTED
        while not app.loaded:
            await asyncio.sleep(0.005)
        loaded = time.perf_counter() - STARTED
        await asyncio.sleep(0.3)
        # Peak RSS of this process image: VmHWM starts afresh at exec, while ru_maxrss keeps the
        # size of the (large) benchmark process this one was forked from.
        status = Path("/proc/self/status")
        hwm = [line for line in status.read_text().splitlines() if line.startswith("VmHWM:")] if status.exists() else []
        rss = int(hwm[0].split()[1]) / 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps({"first_frame": first_frame, "first_cards": first_cards, "loaded": loaded, "rss_mb": rss, "tasks": len(app.graph)}))

asyncio.run(main())
"""


def open_board(workspace: Path) -> None:
    # As from an installed copy: pip compiles the modules at install time, so bytecode is
    # written here even where the environment asks Python not to (PYTHONDONTWRITEBYTECODE),
    # and one untimed run makes sure it exists.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    results = []
    for run in range(4):
        out = subprocess.run([sys.executable, "-c", OPEN_SCRIPT, str(workspace), str(ROOT)], capture_output=True, text=True, check=True, env=env)
        if run:
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    best = min(results, key=lambda r: r["loaded"])
    print(
        f"open {best['tasks']:,} tasks (best of 3, from process start, imports included): "
        f"first frame {best['first_frame']:.2f} s, first cards {best['first_cards']:.2f} s, "
        f"fully read {best['loaded']:.2f} s, peak RSS {max(r['rss_mb'] for r in results):.0f} MB"
    )


def as_claude_list(workspace: Path, list_dir: Path) -> Path:
    """The tasks of ``workspace``'s board written out as a Claude Code task list, as Claude Code
    and board together leave one (board's fields under ``metadata.board``)."""
    from board.store.file_format import to_claude

    list_dir.mkdir(parents=True)
    for path in (workspace / ".tasks").glob("task_*.json"):
        doc = json.loads(path.read_bytes())
        (list_dir / f"{doc['id']}.json").write_text(json.dumps(to_claude(doc), ensure_ascii=False, indent=2) + "\n")
    (list_dir / ".highwatermark").write_text(str(len(list(list_dir.glob("*.json")))))
    return list_dir


def claude_list_memory(scratch: Path, sizes: list[int]) -> None:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    for count in sizes:
        own = build_big_board(scratch / f"own{count}", count)
        listed = as_claude_list(own, scratch / f"claude{count}")
        runs: dict[str, list[dict]] = {"board's own files": [], "a Claude Code list": []}
        for run in range(4):
            for name, where in zip(runs, (own, listed)):
                out = subprocess.run([sys.executable, "-c", OPEN_SCRIPT, str(where), str(ROOT)], capture_output=True, text=True, check=True, env=env)
                if run:  # the first round writes the bytecode
                    runs[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
        for name, results in runs.items():
            print(
                f"{count:,} tasks as {name} (best of 3): fully read {min(r['loaded'] for r in results):.2f} s, "
                f"peak RSS {min(r['rss_mb'] for r in results):.0f} MB ({results[0]['tasks']:,} tasks shown)"
            )
        own_runs, list_runs = runs.values()
        print(
            f"{count:,} tasks, Claude Code list / own files: peak RSS {min(r['rss_mb'] for r in list_runs) / min(r['rss_mb'] for r in own_runs):.2f}x, "
            f"fully read {min(r['loaded'] for r in list_runs) / min(r['loaded'] for r in own_runs):.2f}x"
        )


# -- update -------------------------------------------------------------------------------------


async def update(workspace: Path, rounds: int = 60) -> None:
    app = TimedApp(workspace, watch=False, live_clock=False)
    apply_times: list[float] = []
    frame_times: list[float] = []
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(lambda: app.loaded)
        await pilot.pause(0.5)
        candidates = [t.id for t in app.graph if t.status in ("in_progress", "pending")]
        for _ in range(rounds):
            task_id = random.choice(candidates)
            current = app.graph.tasks[task_id]
            if current.status == "in_progress" and random.random() < 0.5:
                changes = {"status": "completed", "progress": 100}
            else:
                changes = {"progress": (current.progress + 9) % 100}
            updated = current.model_copy(update={"version": current.version + 1, **changes})
            app.apply_seconds.clear()
            before = time.perf_counter()
            app.post_message(BoardChanged(tasks=[updated]))
            await wait_until(lambda: (task_id, updated.version) in app.applied)
            apply_times.append(app.apply_seconds[-1])
            # The frame's own cost: the compositor work between applying and the frame.
            frame = await next_frame_after(app, app.applied[(task_id, updated.version)])
            frame_times.append(frame - before)
            await pilot.pause(0.02)
    print(summary("one update on 10,000 tasks: apply_tasks", apply_times))
    print(summary("one update on 10,000 tasks: message posted -> frame", frame_times))


# -- scroll -------------------------------------------------------------------------------------


async def scroll(workspace: Path) -> None:
    app = TimedApp(workspace, watch=False, live_clock=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(lambda: app.loaded)
        lane = max(Lane, key=lambda lane: len(app.lanes.ids[lane]))
        column = app.kanban.columns[lane]
        count = len(app.lanes.ids[lane])
        await pilot.pause(0.3)
        samples = []
        for index in range(1, min(count, 2000)):
            before = time.perf_counter()
            column.scroll_to(y=index * CARD_HEIGHT, animate=False, immediate=True)
            frame = await next_frame_after(app, before)
            samples.append(frame - before)
    print(summary(f"scroll a column of {count:,} cards, card by card (scroll -> frame)", samples))


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    random.seed(1)
    with tempfile.TemporaryDirectory() as tmp:
        if which == "claude":
            claude_list_memory(Path(tmp), [int(n) for n in sys.argv[2:]] or [30_000, 100_000])
            return
        sample = Path(tmp) / "sample"
        shutil.copytree(ROOT / "sample_workspace", sample)
        big = build_big_board(Path(tmp) / "big", 10_000)
        if which in ("latency", "all"):
            asyncio.run(latency(sample))
            asyncio.run(latency(big))
        if which in ("open", "all"):
            open_board(big)
        if which in ("update", "all"):
            asyncio.run(update(big))
        if which in ("scroll", "all"):
            asyncio.run(scroll(big))


if __name__ == "__main__":
    main()
