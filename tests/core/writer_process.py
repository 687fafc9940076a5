"""Worker processes for the concurrency tests: ``python -m tests.core.writer_process MODE WORKSPACE ...``."""

from __future__ import annotations

import json
import sys

from board.store import Store


def increment(workspace: str, agent: str, rounds: int, task_ids: list[str]) -> None:
    """Read-modify-write a per-agent counter on each task, ``rounds`` times."""
    store = Store.open(workspace)
    for n in range(rounds):
        task_id = task_ids[n % len(task_ids)]

        def bump(task, key=agent):
            task.metadata[key] = task.metadata.get(key, 0) + 1

        store.mutate(task_id, bump, op="increment", actor=agent)


def claim_all(workspace: str, agent: str) -> None:
    store = Store.open(workspace)
    sys.stdin.readline()  # wait for the starting gun so all claimers race
    claimed = []
    while (task := store.claim(agent, max_held=None)) is not None:
        claimed.append(task.id)
    print(json.dumps(claimed))


def rewrite_forever(workspace: str) -> None:
    store = Store.open(workspace)
    print("ready", flush=True)
    n = 0
    while True:
        n += 1
        store.update(str(n % 5 + 1), description="x" * (n % 3000), progress=n % 101)


def reserve(workspace: str, task_id: str) -> None:
    """Hold a claim reservation on ``task_id``, as a claimer between preparing and publishing."""
    store = Store.open(workspace)
    assert store._intents.reserve(task_id)
    print("reserved", flush=True)
    sys.stdin.readline()


if __name__ == "__main__":
    mode, workspace, *rest = sys.argv[1:]
    if mode == "increment":
        increment(workspace, rest[0], int(rest[1]), rest[2].split(","))
    elif mode == "claim":
        claim_all(workspace, rest[0])
    elif mode == "rewrite":
        rewrite_forever(workspace)
    elif mode == "reserve":
        reserve(workspace, rest[0])
