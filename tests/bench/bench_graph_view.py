"""The graph view's first layout of a big board (plain script, not collected by pytest).
Prints figures; asserts nothing.

    PYTHONPATH=. python tests/bench/bench_graph_view.py [--tasks 10000] [--runs 3]

Opens the dashboard headless on ``tests/bench/big_board.py``'s board, presses ``g`` and
measures, each run in a fresh app, the layout made on the UI thread (as before: the whole
layout inside the key press) against the layout made in a worker (now):

- layout on the UI thread: the time spent in the view's own layout work on the UI thread
  (``GraphView.relayout`` and ``GraphView._install``, with the layout itself when inline);
- longest stall: the longest the UI thread went without answering, from the key press until
  the graph is on screen (the longest gap between ticks of a 10 ms timer). It includes
  Textual's own work to switch the view (styles, the footer), slowed while a worker computes
  (the two threads share the interpreter);
- shown: from the key press until the laid-out graph is on screen.

The search's order cache is cleared before each run, so every run is a first layout.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from board.ui import graph_layout  # noqa: E402
from board.ui.app import BoardApp  # noqa: E402
from board.ui.widgets import graph_view  # noqa: E402
from tests.bench.big_board import build_big_board  # noqa: E402

FIXED = {"watch": False, "live_clock": False}


RELAYOUT, INSTALL = graph_view.GraphView.relayout, graph_view.GraphView._install


async def first_layout(workspace: Path, *, in_worker: bool) -> tuple[float, float, float]:
    """(UI-thread layout work, longest UI stall, time until shown) for one press of ``g``, in seconds."""
    graph_view.INLINE_LAYOUT_LIMIT = 100 if in_worker else 10**9
    graph_layout._ORDER_CACHE.clear()
    spent: list[float] = []
    # _install runs inside relayout when inline: time the outermost call only.
    depth = [0]

    def outer(method):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            depth[0] += 1
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    spent.append(time.perf_counter() - started)
        return wrapper

    graph_view.GraphView.relayout = outer(RELAYOUT)  # type: ignore[method-assign]
    graph_view.GraphView._install = outer(INSTALL)  # type: ignore[method-assign]
    app = BoardApp(workspace, **FIXED)  # type: ignore[arg-type]
    async with app.run_test(size=(160, 45)) as pilot:
        while not app.loaded:
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        ticks: list[float] = []
        timer = app.set_interval(0.01, lambda: ticks.append(time.perf_counter()))
        await pilot.pause(0.1)
        pressed = time.perf_counter()
        await pilot.press("g")
        view = app.graph_view
        while view.laying_out or not view.graph_layout.columns:
            await pilot.pause(0.01)
        shown = time.perf_counter() - pressed
        await pilot.pause(0.05)
        timer.stop()
        during = [pressed, *(t for t in ticks if t >= pressed)]
        stall = max((b - a for a, b in zip(during, during[1:])), default=0.0)
        return sum(spent), stall, shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        workspace = build_big_board(Path(folder) / "big", args.tasks)
        results: dict[bool, list[tuple[float, float, float]]] = {False: [], True: []}
        for _run in range(args.runs):
            for in_worker in (False, True):  # alternating, so both see the same machine
                results[in_worker].append(asyncio.run(first_layout(workspace, in_worker=in_worker)))
    print(f"first layout of the graph view, {args.tasks:,} tasks, {args.runs} runs each (min–max)")
    names = ("layout on the UI thread", "longest stall", "shown after")
    for in_worker, name in ((False, "on the UI thread (before)"), (True, "in a worker (now)")):
        figures = "   ".join(
            f"{label} {min(r[i] for r in results[in_worker]):.3f}–{max(r[i] for r in results[in_worker]):.3f} s" for i, label in enumerate(names)
        )
        print(f"  {name:26} {figures}")
    for index, label in enumerate(names):
        before = statistics.median(r[index] for r in results[False])
        after = statistics.median(r[index] for r in results[True])
        print(f"  {label}, worker / UI thread: {after / before:.3f}× (medians {after:.3f} s / {before:.3f} s)")


if __name__ == "__main__":
    main()
