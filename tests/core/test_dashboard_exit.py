"""A dashboard that stops on an error exits non-zero: scripts and ``board demo`` must not read a
crash as a person quitting."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from board.store import Store
from tests.conftest import REPO

#: The real ``board ui`` in a terminal, with its app made to fail as it starts: whatever breaks
#: it, the exit status must say so.
FAILING_DASHBOARD = """
import sys
import board.ui.app as app

def fail(self):
    raise RuntimeError("the dashboard broke")

app.BoardApp.on_mount = fail
from board.cli import main
sys.exit(main(["ui", sys.argv[1]]))
"""


def test_a_dashboard_that_stops_on_an_error_exits_non_zero(tmp_path: Path) -> None:
    Store.open(tmp_path, create=True).create("a task")
    primary, secondary = pty.openpty()  # Textual draws only on a terminal
    process = subprocess.Popen(
        [sys.executable, "-c", FAILING_DASHBOARD, str(tmp_path)], stdin=secondary, stdout=secondary, stderr=secondary,
        env={**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color"}, cwd=tmp_path,
    )
    os.close(secondary)
    shown = b""
    try:
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            if select.select([primary], [], [], 0.2)[0]:
                try:
                    shown += os.read(primary, 65536)
                except OSError:
                    break
        status = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(primary)
    assert status == 1 and b"the dashboard broke" in shown
