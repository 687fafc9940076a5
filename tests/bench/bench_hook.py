"""Hook benchmark: one ``board hook`` process per Claude Code event, beside the yardstick.

Claude Code starts the hook on every tool call of every agent and waits for PreToolUse, so its
cost is a whole process: interpreter start, imports, reading the event, the append. The
yardstick is the least a Python hook can do, ``python -c 'import json,sys;
json.load(sys.stdin)'``, with the same interpreter, timed in the same run, alternating with the
hook so both meet the same machine. Target: the hook's median at most 3x the yardstick's.

    python tests/bench/bench_hook.py [--runs 30] [--tasks 1000] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from board.store import Store  # noqa: E402

YARDSTICK = [sys.executable, "-c", "import json,sys; json.load(sys.stdin)"]


def board_command() -> list[str]:
    script = Path(sys.executable).parent / "board"
    return [str(script), "hook"] if script.exists() else [sys.executable, "-m", "board", "hook"]


def make_board(root: Path, tasks: int) -> tuple[Path, dict[str, str]]:
    workspace = root / f"board-{tasks}"
    store = Store.open(workspace, create=True)
    for n in range(1, tasks + 1):
        store.create(f"task {n}", files=[f"src/module_{n}.py"])  # task n's file is module_n
    mine = store.claim_task("1", "worker-1")
    store.claim_task("2", "worker-2")  # another agent's work in progress, for the guard to check
    env = {"BOARD_WORKSPACE": str(workspace), "BOARD_TASK_ID": mine.id, "BOARD_AGENT": "worker-1", "BOARD_LEASE_TOKEN": str(mine.lease.token)}
    return workspace, env


def event(workspace: Path, name: str, tool: str, path: str, call: int) -> bytes:
    return json.dumps({
        "session_id": "8c35adc1-5f0e-4a9b-9c1e-2b7d3f6a1e90",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": str(workspace),
        "hook_event_name": name,
        "tool_name": tool,
        "tool_input": {"file_path": str(workspace / path), "old_string": "a", "new_string": "b"},
        "tool_response": {"success": True},
        "tool_use_id": f"toolu_{call:04d}",  # each run another call: a call logged already is not logged again
    }).encode()


def timed(command: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> float:
    return run(command, stdin, env, cwd)[0]


def run(command: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> tuple[float, str]:
    """The wall time of one run, and what it answered (its exit status, stdout and stderr)."""
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, env=env, cwd=cwd, capture_output=True)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 2):
        raise SystemExit(f"{command} exited {done.returncode}: {done.stderr.decode()}")
    said = (done.stdout + done.stderr).decode(errors="replace").strip().splitlines()
    return elapsed, f"exit {done.returncode}" + (f": {said[0][:70]}" if said else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs of each command (default 30)")
    parser.add_argument("--tasks", type=int, default=1000, help="tasks on the board (default 1000)")
    parser.add_argument("--dir", type=Path, help="where to make the board (default: a temporary directory)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(dir=args.dir))
    workspace, board_env = make_board(root, args.tasks)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("BOARD_")}, **board_env}
    cases = [
        ("PostToolUse Edit (counted on the task)", ("PostToolUse", "Edit", "src/module_1.py")),
        ("PreToolUse Edit, its own task's file", ("PreToolUse", "Edit", "src/module_1.py")),
        ("PreToolUse Edit, free file", ("PreToolUse", "Edit", "src/module_3.py")),  # task 3: nobody's yet
        ("PreToolUse Edit, another agent's file", ("PreToolUse", "Edit", "src/module_2.py")),  # worker-2's task 2
    ]
    hook = board_command()
    yardstick: list[float] = []
    print(f"median wall time of {args.runs} runs, {args.tasks:,} tasks ({sys.executable}, {sys.version.split()[0]})")
    results = []
    for case, (label, (name, tool, path)) in enumerate(cases):
        times = []
        for attempt in range(args.runs):
            stdin = event(workspace, name, tool, path, case * args.runs + attempt)
            elapsed, answer = run(hook, stdin, env, workspace)
            times.append(elapsed)
            yardstick.append(timed(YARDSTICK, stdin, env, workspace))
        results.append((label, statistics.median(times), answer))
    base = statistics.median(yardstick)
    print(f"  {'python -c json.load(stdin) (yardstick)':60} {base * 1000:6.1f} ms   1.0x")
    for label, median, answer in results:
        print(f"  {'board hook: ' + label:60} {median * 1000:6.1f} ms   {median / base:.1f}x   ({answer})")
    calls = Store.open(workspace).get("1").tool_calls.total
    print(f"  calls counted on the task: {calls} (expected {args.runs})")


if __name__ == "__main__":
    main()
