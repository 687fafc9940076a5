"""What board reads has bounds (size, nesting); what it writes stays inside them.

A write whose file board could not read back used to succeed and then push its task off the
board (listed nowhere, its dependents waiting on "a task that does not exist"); a file nested a
thousand levels deep used to take every command down with a RecursionError.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from board.errors import BoardError
from board.json_bounds import MAX_DEPTH
from board.model import MAX_FILE_BYTES
from board.store import Store
from tests.conftest import BOTH_BACKENDS, REPO, files_only

#: Control characters take six bytes each once escaped in JSON: 130,000 of them in two fields
#: make a 1.5 MB file out of 260,000 characters.
CONTROLS = "\x01" * 130_000

pytestmark = BOTH_BACKENDS


def run_board(workspace: Path, *args: str) -> subprocess.CompletedProcess:
    """``board ARGS`` as a real process, on the test's board (``BOARD_DB`` on PostgreSQL)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "board", "-w", str(workspace), *args], capture_output=True, text=True, env=env, timeout=120)


def test_a_write_board_could_not_read_back_is_refused_and_changes_nothing(workspace: Path) -> None:
    store = Store.open(workspace)
    first = store.create("a task")
    store.create("waits on it", blocked_by=[first.id])
    before = store.get(first.id)
    with pytest.raises(BoardError, match=r"not written: it would take [\d,]+ bytes, over the 1,048,576"):
        store.update(first.id, description=CONTROLS, active_form=CONTROLS)
    with pytest.raises(BoardError, match="not written"):
        store.update(first.id, description="x" * (2 * MAX_FILE_BYTES))  # a 2 MB description, as MCP once wrote
    again = Store.open(workspace)
    assert again.get(first.id) == before and again.get(first.id).version == before.version
    assert again.graph.is_ready(first.id)
    assert not again.invalid


def test_an_oversize_update_from_the_command_line_is_one_line_and_exit_2(workspace: Path) -> None:
    store = Store.open(workspace)
    store.create("a task")
    listed = run_board(workspace, "task", "list", "--json").stdout
    refused = run_board(workspace, "task", "update", "1", "--description", CONTROLS, "--active-form", CONTROLS)
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert refused.stderr.startswith("board: task 1 not written") and "nothing was changed" in refused.stderr
    assert run_board(workspace, "task", "list", "--json").stdout == listed


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@files_only("a task file written by hand")
def test_one_file_nested_a_thousand_deep_is_one_line_and_everything_else_works(workspace: Path) -> None:
    store = Store.open(workspace)
    for subject in ("first", "second", "third"):
        store.create(subject)
    path = workspace / ".tasks" / "task_2.json"
    path.write_text(path.read_text().rstrip().removesuffix("}") + f', "x": {nested(999)}}}\n')
    written = path.read_bytes()

    listing = run_board(workspace, "task", "list")
    assert listing.returncode == 0 and "Traceback" not in listing.stderr, listing.stderr
    rows = {line.split()[0]: line.split()[1] for line in listing.stdout.splitlines()[1:]}
    assert rows == {"1": "ready", "3": "ready", "2": "unreadable"}
    assert f"nested more than {MAX_DEPTH} levels deep" in listing.stdout
    for command in (("check",), ("alerts",), ("task", "show", "3"), ("task", "create", "fourth"), ("claim", "--agent", "alice")):
        done = run_board(workspace, *command)
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr and "RecursionError" not in done.stderr, (command, done.stderr)
    shown = run_board(workspace, "task", "show", "2")
    assert shown.returncode == 2 and len(shown.stderr.splitlines()) == 1 and "nested more than" in shown.stderr
    assert path.read_bytes() == written


@files_only("a task file written by hand")
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 300, 600])
def test_a_task_nested_past_the_limit_is_unreadable_whatever_parser_meets_it(workspace: Path, depth: int) -> None:
    """Below a thousand levels Python's parser copes, and a write back then failed in the
    encoder (or ``deepcopy``) instead: the file must be refused when read, the same way."""
    store = Store.open(workspace)
    store.create("only")
    path = workspace / ".tasks" / "task_1.json"
    document = json.loads(path.read_text())
    document["metadata"] = {"deep": json.loads(nested(depth - 2))}
    path.write_text(json.dumps(document))
    again = Store.open(workspace)
    assert "1" not in again.tasks and "nested more than" in again.invalid[str(path)]
    refused = run_board(workspace, "task", "update", "1", "--progress", "5")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr


def test_a_task_at_the_limit_reads_and_writes(workspace: Path) -> None:
    store = Store.open(workspace)
    task = store.create("deep but allowed", metadata={"deep": json.loads(nested(MAX_DEPTH - 2))})
    updated = Store.open(workspace).update(task.id, progress=10)
    assert updated.metadata == task.metadata and updated.progress == 10


def test_a_write_nested_past_the_limit_is_refused(workspace: Path) -> None:
    store = Store.open(workspace)
    with pytest.raises(BoardError, match="nested more than"):
        store.create("too deep", metadata={"deep": json.loads(nested(MAX_DEPTH))})
    assert not Store.open(workspace).tasks


@pytest.mark.parametrize("text", [str, str.encode])
def test_a_line_is_refused_by_its_depth_alone_whatever_its_brackets_count(text) -> None:  # noqa: ANN001 - str or bytes
    """``json_bounds.loads`` skips the walk of a text with few brackets: one nested exactly one
    level past the limit, with no other bracket, is still refused, and one at the limit with
    hundreds of brackets beside it (in strings and flat lists) still reads."""
    from board.json_bounds import TooDeep, loads

    past = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    with pytest.raises(TooDeep):
        loads(text(past))
    at_limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    nested, strings, flat = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1), "[{" * 300, ",".join(["[]"] * 300)
    busy = f'{{"a": {nested}, "s": "{strings}", "flat": [{flat}]}}'
    assert loads(text(at_limit)) and loads(text(busy))["s"].startswith("[{")
