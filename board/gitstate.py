"""Reading a workspace's git state with the git command line: argument lists, timeouts, no shell."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

DEFAULT_TIMEOUT = 5.0


class GitUnavailable(Exception):
    """Not a git repository, git missing, or git too slow; callers treat it as 'no git state'."""


def run_git(workspace: Path, *args: str, timeout: float = DEFAULT_TIMEOUT) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(workspace), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env=_git_env(),
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise GitUnavailable(str(error)) from None
    if done.returncode != 0:
        raise GitUnavailable(done.stderr.strip() or f"git {args[0]} exited {done.returncode}")
    return done.stdout


def head(workspace: Path) -> str | None:
    """The commit HEAD points at, or None outside a repository (or before the first commit)."""
    try:
        return run_git(workspace, "rev-parse", "--verify", "--quiet", "HEAD").strip() or None
    except GitUnavailable:
        return None


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"  # never wait for a password
    env["LC_ALL"] = "C"
    return env
