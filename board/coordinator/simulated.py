"""The simulated worker of ``board demo`` and ``board run --simulate``: tool calls with seeded
random durations and progress, occasional failures, and no command run."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from board.coordinator.workers import Worker
from board.model import Task


@dataclass(frozen=True)
class Simulation:
    """How a simulated worker behaves; every draw comes from ``seed`` and the task id."""

    seed: int = 0
    #: Chance that a task fails at the end.
    fail_rate: float = 0.05
    #: Chance that one tool call fails.
    toolcall_fail_rate: float = 0.1
    #: Seconds per task when the task has no ``metadata.estimate``.
    min_seconds: float = 1.0
    max_seconds: float = 4.0
    #: Seconds of wall time per second of ``metadata.estimate`` (benchmarks compress time).
    time_scale: float = 1.0
    min_steps: int = 2
    max_steps: int = 5


TOOLS = ("read", "grep", "edit", "test", "bash", "write")


class SimulatedWorker(Worker):
    """Fake work: tool calls with seeded random durations and progress, occasional failures.

    The outcome of an attempt depends only on the seed, the task id and the task's version when
    claimed, never on which worker runs it, so runs are repeatable (and ``--fail-rate 0`` runs
    complete), while a retried task, claimed at a later version, gets a fresh draw.
    """

    kind = "simulated"

    def __init__(self, workspace: Path | str, name: str, simulation: Simulation = Simulation(), **kwargs: Any) -> None:
        super().__init__(workspace, name, **kwargs)
        self.simulation = simulation

    def plan(self, task: Task) -> tuple[list[float], list[tuple[str, bool]], bool]:
        """Step durations, tool calls (name, ok) and whether the task fails, for one task."""
        sim = self.simulation
        rng = random.Random(f"{sim.seed}:{task.id}:{task.version}")
        estimate = task.metadata.get("estimate")
        if isinstance(estimate, (int, float)) and not isinstance(estimate, bool) and estimate >= 0:
            total = float(estimate) * sim.time_scale
        else:
            total = rng.uniform(sim.min_seconds, sim.max_seconds)
        steps = rng.randint(sim.min_steps, max(sim.min_steps, sim.max_steps))
        weights = [rng.uniform(0.5, 1.5) for _ in range(steps)]
        durations = [total * w / sum(weights) for w in weights] if steps else []
        calls = [(rng.choice(TOOLS), rng.random() >= sim.toolcall_fail_rate) for _ in range(steps)]
        fails = rng.random() < sim.fail_rate
        return durations, calls, fails

    def perform(self, task: Task, token: int) -> tuple[bool, str | None] | None:
        durations, calls, fails = self.plan(task)
        if not durations:
            return (not fails, "simulated failure" if fails else None)
        for step, (seconds, (tool, ok)) in enumerate(zip(durations, calls, strict=True), start=1):
            if not self._wait_working(task.id, token, seconds):
                return None
            files = task.files[: 1 + step % max(1, len(task.files))] if task.files else []
            progress = min(99, round(100 * step / len(durations)))
            self.reachable(lambda: self.store.record_toolcall(task.id, tool, ok=ok, ms=int(seconds * 1000), files=files, agent=self.name, token=token, progress=progress))
        if fails:
            return False, f"simulated failure: {calls[-1][0]} step did not pass"
        return True, None

    def _wait_working(self, task_id: str, token: int, seconds: float) -> bool:
        """Sleep through one step while keeping the lease; False when asked to stop."""
        deadline = time.monotonic() + seconds
        while True:
            if self.stopping:
                return False
            self.beat((task_id, token))
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            time.sleep(min(left, 0.05))
