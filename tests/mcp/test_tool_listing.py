"""The tool listing kept between starts: the same listing the SDK makes, made again when the
code changes, and never trusted when it cannot be read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from mcp.types import Tool

from board.mcp import tool_listing
from board.store import Store
from tests.mcp.connect import TOOLS, board_mcp


def _listed(workspace: Path, cache: Path) -> list[dict]:
    async def listing() -> list[dict]:
        async with board_mcp(workspace, env={"XDG_CACHE_HOME": str(cache)}) as client:
            return [tool.model_dump(mode="json", by_alias=True) for tool in (await client.list_tools()).tools]

    return anyio.run(listing)


def test_a_second_start_lists_from_the_cache_exactly_what_the_first_made(workspace: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    made = _listed(workspace, cache)
    [kept] = list((cache / "board").glob("mcp-tools-*.json"))
    assert {tool["name"] for tool in made} == TOOLS == {tool["name"] for tool in json.loads(kept.read_text())}
    assert _listed(workspace, cache) == made
    # A kept listing that is not one (cut short, written by hand) is made again, and rewritten.
    kept.write_text('[{"name": "task_list"')
    assert _listed(workspace, cache) == made
    assert {tool["name"] for tool in json.loads(kept.read_text())} == TOOLS


def test_the_cache_is_used_by_its_key_and_the_key_follows_the_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    built = []

    async def build() -> list:
        from mcp.types import Tool

        built.append(1)
        return [Tool(name="only", input_schema={"type": "object"})]

    assert [t.name for t in anyio.run(tool_listing.cached, build)] == ["only"]
    assert [t.name for t in anyio.run(tool_listing.cached, build)] == ["only"] and built == [1]  # kept

    code = tmp_path / "code"
    (code / "inner").mkdir(parents=True)
    module = code / "inner" / "module.py"
    module.write_text("x = 1\n")
    first = tool_listing.code_key([code])
    assert tool_listing.code_key([code]) == first
    module.write_text("x = 22\n")
    assert tool_listing.code_key([code]) != first
    os.utime(module, ns=(1, 1))
    changed = tool_listing.code_key([code])
    os.utime(module, ns=(2, 2))
    assert tool_listing.code_key([code]) != changed


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    Store.open(tmp_path / "ws", create=True)
    return tmp_path / "ws"


def test_the_listing_is_kept_through_no_file_planted_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link planted in the cache folder under the name a writer would give its temp file (the
    pid's) leaves the file it points at as it was."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tool_listing.cache_dir()
    folder.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own\n")
    path = folder / f"{tool_listing.PREFIX}{'0' * 32}.json"
    os.symlink(victim, path.with_name(f".{path.name}.{os.getpid()}.tmp"))
    tool_listing._keep(path, [{"name": "task_list", "inputSchema": {"type": "object"}}])
    assert victim.read_text() == "the user's own\n"
    assert json.loads(path.read_text()) == [{"name": "task_list", "inputSchema": {"type": "object"}}] and not path.is_symlink()


def test_a_fifo_in_place_of_the_listing_is_made_again_not_waited_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The listing's name follows from the installed code: a FIFO planted under it held the
    server's start for ever. It is a listing that cannot be read: made again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    key = tool_listing.code_key()
    folder = tool_listing.cache_dir()
    folder.mkdir(parents=True)
    path = folder / f"{tool_listing.PREFIX}{key}.json"
    os.mkfifo(path)
    built = []

    async def build() -> list[Tool]:
        built.append(1)
        return [Tool(name="task_list", inputSchema={"type": "object"})]

    async def listing() -> list[Tool]:
        with anyio.fail_after(20):
            return await tool_listing.cached(build)

    assert [tool.name for tool in anyio.run(listing)] == ["task_list"] and built == [1]
    assert not path.exists() or path.is_file()
