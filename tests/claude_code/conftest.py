"""Fixtures for the tests that drive the real Claude Code CLI (``client.py``) against a fake API."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.claude_code.client import Claude, Unavailable, board, ensure_installed
from tests.hooks.delivery import kill_started_servers


@pytest.fixture(scope="session")
def claude_executable() -> Path:
    try:
        return ensure_installed()
    except Unavailable as reason:
        pytest.skip(str(reason))


@pytest.fixture
def claude(claude_executable: Path, tmp_path: Path) -> Iterator[Claude]:
    """The client with a HOME of its own for this test; board's server, which a session's start
    runs detached for board's http hooks, is killed when the test ends."""
    client = Claude(claude_executable, tmp_path / "home")
    try:
        yield client
    finally:
        kill_started_servers(client.home / ".cache")


@pytest.fixture
def project(tmp_path: Path, claude: Claude) -> Path:
    """A git repository with a board (``board init``) and nothing else: no hooks yet."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=60)
    (workspace / "src").mkdir()
    done = board("init", cwd=workspace, env=claude.environment())
    assert done.returncode == 0, done.stderr
    return workspace


@pytest.fixture
def hooked(project: Path, claude: Claude) -> Path:
    """The project with board's hooks in its ``.claude/settings.json`` (``board hooks install``)."""
    done = board("hooks", "install", cwd=project, env=claude.environment())
    assert done.returncode == 0 and "hooks are in" in done.stdout, done
    return project
