"""The dashboard in a real terminal (a pty): its input thread sleeps until a key comes, keys and
a lone Escape still work, and q still quits at once (``board.ui.terminal_driver``)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from board.store import Store
from tests.conftest import REPO


class Terminal:
    """A dashboard on a pty of 160×45, and everything it drew."""

    def __init__(self, workspace: Path, home: Path, command: list[str] | None = None) -> None:
        self.primary, secondary = pty.openpty()
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 160, 0, 0))
        self.process = subprocess.Popen(
            command or [sys.executable, "-m", "board", "ui"], stdin=secondary, stdout=secondary, stderr=secondary,
            env={**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "XDG_CONFIG_HOME": str(home)},
            cwd=workspace, start_new_session=True,
        )
        os.close(secondary)
        self.shown = b""

    def read(self, until, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not until():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the terminal showed {self.shown[-2000:]!r}")
            if select.select([self.primary], [], [], 0.05)[0]:
                try:
                    self.shown += os.read(self.primary, 65536)
                except OSError:  # the dashboard closed the terminal's other end
                    return

    def pump(self, seconds: float) -> None:
        """Take in what it draws for ``seconds`` (a terminal nobody reads would block it)."""
        end = time.monotonic() + seconds
        self.read(lambda: time.monotonic() >= end, seconds + 60, "time to pass")

    def drawn_since(self, mark: int) -> bytes:
        return self.shown[mark:]

    def wakes_by_thread(self) -> dict[str, int]:
        """Each thread's voluntary context switches so far (each time it slept and woke)."""
        found = {}
        for thread in Path(f"/proc/{self.process.pid}/task").iterdir():
            try:
                status = (thread / "status").read_text()
            except OSError:
                continue  # ended meanwhile
            found[thread.name] = int(next(line.split()[1] for line in status.splitlines() if line.startswith("voluntary_ctxt_switches")))
        return found

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.primary)


