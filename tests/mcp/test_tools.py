"""``board mcp`` driven as an agent drives it: a real server process, the SDK's client, stdio."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from board.agents import read_agent
from board.store import Store
from tests.conftest import BOTH_BACKENDS, REPO, files_only
from tests.core.test_cli import board
from tests.disk import history, snapshot, task_file
from tests.mcp.connect import TOOLS, board_mcp, ok, refused

pytestmark = BOTH_BACKENDS


def board_state(workspace: Path) -> dict[str, bytes]:
    """The board's files (and rows), less the spare temp files a running store keeps ready (dot
    names), and less the history lines that record a refused write (``refused``, ``conflict``):
    a refusal changes nothing, and history keeps the attempt on record."""
    state = {path: data for path, data in snapshot(workspace / ".tasks").items() if not Path(path).name.startswith(".")}
    refusals = (b'"op":"refused"', b'"op":"conflict"', b'"op": "refused"', b'"op": "conflict"')
    for path, data in list(state.items()):
        if Path(path).name == "history.jsonl":
            state[path] = b"".join(line for line in data.splitlines(keepends=True) if not any(r in line for r in refusals))
        elif path.startswith("db:history/") and any(r in data for r in refusals):
            del state[path]
    return state


def registered_agents(workspace: Path) -> list[str]:
    """The agents the board has a record of, wherever it keeps them."""
    return sorted(record["name"] for record in Store.open(workspace, whole=False).agent_records.read_all())


def test_the_tools_are_the_ones_agents_expect_with_every_parameter_described(workspace: Path) -> None:
    async def look() -> None:
        async with board_mcp(workspace) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == TOOLS
            for tool in tools.values():
                assert tool.description and tool.output_schema, tool.name
                for name, schema in tool.input_schema.get("properties", {}).items():
                    assert schema.get("description"), f"{tool.name}.{name} has no description"
            # Parameter names follow the command line's options.
            assert {"blocked_by", "active_form", "label", "files"} <= set(tools["task_create"].input_schema["properties"])
            assert {"status", "progress", "owner", "priority", "question", "add_blocked_by", "remove_label", "token"} <= set(tools["task_update"].input_schema["properties"])
            assert set(tools["toolcall"].input_schema["properties"]) >= {"id", "tool", "file", "failed"}
            assert tools["task_update"].input_schema["properties"]["status"]["anyOf"][0]["enum"][:2] == ["pending", "in_progress"]

    anyio.run(look)


def test_a_dependency_from_creation_to_the_dependent_becoming_ready(workspace: Path) -> None:
    records = Store.open(workspace, whole=False).agent_records

    async def flow() -> None:
        async with board_mcp(workspace, env={"BOARD_AGENT": "alice"}) as client:
            design = await ok(client, "task_create", {"subject": "Design the schema", "priority": "high", "label": "db"})
            repository = await ok(client, "task_create", {"subject": "Repository layer", "blocked_by": [int(design["id"])], "active_form": "Writing the repository"})
            assert repository["blockedBy"] == ["1"] and repository["derived"] == {"ready": False, "progress": 0, "openBlockers": ["1"], "wave": 1, "dependents": []}
            assert (await ok(client, "task_list", {"ready": True}))["tasks"][0]["id"] == "1"

            claimed = (await ok(client, "claim", {"lease": 120}))["task"]
            assert (claimed["id"], claimed["status"], claimed["owner"]) == ("1", "in_progress", "alice")
            token = claimed["lease"]["token"]
            record = read_agent(records, "alice")
            assert record is not None and (record.kind, record.task, record.stopped, record.pid) == ("mcp", "1", False, record.pid)
            assert record.pid != os.getpid()

            await ok(client, "toolcall", {"id": "1", "tool": "Edit", "file": "schema.sql", "token": token})
            called = await ok(client, "toolcall", {"id": 1, "tool": "Bash", "failed": True, "ms": 40, "token": token})
            assert called["toolCalls"]["total"] == 2 and called["toolCalls"]["failed"] == 1
            # What the dashboard's agents panel reads catches up while the agent works.
            with anyio.fail_after(60):
                while (read_agent(records, "alice") or record).tool_calls != 2:
                    await anyio.sleep(0.05)
            assert (await ok(client, "heartbeat", {}))["renewed"] == ["1"]
            assert (await ok(client, "task_update", {"id": "1", "progress": 60, "token": token}))["progress"] == 60
            done = await ok(client, "task_update", {"id": "1", "status": "completed", "token": token})
            assert done["status"] == "completed" and done["lease"] is None

            assert [t["id"] for t in (await ok(client, "task_list", {"ready": True}))["tasks"]] == ["2"]
            assert (await ok(client, "claim", {"agent": "bob"}))["task"]["id"] == "2"
            assert (await ok(client, "claim", {"agent": "carol"}))["task"] is None  # nothing left: no error
            # The very JSON the command line prints.
            for task_id in ("1", "2"):
                assert await ok(client, "task_show", {"id": task_id}) == json.loads(board(workspace, "task", "show", task_id, "--json").stdout)
            listed = await ok(client, "task_list", {"label": "db", "full": True})
            assert listed["tasks"] == json.loads(board(workspace, "task", "list", "--label", "db", "--json").stdout) and listed["unreadable"] == []
            prompt = (await client.call_tool("board_prompt", {})).content[0].text
            assert prompt == board(workspace, "task", "list", "--format", "prompt").stdout.rstrip("\n")
            assert prompt.splitlines()[0] == "[x] #1 Design the schema (2 tool calls)"

        # The server has ended: its agents are shown stopped, not silent.
        alice, bob = read_agent(records, "alice"), read_agent(records, "bob")
        assert alice is not None and alice.stopped and alice.task is None and alice.tool_calls == 2
        assert bob is not None and bob.stopped and bob.kind == "mcp"
        completed = [r for r in history(workspace) if r["task"] == "1" and r["changes"].get("status") == ["in_progress", "completed"]]
        assert completed and completed[0]["actor"] == "alice"
        calls = Store.open(workspace, whole=False).toolcalls("1")
        assert [(c["tool"], c["ok"], c["agent"], c["files"]) for c in calls] == [("Edit", True, "alice", ["schema.sql"]), ("Bash", False, "alice", [])]

    anyio.run(flow)


def test_every_refusal_is_the_command_lines_one_line_and_the_server_lives_on(workspace: Path) -> None:
    store = Store.open(workspace)
    store.create("Design the schema", labels=["db"])
    store.create("Repository layer", blocked_by=["1"])
    store.create("Write the docs")
    stale = store.claim("bob", lease_seconds=600).lease.token  # type: ignore[union-attr]
    store.release("1", token=stale)
    store.claim("bob", lease_seconds=600)  # #1 again, under a newer token
    cases = [
        # (tool, arguments, the same on the command line, what both say)
        ("task_show", {"id": "../etc"}, ["task", "show", "../etc"], "'../etc' is not a valid id"),
        ("task_show", {"id": "9"}, ["task", "show", "9"], "no task with id '9'"),
        ("task_update", {"id": "3", "status": "completed"}, ["task", "update", "3", "--status", "completed"], "cannot move a task from pending to completed"),
        ("task_update", {"id": "2", "status": "in_progress"}, ["task", "update", "2", "--status", "in_progress"], "waits on"),
        ("task_update", {"id": "1", "add_blocked_by": "2"}, ["task", "update", "1", "--add-blocked-by", "2"], "would create a dependency cycle #1 -> #2 -> #1"),
        ("task_update", {"id": "1", "progress": 50, "token": stale}, ["task", "update", "1", "--progress", "50", "--token", str(stale)], "your lease token for task 1 is stale"),
        ("task_update", {"id": "1", "progress": 50}, ["task", "update", "1", "--progress", "50"], "task 1 is held by bob"),
        ("toolcall", {"id": "1", "tool": "Edit", "token": stale}, ["toolcall", "1", "Edit", "--token", str(stale)], "your lease token for task 1 is stale"),
        ("task_list", {"label": "nope"}, ["task", "list", "--label", "nope"], "no task on this board has the label 'nope' (labels in use: db)"),
        ("task_create", {"subject": "Tests", "blocked_by": ["9"]}, ["task", "create", "Tests", "--blocked-by", "9"], "no task with id '9'"),
        ("task_delete", {"id": "1", "token": stale}, ["task", "delete", "1", "--token", str(stale)], "is stale"),
        ("task_delete", {"id": "3", "agent": "alice"}, [], None),  # allowed: the refusals after it meet a changed board
        ("release", {"id": "2"}, ["release", "2"], "only a task being worked on can be released"),
        ("claim", {"agent": "not a name"}, ["claim", "--agent", "not a name"], "'not a name' is not a valid agent name"),
    ]

    async def refusals() -> None:
        async with board_mcp(workspace) as client:
            for tool, arguments, command, says in cases:
                if says is None:
                    await ok(client, tool, arguments)
                    continue
                before = board_state(workspace)
                message = await refused(client, tool, arguments)
                assert board_state(workspace) == before, f"{tool} {arguments} changed the board"
                on_the_command_line = board(workspace, *command)
                assert on_the_command_line.returncode == 2 and board_state(workspace) == before
                assert says in message and says in on_the_command_line.stderr, (message, on_the_command_line.stderr)
                if on_the_command_line.stderr.startswith("board: "):  # a refused move, not an argument the parser rejected
                    # The same line, but for the options it names: a tool's arguments, not the command line's.
                    said = on_the_command_line.stderr.removeprefix("board: ").strip().replace("--force", "the dashboard or board's command line, not a tool")
                    assert message == f"Error executing tool {tool}: {said}"
            assert (await refused(client, "task_update", {"id": "1", "progress": 101})).endswith("progress: Input should be less than or equal to 100")
            assert "Input should be 'low', 'medium', 'high' or 'critical'" in await refused(client, "task_update", {"id": "1", "priority": "urgent"})
            assert "name the agent" in await refused(client, "claim", {})
            # Still answering, with the board as the refusals left it.
            assert (await ok(client, "task_show", {"id": "1"}))["owner"] == "bob"

    anyio.run(refusals)
    # Only the call that succeeded registered its agent: a refused call changes nothing on disk.
    assert registered_agents(workspace) == ["alice"]


def test_reserve_refuses_a_path_a_link_leads_out_of_the_workspace(workspace: Path) -> None:
    store = Store.open(workspace)
    store.claim_task(store.create("Edit the app").id, "alice")
    (workspace / "src").mkdir()
    (workspace / "src-link").symlink_to("src")
    (workspace / "etc-link").symlink_to("/etc")

    async def reserve() -> None:
        async with board_mcp(workspace, env={"BOARD_AGENT": "alice"}) as client:
            before = board_state(workspace)
            message = await refused(client, "reserve", {"id": "1", "path": ["src/app.py", "etc-link/passwd"]})
            assert board_state(workspace) == before
            on_the_command_line = board(workspace, "reserve", "1", "src/app.py", "etc-link/passwd")
            assert on_the_command_line.returncode == 2 and board_state(workspace) == before
            assert "'etc-link/passwd' leads to /etc/passwd, which is not inside the workspace" in message
            assert message == f"Error executing tool reserve: {on_the_command_line.stderr.removeprefix('board: ').strip()}"
            made = await ok(client, "reserve", {"id": "1", "path": "src-link/app.py"})
            assert [(r["path"], r["owner"]) for r in made["reservations"]] == [("src/app.py", "alice")]

    anyio.run(reserve)


def test_command_line_writers_beside_an_mcp_agent_lose_nothing(workspace: Path) -> None:
    """Two processes run the command line in a loop while an agent works over MCP on the same
    board: every tool call counts once, and every task created gets an id of its own."""
    Store.open(workspace).create("Shared task")
    rounds = 12
    script = (
        "import sys\nfrom board.cli import main\n"
        f"for i in range({rounds}):\n"
        "    assert main(['-w', sys.argv[1], 'toolcall', '1', 'Bash', '--agent', sys.argv[2]]) == 0\n"
        "    assert main(['-w', sys.argv[1], 'task', 'create', sys.argv[2] + ' ' + str(i)]) == 0\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    async def alongside() -> None:
        async with board_mcp(workspace, env={"BOARD_AGENT": "alice"}) as client:
            claimed = (await ok(client, "claim", {"lease": 600}))["task"]
            writers = [subprocess.Popen([sys.executable, "-c", script, str(workspace), name], env=env, stdout=subprocess.DEVNULL) for name in ("bob", "carol")]
            try:
                for i in range(rounds):
                    await ok(client, "toolcall", {"id": "1", "tool": "Edit", "token": claimed["lease"]["token"]})
                    await ok(client, "task_create", {"subject": f"alice {i}"})
                for writer in writers:
                    assert await anyio.to_thread.run_sync(lambda w=writer: w.wait(timeout=120)) == 0
            finally:
                for writer in writers:
                    writer.kill()
                    writer.wait()
            shown = await ok(client, "task_show", {"id": "1"})
            assert shown["toolCalls"]["total"] == 3 * rounds
            listed = (await ok(client, "task_list", {}))["tasks"]
            assert len(listed) == 1 + 3 * rounds and len({t["id"] for t in listed}) == len(listed)
            assert sorted(t["subject"] for t in listed if t["id"] != "1") == sorted(f"{who} {i}" for who in ("alice", "bob", "carol") for i in range(rounds))

    anyio.run(alongside)
    # Calls are logged beside the task file; any reader counts them all.
    assert Store.open(workspace).get("1").tool_calls.total == 3 * rounds
    assert Store.open(workspace).check() == []


@files_only("a workspace without .tasks/ has no board only when the board is kept in files")
def test_the_server_refuses_to_start_without_a_board_and_mcp_takes_no_json(tmp_path: Path, backend: str) -> None:
    missing = board(tmp_path, "mcp")
    assert missing.returncode == 2 and "no board in" in missing.stderr and len(missing.stderr.splitlines()) == 1
    Store.open(tmp_path, create=True)
    no_json = board(tmp_path, "mcp", "--json")
    assert no_json.returncode == 2 and "speaks MCP on stdin and stdout" in no_json.stderr


@pytest.mark.parametrize("agent", ["../alice", "a" * 65])
def test_an_agent_name_that_could_name_a_path_is_refused(workspace: Path, agent: str) -> None:
    Store.open(workspace).create("Task")

    async def call() -> None:
        async with board_mcp(workspace) as client:
            assert "is not a valid agent name" in await refused(client, "toolcall", {"id": "1", "tool": "Edit", "agent": agent})
            assert "is not a valid agent name" in await refused(client, "claim", {"agent": agent})

    anyio.run(call)
    assert registered_agents(workspace) == [] and task_file(workspace, "1")["status"] == "pending"


def test_a_server_ended_by_sigterm_shows_its_agents_stopped_and_what_becomes_of_their_tasks(workspace: Path) -> None:
    """Clients that stop waiting for the server (the SDK's after two seconds) send SIGTERM: the
    server ends as on a closed stdin, its agents marked stopped rather than left looking alive.
    Their leases are kept (the agent may come back and resume under its token), and the board
    says so: the task held by an agent that stopped, and when it goes back to the queue."""
    Store.open(workspace).create("Task")
    records = Store.open(workspace, whole=False).agent_records

    async def session() -> None:
        async with board_mcp(workspace, env={"BOARD_AGENT": "alice"}) as client:
            await ok(client, "claim", {"lease": 600})
            record = read_agent(records, "alice")
            assert record is not None and not record.stopped and record.pid is not None
            os.kill(record.pid, signal.SIGTERM)
            with anyio.fail_after(60):
                while not (read_agent(records, "alice") or record).stopped:
                    await anyio.sleep(0.05)
            with anyio.fail_after(60):
                while Path(f"/proc/{record.pid}").exists() and "Z" not in Path(f"/proc/{record.pid}/stat").read_text().rsplit(")", 1)[1].split()[:1]:
                    await anyio.sleep(0.05)

    anyio.run(session)
    alice = read_agent(records, "alice")
    assert alice is not None and alice.stopped and alice.task is None
    task = Store.open(workspace).get("1")
    assert (str(task.status), task.owner) == ("in_progress", "alice") and task.lease is not None
    agents = json.loads(board(workspace, "agents", "--json").stdout)["agents"]
    assert [(a["name"], a["state"], a["task"]) for a in agents] == [("alice", "gone", "1")]
    [held] = [a for a in json.loads(board(workspace, "alerts", "--json").stdout) if a["kind"] == "agent.unreachable"]
    assert "alice stopped while holding #1" in held["message"], held
    assert "#1 goes back to the queue at" in held["action"] and "board release 1 --force" in held["action"], held


def test_a_description_too_large_to_read_back_is_refused_and_an_unreadable_task_is_listed(workspace: Path) -> None:
    """A 2 MB description once made a file board itself then skipped: the task left every
    listing. Now the write is an error result and nothing changes; a task file that cannot be
    read (written by hand) is named in the listing with why."""
    Store.open(workspace).create("kept")
    before = board_state(workspace)

    async def attempt() -> None:
        async with board_mcp(workspace) as client:
            message = await refused(client, "task_update", {"id": 1, "description": "x" * (2 * 1024 * 1024)})
            assert "task 1 not written: it would take" in message and "nothing was changed" in message, message
            listed = await ok(client, "task_list", {})
            assert [t["id"] for t in listed["tasks"]] == ["1"] and listed["unreadable"] == []

    anyio.run(attempt)
    assert board_state(workspace) == before


@files_only("a task file written by hand")
def test_a_task_file_that_cannot_be_read_is_named_in_the_listing(workspace: Path) -> None:
    Store.open(workspace).create("kept")
    (workspace / ".tasks" / "task_2.json").write_text('{"id": "2", "subject": "x", "x": ' + "[" * 500 + "]" * 500 + "}")

    async def look() -> None:
        async with board_mcp(workspace) as client:
            listed = await ok(client, "task_list", {})
            assert [t["id"] for t in listed["tasks"]] == ["1"]
            assert [(u["id"], "nested more than" in u["reason"]) for u in listed["unreadable"]] == [("2", True)]

    anyio.run(look)


def test_a_mistyped_argument_is_refused_naming_it_and_every_schema_is_closed(workspace: Path) -> None:
    Store.open(workspace).create("Design the schema")
    before = board_state(workspace)

    async def look() -> None:
        async with board_mcp(workspace, env={"BOARD_AGENT": "alice"}) as client:
            listed = (await client.list_tools()).tools
            assert listed and all(tool.input_schema.get("additionalProperties") is False for tool in listed)
            said = await refused(client, "task_update", {"id": "1", "subject": "Renamed", "progres": 50})
            assert "progres" in said and "progress" in said and "subject" in said, said
            assert (await ok(client, "task_show", {"id": "1"}))["subject"] == "Design the schema"

    anyio.run(look)
    # The server registers its agent; the board's tasks and history are as they were.
    assert {k: v for k, v in board_state(workspace).items() if not k.startswith("agents/")} == {k: v for k, v in before.items() if not k.startswith("agents/")}


def test_every_tool_says_whether_it_reads_only_destroys_or_can_be_repeated(workspace: Path) -> None:
    async def look() -> None:
        async with board_mcp(workspace, env={"BOARD_AGENT": "alice"}) as client:
            listed = {tool.name: tool.annotations for tool in (await client.list_tools()).tools}
            assert set(listed) == TOOLS and all(hints is not None for hints in listed.values())
            reading = {name for name, hints in listed.items() if hints.read_only_hint}
            assert reading == {"task_list", "task_show", "board_prompt", "reservations", "resume", "agents"}
            assert {name for name, hints in listed.items() if hints.destructive_hint} == {"task_delete"}
            assert all(listed[name].idempotent_hint for name in reading | {"heartbeat", "reserve", "unreserve"})
            assert not any(listed[name].idempotent_hint for name in ("task_create", "claim", "toolcall", "task_delete", "task_restore", "answer", "checkpoint"))

    anyio.run(look)
