"""Notes to the index of work in progress: what one costs a claimer, held open and the long way.

Every claim notes its task in ``active.journal`` (``board.active_work``); a process that notes
more than once holds the index's folder, lock and journal open between its notes. This times
notes both ways in the same run, alternating: "held open" as a claimer makes them, and "the long
way" (each note opening the folder, the lock, the journal and the snapshot by name, as every note
did before and as a process's first note still does). One process, then several at once on the
same index, as agents claiming on one machine. The index holds --tasks entries, as a board with
that many tasks in progress. Fails on nothing.

    python tests/bench/bench_notes.py [--tasks 5000] [--notes 20000] [--procs 4] [--rounds 3] [--dir DIR]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from board import active_work  # noqa: E402

WAYS = ("held open", "the long way")


def noter(state: str, name: str, notes: int, way: str, start: object, out: object) -> None:
    """Make ``notes`` notes of tasks of its own; put (wall seconds, CPU seconds) on ``out``."""
    if way == "the long way":
        active_work._append_kept = lambda *args: None  # type: ignore[assignment]
    start.wait()  # type: ignore[attr-defined]
    began, cpu = time.perf_counter(), time.process_time()
    for n in range(notes):
        active_work.note_task(Path(state), f"{name}-{n % 500}", {"owner": name, "files": [f"src/{n % 500}.py"]})
    out.put((time.perf_counter() - began, time.process_time() - cpu))  # type: ignore[attr-defined]


def run(state: Path, processes: int, notes: int, way: str) -> tuple[float, float]:
    """Notes a second by all processes together, and CPU microseconds a note."""
    start, out = multiprocessing.Event(), multiprocessing.Queue()
    workers = [multiprocessing.Process(target=noter, args=(str(state), f"w{n}", notes, way, start, out)) for n in range(processes)]
    for worker in workers:
        worker.start()
    try:
        start.set()
        results = [out.get(timeout=600) for _ in workers]
    finally:
        for worker in workers:
            worker.join(timeout=60)
            if worker.is_alive():
                worker.kill()
                worker.join()
    wall = max(result[0] for result in results)
    cpu = sum(result[1] for result in results)
    return processes * notes / wall, cpu / (processes * notes) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5000, help="entries in the index (default 5,000)")
    parser.add_argument("--notes", type=int, default=20000, help="notes by each process (default 20,000)")
    parser.add_argument("--procs", type=int, default=4, help="processes noting at once in the second part (default 4)")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the two ways (default 3)")
    parser.add_argument("--dir", default=None, help="where to make the index (default: the system's temporary folder)")
    args = parser.parse_args()
    multiprocessing.set_start_method("fork")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; an index of {args.tasks:,} entries; median of {args.rounds} rounds")
    print(f"  {'processes':>9}  {'way':<13}  {'notes/s':>9}  {'CPU us/note':>11}")
    for processes in (1, args.procs):
        figures: dict[str, list[tuple[float, float]]] = {way: [] for way in WAYS}
        with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-notes-") as folder:
            state = Path(folder)
            for _ in range(args.rounds):
                for way in WAYS:
                    active_work.write_active(state, {str(n): {"owner": "bench", "files": []} for n in range(args.tasks)})
                    figures[way].append(run(state, processes, args.notes // processes if processes > 1 else args.notes, way))
        medians = {way: (statistics.median(r for r, _ in runs), statistics.median(c for _, c in runs)) for way, runs in figures.items()}
        for way, (rate, cpu) in medians.items():
            print(f"  {processes:>9}  {way:<13}  {rate:>9,.0f}  {cpu:>11.1f}")
        held, long_way = medians["held open"], medians["the long way"]
        print(f"  {processes:>9}  held open / the long way: {held[0] / long_way[0]:.2f}x the notes a second, {held[1] / long_way[1]:.2f}x the CPU a note")


if __name__ == "__main__":
    main()
