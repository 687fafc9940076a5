"""The notifications a database board has told (``board.notify.NoticeJournal``): a row of
``board.meta`` per notice (``notified:<key>``, when), taken by one insert, so of the processes
telling at once, on any machine, one takes it."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from board.store.postgres.connect import BoardConnection

_TAKE = """
insert into board.meta (key, value) values (%(key)s, to_jsonb(%(now)s::text))
on conflict (key) do update set value = excluded.value
    where %(again)s and (board.meta.value #>> '{}')::timestamptz <= %(before)s::timestamptz
returning 1
"""


class DatabaseNoticeJournal:
    def __init__(self, conn: BoardConnection) -> None:
        self.conn = conn

    def take(self, key: str, now: datetime, again_after: timedelta | None) -> bool:
        before = now - (again_after or timedelta(0))
        arguments = {"key": f"notified:{key}", "now": now.isoformat(), "again": again_after is not None, "before": before.isoformat()}
        return self.conn.execute(_TAKE, arguments).fetchone() is not None
