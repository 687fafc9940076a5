"""Helpers for tests that run real board processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Processes tests started; whatever is still running when a test ends is killed (conftest).
STARTED: list[subprocess.Popen] = []


def started(process: subprocess.Popen) -> subprocess.Popen:
    """Register a process a test started, so it is killed by pid however the test ends."""
    STARTED.append(process)
    return process


def kill_started() -> None:
    while STARTED:
        process = STARTED.pop()
        if process.poll() is None:
            process.kill()
        process.wait()


def board_cli(workspace: Path, *args: str, **popen) -> subprocess.Popen:
    """Start ``python -m board ARGS -w WORKSPACE`` from this checkout."""
    env = dict(popen.pop("env", os.environ), PYTHONPATH=str(REPO))
    popen.setdefault("stdout", subprocess.DEVNULL)
    popen.setdefault("stderr", subprocess.DEVNULL)
    if "--" in args:
        cut = args.index("--")
        args = (*args[:cut], "-w", str(workspace), *args[cut:])
    else:
        args = (*args, "-w", str(workspace))
    return started(subprocess.Popen([sys.executable, "-m", "board", *args], env=env, cwd=workspace, **popen))


def alive(pid: int) -> bool:
    """Is ``pid`` a running (not zombie) process?"""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def wait_for(condition: Callable[[], object], *, timeout: float = 15, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def write_settings(workspace: Path, toml: str) -> None:
    (workspace / ".tasks" / "board.toml").write_text(toml)
