"""``board mcp install``: board's entry in the project's ``.mcp.json``, and nothing else touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.store import Store
from tests.core.test_cli import board
from tests.core.test_claude_lists import task_list  # noqa: F401  (the fixture)


def test_install_adds_board_keeps_other_servers_and_a_second_run_changes_nothing(workspace: Path) -> None:
    config = workspace / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"docs": {"command": "docs-server", "args": ["--stdio"]}}, "note": "kept"}))
    first = board(workspace, "mcp", "install")
    assert first.returncode == 0 and f"added board to {config}" in first.stdout
    document = json.loads(config.read_text())
    assert document["note"] == "kept" and document["mcpServers"]["docs"] == {"command": "docs-server", "args": ["--stdio"]}
    entry = document["mcpServers"]["board"]
    assert entry["type"] == "stdio" and Path(entry["command"]).name == "board" and entry["args"] == ["mcp"]
    # Other clients are configured for the whole account, so their snippet names the workspace.
    assert "[mcp_servers.board]" in first.stdout and f'"-w", "{workspace.resolve()}"' in first.stdout

    written = config.read_bytes(), config.stat().st_mtime_ns
    again = board(workspace, "mcp", "install", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["changed"] is False
    assert (config.read_bytes(), config.stat().st_mtime_ns) == written


def test_install_from_a_subdirectory_writes_the_projects_file(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from board.cli import main

    below = workspace / "src" / "app"
    below.mkdir(parents=True)
    monkeypatch.chdir(below)
    assert main(["mcp", "install"]) == 0
    assert json.loads((workspace / ".mcp.json").read_text())["mcpServers"]["board"]["args"] == ["mcp"]
    assert not (below / ".mcp.json").exists()


@pytest.mark.parametrize("content", ["{not json", '["a list"]', '{"mcpServers": []}'])
def test_install_refuses_a_broken_file_and_leaves_it_as_it_was(workspace: Path, content: str) -> None:
    config = workspace / ".mcp.json"
    config.write_text(content)
    refused = board(workspace, "mcp", "install")
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1 and "nothing was changed" in refused.stderr
    assert config.read_text() == content


def test_install_for_a_claude_code_list_names_the_list(task_list: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(task_list.parent.parent))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    from board.cli import main

    assert main(["--claude", task_list.name, "mcp", "install"]) == 0
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["board"]["args"] == ["mcp", "--claude", task_list.name]
    assert not (task_list / ".mcp.json").exists()


def test_install_needs_a_board(tmp_path: Path) -> None:
    refused = board(tmp_path, "mcp", "install")
    assert refused.returncode == 2 and "no board in" in refused.stderr
    assert not (tmp_path / ".mcp.json").exists()
    Store.open(tmp_path, create=True)
    assert board(tmp_path, "mcp", "install").returncode == 0


def test_a_fifo_in_place_of_the_mcp_json_is_one_line_not_a_wait(workspace: Path) -> None:
    import os

    config = workspace / ".mcp.json"
    os.mkfifo(config)
    result = board(workspace, "mcp", "install")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1 and "FIFO" in result.stderr, result.stderr
