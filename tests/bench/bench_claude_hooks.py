"""What hooks add to each tool call of the real Claude Code: none, ``/bin/true``, and board's two ways.

One scripted session of 8 tool calls (Write, Read, Edit, Bash ok and failed...) runs through
the real client (``tests/claude_code/client.py``: Claude Code 2.1.197 against a fake Messages
API) in a fresh workspace with a board, four ways, alternating so all four meet the same
machine: no hooks; a ``/bin/true`` command hook on every event board listens to, with the same
matchers (what any command hook costs); board's command hooks (``board hooks install
--command``: ``board hook`` on every event); board's http hooks (``board hooks install``: the
tool calls POSTed to ``board hooks serve``, running already, as after a session's start). The time
measured is from the model's first answer to its last request: the 8 calls and their hooks,
not the client's start. Printed: the median of each, and what each adds per call over no hooks.

    python tests/bench/bench_claude_hooks.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from board.claude.hooks import loopback  # noqa: E402
from board.claude.hooks.install import EVENTS, installed_port, read_settings  # noqa: E402
from board.store import Store  # noqa: E402
from tests.claude_code.client import Claude, Unavailable, board, ensure_installed  # noqa: E402
from tests.claude_code.fake_api import tool  # noqa: E402

CALLS = 8


def script(workspace: Path) -> list:
    a, b = workspace / "src" / "a.py", workspace / "src" / "b.py"
    return [
        tool("Write", file_path=str(a), content="a = 1\n"),
        tool("Read", file_path=str(a)),
        tool("Edit", file_path=str(a), old_string="a = 1", new_string="a = 2"),
        tool("Bash", command="true", description="succeed"),
        tool("Bash", command="false", description="fail"),
        tool("Write", file_path=str(b), content="b = 1\n"),
        tool("Read", file_path=str(b)),
        tool("Bash", command="ls src", description="list"),
    ]


def true_hooks() -> dict:
    """``/bin/true`` on each of board's events, with board's matchers."""
    hooks = {}
    for event, matcher in EVENTS.items():
        group: dict = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": "/bin/true", "timeout": 10}]
        hooks[event] = [group]
    return {"hooks": hooks}


def workspace(root: Path, name: str, claude: Claude, hooks: str) -> tuple[Path, dict[str, str]]:
    folder = root / name
    (folder / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    store = Store.open(folder, create=True)
    task = store.claim_task(store.create("the work").id, "alice")
    if hooks == "true":
        (folder / ".claude").mkdir()
        (folder / ".claude" / "settings.json").write_text(json.dumps(true_hooks()))
    elif hooks == "board":
        assert board("hooks", "install", "--command", cwd=folder, env=claude.environment()).returncode == 0
    elif hooks == "board-http":
        assert board("hooks", "install", cwd=folder, env=claude.environment()).returncode == 0
    return folder, {"BOARD_AGENT": "alice", "BOARD_TASK_ID": task.id, "BOARD_WORKSPACE": str(folder)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    try:
        executable = ensure_installed()
    except Unavailable as reason:
        sys.exit(str(reason))
    spans: dict[str, list[float]] = {"none": [], "true": [], "board": [], "board-http": []}
    with tempfile.TemporaryDirectory(prefix="bench-claude-hooks-") as temp:
        root = Path(temp)
        claude = Claude(executable, root / "home")
        server = None
        try:
            for round_number in range(args.rounds):
                for hooks in spans:
                    folder, env = workspace(root, f"{hooks}-{round_number}", claude, hooks)
                    if hooks == "board-http" and server is None:
                        server = start_server(installed_port(read_settings(folder / ".claude" / "settings.json")), claude)
                    elif hooks == "board-http":  # one server for every round: the port of the first
                        settings = folder / ".claude" / "settings.json"
                        assert board("hooks", "install", "--port", str(server[1]), cwd=folder, env=claude.environment()).returncode == 0
                        assert installed_port(read_settings(settings)) == server[1]
                    session = claude.run(folder, script(folder), env=env)
                    assert session.returncode == 0, session.stderr
                    times = session.exchange.turn_times
                    assert len(times) == CALLS + 1, times
                    spans[hooks].append((times[-1] - times[0]) * 1000)
                    if hooks.startswith("board"):
                        counted = Store.open(folder).get(env["BOARD_TASK_ID"]).tool_calls.total
                        assert counted == CALLS, f"{hooks}: {counted} of {CALLS} calls counted"
                print(f"round {round_number + 1}/{args.rounds}: " + ", ".join(f"{h} {s[-1]:.0f} ms" for h, s in spans.items()), flush=True)
        finally:
            if server is not None:
                os.kill(server[0].pid, signal.SIGKILL)
                server[0].wait()
    base = statistics.median(spans["none"])
    print(f"\n{CALLS} tool calls through Claude Code 2.1.197, median of {args.rounds} rounds each:")
    for hooks, label in (("none", "no hooks"), ("true", "/bin/true hooks"), ("board", "board's command hooks"), ("board-http", "board's http hooks")):
        median = statistics.median(spans[hooks])
        added = "" if hooks == "none" else f"   +{(median - base) / CALLS:.0f} ms per call"
        print(f"  {label:<22} {median:7.0f} ms for the {CALLS} calls ({median / CALLS:.0f} ms each){added}")


def start_server(port: int | None, claude: Claude) -> tuple[subprocess.Popen, int]:
    """``board hooks serve`` on the port board's http hooks name, listening when this returns."""
    assert port is not None
    script = Path(sys.executable).parent / "board"
    server = subprocess.Popen([str(script), "hooks", "serve", "--port", str(port)], env=claude.environment(), stdin=subprocess.DEVNULL, start_new_session=True)
    while loopback.listener_uid(port) is None:
        assert server.poll() is None, "board hooks serve exited"
        time.sleep(0.02)
    return server, port


if __name__ == "__main__":
    main()
