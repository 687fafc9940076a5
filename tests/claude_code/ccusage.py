"""ccusage, the usage report Claude Code users run, installed once into the user's cache like
the client (``client.py``), and run over a HOME's transcripts."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.claude_code.npm_tools import NpmTool

#: Runs offline on node 20 (later versions name a native package that is not published).
CCUSAGE = NpmTool("ccusage", "18.0.11", "ccusage-18.0.11", "ccusage")


def ensure_installed() -> Path:
    return CCUSAGE.ensure_installed()


def session_report(program: Path, claude_dir: Path) -> dict[str, Any]:
    """``ccusage session --json --offline`` over the transcripts under ``claude_dir/projects``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CLAUDE", "CCUSAGE"))}
    env["CLAUDE_CONFIG_DIR"] = str(claude_dir)
    done = subprocess.run(
        [str(program), "session", "--json", "--offline"], capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
