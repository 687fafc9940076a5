"""``board hooks install`` as Claude Code reads it: the hooks it writes are the ones that fire."""

from __future__ import annotations

import json
from pathlib import Path

from tests.claude_code.client import Claude, board, hook_log, logged_calls
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
