"""MCP peers benchmark: ``board mcp`` beside Backlog.md's MCP server, on the same board, in one run.

Run: python tests/bench/bench_mcp_peers.py [--tasks 1000] [--starts 15] [--calls 50] [--dir DIR]
Start-up: spawn to the ``initialize`` handshake done and ``tools/list`` answered, median of
--starts runs, interleaved, for (a) ``board mcp``, (b) Backlog.md's ``backlog mcp start`` (pinned
npm release, installed once into the user's cache as the tests install their npm tools) and (c) a
bare server: a Python process importing the SDK modules board's server imports and serving one
trivial tool. Board's own share is (a) - (c), the median of each round's difference; the target is at most 50 ms. Listing: through one
open connection per server, the bytes of the whole answer (JSON-RPC result) and the p50 / p95
of --calls calls, interleaved, of board's default ``task_list`` and Backlog.md's list tool on
the same --tasks tasks (subjects of 40 characters), and board's ``task_list`` with every task
in full for reference; the targets are board's default answer at most 50 KB and its p50 at
most half Backlog.md's. Every server is driven by the same client (the MCP Python SDK's, by the
initialize handshake). Without node and npm, or the package, it says why and measures board
alone. Fails on nothing. Boards are made under --dir (default: the current directory).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.bench.peers import backlog_program, make_backlog  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
#: The installed entry point, as a client starts it; ``python -m board`` when there is none.
BOARD = [str(Path(PYTHON).with_name("board"))] if Path(PYTHON).with_name("board").exists() else [PYTHON, "-m", "board"]
SUBJECT = "Write the parser for the module no. {:05d}"

#: What board's server imports from the SDK (``board/mcp/server.py``, ``served.py``, ``follow.py``)
#: and nothing of board's: a server of one tool, served on stdio as board's is.
BARE_SERVER = """\
import anyio, anyio.from_thread, anyio.to_thread
from anyio.abc import TaskGroup
from mcp.server import MCPServer
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, EmptyResult, ErrorData, JSONRPCError
from mcp.types import SubscribeRequestParams, SubscriptionsListenRequestParams, UnsubscribeRequestParams
from mcp.types import Tool as MCPTool
from mcp.types import ToolAnnotations
from pydantic import ConfigDict, Field, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict

server = MCPServer("bare")


@server.tool()
def echo(text: str) -> str:
    \"\"\"Answer with the text given.\"\"\"
    return text


anyio.run(server.run_stdio_async)
"""


def make_board(workspace: Path, tasks: int) -> Path:
    """``tasks`` ready tasks in board's store, as ``board task create`` makes them."""
    sys.path.insert(0, str(REPO))
    from board.store import Store

    store = Store.open(workspace, create=True)
    for n in range(tasks):
        store.create(SUBJECT.format(n + 1))
    store.close()
    return workspace


def servers(workspace: Path, backlog: Path | None, program: Path | None) -> dict[str, StdioServerParameters]:
    env = {"PYTHONPATH": str(REPO), "BOARD_AGENT": "bench"}
    chosen = {
        "board": StdioServerParameters(command=BOARD[0], args=[*BOARD[1:], "-w", str(workspace), "mcp"], env=env),
        "bare SDK": StdioServerParameters(command=PYTHON, args=["-c", BARE_SERVER], env=env),
    }
    if backlog is not None and program is not None:
        chosen["Backlog.md"] = StdioServerParameters(command=str(program), args=["mcp", "start"], cwd=str(backlog))
    return chosen


def connected(params: StdioServerParameters) -> Client:
    # The initialize handshake for every server (not the newer discover probe, which a server
    # that predates it answers with an error first): each is measured the same way.
    return Client(params, cache=None, mode="legacy")


async def started(params: StdioServerParameters) -> float:
    """Seconds from spawn to ``initialize`` done and ``tools/list`` answered (not the shutdown)."""
    begun = time.perf_counter()
    async with connected(params) as client:
        await client.list_tools(cache_mode="bypass")
        took = time.perf_counter() - begun
    return took


async def start_ups(chosen: dict[str, StdioServerParameters], runs: int) -> dict[str, list[float]]:
    """Each server started ``runs`` times, in turn, the order rotating every round."""
    times: dict[str, list[float]] = {name: [] for name in chosen}
    names = list(chosen)
    for name in names:  # a first start of each, not counted: files into the page cache
        await started(chosen[name])
    for n in range(runs):
        for name in names[n % len(names) :] + names[: n % len(names)]:
            times[name].append(await started(chosen[name]))
    return times


def size(result: object) -> int:
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode())  # type: ignore[attr-defined]


def backlog_ids(result: object) -> set[str]:
    text = " ".join(getattr(part, "text", "") for part in result.content)  # type: ignore[attr-defined]
    if result.structured_content:  # type: ignore[attr-defined]
        text += json.dumps(result.structured_content)  # type: ignore[attr-defined]
    return set(re.findall(r"\bTASK-\d+\b", text, flags=re.IGNORECASE))


