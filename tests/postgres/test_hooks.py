"""Claude Code's hooks on a database board: ``board hook`` never opens a database connection
(it must stay fast); the calls it logs on this machine reach the database, and its guard sees
reservations made on any machine, through the coordinator's ticks (``serve_hooks``)."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
import sys
from pathlib import Path

from board.reservations import reserve
from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate
from tests.conftest import REPO

PAYLOADS = REPO / "tests" / "hooks" / "payloads"


def hook(workspace: Path, event: str, agent: str, **fields: object) -> subprocess.CompletedProcess[str]:
    payload = json.loads((PAYLOADS / f"{event}.json").read_text().replace("{cwd}", str(workspace)))
    payload.update(fields)
    if "tool_use_id" in payload and "tool_use_id" not in fields:
        payload["tool_use_id"] = f"toolu_{uuid.uuid4().hex[:24]}"  # each firing is a call of its own, as Claude Code numbers them
    env = {**os.environ, "PYTHONPATH": str(REPO), "BOARD_AGENT": agent}
    return subprocess.run([sys.executable, "-m", "board", "hook"], input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=workspace, timeout=60)


def test_hook_calls_reach_the_database_and_its_guard_sees_reservations_from_anywhere(pg_url: str, tmp_path: Path) -> None:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    (here / ".tasks").mkdir(parents=True)
    (here / ".tasks" / "board.toml").write_text(f'[store]\nurl = "{pg_url}"\n')  # the project's board is the database
    store = Store.open(here)
    assert store.layout.name == "postgres"
    store.create("models", files=["src/app/models.py"])
    store.create("api", files=["src/app/api.py"])
    assert store.claim("ann", lease_seconds=600).id == "1"
    # Claude Code runs ann's hook on this machine: the call is logged here, not in the database.
    done = hook(here, "PostToolUse", "ann")
    assert done.returncode == 0 and done.stdout == ""
    assert store.toolcalls("1") == []
    assert store.serve_hooks() == 1
    assert [c["tool"] for c in store.toolcalls("1")] == ["Write"]
    assert Store.open(elsewhere, db=pg_url).get("1").tool_calls.total == 1
    assert store.serve_hooks() == 0  # forwarded once, never twice
    # Bob, on another machine, reserves a file ann is about to write.
    other = Store.open(elsewhere, db=pg_url)
    assert other.claim("bob", lease_seconds=600).id == "2"
    reserve(other, "2", ["src/app/api.py"], mode="write", agent="bob")
    target = {"file_path": str(here / "src" / "app" / "api.py"), "content": "x"}
    assert hook(here, "PreToolUse", "ann", tool_input=target).returncode == 0  # not heard of here yet
    store.serve_hooks()
    blocked = hook(here, "PreToolUse", "ann", tool_input=target)
    assert blocked.returncode == 2 and "bob" in blocked.stderr and "src/app/api.py" in blocked.stderr
    store.close()
    other.close()


def database_board(pg_url: str, workspace: Path) -> Store:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    (workspace / ".tasks").mkdir(parents=True)
    (workspace / ".tasks" / "board.toml").write_text(f'[store]\nurl = "{pg_url}"\n')
    return Store.open(workspace)


def test_a_call_is_forwarded_once_even_when_the_forwarder_dies_before_saying_so(pg_url: str, tmp_path: Path) -> None:
    """How far a log was forwarded is kept with the calls, in one transaction: a forwarder that
    loses everything it knew locally (a crash, a new process, a wiped ``.tasks/``'s marks) and a
    second forwarder serving the same machine forward each call exactly once."""
    here = tmp_path / "here"
    store = database_board(pg_url, here)
    store.create("models")
    assert store.claim("ann", lease_seconds=600).id == "1"
    for _ in range(3):
        assert hook(here, "PostToolUse", "ann").returncode == 0
    second = Store.open(here)
    assert store.serve_hooks() == 3
    for mark in (here / ".tasks" / "agents").glob("*.forwarded"):
        mark.unlink()  # nothing local says how far it got
    assert second.serve_hooks() == 0 and store.serve_hooks() == 0
    assert hook(here, "PostToolUse", "ann").returncode == 0
    assert second.serve_hooks() + store.serve_hooks() == 1
    assert len(store.toolcalls("1")) == 4 and Store.open(tmp_path / "elsewhere", db=pg_url).get("1").tool_calls.total == 4
    store.close()
    second.close()


def test_a_claude_code_session_shows_on_every_machine_as_it_starts_works_and_ends(pg_url: str, tmp_path: Path) -> None:
    here = tmp_path / "here"
    store = database_board(pg_url, here)
    store.create("models")
    watcher = Store.open(tmp_path / "laptop", db=pg_url)  # a person's dashboard elsewhere reads this
    assert hook(here, "SessionStart", "ann").returncode == 0
    store.serve_hooks()
    record = watcher.agent_records.read("ann")
    assert record is not None and (record["activity"], record["kind"], record["model"]) == ("working", "claude-code", "claude-sonnet-4-5")
    # Something else on the board speaks for ann meanwhile; the hook's news is merged, not a replacement.
    watcher.agent_records.write("ann", {**record, "note": "kept"})
    assert hook(here, "Stop", "ann").returncode == 0
    store.serve_hooks()
    record = watcher.agent_records.read("ann")
    assert record is not None and (record["activity"], record["note"]) == ("idle", "kept")
    # Unchanged since: nothing is written again, so a later change made elsewhere stands.
    watcher.agent_records.write("ann", {**record, "activity": "working"})
    store.serve_hooks()
    assert watcher.agent_records.read("ann")["activity"] == "working"  # type: ignore[index]
    assert hook(here, "SessionEnd", "ann").returncode == 0
    store.serve_hooks()
    assert watcher.agent_records.read("ann")["activity"] == "gone"  # type: ignore[index]
    store.close()
    watcher.close()


def test_fifos_planted_among_the_hooks_records_hold_no_forwarding(pg_url: str, tmp_path: Path) -> None:
    """The coordinator's ticks read what ``board hook`` keeps on this machine: a FIFO planted as
    an agent's record or as a log's mark held them for ever. Each is skipped, the rest goes on."""
    store = database_board(pg_url, tmp_path / "here")
    assert store.create("models").id == "1" and store.claim("ann", lease_seconds=600).id == "1"
    assert hook(tmp_path / "here", "PostToolUse", "ann").returncode == 0
    agents = store.state_dir / "agents"
    os.mkfifo(agents / "planted.json")
    for log in agents.glob("*.jsonl"):
        os.mkfifo(log.with_name(log.name + ".forwarded"))
    assert store.serve_hooks() == 1
    assert [c["tool"] for c in store.toolcalls("1")] == ["Write"]
    store.close()
