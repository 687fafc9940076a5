"""A folder of the board replaced by a link to a folder elsewhere: board writes nothing there.

A co-tenant who can write in ``.tasks/`` once made ``task delete`` replace an outside file
through a linked ``archive/``, the hook append to outside logs through ``toolcalls/`` and
``logs/``, and write agent records into an outside ``agents/``. Every command that needs such a
folder now refuses in one line (the hook, which must never stand in an agent's way, writes
nothing and exits 0), ``board check`` and the alerts name the folder, and the rest of the board
keeps working.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from board.store import Store
from board.disk.confine import BOARD_FOLDERS
from tests.conftest import REPO
from tests.hooks.test_hook_events import PAYLOADS

ENV = {**os.environ, "PYTHONPATH": str(REPO)}
SESSION = "0d7f3c1a-2b4e-4c6d-8e9f-a1b2c3d4e5f6"


def run_board(workspace: Path, *args: str, stdin: str | None = None, claude_home: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in ENV.items() if not k.startswith(("BOARD_", "CLAUDE_"))}
    env.update(CLAUDE_CONFIG_DIR=str(claude_home or workspace / ".claude-home"), XDG_CACHE_HOME=str(workspace / ".cache"))
    return subprocess.run([sys.executable, "-m", "board", "-w", str(workspace), *args], input=stdin, capture_output=True, text=True, env=env, cwd=workspace, timeout=120)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes: what a write through a link would change."""
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def bait(outside: Path) -> None:
    """Files named as board would name what it writes in each folder, so that a replace, an
    append or a delete through a link would show."""
    for folder in BOARD_FOLDERS:
        target = outside / folder
        target.mkdir(parents=True)
        for name in ("task_2.json", "1.jsonl", "2.jsonl", "alice.jsonl", "alice.json", "1.log", "hook.log", "000001.json"):
            (target / name).write_text("outside, not board's\n")
        (target / "1").mkdir()
        (target / "1" / "000001.json").write_text("outside, not board's\n")


def hook_event(workspace: Path, event: str, **changes: object) -> str:
    data = json.loads((PAYLOADS / f"{event}.json").read_text().replace("{cwd}", str(workspace)))
    data.update(session_id=SESSION, **changes)
    return json.dumps(data)


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    """A board with work in hand, every folder of it a link to a folder outside."""
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    workspace.mkdir()
    store = Store.open(workspace, create=True)
    for subject in ("first", "second", "third"):
        store.create(subject, files=["src/app.py"])
    store.claim("alice")
    store.record_toolcall("1", "Edit", agent="alice")
    bait(outside)
    for folder in BOARD_FOLDERS:
        inside = workspace / ".tasks" / folder
        if inside.is_dir():
            for entry in inside.rglob("*"):
                if entry.is_file():
                    entry.unlink()
            for entry in sorted(inside.rglob("*"), reverse=True):
                entry.rmdir()
            inside.rmdir()
        inside.symlink_to(outside / folder, target_is_directory=True)
    return workspace, outside


def test_no_command_writes_through_a_linked_folder(planted: tuple[Path, Path]) -> None:
    workspace, outside = planted
    before = tree(outside)
    refusals = {
        ("task", "delete", "2"): "archive",
        ("toolcall", "1", "Edit", "--agent", "alice"): "toolcalls",
        ("checkpoint", "1", "--note", "half way"): "checkpoints",
        ("reserve", "1", "src/app.py", "--agent", "alice"): "reservations",
    }
    for command, folder in refusals.items():
        done = run_board(workspace, *command)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert done.stderr.splitlines() == [
            f"board: {workspace / '.tasks' / folder}: a symbolic link in place of a folder (board never writes or reads through links in its folders)"
        ], command
    for event, changes in (
        ("SessionStart", {}),
        ("PostToolUse", {"tool_name": "Edit", "tool_input": {"file_path": str(workspace / "src" / "app.py")}}),
        ("PostToolUseFailure", {"tool_name": "Bash", "tool_input": {"command": "make"}}),
        ("Stop", {}),
    ):
        hooked = run_board(workspace, "hook", stdin=hook_event(workspace, event, **changes))
        assert hooked.returncode == 0, (event, hooked.stderr)  # never in the agent's way
    assert tree(outside) == before
    # The board itself goes on: its tasks are where they were, and can move.
    assert run_board(workspace, "task", "update", "3", "--progress", "10").returncode == 0
    assert "2" in Store.open(workspace).tasks


