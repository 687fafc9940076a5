"""Programs in a terminal as a person runs them: Claude Code's interactive TUI, and ``board ui``,
each in a window of a tmux server of the test's own (its own socket, its own environment).

``with Tmux(tmp_path / "tmux") as tmux: tmux.start("claude", argv, cwd=..., env=...)``; the
screen is ``tmux.screen("claude")``, keys go in with ``tmux.type`` and ``tmux.press``. On leaving,
every program it started is killed by its process group, then the server by its pid.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from tests.claude_code.client import Claude, Unavailable

#: Waits are for a loaded 2-core machine; a condition met sooner returns at once.
TIMEOUT = 180.0
T = TypeVar("T")


def wait_until(condition: Callable[[], T], what: str, *, timeout: float = TIMEOUT, explain: Callable[[], str] = lambda: "") -> T:
    """``condition()``'s first truthy value, polled until ``timeout``; fails saying what it waited for."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{explain()}")
        time.sleep(0.2)


class Tmux:
    """A private tmux server: one window per program, ``columns`` x ``lines`` each."""

    def __init__(self, folder: Path, *, columns: int = 200, lines: int = 50) -> None:
        if shutil.which("tmux") is None:
            raise Unavailable("tmux not found on PATH: cannot run the interactive client")
        folder.mkdir(parents=True, exist_ok=True)
        self.socket = folder / "tmux.sock"
        self.columns, self.lines = columns, lines
        self.windows: list[str] = []
        self._server_pid: int | None = None
        self._pane_pids: list[int] = []

    def __enter__(self) -> Tmux:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def _tmux(self, *args: str, env: Mapping[str, str] | None = None, check: bool = True) -> str:
        done = subprocess.run(["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, timeout=60, env=dict(env) if env is not None else None, stdin=subprocess.DEVNULL)
        if check and done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args[:2])}: {done.stderr.strip()}")
        return done.stdout

    def start(self, window: str, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> None:
        """``argv`` in a new window; the first one starts the server, in ``env`` (the windows'
        environment is the server's: nothing of the caller's own terminal leaks in)."""
        # A terminal's size is the window's: not what COLUMNS and LINES say (pytest sets them).
        env = {key: value for key, value in env.items() if key not in ("COLUMNS", "LINES")}
        variables = [f"-e{key}={value}" for key, value in env.items()]
        if not self.windows:
            self._tmux("new-session", "-d", "-s", "test", "-n", window, "-x", str(self.columns), "-y", str(self.lines), "-c", str(cwd), *variables, *argv, env=env)
            self._tmux("set-option", "-g", "remain-on-exit", "on")  # a program that exits leaves its last screen to read
            self._tmux("set-option", "-g", "default-size", f"{self.columns}x{self.lines}")  # no client is attached to size later windows
            self._server_pid = int(self._tmux("display-message", "-p", "#{pid}").strip())
        else:
            self._tmux("new-window", "-d", "-t", "test", "-n", window, "-c", str(cwd), *variables, *argv)
        self.windows.append(window)
        self._pane_pids.append(int(self._tmux("display-message", "-p", "-t", f"test:{window}", "#{pane_pid}").strip()))

    def screen(self, window: str) -> str:
        """What the window shows now, as text."""
        return self._tmux("capture-pane", "-p", "-t", f"test:{window}", check=False)

    def type(self, window: str, text: str) -> None:
        """``text`` typed, then Enter once the screen shows it (typed too fast, Enter is a newline)."""
        self._tmux("send-keys", "-t", f"test:{window}", "-l", text)
        wait_until(lambda: text in self.screen(window), f"{text!r} typed into {window}", explain=lambda: self.screen(window))
        self.press(window, "Enter")

    def press(self, window: str, *keys: str) -> None:
        self._tmux("send-keys", "-t", f"test:{window}", *keys)

    def kill(self) -> None:
        """Every program in a window, by its process group (with whatever it started there), then the server."""
        for pid in self._pane_pids:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self._server_pid is not None:
            self._tmux("kill-server", check=False)
            try:
                os.kill(self._server_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._pane_pids.clear()
        self._server_pid = None


def prepare_interactive(claude: Claude, workspace: Path, api_key: str = "test-key") -> None:
    """The client's settings as a person has them after its first run: onboarding done, the
    workspace trusted, the API key and --dangerously-skip-permissions accepted; else the TUI
    stops at a question before the prompt (and asks the real API)."""
    state = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "bypassPermissionsModeAccepted": True,
        "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
        "projects": {str(workspace): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}},
    }
    (claude.home / ".claude.json").write_text(json.dumps(state))
    settings = claude.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"skipDangerousModePermissionPrompt": True}))
