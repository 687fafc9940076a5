"""Tool calls the real Claude Code makes, counted on the board by the hooks ``board hooks install`` wrote."""

from __future__ import annotations

import json
from pathlib import Path

from board.store import Store
from tests.claude_code.client import Claude, agent_record, board, board_script, hook_log, logged_calls
from tests.claude_code.fake_api import tool


def test_a_workers_calls_are_counted_on_its_task_ok_or_failed_with_the_files_it_wrote(claude: Claude, hooked: Path) -> None:
    store = Store.open(hooked)
    other = store.create("someone else's")
    task = store.claim_task(store.create("models").id, "alice")
    script = [
        tool("Write", file_path=str(hooked / "src" / "a.py"), content="a = 1\n"),
        tool("Edit", file_path=str(hooked / "src" / "a.py"), old_string="a = 1", new_string="a = 2"),
        tool("Bash", command="false", description="fail on purpose"),
        tool("Read", file_path=str(hooked / "src" / "a.py")),
    ]
    env = {"BOARD_AGENT": "alice", "BOARD_TASK_ID": task.id, "BOARD_WORKSPACE": str(hooked)}
    session = claude.run(hooked, script, env=env)
    assert session.returncode == 0, session.stderr
    assert (hooked / "src" / "a.py").read_text() == "a = 2\n"  # the calls really ran

    calls = [(c["agent"], c["tool"], c["ok"], c["files"]) for c in logged_calls(hooked, task=task.id)]
    assert calls == [
        ("alice", "Write", True, ["src/a.py"]),
        ("alice", "Edit", True, ["src/a.py"]),
        ("alice", "Bash", False, []),
        ("alice", "Read", True, []),
    ], hook_log(hooked)
    # Each call's duration as Claude Code measured it (duration_ms), never null.
    durations = [c["ms"] for c in logged_calls(hooked, task=task.id)]
    assert all(isinstance(ms, int) and 0 <= ms < 120_000 for ms in durations), durations
    assert logged_calls(hooked, task=other.id) == []
    counted = Store.open(hooked).get(task.id).tool_calls
    assert (counted.total, counted.ok, counted.failed, counted.last_tool) == (4, 3, 1, "Read")
    # The session ended: alice is gone, still on her task.
    record = agent_record(hooked, "alice")
    assert (record["activity"], record["task"], record["sessionId"]) == ("gone", task.id, session.session_id)
    # A session started with -p names no model at its start: the one its messages came from is hers.
    models = {body["model"] for body in session.exchange.main_loop()}
    assert record.get("model") in models, (record, models)


def test_an_interactive_session_that_claims_with_its_name_is_counted_under_it(claude: Claude, hooked: Path) -> None:
    store = Store.open(hooked)
    store.create("models")
    script = [
        tool("Bash", command=f"{board_script()} claim --agent ann", description="take a task"),
        tool("Write", file_path=str(hooked / "src" / "models.py"), content="class Base: ...\n"),
    ]
    session = claude.run(hooked, script)
    assert session.returncode == 0, session.stderr
    claimed = Store.open(hooked).get("1")
    assert (str(claimed.status), claimed.owner) == ("in_progress", "ann"), session.tool_results()
    # The call that claimed the task under ann's name is ann's, on it, as the write after it.
    assert [(c["agent"], c["tool"], c["files"]) for c in logged_calls(hooked, task="1")] == [("ann", "Bash", []), ("ann", "Write", ["src/models.py"])], hook_log(hooked)
    assert [c["tool"] for c in logged_calls(hooked, agent=f"claude-{session.session_id[:8]}")] == []
    # One row: the session's own, made before it named itself, is ann's now.
    listed = board("agents", "--json", cwd=hooked, env=claude.environment())
    assert [(a["name"], a["state"], a["toolCalls"]) for a in json.loads(listed.stdout)["agents"]] == [("ann", "gone", 2)], hook_log(hooked)
