"""Real git repositories in tmp_path: a bare upstream and two clones, and a board in the first.

Git runs with no system or user configuration (``GIT_CONFIG_NOSYSTEM``, a private ``HOME``),
so the tests do not depend on the machine's git setup.
"""

from __future__ import annotations

import os

import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from board.alerts import Alert, refresh_alerts
from board.config import load_settings
from board.model import utcnow
from board.store import Store
from tests.conftest import board_kept_in

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, f"git {' '.join(args)} failed: {done.stderr}"
    return done.stdout


def commit_file(clone: Path, path: str, text: str, message: str | None = None) -> str:
    target = clone / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    git(clone, "add", path)
    git(clone, "commit", "-q", "-m", message or f"change {path}")
    return git(clone, "rev-parse", "HEAD").strip()


def configure(clone: Path, name: str) -> None:
    git(clone, "config", "user.name", name)
    git(clone, "config", "user.email", f"{name}@example.invalid")
    git(clone, "config", "commit.gpgsign", "false")


@dataclass
class Repos:
    upstream: Path
    a: Path  # the workspace with the board
    b: Path  # another clone pushing to the same upstream


@pytest.fixture
def repos(tmp_path: Path, backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Repos:
    board_kept_in(backend, request, monkeypatch)
    upstream = tmp_path / "upstream.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(upstream))
    a, b = tmp_path / "a", tmp_path / "b"
    git(tmp_path, "clone", "-q", str(upstream), str(a))
    configure(a, "alice")
    git(a, "checkout", "-q", "-b", "main")
    (a / ".gitignore").write_text(".tasks/\n")
    git(a, "add", ".gitignore")
    for name in ("src/app.py", "src/util.py", "docs/readme.md"):
        commit_file(a, name, f"# {name}\n", f"add {name}")
    git(a, "push", "-q", "-u", "origin", "main")
    git(tmp_path, "clone", "-q", str(upstream), str(b))
    configure(b, "bob")
    if os.environ.get("BOARD_DB"):
        (a / ".tasks").mkdir()  # a database board's workspace with settings of its own
    Store.open(a, create=True)
    return Repos(upstream, a, b)


def board(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the command line on ``workspace`` (in this process: the same code, without a
    second of start-up per call)."""
    from tests.core.test_cli import board as run_in_process

    return run_in_process(workspace, *args)


def refresh(workspace: Path, *, now: datetime | None = None, fetch: bool | None = None) -> list[Alert]:
    store = Store.open(workspace)
    return refresh_alerts(store, now=now or utcnow(), settings=load_settings(store.state_dir), fetch=fetch)


def of_kind(alerts: list[Alert], kind: str) -> list[Alert]:
    return [a for a in alerts if a.kind == kind]


def start(workspace: Path, subject: str, agent: str, files: list[str] | None = None) -> str:
    """Create a task holding ``files`` and have ``agent`` claim it; returns its id."""
    store = Store.open(workspace)
    task = store.create(subject, files=files or [])
    store.claim_task(task.id, agent)
    return task.id


def token_of(workspace: Path, task_id: str) -> int:
    """The lease token of the agent holding ``task_id`` (tests act as that agent)."""
    lease = Store.open(workspace).get(task_id).lease
    assert lease is not None
    return lease.token
