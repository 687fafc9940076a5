"""The real Claude Code in a task's worktree: its calls counted on the task with the workspace's
paths, and a write to a file another task reserved stopped, as in the workspace itself."""

from __future__ import annotations

import subprocess
from pathlib import Path

from board.store import Store
from tests.claude_code.client import Claude, board, hook_log, logged_calls
from tests.claude_code.fake_api import tool


def test_claude_code_in_a_worktree_is_counted_and_guarded_with_the_workspaces_paths(claude: Claude, hooked: Path) -> None:
    # hooks install wrote .claude/settings.json, not committed: the worktree gets a copy.
    (hooked / "src" / "b.py").write_text("b = 1\n")
    for args in (("add", "src"), ("-c", "user.name=p", "-c", "user.email=p@x", "commit", "-q", "-m", "start")):
        subprocess.run(["git", "-C", str(hooked), *args], check=True, timeout=60)
    store = Store.open(hooked)
    other = store.claim_task(store.create("owns b.py").id, "bob")
    task = store.claim_task(store.create("writes a.py").id, "alice")
    assert board("reserve", other.id, "src/b.py", "--agent", "bob", cwd=hooked, env=claude.environment()).returncode == 0
    made = board("worktree", task.id, cwd=hooked, env=claude.environment())
    assert made.returncode == 0, made.stderr
    folder = hooked / ".board-worktrees" / "2.writes-a-py"
    assert (folder / ".claude" / "settings.json").read_text() == (hooked / ".claude" / "settings.json").read_text()

    script = [
        tool("Write", file_path=str(folder / "src" / "a.py"), content="a = 1\n"),
        tool("Read", file_path=str(folder / "src" / "b.py")),  # Claude Code writes only a file it has read
        tool("Write", file_path=str(folder / "src" / "b.py"), content="b = 2\n"),
    ]
    env = {"BOARD_AGENT": "alice", "BOARD_TASK_ID": task.id, "BOARD_WORKSPACE": str(hooked), "BOARD_WORKTREE": str(folder)}
    session = claude.run(folder, script, env=env)
    assert session.returncode == 0, session.stderr
    assert (folder / "src" / "a.py").read_text() == "a = 1\n"
    assert (folder / "src" / "b.py").read_text() == "b = 1\n", hook_log(hooked)  # stopped by bob's reservation
    assert not (hooked / "src" / "a.py").exists()  # the workspace itself is untouched
    calls = [(c["tool"], c["ok"], c["files"]) for c in logged_calls(hooked, task=task.id)]
    assert calls[0] == ("Write", True, ["src/a.py"]), hook_log(hooked)
    assert ("Write", True, ["src/b.py"]) not in calls
    assert Store.open(hooked).get(task.id).tool_calls.total >= 1
