"""board's own code type-checks: mypy, with the settings in pyproject.toml, finds nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import LONG, REPO

pytestmark = LONG


#: mypy's incremental cache, kept between runs as the tests keep their npm tools: it checks again
#: only what changed (mypy's own rule, by each module's hash), a few seconds instead of half a minute.
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "board-tests" / "mypy"


def test_mypy_finds_no_error_in_board() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(CACHE / f"python{sys.version_info[0]}.{sys.version_info[1]}")],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0 and "Success: no issues found" in done.stdout, done.stdout[-4000:] + done.stderr[-2000:]
