"""Every ``board mcp`` a test starts is ended with it, passed or failed."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest


def children() -> set[int]:
    """The processes this test process started that are still there."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] not in ("Z", "X"):
            found.add(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def no_server_outlives_its_test():
    """The SDK's client ends the server it started when its block ends; a test that fails inside
    the block must not leave one running either, so what is left is killed by pid."""
    before = children()
    try:
        yield
    finally:
        for pid in children() - before:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
