"""The file store's side state (``board.store.side``, ``board.store.files.side``): agent records,
reservations, checkpoints and alerts, each behind its interface, in the files and formats board
has always written, and safe when several OS processes use them at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from board.agent_record import AgentRecord
from board.agents import list_agents, read_agent, write_agent
from board.alerts import Alert, Severity, read_alerts, write_alerts
from board.checkpoints import KEEP, CorruptCheckpoint, latest_checkpoint, list_checkpoints, read_checkpoint, write_checkpoint
from board.reservations import Reservation, active_reservations, reserve, unreserve
from board.store import Store
from board.store.files.side import reservation_file
from board.store.side import UnreadableRecord
from tests.conftest import REPO
from tests.coordinator.helpers import alive, started, wait_for

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def child(code: str, *args: str) -> subprocess.Popen:
    """A Python process running ``code`` with ``args``, its stdin and stdout piped to the test."""
    return started(subprocess.Popen(
        [sys.executable, "-c", code, *args], env=ENV, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    ))


def together(processes: list[subprocess.Popen]) -> list[object]:
    """Children that say "ready", then wait for a line on stdin before doing their part: let
    them all go at once, once every one is ready; their JSON answers, in order."""
    for process in processes:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    answers = []
    for process in processes:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0, out
        answers.append(json.loads(out))
    return answers


# -- agent records -------------------------------------------------------------------------------


def test_an_agent_record_round_trips_in_its_file(store: Store) -> None:
    records = store.agent_records
    write_agent(records, AgentRecord(name="ann", kind="worker", pid=7, host="box", task="3", heartbeat_at=T0, started_at=T0))
    assert (store.state_dir / "agents" / "ann.json").read_bytes() == (
        b'{\n  "name": "ann",\n  "kind": "worker",\n  "pid": 7,\n  "host": "box",\n  "task": "3",\n'
        b'  "heartbeatAt": "2026-01-01T12:00:00Z",\n  "startedAt": "2026-01-01T12:00:00Z",\n  "stopped": false,\n  "toolCalls": 0\n}\n'
    )
    record = read_agent(records, "ann")
    assert record is not None and (record.kind, record.pid, record.task, record.heartbeat_at) == ("worker", 7, "3", T0)
    assert records.read("nobody") is None and records.read("../escape") is None


def test_unreadable_agent_records_are_skipped_and_others_listed(store: Store) -> None:
    records = store.agent_records
    for name in ("bob", "ann"):
        write_agent(records, AgentRecord(name=name, heartbeat_at=T0))
    (store.state_dir / "agents" / "broken.json").write_text("{ not json")
    (store.state_dir / "agents" / "list.json").write_text("[1, 2]")
    (store.state_dir / "agents" / "invalid.json").write_text('{"name": "invalid"}')  # no heartbeatAt
    assert records.read("broken") is None and records.read("list") is None
    assert [r["name"] for r in records.read_all()] == ["ann", "bob", "invalid"]
    assert [a.name for a in list_agents(records)] == ["ann", "bob"]


HOLD_NAME = """
import sys
from board.store import Store
lock = Store.open(sys.argv[1], whole=False).agent_records.name_lock(sys.argv[2])
assert lock.acquire()
print("held", flush=True)
sys.stdin.readline()
"""


def test_an_agent_name_is_one_live_processs_until_it_dies(workspace: Path) -> None:
    records = Store.open(workspace, whole=False).agent_records
    assert not records.name_in_use("solo")
    holder = child(HOLD_NAME, str(workspace), "solo")
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    mine = records.name_lock("solo")
    assert records.name_in_use("solo") and records.name_in_use("solo")  # a probe takes nothing
    assert not mine.acquire()
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=60)
    wait_for(lambda: not alive(holder.pid), what="the holder to be gone")
    assert not records.name_in_use("solo")
    assert mine.acquire() and mine.acquire()  # taking it again while holding it is fine
    assert records.name_in_use("solo")  # as another holder sees it
    mine.release()
    assert not records.name_in_use("solo")


# -- reservations --------------------------------------------------------------------------------


def test_a_reservation_book_round_trips_in_the_spec_shape(store: Store) -> None:
    book = store.reservation_book
    ann = Reservation("src/a.py", "ann", "1", "read", T0 + timedelta(minutes=5), T0)
    bob = Reservation("src/a.py", "bob", "2", "read", T0 + timedelta(minutes=9))
    book.replace("src/a.py", [ann, bob])
    file = reservation_file(store.state_dir, "src/a.py")
    assert file.parent == store.state_dir / "reservations"
    assert file.read_bytes() == (
        b'{\n  "path": "src/a.py",\n  "owner": "ann",\n  "task": "1",\n  "mode": "read",\n  "expiresAt": "2026-01-01T12:05:00Z",\n'
        b'  "holders": [\n    {\n      "owner": "ann",\n      "task": "1",\n      "mode": "read",\n      "expiresAt": "2026-01-01T12:05:00Z",\n'
        b'      "acquiredAt": "2026-01-01T12:00:00Z"\n    },\n    {\n      "owner": "bob",\n      "task": "2",\n      "mode": "read",\n'
        b'      "expiresAt": "2026-01-01T12:09:00Z"\n    }\n  ]\n}\n'
    )
    assert book.holders("src/a.py") == [ann, bob]
    assert book.holders("src/other.py") == []
    book.replace("src/b.py", [bob])
    assert sorted(book.all_holders(), key=lambda h: (h.path, h.owner)) == [ann, bob, Reservation("src/b.py", "bob", "2", "read", bob.expires_at)]
    book.replace("src/a.py", [])
    assert not file.exists() and book.holders("src/a.py") == []
    book.replace("src/a.py", [])  # freeing a free path is fine


def test_a_reservation_file_in_the_plain_spec_shape_is_one_holder(store: Store) -> None:
    """Another tool may write only ``{path, owner, task, mode, expiresAt}``."""
    file = reservation_file(store.state_dir, "src/x.py")
    file.parent.mkdir()
    file.write_text(json.dumps({"path": "src/x.py", "owner": "zed", "task": 4, "mode": "write", "expiresAt": "2026-01-01T12:30:00Z"}))
    (file.parent / "broken.json").write_text("{")
    assert store.reservation_book.holders("src/x.py") == [Reservation("src/x.py", "zed", "4", "write", T0 + timedelta(minutes=30))]
    assert [h.owner for h in active_reservations(store.reservation_book, T0)] == ["zed"]
    assert active_reservations(store.reservation_book, T0 + timedelta(hours=1)) == []


RESERVER = """
import json, sys
from board.reservations import ReservationConflict, reserve
from board.store import Store
workspace, task_id, agent, mode, *paths = sys.argv[1:]
store = Store.open(workspace, actor=agent)
print("ready", flush=True)
sys.stdin.readline()
try:
    print(json.dumps({"won": [h.path for h in reserve(store, task_id, paths, agent=agent, mode=mode)]}))
