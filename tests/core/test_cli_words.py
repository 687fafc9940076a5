"""What the command line says is exact: help for every command, the state of a blocker, one
output at a time, one shape for one answer, error lines read as written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from board.errors import InvalidTaskFile
from board.model import parse_task
from board.store import Store
from tests.conftest import REPO
from tests.core.test_cli import board


def test_board_hook_help_says_what_it_is_and_reads_no_payload(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    shown = subprocess.run([sys.executable, "-m", "board", "hook", "--help"], cwd=tmp_path, env=env, input="", capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and shown.stdout.startswith("usage: board hook") and "Claude Code" in shown.stdout, shown


def test_a_cancelled_blocker_is_named_so_in_task_show_and_the_prompt(workspace: Path) -> None:
    store = Store.open(workspace)
    first = store.create("first").id
    second = store.create("second", blocked_by=[first]).id
    assert board(workspace, "task", "update", first, "--status", "cancelled").returncode == 0
    shown = board(workspace, "task", "show", second).stdout
    assert f"(open: #{first} (cancelled))" in shown, shown
    listed = board(workspace, "task", "list", "--format", "prompt").stdout
    assert f"#{second} second (blocked by #{first} (cancelled))" in listed, listed


def test_json_and_another_format_together_are_refused(workspace: Path) -> None:
    Store.open(workspace).create("one")
    both = board(workspace, "task", "list", "--json", "--format", "prompt")
    assert both.returncode == 2 and both.stdout == "" and "--json and --format prompt" in both.stderr, both
    assert json.loads(board(workspace, "task", "list", "--json", "--format", "json").stdout)[0]["subject"] == "one"
    assert board(workspace, "task", "list", "--format", "prompt").stdout.startswith("[ ] #")


def test_heartbeat_in_json_answers_as_the_mcp_tool_does(workspace: Path) -> None:
    task = Store.open(workspace).create("one").id
    assert board(workspace, "claim", "--agent", "alice").returncode == 0
    answered = json.loads(board(workspace, "heartbeat", "--agent", "alice", "--json").stdout)
    assert answered == {"renewed": [task]}


def test_a_broken_task_file_is_described_in_plain_words() -> None:
    for raw in (b'{"id": "1", "subject": "unterminated', b"", b"{} extra"):
        try:
            parse_task(raw, "t.json")
        except InvalidTaskFile as error:
            message = str(error)
        else:
            raise AssertionError(f"{raw!r} was read")
        assert " at at " not in message and " at line 1 column " in message, message
