"""Helpers for tests that run real board processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Proc:
    """A process as first seen: its pid and when it started. On a busy machine pids wrap round
    within minutes (32,768 of them), so "is it still alive?" must not be answered by a newcomer
    that was given the same number."""

    pid: int
    start: int  # clock ticks after boot, /proc/<pid>/stat field 22


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def identify(pids: Iterable[int]) -> list[Proc]:
    """The processes behind ``pids`` that are there now (the others are gone already)."""
    found = []
    for pid in pids:
        fields = _stat(pid)
        if fields is not None:
            found.append(Proc(pid, int(fields[19])))
    return found


def alive(process: int | Proc) -> bool:
    """Is the process a running (not zombie) one: the same process, when given as a ``Proc``?"""
    pid = process.pid if isinstance(process, Proc) else process
    fields = _stat(pid)
    if fields is None or fields[0] in ("Z", "X"):
        return False
    return not isinstance(process, Proc) or int(fields[19]) == process.start


def wait_for(condition: Callable[[], object], *, timeout: float = 15, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def write_settings(workspace: Path, toml: str) -> None:
    (workspace / ".tasks" / "board.toml").write_text(toml)