except ReservationConflict as error:
    print(json.dumps({"refused": str(error)}))
"""


def test_concurrent_write_reserves_from_several_processes_leave_one_writer_per_file(store: Store, workspace: Path) -> None:
    """Six processes reserve the same two files for writing at the same moment, in both orders:
    one gets both, every other is refused, and each file names that one holder alone."""
    agents = [f"agent{i}" for i in range(6)]
    tasks = {agent: store.create(f"work of {agent}").id for agent in agents}
    processes = [
        child(RESERVER, str(workspace), tasks[agent], agent, "write", *(["a.py", "b.py"] if i % 2 else ["b.py", "a.py"]))
        for i, agent in enumerate(agents)
    ]
    answers = together(processes)
    winners = [agent for agent, answer in zip(agents, answers) if "won" in answer]  # type: ignore[operator]
    assert len(winners) == 1, answers
    assert sum("refused" in answer for answer in answers) == len(agents) - 1  # type: ignore[operator]
    for path in ("a.py", "b.py"):
        holders = Store.open(workspace, whole=False).reservation_book.holders(path)
        assert [(h.owner, h.task, h.mode) for h in holders] == [(winners[0], tasks[winners[0]], "write")]


def test_concurrent_read_reserves_from_several_processes_lose_no_reader(store: Store, workspace: Path) -> None:
    """Readers share a file: each one's write rewrites the file with every holder, so a write
    that did not see another's would drop it."""
    agents = [f"reader{i}" for i in range(6)]
    tasks = {agent: store.create(f"read by {agent}").id for agent in agents}
    answers = together([child(RESERVER, str(workspace), tasks[agent], agent, "read", "shared.py") for agent in agents])
    assert answers == [{"won": ["shared.py"]}] * len(agents)
    book = Store.open(workspace, whole=False).reservation_book
    assert sorted(h.owner for h in book.holders("shared.py")) == agents
    unreserve(store, tasks["reader0"], ["shared.py"])
    assert sorted(h.owner for h in book.holders("shared.py")) == agents[1:]
    assert unreserve(store, tasks["reader1"]) == ["shared.py"]  # every file of the task
    assert sorted(h.owner for h in book.holders("shared.py")) == agents[2:]


def test_reserve_and_unreserve_write_through_the_book(store: Store, workspace: Path) -> None:
    task = store.create("edit a").id
    [held] = reserve(store, task, ["./src/../a.py"], agent="ann", now=T0)
    assert (held.path, held.owner, held.expires_at) == ("a.py", "ann", T0 + timedelta(seconds=300))
    assert store.reservation_book.holders("a.py") == [held]
    assert unreserve(store, task, ["a.py"]) == ["a.py"]
    assert store.reservation_book.all_holders() == []
    assert not any((store.state_dir / "reservations").iterdir())


# -- checkpoints ---------------------------------------------------------------------------------


