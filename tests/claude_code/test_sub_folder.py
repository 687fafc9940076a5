"""``claude`` started in a sub-folder of the workspace: Claude Code loads no project hooks there."""

from __future__ import annotations

from pathlib import Path

from tests.claude_code.client import Claude, board, hook_log, logged_calls
from tests.claude_code.fake_api import tool


def test_a_session_in_a_sub_folder_is_counted_through_the_users_hooks_which_install_points_to(claude: Claude, project: Path) -> None:
    sub = project / "src"
    def write(name: str) -> list:
        return [tool("Write", file_path=str(sub / name), content="a = 1\n")]

    installed = board("hooks", "install", cwd=project, env=claude.environment())
    assert installed.returncode == 0
    # install says where its hooks do not reach, and what does.
    assert "sub-folder" in installed.stdout and "board hooks install --user" in installed.stdout, installed.stdout

    session = claude.run(sub, write("a.py"), env={"BOARD_AGENT": "alice"})
    assert session.returncode == 0, session.stderr
    assert (sub / "a.py").exists() and logged_calls(project, agent="alice") == []  # Claude Code's rule, not board's

    user = board("hooks", "install", "--user", cwd=project, env=claude.environment())
    assert user.returncode == 0 and str(claude.home / ".claude" / "settings.json") in user.stdout, user.stdout
    board("hooks", "uninstall", cwd=project, env=claude.environment())  # one set of hooks, as the install's hint says
    session = claude.run(sub, write("b.py"), env={"BOARD_AGENT": "alice"})  # a new file: Claude Code writes no file unread
    assert session.returncode == 0, session.stderr
    assert [(c["tool"], c["files"]) for c in logged_calls(project, agent="alice")] == [("Write", ["src/b.py"])], hook_log(project)
