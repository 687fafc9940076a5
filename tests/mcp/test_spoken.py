"""A refusal over MCP names the tool's own arguments and tools, never the command line's options:
the same refusal on the command line names ``--status``, ``--force``, ``board unreserve``."""

from __future__ import annotations

import re
from pathlib import Path

import anyio

from board.store import Store
from tests.conftest import BOTH_BACKENDS
from tests.core.test_cli import board
from tests.mcp.connect import board_mcp, refused

pytestmark = BOTH_BACKENDS

#: What a command line's option or command looks like in a message.
COMMAND_LINE = re.compile(r"--[a-z]|'board [a-z]")


def test_refusals_name_the_tools_arguments_and_the_command_line_names_its_options(workspace: Path, tmp_path_factory, monkeypatch) -> None:
    store = Store.open(workspace)
    store.create("Design the schema")  # 1: held by bob
    store.create("Repository layer", blocked_by=["1"])  # 2: waits on 1
    store.create("Ask about the engine")  # 3: waits for a person
    store.create("Unowned")  # 4
    claimed = store.claim("bob", lease_seconds=600)
    token = str(claimed.lease.token)  # type: ignore[union-attr]
    store.start("3", "carol", actor="carol")
    store.set_status("3", "waiting", actor="carol", fields={"question": "Postgres or SQLite?"})
    (workspace / "src").mkdir()
    store.update("4", actor="dan", owner="dan")
    empty_home = tmp_path_factory.mktemp("no-claude-teams")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(empty_home))
    cases = [
        # (tool, arguments, the same on the command line, what the tool says, what the command line says)
        ("task_update", {"id": "4", "question": "Which?"}, ["task", "update", "4", "--question", "Which?"], 'pass it with status="waiting"', "--status waiting"),
        ("task_update", {"id": "4"}, ["task", "update", "4"], "nothing to change: pass status, owner, progress, add_blocked_by, ...", "--status, --owner"),
        ("task_update", {"id": "1", "progress": 5}, ["task", "update", "1", "--progress", "5"], "a person can override with the dashboard or board's command line, not a tool", "a person can override with --force"),
        ("task_delete", {"id": "1", "token": int(token), "agent": "bob"}, ["task", "delete", "1", "--token", token], "a person can delete it anyway with the dashboard or board's command line", "a person can delete it anyway with --force"),
        ("task_update", {"id": "3", "status": "pending"}, ["task", "update", "3", "--status", "pending"], 'answer(id="3", text=...)', "'board answer 3 TEXT'"),
        ("task_update", {"id": "3", "status": "pending"}, ["task", "update", "3", "--status", "pending"], "or to the queue with requeue=true", "--requeue"),
        ("reserve", {"id": "2", "path": "src/app.py"}, ["reserve", "2", "src/app.py"], "pass agent to say who reserves", "--agent NAME"),
        ("reserve", {"id": "1", "path": "src/app.py", "agent": "carol"}, ["reserve", "1", "src/app.py", "--agent", "carol"], 'ask dan to run unreserve(id="4", path="src/app.py")', "'board unreserve 4 src/app.py'"),
        ("message", {"to": "ben", "text": "hi"}, ["message", "ben", "hi"], "(name one with team)", "--team TEAM"),
    ]

    async def refusals() -> None:
        async with board_mcp(workspace, env={"CLAUDE_CONFIG_DIR": str(empty_home)}) as client:
            assert (await client.call_tool("reserve", {"id": "4", "path": "src/app.py"})).is_error is False
            for tool, arguments, command, says, command_line_says in cases:
                message = await refused(client, tool, arguments)
                assert says in message and not COMMAND_LINE.search(message) and "force" not in message, (tool, arguments, message)
                on_the_command_line = board(workspace, *command)
                assert on_the_command_line.returncode == 2 and command_line_says in on_the_command_line.stderr, on_the_command_line.stderr

    anyio.run(refusals)
