"""Fixtures shared by every test folder: a real workspace on disk, empty or copied from the sample."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from board.store import Store
from tests.pg_cluster import pg_cluster, pg_url  # noqa: F401 - fixtures: one PostgreSQL server for the whole session

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


@pytest.fixture(autouse=True)
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's folder for this test (``CLAUDE_CONFIG_DIR``): the user's real ``~/.claude``,
    its teams and task lists, never reach a test, and a test never writes there."""
    home = tmp_path / "claude-home"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    return home


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's state directory for this test (``XDG_STATE_HOME``): a database board's files of
    this machine never reach the real one."""
    home = tmp_path / "state-home"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """Where the test's board is kept. A module that holds for every backend says so with
    ``pytestmark = BOTH_BACKENDS``; the rest run on files."""
    return getattr(request, "param", "files")


#: Run every test of a module that has a board (``workspace``, ``store``...) on files and on
#: PostgreSQL; its other tests run once.
BOTH_BACKENDS = pytest.mark.both_backends


#: A module whose tests take long (processes, several machines, a type check of the whole
#: package): the suite's workers take these first, so none is left running one alone at the end.
LONG = pytest.mark.long


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Long modules first, each module's tests in their own order (every worker sorts the same)."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("both_backends") is not None and "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", ["files", "postgres"], indirect=True)


@pytest.fixture
def workspace(tmp_path: Path, backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An initialised, empty workspace. On PostgreSQL, ``BOARD_DB`` names a fresh database with
    the board's schema, so every ``Store.open`` and ``board`` command of the test uses it."""
    board_kept_in(backend, request, monkeypatch)
    # A database board's workspace keeps this machine's files in its own .tasks/, as one whose
    # board.toml names the database does.
    (tmp_path / ".tasks").mkdir(exist_ok=True)
    Store.open(tmp_path, create=True).close()
    return tmp_path


def board_kept_in(backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """On PostgreSQL: a fresh database with the board's schema, named by ``BOARD_DB`` for the
    rest of the test (every ``Store.open`` and ``board`` command, child processes included)."""
    if backend != "postgres":
        return
    from board.store.postgres.connect import connect
    from board.store.postgres.migrations import migrate

    url = request.getfixturevalue("pg_url")
    with connect(url, autocommit=True) as conn:
        migrate(conn)
    monkeypatch.setenv("BOARD_DB", url)


def files_only(reason: str) -> pytest.MarkDecorator:
    """For a test of how a board is kept in files (their bytes, their names, the lock)."""
    return pytest.mark.files_only(reason)


@pytest.fixture(autouse=True)
def _skip_file_tests_on_a_database(request: pytest.FixtureRequest) -> None:
    marker = request.node.get_closest_marker("files_only")
    if marker is not None and "backend" in request.fixturenames and request.getfixturevalue("backend") == "postgres":
        pytest.skip(f"about files, not PostgreSQL: {marker.args[0]}")


@pytest.fixture
def store(workspace: Path) -> Store:
    return Store.open(workspace)


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A private copy of sample_workspace/ (tests never touch the committed one)."""
    target = tmp_path / "sample"
    shutil.copytree(SAMPLE, target)
    return target


@pytest.fixture
def small_disk():
    """A 2 MiB tmpfs of its own (root only), unmounted at the end."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    mount_point = Path(tempfile.mkdtemp(prefix="board-small-disk-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)], capture_output=True, text=True)
    if mounted.returncode != 0:
        mount_point.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)
        mount_point.rmdir()