def test_a_checkpoint_book_round_trips_records_by_task_and_number(store: Store) -> None:
    book = store.checkpoint_book
    assert book.sequence_numbers("1") == [] and book.tasks() == set() and book.next_seq("1") == 1
    book.write("1", 1, {"seq": 1, "note": "café"})
    book.write("1", 12, {"seq": 12})
    path = store.state_dir / "checkpoints" / "1" / "000001.json"
    assert path.read_bytes() == '{\n  "seq": 1,\n  "note": "café"\n}\n'.encode()
    assert book.where("1", 1) == str(path)
    assert book.sequence_numbers("1") == [1, 12] and book.next_seq("1") == 13 and book.tasks() == {"1"}
    assert book.read("1", 12) == {"seq": 12}
    (path.parent / "7.json").write_text('{"seq": 7}')  # a number is a number, however written
    assert book.sequence_numbers("1") == [1, 7, 12] and book.read("1", 7) == {"seq": 7}
    assert book.where("1", 7) == str(path.parent / "7.json")
    book.delete("1", 7)
    book.delete("1", 7)  # gone already is fine
    assert book.sequence_numbers("1") == [1, 12]
    (path.parent / "000003.json").write_text("{ torn")
    (path.parent / "000004.json").write_text("[]")
    for seq in (3, 4, 99):
        with pytest.raises(UnreadableRecord) as caught:
            book.read("1", seq)
        assert caught.value.where.startswith(str(path.parent))
    with pytest.raises(ValueError):
        book.sequence_numbers("../x")


def test_a_corrupt_checkpoint_is_named_and_skipped(store: Store) -> None:
    task = store.create("job", files=["a.py"]).id
    first = write_checkpoint(store, task, reason="test", note="first")
    second = write_checkpoint(store, task, reason="test", note="second")
    assert (first.seq, second.seq) == (1, 2) and second.where == str(store.state_dir / "checkpoints" / task / "000002.json")
    Path(second.where).write_text(Path(second.where).read_text().replace("second", "tampered"))
    with pytest.raises(CorruptCheckpoint, match="is corrupt"):
        read_checkpoint(store.checkpoint_book, task, 2)
    latest = latest_checkpoint(store.checkpoint_book, task)
    assert latest is not None and latest.note == "first"


CHECKPOINTER = """
import json, sys
from board.checkpoints import write_checkpoint
from board.store import Store
workspace, task_id, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = Store.open(workspace, actor="writer")
print("ready", flush=True)
sys.stdin.readline()
print(json.dumps([write_checkpoint(store, task_id, reason="test").seq for _ in range(count)]))
"""


def test_checkpoint_numbers_never_repeat_across_processes(store: Store, workspace: Path) -> None:
    """Four processes checkpoint one task eight times each, at once: 32 distinct numbers, and
    retention keeps the first and the newest, every kept one whole."""
    task = store.create("busy").id
    writers, each = 4, 8
    answers = together([child(CHECKPOINTER, str(workspace), task, str(each)) for _ in range(writers)])
    numbers = [seq for answer in answers for seq in answer]  # type: ignore[union-attr]
    assert sorted(numbers) == list(range(1, writers * each + 1))
    book = store.checkpoint_book
    kept = list_checkpoints(book, task)
    assert kept == [1, *range(writers * each - KEEP + 2, writers * each + 1)] and len(kept) == KEEP
    assert [read_checkpoint(book, task, seq).seq for seq in kept] == kept


# -- alerts --------------------------------------------------------------------------------------


def test_the_alert_board_is_replaced_whole_and_only_when_it_changes(store: Store) -> None:
    board = store.alert_board
    assert board.stamp() is None and board.read() == [] and read_alerts(board) == []
    alert = Alert(key="human.waiting:1", kind="human.waiting", severity=Severity.INFO, message="#1 asks: ça va?", action="answer it", tasks=("1",), since=T0)
    assert write_alerts(board, [alert])
    path = store.state_dir / "alerts.json"
    assert path.read_bytes() == (json.dumps({"alerts": [alert.to_dict()]}, ensure_ascii=False, indent=2) + "\n").encode()
    assert "ça va" in path.read_text()
    stamp = board.stamp()
    assert stamp is not None
    assert not write_alerts(board, [alert]) and board.stamp() == stamp  # the same alerts: nothing written
    assert read_alerts(board) == [alert] and read_alerts(board)[0].since == T0
    assert write_alerts(board, []) and board.stamp() != stamp and read_alerts(board) == []
    for broken in ("{ torn", '{"alerts": 3}', '{"alerts": [1, {"key": "x"}]}'):
        path.write_text(broken)
        assert read_alerts(board) == []


# -- this machine's files ------------------------------------------------------------------------


def test_local_files_go_in_the_boards_own_folder(store: Store, workspace: Path, tmp_path: Path) -> None:
    assert store.local_dir == store.state_dir == workspace / ".tasks"
    claude_list = tmp_path / "claude-list"
    claude_list.mkdir()
    (claude_list / ".highwatermark").write_text("0")
    listed = Store.open(claude_list)
    assert listed.local_dir == listed.state_dir == claude_list / ".board"
    write_agent(listed.agent_records, AgentRecord(name="ann", heartbeat_at=T0))
    assert (claude_list / ".board" / "agents" / "ann.json").is_file()
