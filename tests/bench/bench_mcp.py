"""MCP benchmark: what an agent's calls cost through one ``board mcp`` connection, beside the CLI.

Run: python tests/bench/bench_mcp.py [--tasks 200 2000] [--calls 300] [--samples 100] [--cli-runs 15] [--dir DIR]
For each board size: tool calls per second through one stdio connection (``toolcall``, a write;
``task_show``, a read), and the median latency of a ``claim`` and of a ``task_update
--progress`` with its token; beside them the same claim and update as whole ``board`` commands,
measured in the same run (the CLI is the baseline: the same work, a process per call). Then
what a ``task_list`` answers on each board, in bytes and time: the default page, and every task
in full (``full``, ``limit`` the board's size). Fails on nothing. Boards (subjects of 40
characters) are made under --dir (default: the current directory), as real boards live there.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
#: The installed entry point, as a client starts it; ``python -m board`` when there is none.
BOARD = [str(Path(PYTHON).with_name("board"))] if Path(PYTHON).with_name("board").exists() else [PYTHON, "-m", "board"]


def make_board(root: Path, tasks: int) -> Path:
    """``tasks`` independent tasks, all ready: every claim takes one."""
    sys.path.insert(0, str(REPO))
    from board.store import Store

    store = Store.open(root, create=True)
    for n in range(tasks):
        store.create(f"Write the parser for the module no. {n + 1:05d}")
    store.close()
    return root


def per_call_ms(times: list[float]) -> str:
    return f"{statistics.median(times) * 1000:.1f} ms"


async def over_mcp(workspace: Path, calls: int, samples: int) -> dict[str, object]:
    params = StdioServerParameters(command=BOARD[0], args=[*BOARD[1:], "-w", str(workspace), "mcp"], env={"PYTHONPATH": str(REPO), "BOARD_AGENT": "bench"})
    async with Client(params, cache=None) as client:
        claimed = (await client.call_tool("claim", {"lease": 3600, "max": samples + 1})).structured_content["task"]
        task, token = claimed["id"], claimed["lease"]["token"]
        figures: dict[str, object] = {}
        for tool, arguments in (("toolcall", {"id": task, "tool": "Edit", "token": token}), ("task_show", {"id": task})):
            started = time.perf_counter()
            for _ in range(calls):
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result.content
            figures[f"{tool} calls/s"] = calls / (time.perf_counter() - started)
        for name, call in (
            ("claim", lambda n: client.call_tool("claim", {"lease": 3600, "max": samples + 1})),
            ("task_update", lambda n: client.call_tool("task_update", {"id": task, "progress": n % 100, "token": token})),
        ):
            times = []
            for n in range(samples):
                started = time.perf_counter()
                result = await call(n)
                times.append(time.perf_counter() - started)
                assert not result.is_error, result.content
            figures[name] = times
        return figures


async def listing(workspace: Path, tasks: int) -> dict[str, tuple[int, float]]:
    """Bytes of the whole answer (JSON-RPC result) and milliseconds of a default ``task_list``
    page and of every task in full."""
    params = StdioServerParameters(command=BOARD[0], args=[*BOARD[1:], "-w", str(workspace), "mcp"], env={"PYTHONPATH": str(REPO)})
    figures: dict[str, tuple[int, float]] = {}
    async with Client(params, cache=None) as client:
        for name, arguments in (("default page", {}), ("full", {"full": True, "limit": min(tasks, 1000)})):
            started = time.perf_counter()
            result = await client.call_tool("task_list", arguments)
            took = time.perf_counter() - started
            assert not result.is_error, result.content
            figures[name] = (len(result.model_dump_json(by_alias=True, exclude_none=True).encode()), took * 1000)
    return figures


def over_cli(workspace: Path, runs: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "BOARD_AGENT": "bench-cli"}

    def timed(argv: list[str]) -> tuple[float, str]:
        started = time.perf_counter()
        done = subprocess.run([*BOARD, "-w", str(workspace), *argv], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise SystemExit(f"board {' '.join(argv)} failed: {done.stderr.strip()}")
        return time.perf_counter() - started, done.stdout

    _, first = timed(["claim", "--agent", "bench-cli", "--lease", "3600", "--max", "100000"])
    task, token, _subject = first.split("\t", 2)
    figures: dict[str, list[float]] = {"claim": [], "task_update": []}
    for n in range(runs):
        figures["claim"].append(timed(["claim", "--agent", "bench-cli", "--lease", "3600", "--max", "100000"])[0])
        figures["task_update"].append(timed(["task", "update", task, "--progress", str(n % 100), "--token", token])[0])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[200, 2000], help="board sizes (default 200 2000)")
    parser.add_argument("--calls", type=int, default=300, help="calls per throughput figure through MCP (default 300)")
    parser.add_argument("--samples", type=int, default=100, help="claims and updates per MCP latency figure (default 100)")
    parser.add_argument("--cli-runs", type=int, default=15, help="whole commands per CLI figure (default 15)")
    parser.add_argument("--dir", default=".", help="where to make the boards (default: the current directory)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(dir=args.dir, prefix="bench-mcp-"))
    sizes: dict[int, dict[str, tuple[int, float]]] = {}
    try:
        print(f"{'tasks':>6}  {'toolcall/s':>10}  {'task_show/s':>11}  {'claim MCP':>10}  {'claim CLI':>10}  {'update MCP':>10}  {'update CLI':>10}")
        for size in args.tasks:
            if size <= max(args.samples, args.cli_runs):
                raise SystemExit(f"a board of {size} tasks runs out of ready tasks to claim: use more than {max(args.samples, args.cli_runs)}")
            mcp_board = make_board(root / f"mcp-{size}", size)
            cli_board = make_board(root / f"cli-{size}", size)
            mcp = anyio.run(over_mcp, mcp_board, args.calls, args.samples)
            cli = over_cli(cli_board, args.cli_runs)
            print(
                f"{size:>6}  {mcp['toolcall calls/s']:>10.0f}  {mcp['task_show calls/s']:>11.0f}  {per_call_ms(mcp['claim']):>10}  "  # type: ignore[arg-type]
                f"{per_call_ms(cli['claim']):>10}  {per_call_ms(mcp['task_update']):>10}  {per_call_ms(cli['task_update']):>10}"  # type: ignore[arg-type]
            )
            sizes[size] = anyio.run(listing, make_board(root / f"list-{size}", size), size)
        print(f"\n{'tasks':>6}  {'task_list':>12}  {'bytes':>9}  {'ms':>7}")
        for size, figures in sizes.items():
            for name, (answered, ms) in figures.items():
                print(f"{size:>6}  {name:>12}  {answered:>9,}  {ms:>7.1f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
