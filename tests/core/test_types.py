"""board's own code type-checks: mypy, with the settings in pyproject.toml, finds nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import LONG, REPO

pytestmark = LONG


def test_mypy_finds_no_error_in_board(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy-cache")],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0 and "Success: no issues found" in done.stdout, done.stdout[-4000:] + done.stderr[-2000:]
