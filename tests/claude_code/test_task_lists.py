"""Claude Code's own task lists beside the board: the model's todo list is not the board."""

from __future__ import annotations

import json
from pathlib import Path

from board.store import Store
from tests.claude_code.client import Claude, board, board_script, hook_log
from tests.claude_code.fake_api import tool


def test_ticking_off_the_models_own_todo_leaves_the_boards_task_of_that_id_alone(claude: Claude, hooked: Path) -> None:
    store = Store.open(hooked)
    task = store.claim_task(store.create("models").id, "alice")
    assert task.id == "1"
    script = [
        tool("TaskCreate", subject="Write the tests", description="a personal todo"),
        tool("TaskCreate", subject="Tidy imports", description="another personal todo"),
        tool("TaskUpdate", taskId="1", status="completed"),
    ]
    session = claude.run(hooked, script, env={"BOARD_AGENT": "alice", "BOARD_TASK_ID": "1", "BOARD_WORKSPACE": str(hooked)})
    assert session.returncode == 0, session.stderr
    # Claude Code ticked off its session's own item #1 ...
    todo = json.loads((claude.home / ".claude" / "tasks" / session.session_id / "1.json").read_text())
    assert (todo["subject"], todo["status"]) == ("Write the tests", "completed")
    # ... and the board's #1 is still alice's, in progress, with no completion in its history.
    after = Store.open(hooked).get("1")
    assert (str(after.status), after.owner) == ("in_progress", "alice"), hook_log(hooked)
    history = [json.loads(line) for line in (hooked / ".tasks" / "history.jsonl").read_text().splitlines()]
    assert [entry["op"] for entry in history] == ["create", "claim"]


def test_the_models_own_todo_list_shows_beside_its_agent_as_done_of_total(claude: Claude, hooked: Path) -> None:
    store = Store.open(hooked)
    task = store.claim_task(store.create("models").id, "alice")
    script = [
        tool("TaskCreate", subject="Write the tests", description="a personal todo"),
        tool("TaskCreate", subject="Tidy imports", description="another personal todo"),
        tool("TaskCreate", subject="Update the docs", description="a third one"),
        tool("TaskUpdate", taskId="2", status="completed"),
        tool("Bash", command=f"{board_script()} agents --json > seen.json", description="look at the board"),
        tool("TaskUpdate", taskId="1", status="completed"),
    ]
    session = claude.run(hooked, script, env={"BOARD_AGENT": "alice", "BOARD_TASK_ID": task.id, "BOARD_WORKSPACE": str(hooked)})
    assert session.returncode == 0, session.stderr
    seen = {agent["name"]: agent for agent in json.loads((hooked / "seen.json").read_text())["agents"]}
    assert seen["alice"]["todos"] == {"done": 1, "total": 3}, hook_log(hooked)
    listed = board("agents", cwd=hooked, env=claude.environment())
    assert "2/3" in next(line for line in listed.stdout.splitlines() if line.startswith("alice")), listed.stdout
    after = json.loads(board("agents", "--json", cwd=hooked, env=claude.environment()).stdout)["agents"]
    assert [(agent["name"], agent["todos"]) for agent in after] == [("alice", {"done": 2, "total": 3})]
    assert str(Store.open(hooked).get(task.id).status) == "in_progress"  # the board's task is another thing