def test_check_and_the_alerts_name_every_linked_folder(planted: tuple[Path, Path]) -> None:
    workspace, _ = planted
    check = run_board(workspace, "check")
    assert check.returncode == 1
    named = sorted(line.split(":")[0] for line in check.stdout.splitlines())
    assert named == sorted(str(workspace / ".tasks" / folder) for folder in BOARD_FOLDERS)
    listed = run_board(workspace, "alerts", "--json")
    assert listed.returncode == 0, listed.stderr
    alerts = json.loads(listed.stdout)
    linked = sorted(a["files"][0] for a in alerts if a["kind"] == "file.invalid")
    assert linked == sorted(f".tasks/{folder}" for folder in BOARD_FOLDERS)


def test_a_folder_swapped_for_a_link_while_a_store_is_open_is_never_written_through(tmp_path: Path) -> None:
    """Checked at each write, not once when the board is opened: a long-running dashboard or
    coordinator meets the link the moment it is planted."""
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    workspace.mkdir()
    store = Store.open(workspace, create=True)
    store.create("first")
    store.create("second")
    store.delete("1")  # archive/ made and used once
    bait(outside)
    archive = workspace / ".tasks" / "archive"
    (archive / "task_1.json").unlink()
    archive.rmdir()
    archive.symlink_to(outside / "archive", target_is_directory=True)
    before = tree(outside)
    with pytest.raises(OSError, match="a symbolic link in place of a folder"):
        store.delete("2")
    assert tree(outside) == before and "2" in Store.open(workspace).tasks


def test_a_claude_code_list_and_a_team_inbox_are_never_written_through_links(tmp_path: Path, claude_home: Path) -> None:
    from board.claude.teams import append_message, find_team

    teams = claude_home / "teams" / "crew"
    teams.mkdir(parents=True)
    (teams / "config.json").write_text(json.dumps({"name": "crew", "members": [{"name": "lead", "agentId": "lead@crew"}, {"name": "dev", "agentId": "dev@crew"}]}))
    outside = tmp_path / "outside"
    bait(outside)
    (outside / "inboxes").mkdir()
    (outside / "inboxes" / "dev.json").write_text("[]\n")
    (teams / "inboxes").symlink_to(outside / "inboxes", target_is_directory=True)
    lists = claude_home / "tasks" / "crew"
    lists.mkdir(parents=True)
    (lists / "1.json").write_text(json.dumps({"id": "1", "subject": "made by Claude Code", "description": "", "status": "pending", "blocks": [], "blockedBy": []}))
    (lists / ".board").symlink_to(outside / "agents", target_is_directory=True)
    before = tree(outside)
    with pytest.raises(OSError, match="a symbolic link in place of a folder"):
        append_message(find_team("crew"), "dev", "lead", "hello")
    listed = run_board(tmp_path, "--claude", "crew", "task", "create", "a task", claude_home=claude_home)
    assert listed.returncode == 2 and "a symbolic link in place of a folder" in listed.stderr, listed.stderr
    assert tree(outside) == before


def test_a_folder_held_open_to_read_many_files_follows_no_link(tmp_path: Path) -> None:
    """A board read whole opens each file by its name in its folder, held open (``OpenFolder``):
    a link in place of the folder is refused as when each file is opened by its path, a link in
    place of a file is not followed, and a file of another folder is opened by its own path."""
    from board.disk.atomic import SpecialFile, read_regular
    from board.disk.confine import LinkedFolder, OpenFolder, confine

    root, outside = tmp_path / "board" / ".tasks", tmp_path / "outside"
    (root / "archive").mkdir(parents=True)
    outside.mkdir()
    (outside / "task_1.json").write_text("outside")
    (root / "task_1.json").write_text("inside")
    (root / "archive" / "task_2.json").write_text("archived")
    (root / "task_3.json").symlink_to(outside / "task_1.json")
    (root / "agents").symlink_to(outside)
    confine(root)
    with pytest.raises(LinkedFolder):
        OpenFolder(root / "agents")
    with OpenFolder(root) as folder:
        assert read_regular(root / "task_1.json", folder=folder) == b"inside"
        assert read_regular(str(root / "task_1.json"), folder=folder) == b"inside"
        assert read_regular(root / "archive" / "task_2.json", folder=folder) == b"archived"  # another folder: by its path
        with pytest.raises(SpecialFile, match="symbolic link"):
            read_regular(root / "task_3.json", folder=folder)
        with pytest.raises(LinkedFolder):
            read_regular(root / "agents" / "task_1.json", folder=folder)
