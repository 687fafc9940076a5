"""The real Claude Code CLI, installed once into the user's cache and run against a fake API.

``python tests/claude_code/client.py`` installs it (``.ci/run`` does, before the tests); a test
that finds neither it nor node and npm skips, saying which is missing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script by .ci/run
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.claude_code.fake_api import Exchange, FakeAnthropic, Turn
from tests.claude_code.npm_tools import NpmTool, Unavailable  # noqa: F401  (Unavailable: the tests import it from here)

#: The last version that runs on node 20; later ones need node 22.
CLIENT = NpmTool("@anthropic-ai/claude-code", "2.1.197", "claude-code-2.1.197", "claude")
PACKAGE, VERSION = CLIENT.package, CLIENT.version
#: A run of a few scripted calls takes seconds; this is for a machine under heavy load.
RUN_TIMEOUT = 240


def ensure_installed() -> Path:
    """The installed client (installed now if it is not yet); ``Unavailable`` when it cannot be."""
    return CLIENT.ensure_installed()


# -- a workspace and a run -----------------------------------------------------------------------


def board_script() -> str:
    """This installation's ``board`` command, as ``board hooks install`` names it."""
    script = Path(sys.executable).parent / "board"
    return str(script) if script.exists() else "board"


def board(*args: str, cwd: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([board_script(), *args], cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


@dataclass
class Session:
    """A finished ``claude -p`` run: its exit status, its stream-json messages, what the API saw."""

    returncode: int
    messages: list[dict[str, Any]]
    stderr: str
    exchange: Exchange

    @property
    def result(self) -> dict[str, Any]:
        found = [m for m in self.messages if m.get("type") == "result"]
        assert found, f"claude wrote no result message; stderr: {self.stderr[-2000:]}"
        return found[-1]

    @property
    def session_id(self) -> str:
        return self.result["session_id"]

    def tool_results(self) -> list[str]:
        """The text of each tool result Claude Code sent back to the model, in order."""
        texts = []
        for block in self.exchange.tool_results():
            content = block.get("content")
            texts.append(content if isinstance(content, str) else " ".join(part.get("text", "") for part in content or [] if isinstance(part, dict)))
        return texts


class Claude:
    """The real client in a private HOME, pointed at a fake API, run in a workspace.

    ``Claude(path, home).run(workspace, [turns...])`` runs ``claude -p`` to the end of its
    script; every process it started is killed by its process group when it returns.
    """

    def __init__(self, executable: Path, home: Path) -> None:
        self.executable = executable
        self.home = home
        home.mkdir(parents=True, exist_ok=True)

    def environment(self, **extra: str) -> dict[str, str]:
        """The client's environment: nothing of the caller's Claude Code or board settings."""
        env = {key: value for key, value in os.environ.items() if not key.startswith(("BOARD_", "CLAUDE", "ANTHROPIC_"))}
        env.update(
            HOME=str(self.home),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            ANTHROPIC_API_KEY="test-key",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            IS_SANDBOX="1",  # as root, --dangerously-skip-permissions is refused without it
        )
        env.update(extra)
        return env

    def run(
        self,
        cwd: Path,
        turns: Sequence[Turn],
        *,
        prompts: Iterable[str] = ("do the task",),
        env: Mapping[str, str] | None = None,
        extra_args: Sequence[str] = (),
    ) -> Session:
        """Run the client in ``cwd`` until the script is spent. One prompt: ``-p PROMPT``;
        several: each a user message on stdin (``--input-format stream-json``), the next one
        sent when the turn before it has its result, as a person types at the prompt."""
        prompts = list(prompts)
        with FakeAnthropic(turns) as api:
            environment = self.environment(ANTHROPIC_BASE_URL=api.url, **(env or {}))
            args = [str(self.executable), "-p"]
            if len(prompts) == 1:
                args.append(prompts.pop())
            else:
                args += ["--input-format", "stream-json"]
            args += ["--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", *extra_args]
            process = subprocess.Popen(
                args, cwd=cwd, env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, start_new_session=True,
            )  # fmt: skip
            stderr: list[str] = []
            drain = threading.Thread(target=lambda: stderr.append(process.stderr.read()), daemon=True)  # type: ignore[union-attr]
            drain.start()
            # A run that hangs is killed, which ends its stdout and so the loop below.
            watchdog = threading.Timer(RUN_TIMEOUT, _kill_group, (process.pid,))
            watchdog.start()
            messages: list[dict[str, Any]] = []
            try:
                self._send(process, prompts)
                for line in process.stdout:  # type: ignore[union-attr]
                    try:
                        messages.append(json.loads(line))
                    except ValueError:
                        messages.append({"type": "unparsed", "line": line})
                        continue
                    if messages[-1].get("type") == "result":
                        self._send(process, prompts)
                process.wait()
            finally:
                timed_out = not watchdog.is_alive()
                watchdog.cancel()
                _kill_group(process.pid)  # hooks or shells it left behind
                drain.join(timeout=30)
        session = Session(process.returncode, messages, "".join(stderr), api.exchange)
        assert not timed_out, f"claude did not finish within {RUN_TIMEOUT} s; served {api.exchange.turns_served} of {len(turns)} turns; stderr: {session.stderr[-2000:]}"
        assert api.script_spent, f"claude stopped after {api.exchange.turns_served} of {len(turns)} scripted turns (exit {process.returncode}); stderr: {session.stderr[-2000:]}"
        return session

    @staticmethod
    def _send(process: subprocess.Popen, prompts: list[str]) -> None:
        """The next prompt as a stream-json user message, or the end of input when none is left."""
        assert process.stdin is not None
        try:
            if prompts:
                process.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": prompts.pop(0)}}) + "\n")
                process.stdin.flush()
            else:
                process.stdin.close()
        except BrokenPipeError:
            pass  # it exited already; its exit status and output tell why


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


if __name__ == "__main__":
    try:
        print(f"{PACKAGE}@{VERSION}: {ensure_installed()}")
    except Unavailable as reason:
        print(f"{reason}: the Claude Code tests will be skipped")


# -- what the board holds ------------------------------------------------------------------------


def logged_calls(workspace: Path, *, task: str | None = None, agent: str | None = None) -> list[dict[str, Any]]:
    """The lines of a task's call log (or an agent's), as ``board hook`` appended them."""
    state = workspace / ".tasks"
    log = state / "toolcalls" / f"{task}.jsonl" if task is not None else state / "agents" / f"{agent}.calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def agent_record(workspace: Path, name: str) -> dict[str, Any]:
    return json.loads((workspace / ".tasks" / "agents" / f"{name}.json").read_text())


def hook_log(workspace: Path) -> str:
    """What ``board hook`` noted (every error it swallowed), for a failing assertion to show."""
    log = workspace / ".tasks" / "logs" / "hook.log"
    return log.read_text() if log.exists() else "(no hook log)"