def test_an_idle_dashboard_has_no_thread_that_polls_and_its_keys_still_work(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    store = Store.open(workspace, create=True)
    store.create("First task on the board")
    store.create("Second task on the board")
    terminal = Terminal(workspace, tmp_path / "config")
    try:
        terminal.read(lambda: b"Quit" in terminal.shown and b"#2" in terminal.shown, 60, "the board on screen")
        terminal.pump(1.0)
        before = terminal.wakes_by_thread()
        terminal.pump(3.0)
        after = terminal.wakes_by_thread()
        woken = {thread: after[thread] - before.get(thread, 0) for thread in after}
        # textual's own input thread wakes ten times a second (30 here); the app's clock once a
        # second. A thread that woke 15 times in 3 s polls.
        assert max(woken.values()) < 15, f"a thread woke {max(woken.values())} times in 3 idle seconds: {woken}"

        mark = len(terminal.shown)
        os.write(terminal.primary, b"\r")  # enter: the selected task's details
        terminal.read(lambda: b"status" in terminal.drawn_since(mark) and b"priority" in terminal.drawn_since(mark), 30, "the details to open")
        mark = len(terminal.shown)
        os.write(terminal.primary, b"\x1b")  # a lone Escape: known as the key only once its wait is over
        terminal.read(lambda: b"Ready" in terminal.drawn_since(mark), 30, "escape to close the details")
        os.write(terminal.primary, b"q")  # a stop the input thread missed would hang here for good
        terminal.read(lambda: terminal.process.poll() is not None, 30, "q to quit")
        assert terminal.process.wait(timeout=10) == 0
    finally:
        terminal.close()


#: ``board ui`` with a probe: each collection of the cyclic garbage collector, and whether the
#: collector ran on its own (enabled) or was asked (``gc.collect``); each time it is switched.
COLLECTIONS_PROBE = """
import gc, sys, threading, time
log = open(sys.argv[1], "a", buffering=1)
gc.callbacks.append(lambda phase, info: phase == "start" and log.write("collection " + ("automatic" if gc.isenabled() else "asked") + "\\n"))
from board.cli import main
def watch():
    on = gc.isenabled()
    while True:
        if gc.isenabled() != on:
            on = not on
            log.write("collector " + ("on" if on else "off") + "\\n")
        time.sleep(0.002)
threading.Thread(target=watch, daemon=True).start()
log.write("main\\n")
sys.exit(main(["ui"]))
"""


def test_the_dashboard_starts_without_the_collector_and_collects_once_the_board_is_on_screen(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    store = Store.open(workspace, create=True)
    for n in range(30):
        store.create(f"Task {n} on the board")
    log = tmp_path / "collections.log"
    terminal = Terminal(workspace, tmp_path / "config", [sys.executable, "-c", COLLECTIONS_PROBE, str(log)])
    try:
        terminal.read(lambda: b"Quit" in terminal.shown and b"#2" in terminal.shown, 60, "the board on screen")
        seen = lambda: log.read_text().splitlines() if log.exists() else []  # noqa: E731
        # Settled (half a second after the board is read): collected once, then collecting again.
        terminal.read(lambda: "collector on" in seen()[seen().index("main") :], 60, "the collector to be on again")
        os.write(terminal.primary, b"q")
        terminal.read(lambda: terminal.process.poll() is not None, 30, "q to quit")
        assert terminal.process.wait(timeout=10) == 0
    finally:
        terminal.close()
    lines = seen()
    started = lines[lines.index("main") + 1 :]
    on_again = started.index("collector on")
    before = started[:on_again]
    # Before, Textual's and board's imports and the first frame set off 135 collections.
    assert "collection automatic" not in before, before
    assert "collector off" in before and "collection asked" in before, before  # paused, then collected when settled


def test_without_a_terminal_the_dashboard_is_refused_in_one_line(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    Store.open(workspace, create=True).create("First task on the board")
    before = sorted((p.name, p.stat().st_mtime_ns) for p in (workspace / ".tasks").iterdir())
    done = subprocess.run(
        [sys.executable, "-m", "board", "ui"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "XDG_CONFIG_HOME": str(tmp_path / "config")}, cwd=workspace, timeout=60,
    )
    assert done.returncode == 2 and done.stdout == "", done
    assert len(done.stderr.splitlines()) == 1 and "needs a terminal" in done.stderr and "board web" in done.stderr, done.stderr
    assert sorted((p.name, p.stat().st_mtime_ns) for p in (workspace / ".tasks").iterdir()) == before


#: The dashboard on a terminal whose input ends at once (stdin at its end, as ``< /dev/null``
#: leaves it): the app run directly, past the command line's refusal, to try the driver.
INPUT_ENDED = """
import sys
from pathlib import Path
from board.ui.app import BoardApp
BoardApp(Path(sys.argv[1])).run()
"""


def test_an_input_at_its_end_leaves_the_dashboard_idle_not_spinning(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    Store.open(workspace, create=True).create("First task on the board")
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 160, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-c", INPUT_ENDED, str(workspace)], stdin=subprocess.DEVNULL, stdout=secondary, stderr=secondary,
        env={**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path / "config")},
        cwd=workspace, start_new_session=True,
    )
    os.close(secondary)
    terminal = Terminal.__new__(Terminal)
    terminal.primary, terminal.process, terminal.shown = primary, process, b""
    try:
        terminal.read(lambda: b"Quit" in terminal.shown and b"#1" in terminal.shown, 60, "the board on screen")
        terminal.pump(1.0)

        def cpu_seconds() -> float:
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        before, started = cpu_seconds(), time.monotonic()
        terminal.pump(3.0)
        used = cpu_seconds() - before
        # A thread spinning on the end of stdin took a core: 3 s of CPU in 3 s.
        assert used < 0.5 * (time.monotonic() - started), f"{used:.2f} s of CPU in {time.monotonic() - started:.1f} idle seconds"
        assert process.poll() is None
    finally:
        terminal.close()


def test_the_dashboard_draws_with_its_output_in_a_file_but_not_with_its_drawing_in_one(tmp_path: Path) -> None:
    """Textual reads keys from stdin and draws on stderr: ``board ui > file`` is a dashboard as
    any other; ``board ui 2> file`` would draw into the file, and is refused in one line."""
    workspace = tmp_path / "ws"
    Store.open(workspace, create=True).create("First task on the board")
    # The terminal's size is the pty's: not what COLUMNS and LINES say (pytest sets them).
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    env.update(PYTHONPATH=str(REPO), TERM="xterm-256color", XDG_CONFIG_HOME=str(tmp_path / "config"))
    output = tmp_path / "out.txt"
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 160, 0, 0))
    with output.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "board", "ui"], stdin=secondary, stdout=out, stderr=secondary, env=env, cwd=workspace, start_new_session=True)
    os.close(secondary)
    terminal = Terminal.__new__(Terminal)
    terminal.primary, terminal.process, terminal.shown = primary, process, b""
    try:
        terminal.read(lambda: b"Quit" in terminal.shown and b"#1" in terminal.shown, 60, "the board on screen")
        # Drawn at the terminal's 160×45, not at the 80×24 a size asked of stdout gives.
        # Drawn at the terminal's 160 columns, not at the 80 a size asked of stdout gives: the
        # first frame's top line, its escape codes taken out.
        top = terminal.shown.split(b"\x1b[1;1H", 1)[1].split(b"\x1b[2;1H", 1)[0]
        assert len(re.sub(rb"\x1b\[[0-9;]*m", b"", top).rstrip(b"\r\n").decode()) == 160, top
        os.write(primary, b"q")
        terminal.read(lambda: process.poll() is not None, 30, "q to quit")
        assert process.wait(timeout=10) == 0
    finally:
        terminal.close()
    assert output.read_bytes() == b""

    errors = tmp_path / "err.txt"
    primary, secondary = pty.openpty()
    with errors.open("wb") as err:
        refused = subprocess.run([sys.executable, "-m", "board", "ui"], stdin=secondary, stdout=secondary, stderr=err, env=env, cwd=workspace, timeout=60)
    os.close(secondary)
    os.close(primary)
    assert refused.returncode == 2
    lines = errors.read_text().splitlines()
    assert len(lines) == 1 and "needs a terminal" in lines[0], lines
