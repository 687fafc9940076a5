"""Running the installed ``board`` command as a person would, and reading what it left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from board.store import Store
from tests.conftest import REPO


def board(workspace: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    where = ["-w", str(workspace)] if cwd is None else []
    return subprocess.run(
        [sys.executable, "-m", "board", *where, *args], capture_output=True, text=True, timeout=120,
        cwd=cwd or workspace, env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def ok(workspace: Path, *args: str, cwd: Path | None = None) -> str:
    done = board(workspace, *args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


def ok_json(workspace: Path, *args: str) -> Any:
    return json.loads(ok(workspace, *args, "--json"))


def refused(workspace: Path, *args: str) -> str:
    """The one line a refused command printed (exit 2, nothing on stdout)."""
    done = board(workspace, *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def tasks_by_subject(workspace: Path) -> dict[str, Any]:
    store = Store.open(workspace)
    try:
        return {task.subject: task for task in store.tasks.values()}
    finally:
        store.close()


def board_files(workspace: Path) -> dict[str, bytes]:
    """Every task file and the history (not logs, nor the record of an agent that called), to compare before and after a command that must change nothing."""
    folder = workspace / ".tasks"
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file() and not {"logs", "agents"} & set(path.parts)}
