"""The rest of the board over MCP, as the command line has it: reservations given up and listed,
a deleted task restored, a question answered, checkpoints and resuming, the agents; and every
tool's answer declared by an output schema it matches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import jsonschema

from board.store import Store
from tests.conftest import BOTH_BACKENDS
from tests.core.test_cli import board
from tests.mcp.connect import TOOLS, board_mcp, ok, refused

pytestmark = BOTH_BACKENDS


def test_an_agent_gives_up_a_reservation_the_conflict_names_and_lists_what_holds(workspace: Path) -> None:
    store = Store.open(workspace)
    store.create("Edit the app")
    store.create("Edit the app too")
    store.claim_task("1", "alice")
    store.claim_task("2", "bob")
    (workspace / "src").mkdir()

    async def work() -> None:
        async with board_mcp(workspace) as client:
            await ok(client, "reserve", {"id": "1", "path": ["src/app.py", "src/db.py"], "agent": "alice"})
            said = await refused(client, "reserve", {"id": "2", "path": "src/app.py", "agent": "bob"})
            assert 'ask alice to run unreserve(id="1", path="src/app.py")' in said, said
            held = await ok(client, "reservations", {})
            assert [(r["path"], r["owner"], r["task"], r["mode"]) for r in held["reservations"]] == [("src/app.py", "alice", "1", "write"), ("src/db.py", "alice", "1", "write")]
            assert held["reservations"] == json.loads(board(workspace, "reservations", "--json").stdout)
            # The call the refusal named, as it named it.
            assert (await ok(client, "unreserve", {"id": "1", "path": "src/app.py"}))["released"] == ["src/app.py"]
            await ok(client, "reserve", {"id": "2", "path": "src/app.py", "agent": "bob"})
            assert (await ok(client, "unreserve", {"id": "1"}))["released"] == ["src/db.py"]
            assert (await ok(client, "unreserve", {"id": "1"}))["released"] == []  # again: nothing more
            assert [(r["path"], r["owner"]) for r in (await ok(client, "reservations", {}))["reservations"]] == [("src/app.py", "bob")]
            assert "holds no reservation on src/db.py" in await refused(client, "unreserve", {"id": "1", "path": "src/db.py"})

    anyio.run(work)


def test_a_question_answered_a_task_restored_a_checkpoint_resumed_and_the_agents_listed(workspace: Path) -> None:
    store = Store.open(workspace)
    store.create("Choose the engine")
    store.create("Old idea")
    store.create("Second question")

    async def work() -> None:
        async with board_mcp(workspace, env={"BOARD_AGENT": "alice"}) as client:
            claimed = (await ok(client, "claim", {"lease": 600}))["task"]
            token = claimed["lease"]["token"]
            assert claimed["id"] == "1"
            # Ask, and the question's answer comes back to alice, in progress.
            await ok(client, "task_update", {"id": "1", "status": "waiting", "question": "Postgres or SQLite?", "token": token})
            answered = await ok(client, "answer", {"id": "1", "text": "Postgres", "agent": "carol"})
            assert (answered["status"], answered["owner"], answered["answer"]) == ("in_progress", "alice", "Postgres")
            assert "only a waiting task can be answered; task 1 is in_progress" in await refused(client, "answer", {"id": "1", "text": "again"})

            # Where the task stands, a change, and what resume says changed since.
            assert "write one with checkpoint(id=\"1\", note=...)" in await refused(client, "resume", {"id": "1"})
            written = (await ok(client, "checkpoint", {"id": "1", "note": "schema next"}))["checkpoint"]
            assert (written["seq"], written["note"], written["actor"], written["document"]["status"]) == (1, "schema next", "alice", "in_progress")
            await ok(client, "task_update", {"id": "1", "progress": 40, "token": answered["lease"]["token"]})
            resumed = await ok(client, "resume", {"id": "1"})
            assert resumed["checkpoint"]["note"] == "schema next" and resumed["changedFields"] == {"progress": [0, 40]}
            assert resumed == json.loads(board(workspace, "resume", "1", "--json").stdout)
            listed = (await ok(client, "checkpoint", {"id": "1", "list": True}))["checkpoints"]
            assert [(c["seq"], c["valid"]) for c in listed] == [(1, True)]
            said = await refused(client, "resume", {"id": "1", "seq": 7})
            assert 'see checkpoint(id="1", list=true)' in said and "--" not in said

            # Deleted, then brought back.
            await ok(client, "task_delete", {"id": "2"})
            assert "no task with id '2'" in await refused(client, "task_show", {"id": "2"})
            restored = await ok(client, "task_restore", {"id": "2"})
            assert (restored["id"], restored["status"]) == ("2", "pending")

            agents = await ok(client, "agents", {})
            alice = next(a for a in agents["agents"] if a["name"] == "alice")
            assert (alice["kind"], alice["task"]) == ("mcp", "1")
            assert [a["name"] for a in agents["agents"]] == [a["name"] for a in json.loads(board(workspace, "agents", "--json").stdout)["agents"]]

    anyio.run(work)


def test_every_tool_declares_what_it_answers_and_its_answer_matches(workspace: Path, tmp_path_factory) -> None:
    """One call of each tool, its structured content checked against the tool's output schema
    by jsonschema (not only by the SDK that made it)."""
    store = Store.open(workspace)
    store.create("Design the schema", labels=["db"], files=["schema.sql"])
    store.create("Repository layer", blocked_by=["1"])
    store.create("Spare")
    (workspace / "schema.sql").write_text("create table t ();\n")
    home = tmp_path_factory.mktemp("claude-home")
    from tests.teams import member, write_team

    write_team(home, "app-team", [member("team-lead", "app-team", cwd=str(workspace)), member("ben", "app-team", cwd=str(workspace))])
    calls: list[tuple[str, dict[str, Any]]] = [
        ("task_list", {}),
        ("task_list", {"full": True}),
        ("task_show", {"id": "1"}),
        ("board_prompt", {}),
        ("task_create", {"subject": "Docs"}),
        ("claim", {"lease": 600}),
        ("heartbeat", {}),
        ("toolcall", {"id": "1", "tool": "Edit", "file": "schema.sql", "token": "TOKEN"}),
        ("reserve", {"id": "1", "path": "schema.sql"}),
        ("reservations", {}),
        ("unreserve", {"id": "1"}),
        ("checkpoint", {"id": "1", "note": "next: indexes"}),
        ("checkpoint", {"id": "1", "list": True}),
        ("resume", {"id": "1"}),
        ("task_update", {"id": "1", "status": "waiting", "question": "Which engine?", "token": "TOKEN"}),
        ("answer", {"id": "1", "text": "Postgres", "agent": "carol"}),  # back to alice, under her lease
        ("release", {"id": "1", "token": "TOKEN"}),
        ("alerts", {}),
        ("agents", {}),
        ("message", {"to": "ben", "text": "Schema is done"}),
        ("task_delete", {"id": "3"}),
        ("task_restore", {"id": "3"}),
        ("plan_import", {"text": "- Tables\n- Indexes\n  after: 1\n", "dry_run": True}),
        ("plan_import", {"text": "- Tables\n- Indexes\n  after: 1\n"}),
    ]
    assert {tool for tool, _ in calls} == TOOLS

    async def check() -> None:
        async with board_mcp(workspace, env={"BOARD_AGENT": "alice", "CLAUDE_CONFIG_DIR": str(home)}) as client:
            schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
            assert set(schemas) == TOOLS and all(schemas.values())
            token = None
            for tool, arguments in calls:
                answer = await ok(client, tool, {name: token if value == "TOKEN" else value for name, value in arguments.items()})
                if tool == "claim":
                    token = answer["task"]["lease"]["token"]
                jsonschema.validate(answer, schemas[tool])
                assert schemas[tool].get("properties") or schemas[tool].get("$defs"), f"{tool} declares nothing of what it answers"
            # Documents are described, not left as any object: a task's fields have types.
            task_schema = schemas["task_show"]
            assert task_schema["properties"]["status"]["type"] == "string" and "derived" in task_schema["required"]
            rows = schemas["task_list"]["properties"]["tasks"]["items"]["anyOf"]
            assert len(rows) == 2

    anyio.run(check)
