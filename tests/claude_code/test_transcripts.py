"""What the session transcript adds to the hooks: calls no hook reported, and tokens with their cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.reservations import reserve
from board.store import Store
from tests.claude_code import ccusage
from tests.claude_code.client import Claude, Unavailable, board, board_script, hook_log, logged_calls
from tests.claude_code.fake_api import Turn, tool

SONNET = "claude-sonnet-4-5-20250929"
#: Dollars per million tokens for it, as Anthropic publishes them: input, output, cache write, cache read.
SONNET_PRICES = (3.0, 15.0, 3.75, 0.3)


def test_every_call_counts_once_ok_failed_or_blocked_with_calls_claude_code_rejected(claude: Claude, hooked: Path) -> None:
    store = Store.open(hooked)
    theirs = store.claim_task(store.create("bob's models").id, "bob")
    reserve(store, theirs.id, ["src/held.py"], agent="bob", mode="write")
    task = store.claim_task(store.create("views").id, "alice")
    (hooked / "src" / "a.py").write_text("a = 1\n")
    (hooked / "src" / "unread.py").write_text("u = 1\n")
    script = [
        tool("Read", file_path=str(hooked / "src" / "a.py")),  # ok
        tool("Edit", file_path=str(hooked / "src" / "a.py"), old_string="no such text", new_string="b = 2"),  # rejected: not found
        tool("Write", file_path=str(hooked / "src" / "unread.py"), content="u = 2\n"),  # rejected: not read yet
        Turn(text="First part done."),
        tool("NoSuchTool", anything=1),  # rejected: unknown tool
        tool("Edit", file_path=str(hooked / "src" / "a.py")),  # rejected: missing parameters
        tool("Write", file_path=str(hooked / "src" / "held.py"), content="x = 1\n"),  # blocked by board's guard
        tool("Bash", command="false", description="fail on purpose"),  # ran and failed
        Turn(text="Second part done."),
    ]
    env = {"BOARD_AGENT": "alice", "BOARD_TASK_ID": task.id, "BOARD_WORKSPACE": str(hooked)}
    session = claude.run(hooked, script, env=env, prompts=["do the first part", "now the second part"])
    assert session.returncode == 0, session.stderr
    results = session.tool_results()
    assert "String to replace not found" in results[1] and "has not been read yet" in results[2], results
    assert "No such tool available" in results[3] and "required parameter" in results[4] and "reserved for writing by bob" in results[5], results
    assert (hooked / "src" / "unread.py").read_text() == "u = 1\n" and not (hooked / "src" / "held.py").exists()

    calls = sorted(logged_calls(hooked, task=task.id), key=lambda c: c["ts"])
    outcome = [(c["tool"], "blocked" if c.get("blocked") else "ok" if c["ok"] else "failed") for c in calls]
    assert outcome == [
        ("Read", "ok"),
        ("Edit", "failed"),
        ("Write", "failed"),
        ("NoSuchTool", "failed"),
        ("Edit", "failed"),
        ("Write", "blocked"),
        ("Bash", "failed"),
    ], hook_log(hooked)
    assert len({c["id"] for c in calls}) == 7  # each call once, under Claude Code's id for it
    assert all(c["agent"] == "alice" for c in calls) and logged_calls(hooked, task=theirs.id) == []
    assert len(logged_calls(hooked, agent="alice")) == 7
    counted = Store.open(hooked).get(task.id).tool_calls
    assert (counted.total, counted.ok, counted.failed) == (7, 1, 6)


def _usage(n: int) -> dict[str, int]:
    return {"input_tokens": 10 + n, "output_tokens": 200 + 7 * n, "cache_creation_input_tokens": 3000 + 11 * n, "cache_read_input_tokens": 20000 + 13 * n}


def _agents(workspace: Path, env: dict[str, str]) -> dict[str, dict]:
    done = board("agents", "--json", cwd=workspace, env=env)
    assert done.returncode == 0, done.stderr
    return {agent["name"]: agent for agent in json.loads(done.stdout)["agents"]}


def _task(workspace: Path, task_id: str, env: dict[str, str]) -> dict:
    done = board("task", "show", task_id, "--json", cwd=workspace, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_tokens_per_agent_and_task_agree_with_ccusage(claude: Claude, hooked: Path) -> None:
    try:
        program = ccusage.ensure_installed()
    except Unavailable as reason:
        pytest.skip(str(reason))
    Store.open(hooked).create("models")
    turns = [
        Turn(calls=tool("Bash", command=f"{board_script()} claim --agent ann", description="take a task").calls, usage=_usage(1)),
        Turn(calls=tool("Write", file_path=str(hooked / "src" / "models.py"), content="class Base: ...\n").calls, text="Writing the models.", usage=_usage(2)),
        Turn(calls=tool("Edit", file_path=str(hooked / "src" / "models.py"), old_string="not there", new_string="x").calls, usage=_usage(3)),
        Turn(text="Models done.", usage=_usage(4)),
    ]
    session = claude.run(hooked, turns, extra_args=["--model", SONNET])
    assert session.returncode == 0, session.stderr
    assert Store.open(hooked).get("1").owner == "ann", session.tool_results()

    report = ccusage.session_report(program, claude.home / ".claude")
    theirs = report["totals"]
    fields = {"input": "inputTokens", "output": "outputTokens", "cacheWrite": "cacheCreationTokens", "cacheRead": "cacheReadTokens"}
    env = claude.environment()
    agents = _agents(hooked, env)
    ours = {field: sum(agent["tokens"][field] for agent in agents.values()) for field in fields}
    assert ours == {field: theirs[name] for field, name in fields.items()}, (agents, report, hook_log(hooked))
    # The fake API's four answers, each counted once though the transcript repeats a message's
    # usage on each of its blocks (the second answer has two: its text and its call).
    assert ours == {field: sum(_usage(n)[key] for n in (1, 2, 3, 4)) for field, key in (("input", "input_tokens"), ("output", "output_tokens"), ("cacheWrite", "cache_creation_input_tokens"), ("cacheRead", "cache_read_input_tokens"))}
    cost = sum(agent["tokens"]["cost"] for agent in agents.values())
    assert cost == pytest.approx(theirs["totalCost"], rel=1e-9, abs=1e-12) and cost > 0
    # The first answer claimed the task under ann's name: from it on, every answer is ann's, on #1.
    mine = [_usage(n) for n in (1, 2, 3, 4)]
    expected = {"input": sum(u["input_tokens"] for u in mine), "output": sum(u["output_tokens"] for u in mine),
                "cacheWrite": sum(u["cache_creation_input_tokens"] for u in mine), "cacheRead": sum(u["cache_read_input_tokens"] for u in mine)}  # fmt: skip
    task_tokens = _task(hooked, "1", env)["tokens"]
    assert {field: task_tokens[field] for field in fields} == expected and task_tokens["messages"] == 4, hook_log(hooked)
    assert {field: agents["ann"]["tokens"][field] for field in fields} == expected
    priced = sum(expected[field] * rate for field, rate in zip(("input", "output", "cacheWrite", "cacheRead"), SONNET_PRICES)) / 1_000_000
    assert task_tokens["cost"] == pytest.approx(priced, rel=1e-9)
    # Calls: the claim, and the rejected Edit counted beside the Write.
    assert [(c["tool"], c["ok"]) for c in sorted(logged_calls(hooked, task="1"), key=lambda c: c["ts"])] == [("Bash", True), ("Write", True), ("Edit", False)]

    # board.toml's [prices] changes the estimate.
    (hooked / ".tasks" / "board.toml").write_text('[prices."claude-sonnet-4-5"]\ninput = 30.0\n')
    repriced = _task(hooked, "1", env)["tokens"]["cost"]
    assert repriced == pytest.approx(priced + expected["input"] * 27.0 / 1_000_000, rel=1e-9)
