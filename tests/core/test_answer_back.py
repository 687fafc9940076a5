"""An answered question goes back to the agent that asked, which goes on with the lease it held:
its token still works. Sent to the queue instead (its agent gone, or asked to), the old token
is refused, as for any task that changed hands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from board import actions
from board.actions import Who
from board.errors import StaleLease
from board.status import Status
from board.store import Store
from tests.conftest import BOTH_BACKENDS, REPO

pytestmark = BOTH_BACKENDS


def asked(store: Store) -> tuple[str, int]:
    """alice claims a task and asks a person about it; returns its id and her token."""
    store.create("pick a database")
    task = actions.claim(store, "alice", lease_seconds=60)
    assert task is not None and task.lease is not None
    token = task.lease.token
    actions.wait(store, task.id, Who("alice", token=token), question="Postgres or SQLite?")
    return task.id, token


def test_the_agent_that_asked_goes_on_with_its_token_once_answered(store: Store) -> None:
    task_id, token = asked(store)
    answered = actions.answer(store, task_id, "Postgres", Who("ann"))
    assert (answered.status, answered.owner, answered.answer) == (Status.IN_PROGRESS, "alice", "Postgres")
    assert answered.lease is not None and answered.lease.token == token and answered.lease.owner == "alice"
    went_on = store.update(task_id, progress=40, token=token, actor="alice")
    assert went_on.progress == 40
    done = actions.complete(store, task_id, Who("alice", token=token))
    assert done.status == Status.COMPLETED


def test_an_answer_sent_to_the_queue_ends_the_old_token(store: Store) -> None:
    task_id, token = asked(store)
    requeued = actions.answer(store, task_id, "Postgres", Who("ann"), requeue=True)
    assert requeued.status == Status.PENDING and requeued.lease is None
    with pytest.raises(StaleLease):
        store.update(task_id, progress=40, token=token, actor="alice")
    bob = actions.claim(store, "bob", lease_seconds=60)
    assert bob is not None and bob.id == task_id and bob.lease is not None and bob.lease.token > token


def test_from_the_command_line_the_asking_agent_goes_on_after_board_answer(workspace: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def board(*args: str, agent: str | None = None) -> subprocess.CompletedProcess[str]:
        environment = {**env, "BOARD_AGENT": agent} if agent else env
        return subprocess.run([sys.executable, "-m", "board", *args], cwd=workspace, env=environment, capture_output=True, text=True, timeout=60)

    Store.open(workspace).create("pick a database")
    claimed = board("claim", "--agent", "alice")
    assert claimed.returncode == 0, claimed.stderr
    task_id, token = claimed.stdout.split()[:2]
    assert board("task", "update", task_id, "--status", "waiting", "--question", "Postgres or SQLite?", "--token", token, agent="alice").returncode == 0
    answer = board("answer", task_id, "Postgres")
    assert answer.returncode == 0 and "back to alice" in answer.stdout, answer.stdout + answer.stderr
    went_on = board("task", "update", task_id, "--progress", "40", "--token", token, agent="alice")
    assert went_on.returncode == 0, went_on.stderr
    assert Store.open(workspace).get(task_id).progress == 40
