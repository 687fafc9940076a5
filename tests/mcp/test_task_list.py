"""``task_list`` over MCP: a short row per task, filters, and pages an agent walks with a cursor."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from board.present import ROW_FIELDS
from board.store import Store
from tests.conftest import BOTH_BACKENDS
from tests.core.test_cli import board
from tests.mcp.connect import board_mcp, ok, refused

pytestmark = BOTH_BACKENDS

#: The most a default ``task_list`` of 1,000 tasks may answer, in bytes (the whole result).
DEFAULT_PAGE_BYTES = 50_000


def test_a_thousand_tasks_come_in_short_pages_and_the_cursor_walks_each_once(workspace: Path) -> None:
    store = Store.open(workspace)
    for number in range(1000):
        # Subjects of about 40 characters, descriptions a row leaves out.
        store.create(f"Write the parser for module number {number:04d}", description="details " * 25, labels=["core"] if number % 3 == 0 else [])
    store.close()

    async def walk() -> None:
        async with board_mcp(workspace) as client:
            first = await client.call_tool("task_list", {})
            assert not first.is_error
            answered = len(first.model_dump_json(by_alias=True, exclude_none=True).encode())
            assert answered <= DEFAULT_PAGE_BYTES, answered
            page = first.structured_content
            assert page["total"] == 1000 and page["counts"] == {"pending": 1000} and page["unreadable"] == []
            assert tuple(page["tasks"][0]) == ROW_FIELDS and page["tasks"][0]["ready"] is True
            seen = [row["id"] for row in page["tasks"]]
            while page["nextCursor"] is not None:
                page = await ok(client, "task_list", {"cursor": page["nextCursor"]})
                assert page["unreadable"] == [] and page["total"] == 1000
                seen += [row["id"] for row in page["tasks"]]
            assert sorted(seen, key=int) == [str(n) for n in range(1, 1001)] and len(seen) == len(set(seen))

            # A bigger page, a filter walked the same way.
            pages, cursor, labelled = 0, None, []
            while True:
                page = await ok(client, "task_list", {"label": "core", "limit": 150, **({"cursor": cursor} if cursor else {})})
                pages, labelled, cursor = pages + 1, labelled + [row["id"] for row in page["tasks"]], page["nextCursor"]
                if cursor is None:
                    break
            assert pages == 3 and labelled == [str(n + 1) for n in range(0, 1000, 3)]

    anyio.run(walk)


def test_filters_a_full_listing_and_a_cursor_that_is_not_one(workspace: Path) -> None:
    store = Store.open(workspace)
    store.create("Design the schema", description="tables for users", labels=["db"], priority="high")
    store.create("Repository layer", blocked_by=["1"], labels=["db"])
    store.create("Write the docs", description="the SCHEMA explained")
    store.claim("alice", lease_seconds=600)
    for number in range(4, 9):
        store.create(f"Filler {number}")

    async def look() -> None:
        async with board_mcp(workspace) as client:
            held = await ok(client, "task_list", {"owner": "alice"})
            [row] = held["tasks"]
            assert (row["id"], row["status"], row["owner"], row["lease"]["owner"]) == ("1", "in_progress", "alice", "alice")
            assert isinstance(row["lease"]["token"], int) and held["counts"] == {"in_progress": 1}
            assert [r["id"] for r in (await ok(client, "task_list", {"status": "pending", "ready": True}))["tasks"]] == ["3", "4", "5", "6", "7", "8"]
            assert [r["id"] for r in (await ok(client, "task_list", {"label": "db"}))["tasks"]] == ["1", "2"]
            # text: every word, in any case, in the subject or the description, as board task search finds them.
            found = await ok(client, "task_list", {"text": "schema"})
            searched = json.loads(board(workspace, "task", "search", "schema", "--json").stdout)
            assert [r["id"] for r in found["tasks"]] == [t["id"] for t in searched] == ["1", "3"]
            assert [r["id"] for r in (await ok(client, "task_list", {"text": "SCHEMA tables"}))["tasks"]] == ["1"]
            assert (await ok(client, "task_list", {"text": "nowhere"}))["tasks"] == []
            # full: the documents board task list --json prints.
            whole = await ok(client, "task_list", {"full": True, "limit": 3})
            assert whole["tasks"] == json.loads(board(workspace, "task", "list", "--json").stdout)[:3]
            assert whole["nextCursor"] is not None and whole["total"] == 8

            page = await ok(client, "task_list", {"limit": 2})
            for bad in ("nonsense", page["nextCursor"][:-4] + "AAAA", "eyJhZnRlciI6MX0"):
                said = await refused(client, "task_list", {"cursor": bad, "limit": 2})
                assert said.startswith("Error executing tool task_list: cursor: ") and "call it without cursor" in said, said
            said = await refused(client, "task_list", {"cursor": page["nextCursor"], "limit": 2, "status": "pending"})
            assert "cursor: it was given for other filters" in said
            assert "limit: Input should be less than or equal to 1000" in await refused(client, "task_list", {"limit": 5000})
            # Tasks deleted between pages, the one the page ended on among them, shift no task
            # into the pages already walked nor out of the next one.
            await ok(client, "task_delete", {"id": "8"})
            await ok(client, "task_delete", {"id": "2"})
            second = await ok(client, "task_list", {"limit": 2, "cursor": page["nextCursor"]})
            assert [r["id"] for r in second["tasks"]] == ["3", "4"] and second["total"] == 6

    anyio.run(look)
