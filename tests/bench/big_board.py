"""Write a large synthetic board for the benchmarks: a layered DAG in every status."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from board.model import Task, dump_task
from board.store import Store

START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
STATUSES = ["completed"] * 5 + ["in_progress"] * 2 + ["pending"] * 6 + ["failed", "blocked", "paused", "waiting", "cancelled"]


def build_big_board(workspace: Path, count: int = 10_000, *, seed: int = 7) -> Path:
    """``count`` tasks in layers of ~50, each blocked by up to three tasks of earlier layers."""
    rng = random.Random(seed)
    Store.open(workspace, create=True)
    tasks_dir = workspace / ".tasks"
    blocked_by: dict[str, list[str]] = {}
    blocks: dict[str, list[str]] = {str(i): [] for i in range(1, count + 1)}
    for number in range(1, count + 1):
        task_id = str(number)
        layer_start = max(1, number - 150)
        choices = [str(n) for n in range(layer_start, number - (number % 50) if number > 50 else 1)]
        picks = rng.sample(choices, k=min(len(choices), rng.randint(0, 3))) if choices else []
        blocked_by[task_id] = picks
        for blocker in picks:
            blocks[blocker].append(task_id)
    for number in range(1, count + 1):
        task_id = str(number)
        status = rng.choice(STATUSES)
        task = Task(
            id=task_id,
            subject=f"Task {task_id}: " + rng.choice(["refactor", "test", "document", "benchmark", "migrate"]) + " " + rng.choice(["the parser", "the store", "auth", "billing", "the API"]),
            status=status,
            blocked_by=blocked_by[task_id],
            blocks=blocks[task_id],
            owner=f"agent-{number % 8}" if status not in ("pending", "cancelled") else "",
            priority=rng.choice(["low", "medium", "high", "critical"]),
            progress=rng.randint(0, 100) if status != "completed" else 100,
            created_at=START,
            updated_at=START + timedelta(minutes=number % 600),
            version=1,
        )
        (tasks_dir / f"task_{task_id}.json").write_bytes(dump_task(task))
    return workspace


if __name__ == "__main__":
    import sys

    build_big_board(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 10_000)
