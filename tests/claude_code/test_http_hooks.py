"""board's http hooks in the real Claude Code: the session's start runs board's server, every
tool call is counted through it as the command hooks count it, and the guard's stop reaches the
model with the same reason; a port board cannot have loses no call and says so."""

from __future__ import annotations

import os
import re
import socket
import subprocess
from pathlib import Path

import pytest

from board.claude.hooks import loopback
from board.claude.hooks.install import hook_command, installed_port, read_settings
from board.store import Store
from tests.claude_code.client import Claude, board, hook_log, logged_calls
from tests.claude_code.fake_api import tool
from tests.hooks.delivery import wait_until
from tests.conftest import LONG

pytestmark = LONG

OTHER_UID = 65534
SYSTEM_PYTHON = "/usr/bin/python3"


def make_project(folder: Path, claude: Claude, *install: str) -> Path:
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True, timeout=60)
    (folder / "src").mkdir()
    for args in (("init",), ("hooks", "install", *install)):
        done = board(*args, cwd=folder, env=claude.environment())
        assert done.returncode == 0, done.stderr
    return folder


def guarded_session(claude: Claude, project: Path) -> tuple[list[str], list[tuple], str]:
    """alice's calls on her task, one of them a Write to a file bob reserved: what the model was
    told of each call, what the board logged, and alice's task."""
    store = Store.open(project)
    bobs = store.claim_task(store.create("bob's").id, "bob")
    alices = store.claim_task(store.create("alice's").id, "alice")
    reserved = board("reserve", bobs.id, "src/reserved.py", "--agent", "bob", cwd=project, env=claude.environment())
    assert reserved.returncode == 0, reserved.stderr
    script = [
        tool("Write", file_path=str(project / "src" / "a.py"), content="a = 1\n"),
        tool("Edit", file_path=str(project / "src" / "a.py"), old_string="a = 1", new_string="a = 2"),
        tool("Bash", command="false", description="fail on purpose"),
        tool("Write", file_path=str(project / "src" / "reserved.py"), content="x = 2\n"),
        tool("Read", file_path=str(project / "src" / "a.py")),
    ]
    session = claude.run(project, script, env={"BOARD_AGENT": "alice", "BOARD_TASK_ID": alices.id, "BOARD_WORKSPACE": str(project)})
    assert session.returncode == 0, session.stderr
    assert (project / "src" / "a.py").read_text() == "a = 2\n"
    logged = [(c["agent"], c["tool"], c["ok"], c["files"], c.get("blocked", False)) for c in logged_calls(project, task=alices.id)]
    return session.tool_results(), logged, alices.id


def any_minute(text: str) -> str:
    """``text`` with its clock times (``until 23:56 UTC``) made alike."""
    return re.sub(r"\b\d\d:\d\d UTC\b", "HH:MM UTC", text)


def test_the_http_hooks_count_every_call_and_stop_a_reserved_write_as_the_command_hooks_do(claude: Claude, tmp_path: Path) -> None:
    by_command = make_project(tmp_path / "by-command", claude, "--command")
    by_http = make_project(tmp_path / "by-http", claude)
    port = installed_port(read_settings(by_http / ".claude" / "settings.json"))
    assert port is not None and loopback.listener_uid(port) is None  # nothing serves it before the session

    told_command, logged_command, _ = guarded_session(claude, by_command)
    told_http, logged_http, task = guarded_session(claude, by_http)

    assert loopback.listener_uid(port) == os.getuid(), hook_log(by_http)  # the session's start ran board's server
    assert not (by_http / "src" / "reserved.py").exists() and not (by_command / "src" / "reserved.py").exists()
    assert logged_http == logged_command == [
        ("alice", "Write", True, ["src/a.py"], False),
        ("alice", "Edit", True, ["src/a.py"], False),
        ("alice", "Bash", False, [], False),
        ("alice", "Write", False, [], True),
        ("alice", "Read", True, [], False),
    ], hook_log(by_http)
    # The model is told the guard's reason, word for word: a command hook's stderr comes with
    # Claude Code's own prefix naming the command, an http hook's reason as it is.
    reason = told_http[3]
    assert reason.startswith("board: src/reserved.py is reserved for writing by bob for task #1"), told_http
    # Each project's reservation was made when its own session ran: their ends may fall in
    # different minutes.
    assert any_minute(told_command[3]) == any_minute(f"PreToolUse:Write hook error: [{hook_command()}]: {reason}\n"), told_command
    counted = Store.open(by_http).get(task).tool_calls
    assert (counted.total, counted.ok, counted.failed) == (5, 3, 2)
    assert "Error" not in hook_log(by_http)


@pytest.mark.skipif(os.getuid() != 0 or not os.access(SYSTEM_PYTHON, os.X_OK), reason="needs root to listen as another user")
def test_a_port_another_user_holds_loses_no_call_and_board_says_why(claude: Claude, project: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Another user's process answers every POST with 200 and nothing: board sees none of them.
    squatter_code = (
        "from http.server import BaseHTTPRequestHandler, HTTPServer\n"
        "class Q(BaseHTTPRequestHandler):\n"
        "    def do_POST(self):\n"
        "        self.rfile.read(int(self.headers['Content-Length'])); self.send_response(200); self.send_header('Content-Length', '0'); self.end_headers()\n"
        "    def log_message(self, *a): pass\n"
        f"HTTPServer(('127.0.0.1', {port}), Q).serve_forever()\n"
    )
    squatter = subprocess.Popen([SYSTEM_PYTHON, "-c", squatter_code], user=OTHER_UID, cwd="/", stdin=subprocess.DEVNULL)
    try:
        wait_until(lambda: loopback.listener_uid(port) == OTHER_UID or squatter.poll() is not None, what="the other user's listener")
        assert board("hooks", "install", "--port", str(port), cwd=project, env=claude.environment()).returncode == 0
        store = Store.open(project)
        task = store.claim_task(store.create("models").id, "alice")
        script = [
            tool("Write", file_path=str(project / "src" / "a.py"), content="a = 1\n"),
            tool("Bash", command="false", description="fail on purpose"),
            tool("Read", file_path=str(project / "src" / "a.py")),
        ]
        session = claude.run(project, script, env={"BOARD_AGENT": "alice", "BOARD_TASK_ID": task.id, "BOARD_WORKSPACE": str(project)})
        assert session.returncode == 0, session.stderr
        # No hook counted them; the session's end read them from its transcript.
        logged = [(c["agent"], c["tool"], c["ok"]) for c in logged_calls(project, task=task.id)]
        assert logged == [("alice", "Write", True), ("alice", "Bash", False), ("alice", "Read", True)], hook_log(project)
        assert f"port {port} of 127.0.0.1 is held by another user's process (uid {OTHER_UID})" in hook_log(project)
        status = board("hooks", "status", cwd=project, env=claude.environment())
        assert status.returncode == 1 and "not by board's server" in status.stdout, status
    finally:
        squatter.kill()
        squatter.wait(timeout=30)
