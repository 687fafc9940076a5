"""Budgets: the alerts at 80 % and 100 %, the pause at the limit, its undo, and the board's default.

Tokens reach the board as Claude Code's transcripts do (``board.claude.transcripts.read_transcript``
on a transcript in its format); the coordinator's tick judges them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.alerts import evaluate_alerts
from board.config import BoardSettings
from board.coordinator.tick import tick
from board.errors import BoardError
from board.model import Budget
from board.store import Store
from board.claude.transcripts import read_transcript
from tests.conftest import BOTH_BACKENDS

SONNET = "claude-sonnet-4-5"
pytestmark = BOTH_BACKENDS


class Transcript:
    """A Claude Code session transcript that grows one assistant message at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages = 0

    def say(self, output_tokens: int, *, input_tokens: int = 0) -> None:
        self.messages += 1
        entry = {
            "type": "assistant", "timestamp": "2026-11-23T12:00:00.000Z", "requestId": f"req_{self.messages}",
            "message": {
                "id": f"msg_{self.messages}", "model": SONNET, "role": "assistant", "content": [{"type": "text", "text": "working"}],
                "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
            },
        }  # fmt: skip
        with self.path.open("a") as handle:
            handle.write(json.dumps(entry) + "\n")


def spend(board: Store, transcript: Transcript, agent: str, task: str, output_tokens: int) -> None:
    """The agent's session says one more message on ``task``; the board reads it."""
    transcript.say(output_tokens)
    read_transcript(board.state_dir, transcript.path, agent=agent, task=task, session="s1", now="2026-11-23T12:00:00Z")


def budget_settings(**budget: object) -> BoardSettings:
    return BoardSettings.model_validate({"budget": budget})


def kinds(board: Store, settings: BoardSettings) -> dict[str, str]:
    return {a.key: a.message for a in evaluate_alerts(board, now=board.clock(), settings=settings) if a.kind.startswith("budget.")}


def test_a_task_is_warned_at_80_percent_and_paused_at_its_budget(board: Store, tmp_path: Path) -> None:
    task = board.create("views", budget={"usd": 1.0})
    board.claim("alice", lease_seconds=30)
    session = Transcript(tmp_path / "session.jsonl")
    settings = BoardSettings()

    spend(board, session, "alice", task.id, 50_000)  # $0.75 of $1.00
    assert kinds(board, settings) == {}
    assert tick(board, [], settings).policies == []

    spend(board, session, "alice", task.id, 5_000)  # $0.825: 82 %
    assert kinds(board, settings) == {"budget.near:task:1": "#1 spent $0.82 of $1.00 (82% of its budget)"}
    assert tick(board, [], settings).policies == [] and board.get(task.id).status == "in_progress"

    spend(board, session, "alice", task.id, 15_000)  # $1.05
    report = tick(board, [], settings)
    assert [(p.task, p.policy, str(p.status)) for p in report.policies] == [(task.id, "budget", "paused")]
    paused = board.get(task.id)
    assert paused.status == "paused" and paused.lease is None  # the worker's lease ends: its command is stopped
    assert paused.policy.reason == "policy budget: #1 spent $1.05 of $1.00" and paused.policy.budget == Budget(usd=1.0)
    assert list(kinds(board, settings)) == ["budget.over:task:1"]


def test_an_undone_pause_holds_for_that_budget_and_a_new_budget_is_judged_afresh(board: Store, tmp_path: Path) -> None:
    task = board.create("views", budget={"tokens": 1_000})
    board.claim("alice", lease_seconds=30)
    session = Transcript(tmp_path / "session.jsonl")
    spend(board, session, "alice", task.id, 1_200)
    assert [p.task for p in tick(board, [], BoardSettings()).policies] == [task.id]

    board.undo_policy(task.id, actor="person")
    spend(board, session, "alice", task.id, 100)
    assert tick(board, [], BoardSettings()).policies == [] and board.get(task.id).status == "in_progress"

    board.update(task.id, budget={"tokens": 1_250}, actor="person")
    assert [p.task for p in tick(board, [], BoardSettings()).policies] == [task.id]
    assert board.get(task.id).policy.budget == Budget(tokens=1_250)


def test_the_board_default_applies_to_tasks_without_their_own_and_agents_have_theirs(board: Store, tmp_path: Path) -> None:
    own = board.create("own budget", budget={"usd": 10.0})
    default = board.create("board default")
    board.claim("alice", lease_seconds=30, max_held=2)
    board.claim("alice", lease_seconds=30, max_held=2)
    spend(board, Transcript(tmp_path / "one.jsonl"), "alice", own.id, 80_000)  # $1.20 on each of the two tasks
    spend(board, Transcript(tmp_path / "two.jsonl"), "alice", default.id, 80_000)
    settings = budget_settings(task_usd=1.0)
    report = tick(board, [], settings)
    assert [p.task for p in report.policies] == [default.id]  # its own $10 wins over the board's $1

    board.undo_policy(default.id, actor="person")
    # An agent's budget covers all its tasks: alice spent $2.40.
    report = tick(board, [], budget_settings(task_usd=1.0, agent_usd=2.0))
    assert [(p.task, p.reason) for p in report.policies] == [(own.id, "policy budget: alice spent $2.40 of $2.00")]
    assert "budget.over:agent:alice" in kinds(board, budget_settings(agent_usd=2.0))


def test_pause_false_keeps_the_alert_and_moves_nothing(board: Store, tmp_path: Path) -> None:
    task = board.create("views", budget={"usd": 0.5})
    board.claim("alice", lease_seconds=30)
    spend(board, Transcript(tmp_path / "session.jsonl"), "alice", task.id, 40_000)
    settings = budget_settings(pause=False)
    assert tick(board, [], settings).policies == [] and board.get(task.id).status == "in_progress"
    assert list(kinds(board, settings)) == ["budget.over:task:1"]


@pytest.mark.parametrize("bad", [{"usd": -1}, {"tokens": 0}, {"tokens": 1.5}, {"usd": "1"}, {"dollars": 1}, [1]])
def test_a_bad_budget_is_refused_and_nothing_is_written(board: Store, bad: object) -> None:
    task = board.create("views")
    before = Store.open(board.layout.workspace).get(task.id)
    with pytest.raises(BoardError, match="budget"):
        board.update(task.id, budget=bad)
    with pytest.raises(BoardError, match="budget"):
        board.create("another", budget=bad)
    again = Store.open(board.layout.workspace)
    assert again.get(task.id) == before and list(again.tasks) == [task.id]
