"""``board mcp`` driven by the official MCP Inspector's command line: what it lists, and calls
good and bad as it sends them (each ``--tool-arg key=value``, a value JSON when it parses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from board.store import Store
from tests.conftest import LONG
from tests.disk import snapshot
from tests.mcp.connect import TOOLS
from tests.mcp.inspector import Unavailable, ensure_installed, inspect

#: Each call starts node and a server of its own.
pytestmark = LONG


@pytest.fixture(scope="module")
def inspector() -> Path:
    try:
        return ensure_installed()
    except Unavailable as reason:
        pytest.skip(str(reason))


def test_the_inspector_lists_every_tool_closed_hinted_and_with_what_it_answers(inspector: Path, tmp_path: Path) -> None:
    Store.open(tmp_path, create=True)
    status, listed = inspect(inspector, tmp_path, "tools/list")
    assert status == 0, listed
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool["inputSchema"].get("additionalProperties") is False, name
        hints = tool.get("annotations") or {}
        assert {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} <= set(hints), (name, hints)
        assert tool.get("outputSchema", {}).get("type") == "object", name
    assert tools["task_list"]["annotations"]["readOnlyHint"] is True
    assert tools["task_delete"]["annotations"]["destructiveHint"] is True


def test_the_inspectors_calls_good_and_bad(inspector: Path, tmp_path: Path) -> None:
    Store.open(tmp_path, create=True)
    status, made = inspect(
        inspector, tmp_path, "tools/call", "--tool-name", "task_create",
        "--tool-arg", "subject=Add the login page", "--tool-arg", 'label=["ui", "auth"]', "--tool-arg", "priority=high",
    )  # fmt: skip
    assert status == 0 and not made.get("isError"), made
    task = made["structuredContent"]
    assert (task["subject"], task["labels"], task["priority"]) == ("Add the login page", ["ui", "auth"], "high")

    status, listed = inspect(inspector, tmp_path, "tools/call", "--tool-name", "task_list", "--tool-arg", "label=auth")
    assert status == 0 and [row["id"] for row in listed["structuredContent"]["tasks"]] == [task["id"]], listed

    before = snapshot(tmp_path)
    # A mistyped argument, a value of the wrong kind, an illegal move: one error result each,
    # in the tool's own words, and nothing written.
    for arguments, says in (
        (["--tool-arg", f"id={task['id']}", "--tool-arg", "progres=50"], "unknown argument progres"),
        (["--tool-arg", f"id={task['id']}", "--tool-arg", "progress=soon"], "progress"),
        (["--tool-arg", f"id={task['id']}", "--tool-arg", "status=completed"], "cannot move a task from pending to completed"),
    ):
        status, answer = inspect(inspector, tmp_path, "tools/call", "--tool-name", "task_update", *arguments)
        text = " ".join(part.get("text", "") for part in answer.get("content", []))
        assert answer.get("isError") is True and says in text and "--" not in text, (arguments, answer)
    assert snapshot(tmp_path) == before
