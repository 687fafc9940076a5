"""q in ``board demo``: the dashboard closes, and every process the demo started ends with it."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from tests.conftest import REPO
from tests.coordinator.helpers import Proc, alive, identify
from tests.coordinator.test_run import children_of


def test_q_ends_the_demo_and_every_process_it_started(tmp_path: Path) -> None:
    primary, secondary = pty.openpty()  # the dashboard draws only on a terminal
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 160, 0, 0))
    demo = subprocess.Popen(
        [sys.executable, "-m", "board", "demo"], stdin=secondary, stdout=secondary, stderr=secondary,
        env={**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path / "config")},
        cwd=tmp_path, start_new_session=True,
    )
    os.close(secondary)
    shown = b""
    children: list[Proc] = []

    def read(until, timeout: float, what: str) -> None:
        nonlocal shown
        deadline = time.monotonic() + timeout
        while not until():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the terminal showed {shown[-2000:]!r}")
            if select.select([primary], [], [], 0.05)[0]:
                try:
                    shown += os.read(primary, 65536)
                except OSError:  # the demo closed the terminal's other end
                    return

    try:
        read(lambda: b"Quit" in shown and len(children_of(demo.pid)) >= 5, 120, "the dashboard and the demo's five processes")
        children = identify(children_of(demo.pid))
        assert len(children) == 5
        os.write(primary, b"q")
        read(lambda: demo.poll() is not None, 60, "the demo to end after q")
        assert demo.wait(timeout=30) == 0
        still = [child for child in children if alive(child)]
        assert not still, f"processes of the demo outlived it: {still}"
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
        for child in children:
            if alive(child):
                os.kill(child.pid, 9)
        os.close(primary)
