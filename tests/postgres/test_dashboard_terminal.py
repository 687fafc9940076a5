"""``board --db URL ui`` as a person starts it, in a terminal (a pseudo-terminal here): the
dashboard opens a database board from any folder, as every other command does, and says in one
line when it cannot."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate
from tests.conftest import REPO
from tests.coordinator.helpers import started
from tests.postgres.test_transfer import board, refused

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'board[postgres]'")

#: Generous: CI is a loaded 2-core machine.
TIMEOUT = 120.0
#: Control sequences (colours, cursor moves, modes) between the text a program writes.
CONTROL = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78MNOP]")


class Terminal:
    """A program in a pseudo-terminal of ``columns`` x ``lines``, and the text it has written."""

    def __init__(self, argv: list[str], *, cwd: Path, env: dict[str, str], columns: int = 120, lines: int = 36) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        self.process = started(subprocess.Popen(argv, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True))
        os.close(slave)
        self.master = master
        self.written = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the program closed the terminal
                return
            if not chunk:
                return
            self.written += chunk

    def text(self) -> str:
        return CONTROL.sub(b"", bytes(self.written)).decode("utf-8", "replace")

    def wait_for(self, what: str, condition) -> None:  # noqa: ANN001
        deadline = time.monotonic() + TIMEOUT
        while not condition(self.text()):
            assert self.process.poll() is None, f"it exited ({self.process.returncode}) before showing {what}: {self.text()[-600:]!r}"
            assert time.monotonic() < deadline, f"timed out after {TIMEOUT:.0f} s waiting for {what}: {self.text()[-600:]!r}"
            time.sleep(0.05)

    def press(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=TIMEOUT)
        self._reader.join(timeout=TIMEOUT)
        os.close(self.master)


@pytest.fixture
def db(pg_url: str, tmp_path: Path) -> str:
    """A database board with three tasks."""
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    store = Store.open(tmp_path / "writer", db=pg_url)
    for subject in ("tables", "indexes", "migrations"):
        store.create(subject)
    store.close()
    return pg_url


def test_the_dashboard_opens_a_database_board_from_a_folder_without_a_board(db: str, tmp_path: Path) -> None:
    folder = tmp_path / "anywhere"
    folder.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "BOARD_DB"} | {
        "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    terminal = Terminal([sys.executable, "-m", "board", "--db", db, "-w", str(folder), "ui"], cwd=folder, env=env)
    try:
        terminal.wait_for("the board's tasks", lambda text: all(subject in text for subject in ("tables", "indexes", "migrations")))
        assert "database" in terminal.text()  # the header says where the board is kept
        terminal.press("q")
        assert terminal.process.wait(timeout=TIMEOUT) == 0, terminal.text()[-600:]
    finally:
        terminal.close()
    # This machine's files of the board are in the state directory, not in the folder it ran in.
    assert list(folder.iterdir()) == [] and [p.parent.name for p in (tmp_path / "state-home" / "board").iterdir()] == ["board"]


def test_a_dashboard_on_a_database_it_cannot_use_is_one_line_and_changes_nothing(pg_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "anywhere"
    folder.mkdir()
    assert refused(board("--db", pg_url, "-w", str(folder), "ui", cwd=folder)) == "board: no board in this database: run 'board --db URL init'"
    missing = tmp_path / "missing"
    assert refused(board("--db", pg_url, "ui", str(missing), cwd=folder)) == (
        f"board: {missing} is not a directory: give the workspace to open the board of the database in"
    )
    assert list(folder.iterdir()) == [] and not missing.exists()
