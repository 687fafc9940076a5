"""``board hooks install`` as Claude Code reads it: the hooks it writes are the ones that fire."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from board.store import Store
from tests.claude_code.client import Claude, board, board_script, hook_log, logged_calls
from tests.claude_code.fake_api import tool


def test_hooks_installed_into_settings_with_permissions_only_fire(claude: Claude, project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(npm test)"]}}))
    installed = board("hooks", "install", cwd=project, env=claude.environment())
    assert installed.returncode == 0, installed.stderr
    session = claude.run(project, [tool("Write", file_path=str(project / "src" / "a.py"), content="a = 1\n")], env={"BOARD_AGENT": "alice"})
    assert session.returncode == 0, session.stderr
    assert [(c["tool"], c["files"]) for c in logged_calls(project, agent="alice")] == [("Write", ["src/a.py"])], (installed.stdout, hook_log(project))


def test_hooks_in_both_the_projects_and_the_users_settings_count_each_call_once(claude: Claude, hooked: Path) -> None:
    # The user's settings name board by another path than the project's (another installation,
    # or the module): Claude Code runs both commands for every event.
    installed = board("hooks", "install", "--user", cwd=hooked, env=claude.environment())
    assert installed.returncode == 0, installed.stderr
    user_settings = claude.home / ".claude" / "settings.json"
    script = json.dumps(board_script())[1:-1]
    user_settings.write_text(user_settings.read_text().replace(f"{script} hook", f"{json.dumps(sys.executable)[1:-1]} -m board hook"))
    assert "-m board hook" in user_settings.read_text()
    task = Store.open(hooked).claim_task(Store.open(hooked).create("models").id, "alice")
    script = [
        tool("Write", file_path=str(hooked / "src" / "a.py"), content="a = 1\n"),
        tool("Bash", command="false", description="fail on purpose"),
    ]
    session = claude.run(hooked, script, env={"BOARD_AGENT": "alice", "BOARD_TASK_ID": task.id})
    assert session.returncode == 0, session.stderr
    calls = [(c["tool"], c["ok"]) for c in logged_calls(hooked, task=task.id)]
    assert calls == [("Write", True), ("Bash", False)], hook_log(hooked)
    assert len(logged_calls(hooked, agent="alice")) == 2
    counted = Store.open(hooked).get(task.id).tool_calls
    assert (counted.total, counted.ok, counted.failed) == (2, 1, 1)
    # Both read the transcript at the end of each turn: its messages' tokens count once too.
    listed = board("agents", "--json", cwd=hooked, env=claude.environment())
    (alice,) = [agent for agent in json.loads(listed.stdout)["agents"] if agent["name"] == "alice"]
    assert (alice["tokens"]["messages"], alice["tokens"]["input"], alice["tokens"]["output"]) == (3, 3 * 100, 3 * 20), hook_log(hooked)
