"""``board mcp install`` as the real Claude Code reads it: a server it can start whatever PATH
it was given, and approved only when the person asks for it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.claude_code.client import Claude, board
from tests.claude_code.fake_api import FakeAnthropic


def _mcp_list(claude: Claude, project: Path) -> str:
    # A PATH with node and the system's tools, but not this installation's scripts; an API that
    # answers (with none, the listing waits about 18 s for Anthropic's servers first).
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and not Path(p, "board").exists())
    with FakeAnthropic([]) as api:
        done = subprocess.run(
            [str(claude.executable), "mcp", "list"], cwd=project, env=claude.environment(PATH=path, ANTHROPIC_BASE_URL=api.url),
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    return done.stdout + done.stderr


def test_claude_code_connects_to_the_installed_server_once_approved_whatever_its_path(claude: Claude, project: Path) -> None:
    installed = board("mcp", "install", cwd=project, env=claude.environment())
    assert installed.returncode == 0, installed.stderr
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["board"]
    assert Path(entry["command"]).is_absolute(), entry
    # Claude Code asks a person before it starts a project's server; install says so and how.
    assert "approve" in installed.stdout and "--approve" in installed.stdout, installed.stdout
    assert "Pending approval" in _mcp_list(claude, project)

    approved = board("mcp", "install", "--approve", cwd=project, env=claude.environment())
    assert approved.returncode == 0, approved.stderr
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert local["enabledMcpjsonServers"] == ["board"]
    listed = _mcp_list(claude, project)
    assert "board:" in listed and "✔ Connected" in listed, listed
