"""``message`` over MCP: a team member's inbox, written as ``board message`` writes it."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from tests.mcp.connect import board_mcp, ok, refused
from tests.teams import member, write_team


def test_an_agent_messages_a_teammate_and_a_bad_name_is_a_tool_error(workspace: Path, tmp_path_factory) -> None:
    home = tmp_path_factory.mktemp("claude-home")
    folder = write_team(home, "app-team", [member("team-lead", "app-team", cwd=str(workspace)), member("ben", "app-team", cwd=str(workspace))])

    async def work() -> None:
        async with board_mcp(workspace, env={"CLAUDE_CONFIG_DIR": str(home), "BOARD_AGENT": "alice"}) as client:
            sent = await ok(client, "message", {"to": "ben", "text": "Is #3 done?", "summary": "about #3"})
            assert (sent["team"], sent["to"]) == ("app-team", "ben")
            assert "no team member named 'nobody' (members: " in await refused(client, "message", {"to": "nobody", "text": "hi"})
            await ok(client, "task_list", {})  # the server answers on

    anyio.run(work)
    inbox = json.loads((folder / "inboxes" / "ben.json").read_text())
    assert [(m["from"], m["text"], m["summary"], m["read"]) for m in inbox] == [("alice", "Is #3 done?", "about #3", False)]
