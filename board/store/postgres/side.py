"""A database board's side state (``board.store.side``) in its tables: agents, reservations,
checkpoints and alerts, each read and written on the store's connection, so a caller's
``store.transaction()`` covers them with the tasks."""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from board.store.postgres.connect import only_row
from board.store.postgres.locks import SessionLock, held_elsewhere
from board.store.side import UnreadableRecord

if TYPE_CHECKING:
    from board.store.side import Reservation
    from board.store.postgres.connect import BoardConnection


class DatabaseAgentRecords:
    """Table ``agents``; a name is held by a session's advisory lock, on any machine."""

    def __init__(self, conn: BoardConnection) -> None:
        self.conn = conn

    def read(self, name: str) -> dict[str, Any] | None:
        row = self.conn.execute("select record from board.agents where name = %s", (name,)).fetchone()
        return row[0] if row is not None and isinstance(row[0], dict) else None

    def read_all(self) -> list[dict[str, Any]]:
        rows = self.conn.execute("select record from board.agents order by name").fetchall()
        return [record for (record,) in rows if isinstance(record, dict)]

    def write(self, name: str, record: Mapping[str, Any]) -> None:
        self.conn.execute(
            "insert into board.agents (name, record, updated_at) values (%s, %s, now()) "
            "on conflict (name) do update set record = excluded.record, updated_at = excluded.updated_at",
            (name, json.dumps(dict(record), ensure_ascii=False)),
        )

    def logged_calls(self, name: str) -> tuple[int, str | None] | None:
        count, last = only_row(self.conn.execute("select count(*), max(at) from board.tool_calls where agent = %s", (name,)))
        if not count:
            return None
        return int(count), last.astimezone(UTC).isoformat().replace("+00:00", "Z") if last is not None else None

    def name_lock(self, name: str) -> SessionLock:
        return SessionLock(self.conn.url, f"agent {name}")

    def name_in_use(self, name: str) -> bool:
        """Held by a live process; also when the database cannot tell (out of reach): a name
        is never taken on a guess."""
        return held_elsewhere(self.conn.url, f"agent {name}") is not False


#: The acquisition time of a holder from an older file, which says none: it keeps its place first.
NO_ACQUISITION_TIME = datetime(1970, 1, 1, tzinfo=UTC)


class DatabaseReservationBook:
    """Table ``reservations``, one row per holder; a holder's place is its ``created_at``."""

    def __init__(self, conn: BoardConnection) -> None:
        self.conn = conn

    def holders(self, path: str) -> list[Reservation]:
        rows = self.conn.execute(
            "select path, owner, task_id, mode, expires_at, created_at from board.reservations where path = %s order by created_at, owner", (path,)
        ).fetchall()
        return [reservation_from_row(row) for row in rows]

    def all_holders(self) -> list[Reservation]:
        rows = self.conn.execute(
            "select path, owner, task_id, mode, expires_at, created_at from board.reservations order by path, created_at, owner"
        ).fetchall()
        return [reservation_from_row(row) for row in rows]

    def replace(self, path: str, holders: Sequence[Reservation]) -> None:
        with self.conn.transaction():
            self.conn.execute("delete from board.reservations where path = %s", (path,))
            if holders:
                self.conn.executemany(
                    "insert into board.reservations (path, task_id, owner, mode, expires_at, created_at) values (%s, %s, %s, %s, %s, %s)",
                    [(path, h.task, h.owner, h.mode, h.expires_at, h.acquired_at or NO_ACQUISITION_TIME) for h in holders],
                )


def reservation_from_row(row: tuple[Any, ...]) -> Reservation:
    """A holder as a row of ``reservations`` has it: (path, owner, task_id, mode, expires_at, created_at)."""
    from board.store.side import Reservation

    path, owner, task_id, mode, expires_at, created_at = row
    acquired = None if created_at == NO_ACQUISITION_TIME else created_at
    return Reservation(path, owner, task_id, mode, expires_at, acquired)


class DatabaseCheckpointBook:
    """Table ``checkpoints``: (task, seq) -> record."""

    def __init__(self, conn: BoardConnection) -> None:
        self.conn = conn

    def sequence_numbers(self, task_id: str) -> list[int]:
        return [seq for (seq,) in self.conn.execute("select seq from board.checkpoints where task_id = %s order by seq", (task_id,)).fetchall()]

    def tasks(self) -> set[str]:
        return {task_id for (task_id,) in self.conn.execute("select distinct task_id from board.checkpoints").fetchall()}

    def next_seq(self, task_id: str) -> int:
        row = only_row(self.conn.execute("select coalesce(max(seq), 0) from board.checkpoints where task_id = %s", (task_id,)))
        return int(row[0]) + 1

    def read(self, task_id: str, seq: int) -> dict[str, Any]:
        row = self.conn.execute("select record from board.checkpoints where task_id = %s and seq = %s", (task_id, seq)).fetchone()
        if row is None or not isinstance(row[0], dict):
            raise UnreadableRecord(self.where(task_id, seq), "no such checkpoint")
        return row[0]

    def write(self, task_id: str, seq: int, record: Mapping[str, Any]) -> None:
        self.conn.execute(
            "insert into board.checkpoints (task_id, seq, record) values (%s, %s, %s) on conflict (task_id, seq) do update set record = excluded.record",
            (task_id, seq, json.dumps(dict(record), ensure_ascii=False)),
        )

    def delete(self, task_id: str, seq: int) -> None:
        self.conn.execute("delete from board.checkpoints where task_id = %s and seq = %s", (task_id, seq))

    def where(self, task_id: str, seq: int) -> str:
        return f"checkpoint {seq} of task {task_id} in the database"


class DatabaseAlertBoard:
    """Table ``alerts``: one row per alert, keyed by its place in the order given (worst first);
    ``meta`` counts the replacements, which is the stamp readers poll."""

    def __init__(self, conn: BoardConnection) -> None:
        self.conn = conn

    def read(self) -> list[dict[str, Any]]:
        return [record for (record,) in self.conn.execute("select record from board.alerts order by key").fetchall()]

    def replace(self, records: Sequence[Mapping[str, Any]]) -> bool:
        wanted = [json.loads(json.dumps(dict(r))) for r in records]
        with self.conn.transaction():
            self.conn.execute("select pg_advisory_xact_lock(hashtextextended('board alerts', 0))")
            if self.read() == wanted and self.stamp() is not None:
                return False  # unchanged: no write, so no notification wakes every screen
            self.conn.execute("delete from board.alerts")
            if wanted:
                self.conn.executemany(
                    "insert into board.alerts (key, record) values (%s, %s)", [(f"{i:06d}", json.dumps(r, ensure_ascii=False)) for i, r in enumerate(wanted)]
                )
            self.conn.execute(
                "insert into board.meta (key, value) values ('alerts_version', '1') "
                "on conflict (key) do update set value = to_jsonb((board.meta.value)::int + 1)"
            )
        return True

    def stamp(self) -> Hashable | None:
        row = self.conn.execute("select value from board.meta where key = 'alerts_version'").fetchone()
        return None if row is None else int(row[0])
