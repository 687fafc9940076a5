"""``hooked``: a workspace with board's hooks installed each way ``board hooks install`` does."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from board.claude.hooks.install import installed_port, read_settings
from tests.hooks.delivery import start_server, stop


@pytest.fixture(params=["command", "http"])
def hooked(workspace: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """The workspace with board's hooks in its ``.claude/settings.json``: ``board hook`` on every
    event (``--command``), or the events of every tool call POSTed to board's server, which
    runs for the test (as a session's start would have it run)."""
    from board.cli import main

    transport = request.param
    assert main(["-w", str(workspace), "hooks", "install", *(["--command"] if transport == "command" else [])]) == 0
    if transport == "command":
        yield workspace
        return
    port = installed_port(read_settings(workspace / ".claude" / "settings.json"))
    assert port is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOARD_", "CLAUDE_"))}
    server = start_server(port, {**env, "XDG_CACHE_HOME": str(workspace / ".cache")})
    try:
        yield workspace
    finally:
        stop(server)
