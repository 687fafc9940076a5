"""The official MCP Inspector in CLI mode, installed once into the user's cache and run against
``board mcp``: a client of MCP's own makers, not of ours.

``python tests/mcp/inspector.py`` installs it (``.ci/run`` does, before the tests); a test that
finds neither it nor node and npm skips, saying which is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script by .ci/run
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.claude_code.npm_tools import NpmTool, Unavailable
from tests.conftest import REPO

#: 0.22 is the last line that runs on node 20 (its package asks for 22; its CLI runs on 20).
#: Run bare, it opens its web page: it is known installed by its package.json instead.
INSPECTOR = NpmTool("@modelcontextprotocol/inspector", "0.22.0", "mcp-inspector-0.22.0", "mcp-inspector", says_version=False)
#: One call starts node and board's server; this is for a machine under heavy load.
CALL_TIMEOUT = 120


def ensure_installed() -> Path:
    return INSPECTOR.ensure_installed()


def inspect(executable: Path, workspace: Path, method: str, *options: str, env: dict[str, str] | None = None) -> tuple[int, Any]:
    """``mcp-inspector --cli`` starting ``board mcp`` on the workspace's board for one method
    (``tools/list``, ``tools/call``...): its exit status and the JSON it printed."""
    server = [sys.executable, "-m", "board", "-w", str(workspace), "mcp"]
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    done = subprocess.run(
        [str(executable), "--cli", *server, "--method", method, *options],
        cwd=workspace, env=environment, capture_output=True, text=True, timeout=CALL_TIMEOUT, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        return done.returncode, json.loads(done.stdout)
    except ValueError:
        raise AssertionError(f"the Inspector printed no JSON (exit {done.returncode}): {done.stdout[-1000:]} {done.stderr[-1000:]}") from None


if __name__ == "__main__":
    try:
        print(f"{INSPECTOR.package}@{INSPECTOR.version}: {ensure_installed()}")
    except Unavailable as reason:
        print(f"{reason}: the MCP Inspector tests will be skipped")
