"""``board --claude LIST mcp``: the same tools on a Claude Code task list, written in Claude Code's shape."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from board.agents import read_agent
from board.store import Store
from board.store.file_format import CLAUDE_FIELDS
from tests.core.test_claude_lists import claude_writes, task_list  # noqa: F401  (task_list: the fixture)
from tests.mcp.connect import board_mcp, ok, refused


def test_an_agent_works_a_claude_code_list_over_mcp(task_list: Path) -> None:  # noqa: F811
    config = task_list.parent.parent  # .../.claude

    async def work() -> None:
        async with board_mcp(None, "--claude", task_list.name, env={"CLAUDE_CONFIG_DIR": str(config), "BOARD_AGENT": "alice"}) as client:
            claimed = (await ok(client, "claim", {}))["task"]
            assert claimed["id"] == "2" and claimed["metadata"]["origin"] == "plan"
            token = claimed["lease"]["token"]
            await ok(client, "toolcall", {"id": "2", "tool": "Edit", "file": "parser.py", "token": token})
            # Refusals on a list are the same one line, and the server answers on.
            assert "cannot move a task from pending to completed" in await refused(client, "task_update", {"id": "3", "status": "completed"})
            assert "'../2' is not a valid id" in await refused(client, "task_show", {"id": "../2"})
            assert "is not ready: it waits on #2" in await refused(client, "task_update", {"id": "3", "status": "in_progress", "owner": "alice"})
            await ok(client, "task_update", {"id": "2", "progress": 80, "token": token})
            await ok(client, "task_update", {"id": "2", "status": "completed", "token": token})
            assert [t["id"] for t in (await ok(client, "task_list", {"ready": True}))["tasks"]] == ["3"]
            created = await ok(client, "task_create", {"subject": "Document the parser", "blocked_by": "3"})
            assert created["id"] == "8"  # after the list's high-water mark: ids are never reused
            # Claude Code itself rewrites a file, behind board's back: what the server answers follows the disk.
            claude_writes(task_list, {**json.loads((task_list / "3.json").read_text()), "subject": "Test the parser well"})
            with anyio.fail_after(60):
                while (await ok(client, "task_show", {"id": "3"}))["subject"] != "Test the parser well":
                    await anyio.sleep(0.05)

        on_disk = json.loads((task_list / "2.json").read_text())
        assert set(on_disk) <= set(CLAUDE_FIELDS)  # Claude Code's own shape; board's fields under metadata
        assert on_disk["status"] == "completed" and on_disk["metadata"]["board"]["toolCalls"]["total"] == 1
        assert json.loads((task_list / "8.json").read_text())["blockedBy"] == ["3"]
        record = read_agent(Store.open(task_list, whole=False).agent_records, "alice")
        assert record is not None and record.kind == "mcp" and record.tool_calls == 1

    anyio.run(work)
