"""``board://prompt`` and ``board://task/{id}``: read, and followed as other processes change the board.

Both ways clients watch are covered: ``subscriptions/listen`` (the SDK client's default) and the
``resources/subscribe`` that Claude Code, Codex and most clients send today.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import anyio
import pytest
from mcp.client.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.types import ResourceUpdatedNotification

from board.agents import read_agent
from board.store import Store
from tests.coordinator.helpers import board_cli
from tests.mcp.connect import board_mcp, json_of, ok, text_of
from tests.conftest import BOTH_BACKENDS

pytestmark = BOTH_BACKENDS

#: Generous: the server and the command line share two loaded cores with other tests.
TIMEOUT = 60


@pytest.fixture
def two(workspace: Path) -> Path:
    store = Store.open(workspace)
    store.create("Design the schema")
    store.create("Repository layer", blocked_by=["1"])
    return workspace


def run_command_line(workspace: Path, *args: str) -> None:
    """A change made by another process, as an agent in a shell or a person makes it."""
    process = board_cli(workspace, *args)
    assert process.wait(timeout=TIMEOUT) == 0


def test_reading_the_resources_gives_the_prompt_and_the_task_json(two: Path) -> None:
    async def read() -> None:
        async with board_mcp(two) as client:
            templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
            assert templates == ["board://task/{id}"] and [str(r.uri) for r in (await client.list_resources()).resources] == ["board://prompt"]
            assert text_of(await client.read_resource("board://prompt")).splitlines() == [
                "[ ] #1 Design the schema", "[ ] #2 Repository layer (blocked by #1)",
                "Progress: 0/2 completed (0%), 0 in progress, 1 ready",
            ]
            task = json_of(await client.read_resource("board://task/2"))
            assert task == await ok(client, "task_show", {"id": "2"})
            # A path in disguise is turned away by the SDK's own address checks, before board reads anything.
            for address, says in (("board://task/9", "no task with id '9'"), ("board://task/_x", "'_x' is not a valid id"), ("board://task/..%2Fetc", "board://task/..%2Fetc")):
                with pytest.raises(MCPError, match=says):
                    await client.read_resource(address)

    anyio.run(read)


def test_a_listening_client_hears_of_changes_other_processes_make(two: Path) -> None:
    async def listen() -> None:
        async with board_mcp(two) as client:
            async with client.listen(resource_subscriptions=["board://task/2", "board://prompt"]) as stream:
                # Completing #1 elsewhere makes #2 ready: its document did not change, what is derived did.
                run_command_line(two, "task", "update", "1", "--status", "in_progress", "--owner", "bob")
                run_command_line(two, "task", "update", "1", "--status", "completed")
                heard: set[str] = set()
                with anyio.fail_after(TIMEOUT):
                    while heard != {"board://task/2", "board://prompt"}:
                        event = await anext(stream)
                        assert isinstance(event, ResourceUpdated)
                        heard.add(event.uri)
                # What #2 reads changed only in what is derived from the board: it became ready.
                assert json_of(await client.read_resource("board://task/2"))["derived"] == {"ready": True, "progress": 0, "openBlockers": [], "wave": 1, "dependents": []}
                assert text_of(await client.read_resource("board://prompt")).startswith("[x] #1 Design the schema\n[ ] #2 Repository layer\n")

    anyio.run(listen)


def test_a_subscribed_client_hears_of_changes_and_only_to_what_it_subscribed(two: Path) -> None:
    heard: list[str] = []

    async def note(message: object) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            heard.append(str(message.params.uri))

    async def subscribe() -> None:
        async with board_mcp(two, mode="legacy", message_handler=note) as client:
            assert client.protocol_version == "2025-11-25" and client.server_capabilities.resources.subscribe
            with warnings.catch_warnings():
                # The SDK marks resources/subscribe as of the 2025 protocol, which these clients speak.
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.subscribe_resource("board://task/1")
                with pytest.raises(MCPError, match="is not a valid id"):
                    await client.subscribe_resource("board://task/../x")
            run_command_line(two, "task", "update", "2", "--description", "not watched")
            run_command_line(two, "task", "update", "1", "--description", "watched")
            with anyio.fail_after(TIMEOUT):
                while not heard:
                    await anyio.sleep(0.05)
            assert heard[0] == "board://task/1"
            assert json_of(await client.read_resource("board://task/1"))["description"] == "watched"
            # A change made through the server itself is told too.
            await ok(client, "task_update", {"id": "1", "progress": 10, "agent": "alice"})
            with anyio.fail_after(TIMEOUT):
                while len(heard) < 2:
                    await anyio.sleep(0.05)
            assert set(heard) == {"board://task/1"}

    anyio.run(subscribe)
    # The server ended by itself when the client left, file watcher and all: its agent is stopped.
    alice = read_agent(Store.open(two, whole=False).agent_records, "alice")
    assert alice is not None and alice.stopped
