"""A database board's side state in its tables, through the same modules as on files: two
machines (two workspaces, one database) see each other's agents, reservations, checkpoints and
alerts."""

from __future__ import annotations

from pathlib import Path

import pytest

from board.agents import list_agents, read_agent, register_agent
from board.checkpoints import list_checkpoints, read_checkpoint, write_checkpoint
from board.reservations import ReservationConflict, active_reservations, reserve, unreserve
from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate


@pytest.fixture
def two_machines(pg_url: str, tmp_path: Path) -> tuple[Store, Store]:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    here, there = Store.open(tmp_path / "here", db=pg_url), Store.open(tmp_path / "there", db=pg_url)
    here.create("schema", files=["db/schema.sql"])
    here.create("api")
    there.sync()
    yield here, there
    here.close()
    there.close()


def test_agents_registered_on_one_machine_are_seen_on_the_other(two_machines: tuple[Store, Store]) -> None:
    here, there = two_machines
    register_agent(here.agent_records, "ann")
    assert [a.name for a in list_agents(there.agent_records)] == ["ann"]
    here.claim("ann", lease_seconds=60)
    here.record_toolcall("1", "Edit", agent="ann")
    here.record_toolcall("1", "Bash", agent="ann", ok=False)
    assert there.agent_records.logged_calls("ann")[0] == 2 and there.agent_records.logged_calls("bob") is None
    assert read_agent(there.agent_records, "ann") is not None
    # A name is one process's, on any machine: the lock is the database's.
    lock = here.agent_records.name_lock("ann")
    assert lock.acquire() and there.agent_records.name_in_use("ann")
    assert not there.agent_records.name_lock("ann").acquire()
    lock.release()
    assert not there.agent_records.name_in_use("ann")


def test_a_reservation_made_on_one_machine_holds_on_the_other(two_machines: tuple[Store, Store]) -> None:
    here, there = two_machines
    here.claim("ann", lease_seconds=60)
    there.claim("bob", lease_seconds=60)
    reserve(here, "1", ["db/schema.sql"], mode="write", agent="ann")
    with pytest.raises(ReservationConflict, match="reserved for writing by ann for task #1"):
        reserve(there, "2", ["db/schema.sql"], mode="write", agent="bob")
    assert [(r.path, r.owner) for r in active_reservations(there.reservation_book, there.clock(), there.tasks)] == [("db/schema.sql", "ann")]
    assert unreserve(here, "1") == ["db/schema.sql"]
    assert reserve(there, "2", ["db/schema.sql"], mode="write", agent="bob")[0].owner == "bob"


def test_checkpoints_and_alerts_are_shared(two_machines: tuple[Store, Store]) -> None:
    here, there = two_machines
    write_checkpoint(here, "1", reason="claim", note="start with the users table")
    write_checkpoint(there, "1", reason="request", note="second")
    assert list_checkpoints(here.checkpoint_book, "1") == [1, 2]
    assert read_checkpoint(here.checkpoint_book, "1", 2).note == "second"
    record = {"key": "graph.cycle", "kind": "graph.cycle", "severity": "error", "message": "a cycle"}
    assert here.alert_board.stamp() is None
    assert here.alert_board.replace([record]) is True
    stamp = there.alert_board.stamp()
    assert there.alert_board.read() == [record] and stamp is not None
    assert here.alert_board.replace([record]) is False and there.alert_board.stamp() == stamp  # unchanged: not written
    assert here.alert_board.replace([]) is True and there.alert_board.read() == [] and there.alert_board.stamp() != stamp
