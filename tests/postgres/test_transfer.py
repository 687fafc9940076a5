"""``board import`` and ``board export``: a board in files into PostgreSQL and back out, exactly
(task files byte for byte, history line for line), through the real command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from board.agent_record import AgentRecord
from board.agents import list_agents, register_agent, write_agent
from board.alerts.model import Alert, Severity
from board.model import task_to_dict, utcnow
from board.reservations import Reservation
from board.times import iso
from board.toolcall_log import append_call, call_record
from board.status import Status
from board.store import Store
from board.store.files import FileStore
from board.store.layout import TasksDirLayout
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate
from tests.conftest import REPO
from tests.coordinator.helpers import started

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'board[postgres]'")

TABLES = ("tasks", "task_edges", "history", "tool_calls", "archive", "meta", "agents", "reservations", "checkpoints", "alerts")
#: The command line as a user runs it: no database unless the command names one.
ENV = {key: value for key, value in os.environ.items() if key != "BOARD_DB"} | {"PYTHONPATH": str(REPO)}


def board(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``board ARGS`` as a real process."""
    process = started(subprocess.Popen([sys.executable, "-m", "board", *args], cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    try:
        out, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"board {' '.join(args)} hung") from None
    return subprocess.CompletedProcess(args, process.returncode, out, err)


def ok(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert done.returncode == 0, done.stderr
    return done


def refused(done: subprocess.CompletedProcess) -> str:
    """The one line a refusal prints (exit 2, nothing on stdout)."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    return done.stderr.strip()


@pytest.fixture
def db(pg_url: str) -> str:
    """An empty database with the board's schema."""
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    return pg_url


def tables(url: str) -> dict[str, list[str]]:
    """Every row of every board table, as text: what a refusal must leave as it was."""
    with connect(url) as conn:
        return {table: [row for (row,) in conn.execute(f"select t::text from board.{table} t order by 1")] for table in TABLES}


def files(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (folders as None), by path."""
    return {str(p.relative_to(directory)): (p.read_bytes() if p.is_file() else None) for p in sorted(directory.rglob("*"))}


def board_files(workspace: Path) -> dict[str, bytes]:
    """What import and export move: task files, history, tool-call logs, the archive, agents'
    records and logs, reservations, checkpoints, alerts."""
    tasks = workspace / ".tasks"
    found = {p.name: p.read_bytes() for p in tasks.glob("task_*.json")}
    for name in ("history.jsonl", "alerts.json"):
        if (tasks / name).exists():
            found[name] = (tasks / name).read_bytes()
    for folder in ("toolcalls", "archive", "agents", "reservations", "checkpoints/*"):
        for p in sorted(tasks.glob(f"{folder}/*")):
            if not p.name.startswith("."):  # a lock, not part of the board
                found[str(p.relative_to(tasks))] = p.read_bytes()
    return found


def round_trip(source: Path, url: str, out: Path) -> tuple[dict, dict]:
    imported = json.loads(ok(board("--db", url, "import", str(source), "--json")).stdout)
    exported = json.loads(ok(board("--db", url, "export", str(out), "--json")).stdout)
    return imported, exported


# -- a board with everything ----------------------------------------------------------------------


def seed_001_write(workspace: Path, task: dict) -> None:
    """How seed 001's TaskManager saves a task: plain json.dumps, integer ids, no version."""
    (workspace / ".tasks" / f"task_{task['id']}.json").write_text(json.dumps(task, indent=2))


@pytest.fixture
def rich(tmp_path: Path) -> Path:
    """A board with integer ids, unknown fields (in an order jsonb would not keep), history
    with an outside edit and a forced move, tool calls (some not yet counted in their task's
    file), and a deleted task, the highest id. Only #1 is ready."""
    workspace = tmp_path / "rich"
    (workspace / ".tasks").mkdir(parents=True)
    seed_001_write(workspace, {
        "id": 1, "subject": "schema", "status": "pending", "blockedBy": [], "blocks": [2], "owner": "",
        "zeta": "kept", "alpha": {"second": 2, "first": 1}, "metadata": {"estimate": 30, "area": "db"},
    })
    seed_001_write(workspace, {"id": 2, "subject": "repository", "status": "pending", "blockedBy": [1], "blocks": [], "owner": ""})
    store = FileStore.open(workspace)
    store.update("1", description="the tables", actor="carol")
    # Metadata alone out of jsonb's order, down to an object in a list.
    store.create("api", blocked_by=["2"], metadata={"zeta": 1, "alpha": 2, "area": {"zone": 1, "ab": [{"second": 2, "first": 1}]}}, actor="carol")
    for subject in ("docs", "benchmarks", "spike"):
        store.create(subject, actor="carol")
    # #3 edited by hand (an editor), then by board: history says what the editor changed.
    path = workspace / ".tasks" / "task_3.json"
    edited = json.loads(path.read_text())
    edited["subject"] = "api, versioned"
    path.write_text(json.dumps(edited, indent=2))
    store.update("3", priority="high", actor="carol")
    token = store.claim_task("5", "bob", lease_seconds=600).lease.token
    store.record_toolcall("5", "Read", agent="bob", token=token)
    store.record_toolcall("5", "Edit", ok=False, files=["bench/run.py"], agent="bob", token=token, ms=40)
    store.set_status("5", "paused", actor="carol", force=True)  # a person overriding bob's live lease
    token = store.claim_task("4", "alice", lease_seconds=600).lease.token
    store.record_toolcall("4", "Write", files=["docs/api.md"], agent="alice", token=token, progress=40)
    # Two calls after #4's last write: its file does not count them yet, its readers do.
    store.record_toolcall("4", "Edit", files=["docs/api.md"], agent="alice", token=token)
    store.record_toolcall("4", "Bash", ok=False, agent="alice", token=token, ms=1200)
    store.delete("6", actor="carol")
    store.close()
    return workspace


def test_the_sample_board_comes_back_byte_for_byte(sample: Path, db: str, tmp_path: Path) -> None:
    imported, exported = round_trip(sample, db, tmp_path / "out")
    counts = {"tasks": 32, "history": 175, "archived": 0}
    assert {k: imported["imported"][k] for k in counts} == counts == {k: exported["exported"][k] for k in counts}
    assert imported["imported"]["toolCalls"] == exported["exported"]["toolCalls"] == sum(
        len(p.read_bytes().splitlines()) for p in (sample / ".tasks" / "toolcalls").glob("*.jsonl")
    )
    assert imported["replaced"] is None and imported["warnings"] == [] and imported["lastTaskId"] == 32
    assert board_files(tmp_path / "out") == board_files(sample)
    assert ok(board("-w", str(tmp_path / "out"), "check")).stdout.strip() == "ok: 32 tasks, no problems"


def test_a_board_with_history_deleted_tasks_tool_calls_unknown_fields_and_integer_ids_comes_back(rich: Path, db: str, tmp_path: Path) -> None:
    original = board_files(rich)
    seen = FileStore.open(rich)  # what every reader of the files sees
    history = (rich / ".tasks" / "history.jsonl").read_text()
    assert '"op":"outside edit"' in history and '"forced":true' in history  # the board is what it claims to be
    assert seen.tasks["4"].tool_calls.total == 3 and json.loads(original["task_4.json"])["toolCalls"]["total"] == 1
    imported, exported = round_trip(rich, db, tmp_path / "out")
    assert imported["imported"] == {
        "tasks": 5, "dependencies": 2, "history": len(history.splitlines()), "toolCalls": 5, "archived": 1,
        "agents": 0, "reservations": 0, "checkpoints": 0, "alerts": 0,
    }
    assert exported["exported"] == imported["imported"] and imported["lastTaskId"] == 6
    back = board_files(tmp_path / "out")
    assert back == original  # #4's file too, with its own counts: its readers count the rest
    assert json.loads(back["task_1.json"])["id"] == 1 and json.loads(back["task_1.json"])["blocks"] == [2]
    assert list(json.loads(back["task_1.json"])["metadata"]) == ["estimate", "area"]
    assert ok(board("-w", str(tmp_path / "out"), "check")).stdout.strip() == "ok: 5 tasks, no problems"
    counted = FileStore.open(tmp_path / "out").tasks
    assert {i: t.tool_calls for i, t in counted.items()} == {i: t.tool_calls for i, t in seen.tasks.items()}
    # In the database: the documents as the files' readers see them, ids still integers.
    with connect(db) as conn:
        docs = dict(conn.execute("select id, doc from board.tasks").fetchall())
        assert conn.execute("select value from board.meta where key = 'last_task_id'").fetchone()[0] == 6
        assert conn.execute("select id from board.archive").fetchall() == [("6",)]
        assert sorted(conn.execute("select task_id, blocker_id from board.task_edges").fetchall()) == [("2", "1"), ("3", "2")]
    assert {i: json.loads(json.dumps(d)) for i, d in docs.items()} == {
        i: json.loads(TasksDirLayout(rich).encode(t)) for i, t in seen.tasks.items()
    }
    assert all(type(doc["id"]) is int for doc in docs.values()) and docs["1"]["zeta"] == "kept"


def test_an_imported_board_works_through_the_store(rich: Path, db: str) -> None:
    ok(board("--db", db, "import", str(rich)))
    version = FileStore.open(rich).tasks["1"].version
    store = Store.open(rich.parent / "elsewhere", db=db)
    assert store.graph.ready_ids() == {"1"}
    assert store.tasks["4"].tool_calls.total == 3 and store.tasks["5"].status == Status.PAUSED
    claimed = store.claim("dave", lease_seconds=60)
    assert claimed is not None and claimed.id == "1" and claimed.version == version + 1
    store.set_status("1", "completed", token=claimed.lease.token, actor="dave")
    assert store.graph.is_ready("2")
    # #6 was deleted: its id is never issued again.
    assert store.create("next").id == "7"
    assert [r["op"] for r in store.history("1")] == ["update", "claim", "status:completed"]
    again = Store.open(rich.parent / "elsewhere", db=db)
    assert again.tasks["1"].status == Status.COMPLETED and again.graph.ready_ids() == {"2", "7"}
    assert again.toolcalls("5") == FileStore.open(rich).toolcalls("5")
    assert again.restore("6").id == "6"  # the archive came along
    # Ids the files wrote as integers stay integers through the store's writes.
    with connect(db) as conn:
        doc = conn.execute("select doc from board.tasks where id = '1'").fetchone()[0]
        archived = conn.execute("select count(*) from board.archive").fetchone()[0]
    assert type(doc["id"]) is int and all(type(i) is int for i in doc["blocks"]) and archived == 0


def test_an_import_leaves_the_schemas_foreign_keys_as_they_were(rich: Path, db: str) -> None:
    """The import makes the edges' foreign key again after copying them (one check for all):
    the same key, still in force."""
    keys = "select conname, pg_get_constraintdef(oid) from pg_constraint where connamespace = 'board'::regnamespace and contype = 'f' order by 1"
    with connect(db) as conn:
        before = conn.execute(keys).fetchall()
    ok(board("--db", db, "import", str(rich)))
    with connect(db) as conn:
        assert conn.execute(keys).fetchall() == before and any("task_edges" in name for name, _ in before)
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute("insert into board.task_edges (task_id, blocker_id) values ('no-such-task', '1')")


def test_a_task_the_database_changed_comes_back_as_the_file_store_writes_it(rich: Path, db: str, tmp_path: Path) -> None:
    ok(board("--db", db, "import", str(rich)))
    store = Store.open(tmp_path / "db-workspace", db=db)
    store.record_toolcall("4", "Read", agent="alice")  # counted in #4's document, no new version
    store.update("1", description="changed in the database")
    ok(board("--db", db, "export", str(tmp_path / "out")))
    tasks = tmp_path / "out" / ".tasks"
    four = json.loads((tasks / "task_4.json").read_text())["toolCalls"]
    assert four["total"] == 4 and four["logged"] == (tasks / "toolcalls" / "4.jsonl").stat().st_size
    assert FileStore.open(tmp_path / "out").tasks["4"].tool_calls.total == 4  # no call counted twice
    one = FileStore.open(tmp_path / "out").tasks["1"]
    assert one.description == "changed in the database" and one.metadata == {"estimate": 30, "area": "db"}
    assert board_files(tmp_path / "out")["task_2.json"] == board_files(rich)["task_2.json"]
    assert ok(board("-w", str(tmp_path / "out"), "check")).returncode == 0


def test_a_second_round_trip_changes_nothing(rich: Path, db: str, pg_cluster, tmp_path: Path) -> None:
    round_trip(rich, db, tmp_path / "once")
    second = pg_cluster.create_database("transfer_second")
    try:
        with connect(second, autocommit=True) as conn:
            migrate(conn)
        round_trip(tmp_path / "once", second, tmp_path / "twice")
        assert board_files(tmp_path / "twice") == board_files(tmp_path / "once")
    finally:
        pg_cluster.drop_database("transfer_second")


def test_the_line_of_a_writer_killed_before_logging_it_is_imported_as_the_next_writer_completes_it(rich: Path, db: str, tmp_path: Path) -> None:
    tasks = rich / ".tasks"
    layout = TasksDirLayout(rich)
    store = FileStore.open(rich)
    task = store.tasks["2"].model_copy(update={"description": "written, not yet logged", "version": store.tasks["2"].version + 1})
    data = layout.encode(task)
    record = {"ts": "2026-11-24T12:00:00Z", "task": "2", "version": task.version, "file": f"{zlib.crc32(data):08x}", "actor": "erin", "op": "update", "changes": {"description": ["", "written, not yet logged"]}}
    (tasks / "task_2.json").write_bytes(data)
    note = json.dumps({"historySize": (tasks / "history.jsonl").stat().st_size, "record": record}, separators=(",", ":"))
    (tasks / ".history-pending.json").write_text(note)
    completed = tmp_path / "completed"
    shutil.copytree(rich, completed)
    round_trip(rich, db, tmp_path / "out")
    ok(board("-w", str(completed), "check", "--fix"))  # a writer: it completes the line first
    assert (tmp_path / "out/.tasks/history.jsonl").read_bytes() == (completed / ".tasks/history.jsonl").read_bytes()
    assert (tmp_path / "out/.tasks/history.jsonl").read_text().splitlines()[-1].endswith('"recovered":true}')


# -- what a board keeps beside its tasks ----------------------------------------------------------


@pytest.fixture
def kept(tmp_path: Path) -> Path:
    """A board with what it keeps beside its tasks: five agents (one with the fields Claude
    Code's hooks set, one stopped, one written by another tool with a field board does not know
    ahead of board's own), their tool calls (one made on no task, which only its agent's log
    holds), a live reservation, an expired one shared by two readers (the first from an older
    file, with no acquisition time), two checkpoints of one task, and an alert."""
    workspace = tmp_path / "kept"
    store = FileStore.open(workspace, create=True)
    for subject in ("schema", "repository", "api"):
        store.create(subject, actor="carol")
    token = store.claim_task("1", "ann", lease_seconds=600).lease.token
    store.record_toolcall("1", "Edit", files=["db/schema.sql"], agent="ann", token=token)
    now = utcnow()
    append_call(store.state_dir, call_record(ts=iso(now), agent="ann", tool="Read", ok=True, task=None))
    register_agent(store.agent_records, "ann", kind="claude-code", pid=4242, now=now - timedelta(minutes=1))
    register_agent(store.agent_records, "bob", kind="worker", pid=4343, now=now - timedelta(days=2))
    write_agent(store.agent_records, AgentRecord(
        name="cy", kind="claude-code", host="sandbox-7", task="2", heartbeat_at=now, started_at=now - timedelta(hours=1),
        activity="working", activity_at=now, session_id="5f1c", team="plan", agent_type="reviewer",
    ))
    write_agent(store.agent_records, AgentRecord(name="dee", kind="worker", heartbeat_at=now - timedelta(hours=3), stopped=True))
    eve = {"zeta": "kept", "name": "eve", "kind": "script", "heartbeatAt": iso(now)}
    (store.state_dir / "agents" / "eve.json").write_text(json.dumps(eve, indent=2) + "\n")
    expired = now - timedelta(hours=1)
    with store.transaction():
        store.reservation_book.replace("docs/old.md", [
            Reservation("docs/old.md", "dee", "3", "read", expired, None),
            Reservation("docs/old.md", "bob", "2", "read", expired, now - timedelta(hours=2)),
        ])
    store.alert_board.replace([Alert(
        key="stale.lease:1", kind="stale.lease", severity=Severity.WARNING, message="#1 has made no progress", action="look at it",
        tasks=("1",), agents=("ann",), since=now - timedelta(minutes=5),
    ).to_dict()])
    store.close()
    ok(board("-w", str(workspace), "reserve", "1", "db/schema.sql", "--ttl", "3600"))
    ok(board("-w", str(workspace), "checkpoint", "1", "--note", "the tables are in"))
    ok(board("-w", str(workspace), "checkpoint", "1", "--note", "indexes next"))
    return workspace


def kept_by(store: Store) -> dict[str, Any]:
    """Everything a store gives of a board, as its readers get it."""
    return {
        "tasks": {task_id: task_to_dict(task) for task_id, task in store.tasks.items()},
        "history": store.history(),
        "toolCalls": {task_id: store.toolcalls(task_id) for task_id in store.tasks},
        "agents": [record.model_dump(mode="json", by_alias=True) for record in list_agents(store.agent_records)],
        "reservations": sorted((h.path, h.task, h.owner, h.mode, h.expires_at, h.acquired_at) for h in store.reservation_book.all_holders()),
        "checkpoints": {
            (task_id, seq): store.checkpoint_book.read(task_id, seq)
            for task_id in sorted(store.checkpoint_book.tasks()) for seq in store.checkpoint_book.sequence_numbers(task_id)
        },
        "alerts": store.alert_board.read(),
    }


def test_a_board_comes_back_with_its_agents_reservations_checkpoints_and_alerts(kept: Path, db: str, tmp_path: Path) -> None:
    history = len((kept / ".tasks" / "history.jsonl").read_text().splitlines())
    done = ok(board("--db", db, "import", str(kept)))
    assert done.stdout == (
        f"imported 3 tasks, {history} history lines, 2 tool calls, 0 deleted tasks, 5 agents, 3 reservations, 2 checkpoints "
        f"and 1 alert from {kept} into {db}\n"
    )
    exported = ok(board("--db", db, "export", str(tmp_path / "out")))
    assert exported.stdout == (
        f"exported {tmp_path / 'out' / '.tasks'}: 3 tasks, {history} history lines, 2 tool calls, 0 deleted tasks, 5 agents, "
        f"3 reservations, 2 checkpoints and 1 alert from {db}\n"
    )
    (tmp_path / "elsewhere").mkdir()
    where = {"files": ["-w", str(kept)], "database": ["--db", db, "-w", str(tmp_path / "elsewhere")], "exported": ["-w", str(tmp_path / "out")]}
    for command in (["task", "list", "--json"], ["agents", "--json"], ["reservations", "--json"], ["checkpoint", "1", "--list", "--json"]):
        seen = {board_: json.loads(ok(board(*args, *command)).stdout) for board_, args in where.items()}
        if command[0] == "checkpoint":  # each says where it keeps them
            seen = {board_: [{k: v for k, v in c.items() if k != "path"} for c in listed] for board_, listed in seen.items()}
        assert seen["database"] == seen["files"], command
        assert seen["exported"] == seen["files"], command
    original = kept_by(FileStore.open(kept))
    assert len(original["agents"]) == 5 and len(original["reservations"]) == 3 and len(original["checkpoints"]) == 2
    assert original["agents"][0]["toolCalls"] == 2  # ann's call on no task counts
    assert kept_by(Store.open(tmp_path / "elsewhere", db=db)) == original
    assert kept_by(FileStore.open(tmp_path / "out")) == original
    assert board_files(tmp_path / "out") == board_files(kept)  # byte for byte


# -- Claude Code task lists -----------------------------------------------------------------------


def claude_writes(directory: Path, task: dict) -> None:
    (directory / f"{task['id']}.json").write_text(json.dumps(task, indent=2))


@pytest.fixture
def task_list(tmp_path: Path) -> Path:
    """A Claude Code task list board has worked on: claims, tool calls, a pause, a new task."""
    directory = tmp_path / "claude-home" / "tasks" / "3f2a-list"
    directory.mkdir(parents=True)
    (directory / ".lock").touch()
    (directory / ".highwatermark").write_text("7")
    claude_writes(directory, {"id": "1", "subject": "Read the codebase", "description": "", "activeForm": "Reading", "status": "completed", "blocks": ["2"], "blockedBy": [], "metadata": {}})
    claude_writes(directory, {"id": "2", "subject": "Write the parser", "description": "", "status": "pending", "owner": "", "blocks": ["3"], "blockedBy": ["1"], "metadata": {"origin": "plan"}})
    claude_writes(directory, {"id": "3", "subject": "Test the parser", "description": "", "status": "pending", "blocks": [], "blockedBy": ["2"]})
    claude_writes(directory, {"id": "4", "subject": "Claude's own", "description": "", "status": "pending", "blocks": [], "blockedBy": [], "metadata": {"_internal": True}})
    store = FileStore.open(directory)
    claimed = store.claim("worker-1", lease_seconds=600)
    store.record_toolcall("2", "Edit", files=["parser.py"], agent="worker-1", token=claimed.lease.token)
    store.set_status("2", "paused", token=claimed.lease.token)
    store.create("Document the parser", blocked_by=["2"])
    store.close()
    return directory


def test_a_claude_code_task_list_imports_and_exports_as_a_tasks_board(task_list: Path, db: str, tmp_path: Path) -> None:
    seen = FileStore.open(task_list)
    imported, exported = round_trip(task_list, db, tmp_path / "out")
    assert imported["layout"] == "claude-code" and imported["lastTaskId"] == 8
    assert imported["imported"] == {
        "tasks": 5, "dependencies": 3, "history": len(seen.history()), "toolCalls": 1, "archived": 0,
        "agents": 0, "reservations": 0, "checkpoints": 0, "alerts": 0,
    }
    with connect(db) as conn:
        docs = dict(conn.execute("select id, doc from board.tasks").fetchall())
        history = [record for (record,) in conn.execute("select record from board.history order by seq")]
    assert docs == {task_id: task_to_dict(task) for task_id, task in seen.tasks.items()}
    assert docs["2"]["status"] == "paused" and docs["4"]["metadata"] == {"_internal": True}
    assert history == seen.history()
    back = FileStore.open(tmp_path / "out")
    assert {i: task_to_dict(t) for i, t in back.tasks.items()} == docs
    assert back.history() == seen.history() and back.toolcalls("2") == seen.toolcalls("2")
    assert ok(board("-w", str(tmp_path / "out"), "check")).returncode == 0
    assert Store.open(tmp_path / "db-workspace", db=db).create("next").id == "9"  # after the list's .highwatermark


def test_a_blocker_claude_code_completed_and_deleted_is_pointed_out(task_list: Path, db: str) -> None:
    (task_list / "1.json").unlink()  # Claude Code deletes a task it completed
    done = ok(board("--db", db, "import", str(task_list)))
    assert done.stderr.strip() == (
        "board: warning: 1 dependency names a task Claude Code completed and deleted (#2 on #1): in the database a missing "
        "blocker holds its task back; 'board task update ID --remove-blocked-by BLOCKER' lets it start"
    )
    assert done.stdout.startswith("imported 4 tasks, ")


# -- refusals ---------------------------------------------------------------------------------------


def test_a_database_that_holds_a_board_is_refused_unless_replace(sample: Path, rich: Path, db: str) -> None:
    ok(board("--db", db, "import", str(sample)))
    before = tables(db)
    assert refused(board("--db", db, "import", str(rich))) == (
        f"board: the database {db} already holds a board (32 tasks, 175 history lines, 166 tool calls, 0 deleted tasks, "
        "5 agents, 0 reservations, 0 checkpoints, 0 alerts); nothing was imported: pass --replace to replace it"
    )
    assert tables(db) == before
    replaced = json.loads(ok(board("--db", db, "import", str(rich), "--replace", "--json")).stdout)
    assert replaced["replaced"] == {
        "tasks": 32, "history": 175, "toolCalls": 166, "archived": 0, "agents": 5, "reservations": 0, "checkpoints": 0, "alerts": 0,
    }
    after = tables(db)
    assert [row.split(",")[0] for row in after["tasks"]] == ["(1", "(2", "(3", "(4", "(5"]
    assert len(after["history"]) == replaced["imported"]["history"] and len(after["tool_calls"]) == 5
    assert after["agents"] == []  # the sample's agents went with its board


def test_an_import_waits_for_the_boards_writers_and_sees_what_they_wrote(rich: Path, db: str, tmp_path: Path) -> None:
    store = Store.open(tmp_path / "db-workspace", db=db)
    with store.transaction(), connect(db, autocommit=True) as watcher:  # a writer holding the board
        process = started(subprocess.Popen([sys.executable, "-m", "board", "--db", db, "import", str(rich)], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        deadline = time.monotonic() + 60
        while not watcher.execute("select count(*) from pg_locks where locktype = 'advisory' and not granted").fetchone()[0]:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the import never waited for the board's lock"
            time.sleep(0.05)
        store.create("written while the import waited")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2 and "already holds a board (1 task, 1 history line, 0 tool calls, 0 deleted tasks, 0 agents," in err, err
    assert [row.split(",")[0] for row in tables(db)["tasks"]] == ["(1"]


@pytest.mark.parametrize("break_it, named", [
    (lambda tasks: (tasks / "task_99.json").write_text('{"id": "99", "subject": '), "task_99.json: not valid JSON"),
    (lambda tasks: (tasks / "task_99.json").write_text('{"id": "8", "subject": "x"}'), "task_99.json: id '8' does not match the file name"),
    (lambda tasks: os.mkfifo(tasks / "task_99.json"), "task_99.json: a FIFO (named pipe)"),
    (lambda tasks: (tasks / "task_99.json").symlink_to(tasks / "task_1.json"), "task_99.json: a symbolic link"),
    (lambda tasks: (tasks / "history.jsonl").open("a").write("not json\n"), "history.jsonl line 176: not a JSON object"),
    (lambda tasks: (tasks / "history.jsonl").open("a").write('{"task": "1"}'), "history.jsonl: line 176 is cut short"),
    (lambda tasks: (tasks / "toolcalls" / "7.jsonl").open("a").write('{"ts": "2026-11-24T00:00:00Z"}\n'), "toolcalls/7.jsonl line 24: not a tool call"),
    (lambda tasks: (tasks / "archive").mkdir() or (tasks / "archive" / "task_40.json").write_text("[]"), "archive/task_40.json: top level must be a JSON object"),
    (lambda tasks: (tasks / "agents" / "alice.json").write_text('{"name": '), "agents/alice.json: not valid JSON"),
    (lambda tasks: (tasks / "agents" / "-x.json").write_text("{}"), "agents/-x.json: '-x' is not an agent name"),
    (lambda tasks: (tasks / "agents" / "bob.calls.jsonl").open("a").write("[]\n"), "agents/bob.calls.jsonl line 37: not a tool call"),
    (lambda tasks: (tasks / "reservations").mkdir() or (tasks / "reservations" / "0123456789abcdef.json").write_text("[]"),
     "reservations/0123456789abcdef.json: top level must be a JSON object"),
    (lambda tasks: (tasks / "checkpoints" / "7").mkdir(parents=True) or (tasks / "checkpoints" / "7" / "000001.json").write_text("{"),
     "checkpoints/7/000001.json: not valid JSON"),
    (lambda tasks: (tasks / "alerts.json").write_text("[]"), "alerts.json: top level must be a JSON object"),
], ids=["task", "task-id", "fifo", "task-link", "history", "history-torn", "toolcalls", "archive", "agent", "agent-name", "agent-log", "reservation", "checkpoint", "alerts"])
def test_a_broken_file_is_named_and_nothing_is_written(sample: Path, rich: Path, db: str, break_it, named: str) -> None:
    ok(board("--db", db, "import", str(rich)))
    before = tables(db)
    break_it(sample / ".tasks")
    message = refused(board("--db", db, "import", str(sample), "--replace"))
    assert message.startswith(f"board: cannot import {sample / '.tasks'}/") and named in message, message
    assert message.endswith("; nothing was imported")
    assert tables(db) == before


def test_several_broken_files_name_the_first_and_count_the_rest(sample: Path, db: str) -> None:
    (sample / ".tasks" / "task_98.json").write_text("{")
    (sample / ".tasks" / "task_99.json").write_text("{")
    message = refused(board("--db", db, "import", str(sample)))
    assert message.startswith(f"board: cannot import {sample / '.tasks' / 'task_98.json'}: not valid JSON")
    assert message.endswith(" (and 1 more broken file); nothing was imported")
    assert tables(db) == {table: [] for table in TABLES}


def test_what_the_database_refuses_midway_leaves_it_as_it_was(sample: Path, rich: Path, db: str) -> None:
    ok(board("--db", db, "import", str(rich)))
    before = tables(db)
    # Valid JSON the files take, and jsonb does not: refused after the tasks went in.
    line = {"ts": "2026-11-24T00:00:00Z", "task": "1", "version": 99, "actor": "x", "op": "note", "changes": {"description": ["", "a\u0000b"]}}
    with (sample / ".tasks" / "history.jsonl").open("a") as history:
        history.write(json.dumps(line) + "\n")
    message = refused(board("--db", db, "import", str(sample), "--replace"))
    assert message.startswith(f"board: the database refused {sample / '.tasks' / 'history.jsonl'} line 176: ")
    assert message.endswith("; nothing was imported")
    assert tables(db) == before


def test_an_edge_the_database_refuses_is_named_by_its_task_file_and_nothing_is_written(rich: Path, db: str) -> None:
    """The edges are copied by a thread of the import while it works out the claim columns:
    what the server refuses there is named and undone as any refusal is."""
    with connect(db, autocommit=True) as conn:
        conn.execute("create function board.refuse_edge() returns trigger language plpgsql as $$ begin raise exception 'no edges to #2 here'; end $$")
        conn.execute("create trigger refuse_edge before insert on board.task_edges for each row when (new.blocker_id = '2') execute function board.refuse_edge()")
    before = tables(db)
    message = refused(board("--db", db, "import", str(rich)))
    assert message == f"board: the database refused {rich / '.tasks' / 'task_3.json'} (blockedBy #2): no edges to #2 here; nothing was imported"
    assert tables(db) == before


def test_a_board_of_thousands_read_by_a_child_process_goes_over_whole_and_names_its_broken_file(tmp_path: Path, db: str) -> None:
    """A board this large has its task files read by a child process (``read_ahead``) while
    the import checks them: every file goes over as it was, and one it cannot read is named."""
    from board.disk.read_ahead import MANY

    workspace = tmp_path / "big"
    (workspace / ".tasks").mkdir(parents=True)
    count = MANY + 500
    for n in range(1, count + 1):
        seed_001_write(workspace, {"id": n, "subject": f"task {n}", "status": "pending", "blockedBy": [n - 1] if n > 1 else [], "blocks": [], "owner": ""})
    (workspace / ".tasks" / "task_1700.json").unlink()
    os.mkfifo(workspace / ".tasks" / "task_1700.json")
    message = refused(board("--db", db, "import", str(workspace)))
    assert message == f"board: cannot import {workspace / '.tasks' / 'task_1700.json'}: a FIFO (named pipe); nothing was imported"
    assert tables(db) == {table: [] for table in TABLES}
    (workspace / ".tasks" / "task_1700.json").unlink()
    seed_001_write(workspace, {"id": 1700, "subject": "task 1700", "status": "pending", "blockedBy": [1699], "blocks": [], "owner": ""})
    imported, exported = round_trip(workspace, db, tmp_path / "out")
    assert imported["imported"]["tasks"] == exported["exported"]["tasks"] == count and imported["imported"]["dependencies"] == count - 1
    def said(folder: Path) -> dict[str, tuple]:
        return {name: (doc["id"], doc["subject"], doc["blockedBy"]) for name, doc in ((n, json.loads(raw)) for n, raw in board_files(folder).items())}

    assert said(tmp_path / "out") == said(workspace)
    assert len(said(workspace)) == count


def test_a_directory_that_is_not_a_board_in_files_is_refused(tmp_path: Path, db: str) -> None:
    before = tables(db)
    (tmp_path / "empty").mkdir()
    assert refused(board("--db", db, "import", str(tmp_path / "empty"))) == (
        f"board: {tmp_path / 'empty'} holds no board (no .tasks/ folder, and not a Claude Code task list); nothing was imported"
    )
    assert "is not a directory" in refused(board("--db", db, "import", str(tmp_path / "missing")))
    (tmp_path / "ws" / ".tasks").mkdir(parents=True)
    (tmp_path / "ws" / ".tasks" / ".lock").touch()
    assert "give the workspace that holds it" in refused(board("--db", db, "import", str(tmp_path / "ws" / ".tasks")))
    (tmp_path / "ws" / ".tasks" / "board.toml").write_text(f'[store]\nurl = "{db}"\n')
    assert refused(board("--db", db, "import", str(tmp_path / "ws"))).endswith("([store] url in its board.toml), not in files; nothing was imported")
    assert tables(db) == before


def test_without_a_database_or_a_schema_nothing_happens(sample: Path, pg_url: str, tmp_path: Path) -> None:
    assert refused(board("import", str(sample), cwd=tmp_path)) == "board: board import needs a database: pass --db URL or set BOARD_DB"
    assert refused(board("--db", pg_url, "export", str(tmp_path / "out"))) == "board: no board in this database: run 'board --db URL init'"
    assert not (tmp_path / "out").exists()


def test_export_refuses_a_directory_holding_a_board_unless_replace(sample: Path, rich: Path, db: str, tmp_path: Path) -> None:
    ok(board("--db", db, "import", str(rich)))
    (sample / ".tasks" / "agents" / ".alice.lock").touch()  # alice's name, held by a process on this machine
    ok(board("-w", str(sample), "reserve", "7", "src/app/repository.py"))
    ok(board("-w", str(sample), "checkpoint", "7"))
    ok(board("-w", str(sample), "alerts"))
    assert {"alerts.json", "reservations", "checkpoints"} <= {p.name for p in (sample / ".tasks").iterdir()}
    before = files(sample)
    assert refused(board("--db", db, "export", str(sample))) == (
        f"board: {sample} already holds a board ({sample / '.tasks'}); nothing was exported: pass --replace to replace its "
        "tasks, history, tool calls, deleted tasks, agents, reservations, checkpoints and alerts"
    )
    assert files(sample) == before
    ok(board("--db", db, "export", str(sample), "--replace"))
    assert board_files(sample) == board_files(rich)  # agents' records and logs, reservations, checkpoints, alerts: rich's
    assert not (sample / ".tasks" / "agents" / "alice.json").exists()
    assert (sample / ".tasks" / "board.toml").read_bytes() == before[".tasks/board.toml"]  # its own files stay
    assert (sample / ".tasks" / "agents" / ".alice.lock").exists()
    assert not list((sample / ".tasks").glob(".tasks.export-*")) and not list(sample.glob(".tasks.export-*"))
    assert ok(board("-w", str(sample), "check")).stdout.strip() == "ok: 5 tasks, no problems"
    (tmp_path / "list").mkdir()
    (tmp_path / "list" / ".highwatermark").write_text("3")
    assert "is a Claude Code task list" in refused(board("--db", db, "export", str(tmp_path / "list"), "--replace"))
    (tmp_path / "kept" / ".tasks").mkdir(parents=True)
    (tmp_path / "kept" / ".tasks" / "board.toml").write_text(f'[store]\nurl = "{db}"\n')
    assert "board would never read files exported there" in refused(board("--db", db, "export", str(tmp_path / "kept"), "--replace"))
    assert files(tmp_path / "kept") == {".tasks": None, ".tasks/board.toml": f'[store]\nurl = "{db}"\n'.encode()}
