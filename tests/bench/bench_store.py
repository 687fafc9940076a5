"""Store benchmarks: claims/s under contention, complete-and-unblock vs seed 001, loading 10,000 tasks.

Run: python tests/bench/bench_store.py [--quick] [--dir DIR]
Prints figures; fails on nothing. Every write is durable (fsync of the file and directory).
Boards are made under --dir (default: the current directory), because that is where real boards
live; on some machines creating files under /tmp costs far more than elsewhere on the same disk.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from board.status import Status
from board.store import Store

BENCH_DIR = "."
#: Boards made so far, deleted only once every figure is taken: on ext4 without a journal,
#: making a file steps over every inode freed nearby in the last minute (five while the inode
#: table is not yet written back), so deleting one board's thousands of files would slow the
#: file creation of the next measurement.
_MADE: list[Path] = []


def new_board_dir(prefix: str) -> Path:
    root = Path(tempfile.mkdtemp(dir=BENCH_DIR, prefix=prefix))
    _MADE.append(root)
    return root


def remove_boards() -> None:
    while _MADE:
        shutil.rmtree(_MADE.pop(), ignore_errors=True)


def make_board(root: Path, count: int, *, chain_every: int = 0) -> Store:
    """A board of ``count`` ready tasks written straight to disk (setup, not what is measured)."""
    store = Store.open(root, create=True)
    tasks_dir = store.layout.tasks_dir
    for n in range(1, count + 1):
        blocked_by = [str(n - 1)] if chain_every and n % chain_every != 1 and n > 1 else []
        doc = {"id": str(n), "subject": f"task {n}", "status": "pending", "blockedBy": blocked_by, "blocks": [], "version": 1}
        (tasks_dir / f"task_{n}.json").write_text(json.dumps(doc))
    for n in range(1, count + 1):
        if chain_every and n % chain_every != 0 and n < count:
            path = tasks_dir / f"task_{n}.json"
            doc = json.loads(path.read_text())
            doc["blocks"] = [str(n + 1)]
            path.write_text(json.dumps(doc))
    store.load()
    return store


class ClaimRun(NamedTuple):
    rate: float  # claims per second, all processes together
    duplicates: int
    lost: int
    user_ms: float  # CPU per claim, summed over the claimers
    system_ms: float


def _claimer(root: str, agent: str, start: multiprocessing.synchronize.Event, out: multiprocessing.Queue) -> None:
    store = Store.open(root)
    start.wait()
    before = resource.getrusage(resource.RUSAGE_SELF)
    claimed = []
    while True:
        task = store.claim(agent, max_held=None)
        if task is None:
            break
        claimed.append(task.id)
    after = resource.getrusage(resource.RUSAGE_SELF)
    out.put((claimed, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime))


def bench_claims(processes: int, tasks: int) -> ClaimRun:
    root = new_board_dir("board-bench-")
    make_board(root, tasks)
    start = multiprocessing.Event()
    out: multiprocessing.Queue = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=_claimer, args=(str(root), f"agent{i}", start, out)) for i in range(processes)]
    for w in workers:
        w.start()
    time.sleep(0.3)
    began = time.perf_counter()
    start.set()
    results = [out.get() for _ in workers]
    elapsed = time.perf_counter() - began
    for w in workers:
        w.join()
    claimed = [t for ids, _, _ in results for t in ids]
    per_claim_ms = 1000 / max(len(claimed), 1)
    return ClaimRun(
        rate=len(claimed) / elapsed,
        duplicates=len(claimed) - len(set(claimed)),
        lost=tasks - len(set(claimed)),
        user_ms=sum(user for _, user, _ in results) * per_claim_ms,
        system_ms=sum(system for _, _, system in results) * per_claim_ms,
    )


def _raw_replacer(directory: str, first: int, count: int, start: multiprocessing.synchronize.Event, out: multiprocessing.Queue) -> None:
    """The disk's own floor for one durable write: no lock, no index, no Python model."""
    start.wait()
    payload = b"x" * 600
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    for n in range(first, first + count):
        tmp = os.path.join(directory, f".raw{n}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, payload)
        os.fsync(fd)
        os.close(fd)
        os.replace(tmp, os.path.join(directory, f"task_{n}.json"))
        os.fsync(dir_fd)
    os.close(dir_fd)
    out.put(count)


def bench_raw_replace(processes: int, writes: int) -> float:
    """Durable replaces per second (temp file, fsync, rename, fsync the directory) by
    ``processes`` processes on their own files at once: what this machine allows at best."""
    root = new_board_dir("board-raw-")
    for n in range(writes):
        (root / f"task_{n}.json").write_bytes(b"{}")
    start = multiprocessing.Event()
    out: multiprocessing.Queue = multiprocessing.Queue()
    share = writes // processes
    workers = [multiprocessing.Process(target=_raw_replacer, args=(str(root), i * share, share, start, out)) for i in range(processes)]
    for w in workers:
        w.start()
    time.sleep(0.3)
    began = time.perf_counter()
    start.set()
    done = sum(out.get() for _ in workers)
    elapsed = time.perf_counter() - began
    for w in workers:
        w.join()
    return done / elapsed


def seed001_complete(tasks_dir: Path, task_id: int) -> None:
    """Seed 001's update(status=completed): rescan every file, rewrite each dependent."""
    path = tasks_dir / f"task_{task_id}.json"
    task = json.loads(path.read_text())
    task["status"] = "completed"
    for f in tasks_dir.glob("task_*.json"):
        t = json.loads(f.read_text())
        if task_id in t.get("blockedBy", []):
            t["blockedBy"].remove(task_id)
            f.write_text(json.dumps(t, indent=2))
    path.write_text(json.dumps(task, indent=2))


def bench_complete_and_unblock(count: int, completions: int) -> tuple[float, float]:
    # seed 001: integer ids, blockedBy chains in groups of 10
    root = new_board_dir("board-seed001-")
    tasks_dir = root / ".tasks"
    tasks_dir.mkdir()
    for n in range(1, count + 1):
        blocked_by = [n - 1] if n % 10 != 1 else []
        (tasks_dir / f"task_{n}.json").write_text(json.dumps({"id": n, "subject": f"t{n}", "status": "pending", "blockedBy": blocked_by, "blocks": [], "owner": ""}))
    began = time.perf_counter()
    for n in range(1, completions + 1):
        seed001_complete(tasks_dir, n)
    seed = (time.perf_counter() - began) / completions

    root = new_board_dir("board-unblock-")
    store = make_board(root, count, chain_every=10)
    spent = 0.0
    for n in range(1, completions + 1):
        task = store.claim_task(str(n), "bench")  # seed 001 has no claims: not timed
        assert task.lease is not None
        began = time.perf_counter()
        store.set_status(str(n), Status.COMPLETED, token=task.lease.token)
        spent += time.perf_counter() - began
        if n % 10 and n < count:
            assert store.graph.is_ready(str(n + 1)), "completion did not unblock the dependent"
    ours = spent / completions
    return seed, ours


def bench_load(count: int, runs: int = 5) -> tuple[list[float], float, float]:
    """Opening a board that is not yet in memory (as a new process does), ``runs`` times; and,
    as a baseline in the same run, only reading the bytes of its files."""
    root = new_board_dir("board-load-")
    make_board(root, count, chain_every=10)
    tasks_dir = root / ".tasks"
    began = time.perf_counter()
    for name in os.listdir(tasks_dir):
        with open(os.path.join(tasks_dir, name), "rb") as handle:
            handle.read()
    raw_read = time.perf_counter() - began
    loads = []
    for _ in range(runs):
        began = time.perf_counter()
        store = Store.open(root)
        loads.append(time.perf_counter() - began)
        assert len(store.tasks) == count and not store.invalid
        del store
    store = Store.open(root)
    began = time.perf_counter()
    store.graph.waves()
    store.graph.critical_path()
    store.graph.problems()
    derive = time.perf_counter() - began
    return sorted(loads), derive, raw_read


def _claim_figures(run: ClaimRun) -> str:
    return (
        f"{run.rate:6.0f} claims/s   duplicates {run.duplicates}   lost {run.lost}"
        f"   CPU per claim {run.user_ms + run.system_ms:.2f} ms (user {run.user_ms:.2f}, system {run.system_ms:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller runs")
    parser.add_argument("--dir", default=".", help="where to make the boards (default: current directory)")
    args = parser.parse_args()
    global BENCH_DIR
    BENCH_DIR = args.dir
    try:
        run(args.quick)
    finally:
        remove_boards()


def run(quick: bool) -> None:
    claims = 500 if quick else 2000
    print(f"machine: {os.cpu_count()} cores; boards under {os.path.abspath(BENCH_DIR)}")
    print(f"\nclaims, {claims} ready tasks, every claim fsynced (target >= 1,000/s at 4 processes)")
    # Every claim run first, then the bare floors: replacing files frees inodes, which makes
    # creating files slower for the next minutes (see _MADE).
    # Four processes, the target's case, three times over: both the claims and the floor swing
    # by a third from one run to the next on a shared disk; the medians are compared.
    rounds = 1 if quick else 3
    claim_runs = {processes: [bench_claims(processes, claims) for _ in range(rounds if processes == 4 else 1)] for processes in (1, 4, 16)}
    sustained = 1500 if quick else 6000
    sustained_run = bench_claims(4, sustained)
    for processes, runs in claim_runs.items():
        floors = sorted(bench_raw_replace(processes, claims) for _ in runs)
        run = sorted(runs, key=lambda r: r.rate)[len(runs) // 2]
        floor = floors[len(floors) // 2]
        print(f"  {processes:2d} processes: {_claim_figures(run)}   | bare durable file replaces, no lock: {floor:5.0f}/s = {run.rate / floor:4.0%}")
        if len(runs) > 1:
            print(f"      (medians of {len(runs)} runs: claims/s {', '.join(f'{r.rate:.0f}' for r in runs)}; bare {', '.join(f'{f:.0f}' for f in floors)}; target >= 30 % at 4)")
    print(
        f"  sustained, {sustained:,} claims by 4 processes: {_claim_figures(sustained_run)}"
        "\n  (replaced versions are written over once a second old, so the first second of a run makes new files)"
    )

    count = 2000 if quick else 10_000
    completions = 20 if quick else 50
    seed, ours = bench_complete_and_unblock(count, completions)
    print(f"\ncomplete-and-unblock on {count:,} tasks ({completions} completions; target >= 100x)")
    print(f"  seed 001 rescan-every-file: {seed * 1000:8.2f} ms per completion")
    print(f"  board store (durable, fsynced):   {ours * 1000:8.2f} ms per completion")
    print(f"  speed-up: {seed / ours:.0f}x")

    loads, derive, raw_read = bench_load(10_000)
    print("\nopening a 10,000-task board: read, validate, index (target <= 0.5 s)")
    print(f"  median {loads[len(loads) // 2]:.3f} s   (fastest {loads[0]:.3f}, slowest {loads[-1]:.3f}, {len(loads)} runs)")
    print(f"  baseline, only reading the bytes of the same files: {raw_read:.3f} s")
    print(f"  then waves + critical path + problems: {derive:.3f} s")


if __name__ == "__main__":
    main()
