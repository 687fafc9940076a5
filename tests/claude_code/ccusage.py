"""ccusage, the usage report Claude Code users run, installed once into the user's cache like
the client (``client.py``), and run over a HOME's transcripts."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.claude_code.client import INSTALL_TIMEOUT, Unavailable

PACKAGE = "ccusage"
#: Runs offline on node 20 (later versions name a native package that is not published).
VERSION = "18.0.11"


def install_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "board-tests" / f"ccusage-{VERSION}"


def executable() -> Path:
    return install_dir() / "node_modules" / ".bin" / "ccusage"


def _works(program: Path) -> bool:
    try:
        done = subprocess.run([str(program), "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and VERSION in done.stdout


def ensure_installed() -> Path:
    program = executable()
    if program.exists() and _works(program):
        return program
    for name in ("node", "npm"):
        if shutil.which(name) is None:
            raise Unavailable(f"{name} not found on PATH: cannot install {PACKAGE}@{VERSION}")
    folder = install_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if program.exists() and _works(program):
            return program
        try:
            done = subprocess.run(
                ["npm", "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error", f"{PACKAGE}@{VERSION}"],
                capture_output=True, text=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise Unavailable(f"npm install {PACKAGE}@{VERSION} took over {INSTALL_TIMEOUT} s") from None
        if done.returncode != 0 or not _works(program):
            last = (done.stderr.strip().splitlines() or ["installed, but 'ccusage --version' fails"])[-1]
            raise Unavailable(f"cannot install {PACKAGE}@{VERSION} with npm: {last}")
    return program


def session_report(program: Path, claude_dir: Path) -> dict[str, Any]:
    """``ccusage session --json --offline`` over the transcripts under ``claude_dir/projects``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CLAUDE", "CCUSAGE"))}
    env["CLAUDE_CONFIG_DIR"] = str(claude_dir)
    done = subprocess.run(
        [str(program), "session", "--json", "--offline"], capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
