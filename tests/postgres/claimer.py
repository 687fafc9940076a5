"""Run by test_claims.py as a process of its own: ``python -m tests.postgres.claimer MODE URL
WORKSPACE AGENT``. It opens the board, prints ``{"backend": PID}`` (its PostgreSQL backend), waits
for ``go`` on stdin, then claims, printing one JSON line per step (flushed, so a test that kills
it knows what it was told):

- ``work``: claim (``max_held=1``) and complete each task, ``{"claimed": ID, "token": T}`` then
  ``{"completed": ID}``, until nothing is ready (``{"done": true}``);
- ``claim``: claim only (``max_held=None``), ``{"claimed": ID, "token": T}``, until nothing is ready;
- ``hang``: start one claim and stop inside its transaction, once the task is picked, locked and
  written and before the commit: ``{"picked": ID}``, then wait on stdin for ever;
- ``churn``: claim (``max_held=None``) under leases of ``CHURN_LEASE_SECONDS`` and never finish,
  so each lease runs out and the task is reclaimed and claimed again, ``{"claimed": ID}``, until
  killed;
- ``reclaim``: take back the tasks whose lease ran out, as the coordinator does, over and over,
  ``{"reclaimed": [ID, ...]}``, until killed.
"""

from __future__ import annotations

import json
import sys
import time

from board.status import Status
from board.store.postgres.store import PostgresStore

#: Short enough that a churning claimer's tasks are reclaimed many times a second.
CHURN_LEASE_SECONDS = 0.05


def say(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def main(mode: str, url: str, workspace: str, agent: str) -> None:
    store = PostgresStore.open(workspace, url=url)
    say(backend=store.conn.info.backend_pid)
    if sys.stdin.readline().strip() != "go":
        return
    if mode == "hang":
        from board.store.postgres.store import _CLAIM_CALL

        # The claim's call inside a transaction that stays open until the process dies: the
        # task is picked, locked and written, not committed.
        raw = store.conn.raw
        raw.execute("begin")
        outcome, doc = raw.execute(_CLAIM_CALL, store._claim_params(agent, 600, None, None, False)).fetchone()[:2]
        say(picked=str(doc["id"]) if doc is not None else None, outcome=outcome)
        sys.stdin.readline()
        raise SystemExit("released")
    if mode == "churn":
        while True:
            task = store.claim(agent, lease_seconds=CHURN_LEASE_SECONDS, max_held=None)
            if task is None:
                time.sleep(0.001)  # every task is held: wait for a lease to run out
            else:
                say(claimed=task.id)
    if mode == "reclaim":
        while True:
            reclaimed = store.reclaim_expired(actor=agent)
            if reclaimed:
                say(reclaimed=[task.id for task in reclaimed])
    while True:
        task = store.claim(agent, max_held=1 if mode == "work" else None)
        if task is None:
            say(done=True)
            return
        assert task.lease is not None
        say(claimed=task.id, token=task.lease.token)
        if mode == "work":
            store.set_status(task.id, Status.COMPLETED, token=task.lease.token, actor=agent)
            say(completed=task.id)


if __name__ == "__main__":
    main(*sys.argv[1:5])
