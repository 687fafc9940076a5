"""Makespan of the coordinator's assignment order on generated DAGs, against the lower bound.

    PYTHONPATH=. python tests/bench/bench_makespan.py [--tasks 120] [--seed 7]

Each run drives the real ``tick()`` on a real board with a fake clock (time fully compressed):
N agents take what the tick assigns, each task finishes ``duration`` seconds of fake time
later, the next tick runs at the next completion. Durations are drawn from a seeded lognormal
distribution and written as ``metadata.estimate`` (what the critical path is measured in).

For 2, 4 and 8 workers and three DAG shapes (wide, deep, random) it prints the makespan of the
coordinator's order (priority -> longest remaining critical path -> id) and of plain FIFO (id
order) in the same run, each divided by the lower bound max(critical path, total work / workers).
Target: coordinator <= 1.05 x bound.

``--real`` also runs each DAG end to end with real processes (``board run --simulate``, time
compressed by ``--scale``), which adds the machinery's own cost (process start-up aside: timed
from the first claim to the last completion).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from board.agent_record import AgentRecord  # noqa: E402
from board.config import BoardSettings  # noqa: E402
from board.coordinator.tick import AssignmentOrder, critical_path_order, tick  # noqa: E402
from board.graph import TaskGraph, id_sort_key  # noqa: E402
from board.status import Status  # noqa: E402
from board.store import Store  # noqa: E402

Dag = list[tuple[float, list[int]]]  # (duration, indexes of blockers)


def fifo_order(graph: TaskGraph, candidates) -> list[str]:
    return sorted(candidates, key=id_sort_key)


def durations(rng: random.Random, count: int) -> list[float]:
    return [round(10 * rng.lognormvariate(0, 0.8), 2) for _ in range(count)]


def wide_dag(rng: random.Random, count: int) -> Dag:
    """Three broad layers: every task of a layer waits on one or two of the layer before."""
    times = durations(rng, count)
    layer = count // 3
    dag: Dag = []
    for i in range(count):
        previous = range(max(0, (i // layer - 1) * layer), (i // layer) * layer)
        blockers = rng.sample(list(previous), k=min(len(previous), rng.choice([1, 2]))) if previous else []
        dag.append((times[i], blockers))
    return dag


def deep_dag(rng: random.Random, count: int) -> Dag:
    """Six long chains of different lengths with a few cross links: the critical path dominates."""
    times = durations(rng, count)
    chain_of = [min(5, int(6 * (rng.random() ** 1.5))) for _ in range(count)]
    last: dict[int, int] = {}
    dag: Dag = []
    for i in range(count):
        blockers = [last[chain_of[i]]] if chain_of[i] in last else []
        if i > 10 and rng.random() < 0.1:
            blockers.append(rng.randrange(0, i - 5))
        last[chain_of[i]] = i
        dag.append((times[i], sorted(set(blockers))))
    return dag


def random_dag(rng: random.Random, count: int) -> Dag:
    """Each task waits on 0-3 of the 25 tasks before it."""
    times = durations(rng, count)
    dag: Dag = []
    for i in range(count):
        window = list(range(max(0, i - 25), i))
        dag.append((times[i], rng.sample(window, k=min(len(window), rng.choice([0, 1, 1, 2, 3])))))
    return dag


def lower_bound(dag: Dag, workers: int) -> tuple[float, float, float]:
    finish: list[float] = []
    for duration, blockers in dag:
        finish.append(duration + max((finish[b] for b in blockers), default=0.0))
    critical = max(finish)
    work = sum(d for d, _ in dag)
    return max(critical, work / workers), critical, work


def simulate(dag: Dag, workers: int, order: AssignmentOrder, directory: Path) -> float:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = {"now": start}
    Store.open(directory, create=True)
    store = Store.open(directory, clock=lambda: clock["now"], actor="bench")
    ids = [store.create(f"task {i}", blocked_by=[str(b + 1) for b in blockers], metadata={"estimate": duration}).id for i, (duration, blockers) in enumerate(dag)]
    duration_of = {task_id: dag[i][0] for i, task_id in enumerate(ids)}
    settings = BoardSettings.model_validate({"lease": {"seconds": 86400}})
    running: dict[str, tuple[int, datetime]] = {}
    while True:
        now = clock["now"]
        agents = [AgentRecord(name=f"w{n}", heartbeat_at=now) for n in range(1, workers + 1)]
        report = tick(store, agents, settings, now, order=order, checkpoints=False)
        for assignment in report.assigned:
            running[assignment.task] = (assignment.token, now + timedelta(seconds=duration_of[assignment.task]))
        if not running:
            break
        clock["now"] = min(finish for _, finish in running.values())
        for task_id, (token, finish) in sorted(running.items()):
            if finish <= clock["now"]:
                store.set_status(task_id, Status.COMPLETED, token=token)
                del running[task_id]
    assert all(t.status == Status.COMPLETED for t in store.tasks.values()), "the simulation left work undone"
    return (clock["now"] - start).total_seconds()


def run_real(dag: Dag, workers: int, scale: float, directory: Path) -> float:
    """Makespan of a real ``board run``: coordinator and worker processes, simulated work
    lasting ``estimate * scale`` wall seconds; from the first claim to the last completion."""
    import subprocess

    from board.coordinator.run import Supervisor

    store = Store.open(directory, create=True)
    for i, (duration, blockers) in enumerate(dag):
        store.create(f"task {i}", blocked_by=[str(b + 1) for b in blockers], metadata={"estimate": duration})
    (directory / ".tasks" / "board.toml").write_text("[lease]\nseconds = 10\n[coordinator]\ntick_seconds = 0.2\n")
    worker_args = ["--simulate", "--fail-rate", "0", "--toolcall-fail-rate", "0", "--time-scale", str(scale), "--steps", "1", "1"]
    supervisor = Supervisor(directory, workers=workers, worker_args=worker_args, child_output=subprocess.DEVNULL, log=open("/dev/null", "w"))
    try:
        supervisor.start()
        progress = supervisor.wait_until_settled(poll_seconds=0.05, quiet=True)
    finally:
        supervisor.stop()
    assert progress.all_done, progress.unfinished
    history = store.history()
    first = min(_when(r["ts"]) for r in history if r["op"] == "claim")
    last = max(_when(r["ts"]) for r in history if r["op"].startswith("status:completed"))
    return (last - first).total_seconds()


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=120)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--real", action="store_true", help="also run each DAG with real processes (board run --simulate), time compressed")
    parser.add_argument("--real-tasks", type=int, default=60)
    parser.add_argument("--scale", type=float, default=0.02, help="wall seconds per estimated second in --real runs (default 0.02)")
    args = parser.parse_args()
    shapes: dict[str, Callable[[random.Random, int], Dag]] = {"wide": wide_dag, "deep": deep_dag, "random": random_dag}
    print(f"{args.tasks} tasks per DAG, seed {args.seed}, lognormal durations (median 10 s); fake clock, real board")
    print(f"{'dag':<7}{'workers':>8}{'bound':>9}{'(cp':>8}{'work/N)':>9}{'coord':>9}{'/bound':>8}{'fifo':>9}{'/bound':>8}")
    worst = 0.0
    with tempfile.TemporaryDirectory() as scratch:
        for shape, make in shapes.items():
            dag = make(random.Random(f"{args.seed}:{shape}"), args.tasks)
            for workers in (2, 4, 8):
                bound, critical, work = lower_bound(dag, workers)
                ours = simulate(dag, workers, critical_path_order, Path(scratch, f"{shape}-{workers}-cp"))
                fifo = simulate(dag, workers, fifo_order, Path(scratch, f"{shape}-{workers}-fifo"))
                worst = max(worst, ours / bound)
                print(f"{shape:<7}{workers:>8}{bound:>9.1f}{critical:>8.1f}{work / workers:>9.1f}{ours:>9.1f}{ours / bound:>8.3f}{fifo:>9.1f}{fifo / bound:>8.3f}")
    print(f"worst coordinator ratio: {worst:.3f} (target <= 1.05)")
    if not args.real:
        return
    print()
    print(f"real processes: {args.real_tasks} tasks per DAG, 1 estimated second = {args.scale} s of wall time")
    print(f"{'dag':<7}{'workers':>8}{'bound s':>9}{'run s':>8}{'/bound':>8}")
    with tempfile.TemporaryDirectory() as scratch:
        for shape, make in shapes.items():
            dag = make(random.Random(f"{args.seed}:{shape}"), args.real_tasks)
            for workers in (2, 4, 8):
                bound = lower_bound(dag, workers)[0] * args.scale
                took = run_real(dag, workers, args.scale, Path(scratch, f"real-{shape}-{workers}"))
                print(f"{shape:<7}{workers:>8}{bound:>9.2f}{took:>8.2f}{took / bound:>8.3f}")


if __name__ == "__main__":
    main()
