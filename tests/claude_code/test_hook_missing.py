"""board's command hooks name board's own script by its absolute path: when that is gone (its
environment moved), the real Claude Code runs every tool call unguarded, and board says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from board.claude.hooks.install import EVENTS, install
from board.store import Store
from tests.claude_code.client import Claude, board, board_script, hook_log
from tests.claude_code.fake_api import tool


def test_hooks_whose_command_is_gone_let_a_reserved_file_be_written_and_status_check_and_alerts_say_so(claude: Claude, project: Path, tmp_path: Path) -> None:
    env_bin = tmp_path / "env" / "bin"
    env_bin.mkdir(parents=True)
    script = env_bin / "board"
    shutil.copy2(board_script(), script)  # its #! names the interpreter: it runs from anywhere
    settings = project / ".claude" / "settings.json"
    install(settings, command=f"{script} hook", http=False)  # every event a command: none left to a server
    store = Store.open(project)
    bobs = store.claim_task(store.create("bob's").id, "bob")
    reserved_by_bob = board("reserve", bobs.id, "src/reserved.py", "--agent", "bob", cwd=project, env=claude.environment())
    assert reserved_by_bob.returncode == 0, reserved_by_bob.stderr
    reserved = project / "src" / "reserved.py"
    write = [tool("Write", file_path=str(reserved), content="x = 2\n")]
    env = {"BOARD_AGENT": "alice"}

    session = claude.run(project, write, env=env)
    assert session.returncode == 0, session.stderr
    assert not reserved.exists(), (session.tool_results(), hook_log(project))  # the guard stood in the way
    status = board("hooks", "status", cwd=project, env=claude.environment())
    assert status.returncode == 0 and f"ok: {settings}" in status.stdout, status

    (tmp_path / "env").rename(tmp_path / "env-moved")
    session = claude.run(project, write, env=env)
    assert session.returncode == 0, session.stderr
    assert reserved.read_text() == "x = 2\n"  # exit 127 is no block: Claude Code ran the call
    said = json.dumps(session.messages)
    assert "SessionStart" in said and str(script) in said, said[-3000:]  # the one trace Claude Code leaves

    status = board("hooks", "status", cwd=project, env=claude.environment())
    assert status.returncode == 1 and f"broken: {settings}" in status.stdout and f"{script} does not exist" in status.stdout, status
    check = board("check", cwd=project, env=claude.environment())
    assert check.returncode == 1 and f"{settings}: board's hooks on {len(EVENTS)} events cannot run" in check.stdout, check
    alerts = board("alerts", "--json", cwd=project, env=claude.environment())
    found = [(a["kind"], a["severity"]) for a in json.loads(alerts.stdout) if a["kind"].startswith("hooks.")]
    assert found == [("hooks.broken", "error")], alerts.stdout
