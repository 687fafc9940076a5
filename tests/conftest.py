"""Fixtures shared by every test folder: a real workspace on disk, empty or copied from the sample."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from board.store import Store

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_workspace"


@pytest.fixture(autouse=True)
def no_process_outlives_its_test():
    """Every process a test starts through ``tests.coordinator.helpers`` is killed by pid when
    the test ends, passed or failed."""
    from tests.coordinator.helpers import kill_started

    try:
        yield
    finally:
        kill_started()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An initialised, empty workspace."""
    Store.open(tmp_path, create=True)
    return tmp_path


@pytest.fixture
def store(workspace: Path) -> Store:
    return Store.open(workspace)


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A private copy of sample_workspace/ (tests never touch the committed one)."""
    target = tmp_path / "sample"
    shutil.copytree(SAMPLE, target)
    return target