async def listings(chosen: dict[str, StdioServerParameters], tasks: int, calls: int) -> tuple[dict[str, tuple[int, list[float]]], str]:
    """Bytes and call times of each listing, the calls interleaved over open connections."""
    figures: dict[str, tuple[int, list[float]]] = {}
    note = ""
    async with AsyncExitStack() as connections:
        board = await connections.enter_async_context(connected(chosen["board"]))
        listed: dict[str, Callable[[], object]] = {
            "board task_list": lambda: board.call_tool("task_list", {}),
        }
        if "Backlog.md" in chosen:
            backlog_client = await connections.enter_async_context(connected(chosen["Backlog.md"]))
            names = [tool.name for tool in (await backlog_client.list_tools()).tools]
            tool = "task_list" if "task_list" in names else next((name for name in names if "list" in name and "task" in name), None)
            if tool is None:
                note = f"Backlog.md names no list tool among {names}"
            else:
                first = await backlog_client.call_tool(tool, {})
                seen = backlog_ids(first)
                note = f"Backlog.md's list tool {tool!r} (no arguments) names {len(seen):,} of the {tasks:,} tasks"
                if len(seen) != tasks:
                    raise SystemExit(f"{note}: not the same board, nothing timed")
                listed[f"Backlog.md {tool}"] = lambda: backlog_client.call_tool(tool, {})
        listed["board task_list full"] = lambda: board.call_tool("task_list", {"full": True, "limit": tasks})
        for name, call in listed.items():  # once each, not counted
            result = await call()  # type: ignore[misc]
            assert not result.is_error, (name, result.content)
            figures[name] = (size(result), [])
        for _ in range(calls):
            for name, call in listed.items():
                begun = time.perf_counter()
                await call()  # type: ignore[misc]
                figures[name][1].append(time.perf_counter() - begun)
    return figures, note


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000, help="tasks on the board (default 1000)")
    parser.add_argument("--starts", type=int, default=15, help="start-ups of each server (default 15)")
    parser.add_argument("--calls", type=int, default=50, help="list calls to each server (default 50)")
    parser.add_argument("--dir", default=".", help="where to make the boards (default: the current directory)")
    args = parser.parse_args()
    program, why = backlog_program()
    if program is None:
        print(f"Backlog.md not measured: {why}")
    root = Path(tempfile.mkdtemp(dir=args.dir, prefix="bench-mcp-peers-"))
    try:
        workspace = make_board(root / "board", args.tasks)
        backlog = make_backlog(root / "backlog", args.tasks, program, SUBJECT) if program is not None else None
        chosen = servers(workspace, backlog, program)

        times = anyio.run(start_ups, chosen, args.starts)
        median = {name: statistics.median(runs) for name, runs in times.items()}
        # Each round starts every server once, so a round's difference shares that moment's
        # load: the median of the differences is steadier than the difference of the medians.
        share = statistics.median(b - s for b, s in zip(times["board"], times["bare SDK"]))
        print(f"start-up: spawn to initialize done and tools/list answered, median of {args.starts} ({args.tasks:,} tasks)")
        print(f"{'server':>22}  {'median ms':>9}  {'min ms':>7}  {'max ms':>7}")
        for name in ("board", "Backlog.md", "bare SDK"):
            if name in times:
                print(f"{name:>22}  {ms(median[name]):>9}  {ms(min(times[name])):>7}  {ms(max(times[name])):>7}")
        print(f"{'board own (board-bare)':>22}  {ms(share):>9}  (median of the rounds' differences; target <= 50 ms)")
        if "Backlog.md" in median:
            print(f"board / Backlog.md {median['board'] / median['Backlog.md']:.2f}x, board's own share / Backlog.md {share / median['Backlog.md']:.2f}x")

        figures, note = anyio.run(listings, chosen, args.tasks, args.calls)
        print(f"\nlisting {args.tasks:,} tasks through one open connection, {args.calls} calls each, interleaved")
        if note:
            print(note)
        print(f"{'call':>28}  {'bytes':>9}  {'p50 ms':>7}  {'p95 ms':>7}")
        for name, (answered, calls) in figures.items():
            print(f"{name:>28}  {answered:>9,}  {ms(statistics.median(calls)):>7}  {ms(p95(calls)):>7}")
        theirs = next((name for name in figures if name.startswith("Backlog.md")), None)
        ours, full = figures["board task_list"], figures["board task_list full"]
        print(f"board default: {ours[0] / 1000:.1f} KB (target <= 50 KB)")
        if theirs is not None:
            other = figures[theirs]
            for name, mine in (("default", ours), ("full", full)):
                print(
                    f"board {name} / Backlog.md: bytes {mine[0] / other[0]:.2f}x, p50 {statistics.median(mine[1]) / statistics.median(other[1]):.2f}x, "
                    f"p95 {p95(mine[1]) / p95(other[1]):.2f}x" + ("  (target p50 <= 0.5x)" if name == "default" else "")
                )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
