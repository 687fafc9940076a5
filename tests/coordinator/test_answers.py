"""``board run`` and a task that asks a person: the run waits for the answer (saying what it
waits for), the answered task runs again with the answer in hand, and the run then finishes the
board; ``--no-wait`` and ``--answer-timeout`` end it instead, saying what is left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from board.status import Status
from board.store import Store
from tests.conftest import LONG, BOTH_BACKENDS

from .helpers import REPO, wait_for

pytestmark = [LONG, BOTH_BACKENDS]

#: Asks once; once answered, writes the answer where the test can see it and finishes.
AGENT = """#!/bin/sh
answer=$("$PYTHON" -m board task show "$BOARD_TASK_ID" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin).get("answer") or "")')
if [ "$BOARD_TASK_ID" = 1 ] && [ -z "$answer" ]; then
  exec "$PYTHON" -m board task update "$BOARD_TASK_ID" --status waiting --question "Postgres or SQLite?" --token "$BOARD_LEASE_TOKEN"
fi
echo "$answer" > "answer-seen-by-$BOARD_TASK_ID"
"""


def board_with_a_question(workspace: Path) -> Path:
    store = Store.open(workspace)
    store.create("pick a database")
    store.create("write the schema", blocked_by=["1"])
    agent = workspace / "agent.sh"
    agent.write_text(AGENT)
    agent.chmod(0o755)
    return agent


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PYTHON": sys.executable}


def run(workspace: Path, *options: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "board", "run", "--workers", "1", *options, "--", "./agent.sh"]
    return subprocess.Popen(argv, cwd=workspace, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_a_run_waits_for_the_answer_and_runs_the_answered_task_again(workspace: Path) -> None:
    board_with_a_question(workspace)
    process = run(workspace)
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if "waiting for a person to answer #1" in line:
                break
        else:
            raise AssertionError(f"the run ended without waiting for the answer: {''.join(lines)}")
        assert Store.open(workspace).get("1").status == Status.WAITING
        answered = subprocess.run([sys.executable, "-m", "board", "answer", "1", "Postgres"], cwd=workspace, env=environment(), capture_output=True, text=True, timeout=60)
        assert answered.returncode == 0, answered.stderr
        rest, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    output = "".join(lines) + rest
    assert process.returncode == 0 and "done: all 2 tasks completed" in output, output
    assert output.count("waiting for a person to answer") == 1, "said once, not on every look"
    assert (workspace / "answer-seen-by-1").read_text() == "Postgres\n"
    store = Store.open(workspace)
    assert [store.get(t).status for t in ("1", "2")] == [Status.COMPLETED, Status.COMPLETED]
    assert not [r for r in store.history("1") if r.get("op") == "status:failed"], "asking is not failing"


def test_without_waiting_a_run_ends_saying_which_task_waits_for_whom(workspace: Path) -> None:
    board_with_a_question(workspace)
    for options in (["--no-wait"], ["--answer-timeout", "0.5"]):
        process = run(workspace, *options)
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 1, output
        assert "#1: waiting for a person to answer: Postgres or SQLite?" in output, output
        assert Store.open(workspace).get("1").status == Status.WAITING
    refused = subprocess.run([sys.executable, "-m", "board", "run", "--no-wait", "--answer-timeout", "5", "--", "./agent.sh"], cwd=workspace, env=environment(), capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "not both" in refused.stderr


def test_waiting_for_answers_ends_at_once_with_ctrl_c(workspace: Path) -> None:
    import signal

    board_with_a_question(workspace)
    process = run(workspace)
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if "waiting for a person to answer #1" in line:
                break
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130
    wait_for(lambda: Store.open(workspace).get("1").status == Status.WAITING, timeout=30, what="the question still waiting for its answer")
