"""Starting ``board mcp`` as a client does, and calling its tools."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from tests.conftest import REPO

#: The tools the server serves, by the names agents call them.
TOOLS = {
    "task_create", "task_list", "task_show", "task_update", "claim", "heartbeat", "release",
    "toolcall", "reserve", "alerts", "board_prompt", "task_delete", "message", "task_restore",
    "answer", "reservations", "unreserve", "checkpoint", "resume", "agents", "plan_import",
}


@asynccontextmanager
async def board_mcp(workspace: Path | None, *options: str, env: dict[str, str] | None = None, **client: Any) -> AsyncIterator[Client]:
    """``board mcp`` started over stdio by the SDK's own client, as Claude Code or Codex start it.

    The server gets only the environment given (and what the SDK passes on: HOME, PATH...), as
    with a real client; ``PYTHONPATH`` makes it run this checkout, and ``BOARD_DB`` (a client's
    configuration would carry it, or ``--db``) the test's database board.
    """
    database = {"BOARD_DB": os.environ["BOARD_DB"]} if os.environ.get("BOARD_DB") else {}
    where = ["-w", str(workspace)] if workspace is not None else []
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "board", *where, *options, "mcp"],
        env={"PYTHONPATH": str(REPO), **database, **(env or {})}, cwd=str(workspace or REPO),
    )
    async with Client(params, cache=None, **client) as connected:
        yield connected


async def ok(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    """Call a tool that must succeed; its structured result."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} {arguments}: {result.content}"
    return result.structured_content


async def refused(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    """Call a tool that must refuse; its one-line message."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} {arguments} was not refused: {result.structured_content}"
    text = result.content[0].text
    assert "\n" not in text and "Traceback" not in text, text
    return text


def text_of(read: Any) -> str:
    [contents] = read.contents
    return contents.text


def json_of(read: Any) -> dict[str, Any]:
    return json.loads(text_of(read))
