"""A board in PostgreSQL: ``Store``'s rules (``board.store.base``) on the tables of ``migrations``.

Every write is one transaction. The writes that the rules make under the board lock take a
database-wide advisory lock instead, so they see one state exactly as on files; a claim takes
that lock shared, so claims run side by side and pick their tasks with ``FOR NO KEY UPDATE SKIP
LOCKED``, in the order the rules give (priority, then the longest remaining critical path, then
id). The database makes that pick (``board.claim_next``, schema version 3) from the readiness and
remaining path it keeps per task, so a claim needs nothing of this process's index. A
transaction that dies leaves nothing behind: the task it was claiming stays claimable.

Each process keeps an index (a ``TaskGraph``) as the file store does, and catches up through
the history table: the rows added since it last looked name the tasks to re-read. History rows
can become visible out of order (concurrent claims commit in any order), so the numbers skipped
are looked at again until they appear or time out (a rolled-back insert never appears).

Long on purpose: the claim's two round trips, the history catch-up and the writes share the
connection's session state (prepared statements, the advisory lock held), kept in one class.
"""

from __future__ import annotations

import functools
import os
import json
import socket
import threading
import time
from datetime import datetime, timedelta
import weakref
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from board.document_schema import SchemaSerializer

from board import json_bounds
from board.active_work import entry_for, note_task, read_active, write_active, held_files
from board.document import datetime_schema
from board.errors import BoardError, InvalidTaskFile, TaskNotFound
from board.graph import MAX_PARENT_DEPTH, cancelled_blockers, id_sort_key
from board.model import MAX_FILE_BYTES, Task, check_readable_back, draft_of, dump_task, lean, parse_task, task_from_dict, task_to_dict, utcnow, validate_id, with_integer_ids
from board.priority import PRIORITY_RANK
from board.status import Status
from board.store.leases import DEFAULT_LEASE_SECONDS
from board.store.base import BoardNews, ChangeSet, Clock, Problem, Store, _check_agent, _iso
from board.names import ID_PATTERN
from board.store.file_format import TASKS_DIR, database_state_dir, next_integer_id
from board.store.postgres.connect import BoardConnection, DatabaseUnavailable, only_row, redact
from board.store.postgres.migrations import CLAIMED_TASK, NOTIFY_AFTER_COMMIT, TASK_CHANNEL, check_schema
from board.store.postgres.locks import SessionLock
from board.store.postgres.notices import DatabaseNoticeJournal
from board.store.postgres.side import DatabaseAgentRecords, DatabaseAlertBoard, DatabaseCheckpointBook, DatabaseReservationBook
from board.disk.atomic import SMALL_FILE_LIMIT, read_jsonl
from board.disk.confine import confine, read_if_regular
from board.toolcall_log import AGENT_LOG_SUFFIX, AGENT_LOGS, fold

#: The board's write lock: an advisory lock on this key, exclusive for the rules' writes,
#: shared for claims ("board_wr" in ASCII; the migrations take another key).
WRITE_LOCK_KEY = 0x626F6172645F7772
#: Tasks read per query when the whole board is read.
LOAD_PAGE = 5_000
#: ... and when it is read again (``reload``): most of a page is thrown away as unchanged, and
#: each page's documents, decoded, are several times the size of the tasks they make.
RELOAD_PAGE = 1_000
#: How many times a claim asks the database before it gives up: only a task whose document
#: the rules must write (``board.claim_next`` hands it back) can be taken by another claim
#: between the two steps.
CLAIM_ATTEMPTS = 50
#: How long a skipped history number is looked for again before it counts as rolled back.
GAP_SECONDS = 30.0
#: How many recent history lines of a kind are kept for the alert detectors, and how far
#: before the last one seen each read looks again.
RECENT_KEPT = 10_000
RECENT_OVERLAP = 1_000
#: Fields that change on every write and would only clutter the history's change lists.
_UNTRACKED = frozenset({"version", "updatedAt"})

_TASK_COLUMNS = "id, doc, status, owner, priority, version, lease_owner, lease_token, lease_expires_at, updated_at"

_UPSERT_TASK = f"""
insert into board.tasks ({_TASK_COLUMNS}, normal) values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, true)
on conflict (id) do update set doc = excluded.doc, status = excluded.status, owner = excluded.owner,
    priority = excluded.priority, version = excluded.version, lease_owner = excluded.lease_owner,
    lease_token = excluded.lease_token, lease_expires_at = excluded.lease_expires_at, updated_at = excluded.updated_at, normal = true
"""

#: The first of the candidates (ids in the order given, joined by commas: an id has none) that
#: is still ready (the column migration 3's triggers keep) and not being claimed by anyone else.
_CLAIM_CANDIDATE = """
select t.doc from board.tasks t
join unnest(string_to_array(%s, ',')) with ordinality as c(id, n) on c.id = t.id
where t.ready
order by c.n
limit 1
for no key update of t skip locked
"""
#: The first ready task in claim order, for a claim inside a caller's transaction.
_CLAIM_BEST = """
select t.doc from board.tasks t where t.ready
order by t.priority, t.remaining desc, t.id_number, t.id collate "C"
limit 1
for no key update of t skip locked
"""
#: A claim in one round trip: one query of four statements, the parameters bound by the client.
#: ``board.claim_next`` (migration 3) picks and writes in a transaction of its own, committed
#: before the notification of the task it took (see ``_CLAIM_BEGIN`` for why after). One simple
#: query costs the client about 30 % less CPU than a pipeline of two prepared statements, and the
#: server no more: planning a function call is little beside running it.
_CLAIM_CALL = "select * from board.claim_next(%s::bigint, %s::text, %s::int, %s::boolean, %s::text, %s::text, %s::text, %s::timestamptz, %s::jsonb, %s::timestamptz)"
_CLAIM_NOTIFY = f"select pg_notify('{TASK_CHANNEL}', id) from (select current_setting('{CLAIMED_TASK}', true) as id) c where c.id <> ''"
_CLAIM_AND_NOTIFY = f"begin; {_CLAIM_CALL}; commit; {_CLAIM_NOTIFY}"

#: A claim in two round trips, each one query of several statements with the parameters bound
#: by the client (``_CLAIM_BEGIN``, ``_CLAIM_WRITE``). First the locks and the pick: the board
#: lock is taken shared (claims run side by side; the rules' other writes take it exclusively)
#: and, with a limit on held tasks, the agent's own lock with it, so that two claims by one agent
#: cannot both pass the limit; the held tasks are then read by a statement that starts once both
#: are granted. Then the writes, the commit and the notification, which comes after the commit
#: (migration 2): a transaction that notifies reaches the disk alone, never in one flush with
#: others. The pick and the writes are prepared once per connection: planning the pick costs
#: more than running it.
_CLAIM_AGENT_LOCK = "select pg_advisory_xact_lock(hashtextextended(%s, 0))"
_CLAIM_HELD = "select id from board.tasks where status = 'in_progress' and owner = %s order by id"
_CLAIM_BEGIN = f"""
begin;
select pg_advisory_xact_lock_shared(%s), set_config('{NOTIFY_AFTER_COMMIT}', 'on', true);
execute board_claim_pick(%s);
"""
_CLAIM_BEGIN_HELD = f"""
begin;
select pg_advisory_xact_lock_shared(%s), pg_advisory_xact_lock(hashtextextended(%s, 0)), set_config('{NOTIFY_AFTER_COMMIT}', 'on', true);
{_CLAIM_HELD};
execute board_claim_pick(%s);
"""
_CLAIM_WRITE = f"""
execute board_claim_write(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s);
execute board_claim_log(%s, %s, %s, %s);
commit;
select pg_notify('{TASK_CHANNEL}', %s);
"""
_CLAIM_STATEMENTS = {
    "board_claim_pick": f"prepare board_claim_pick (text) as {_CLAIM_CANDIDATE.replace('%s', '$1')}",
    "board_claim_write": """
prepare board_claim_write (jsonb, text, text, smallint, bigint, text, bigint, timestamptz, timestamptz, text) as
update board.tasks set doc = $1, status = $2, owner = $3, priority = $4, version = $5, lease_owner = $6, lease_token = $7,
    lease_expires_at = $8, updated_at = $9, normal = true where id = $10
""",
    "board_claim_log": """
prepare board_claim_log (text, bigint, timestamptz, jsonb) as
insert into board.history (task_id, version, at, record) values ($1, $2, $3, $4) returning seq
""",
}
#: The connections whose session has ``_CLAIM_STATEMENTS`` prepared.
_CLAIM_PREPARED: weakref.WeakSet[Any] = weakref.WeakSet()
#: This machine, in the keys that say how far its hook logs were forwarded.
_HOST = socket.gethostname()


def _legacy_mark(log: Path) -> int:
    """Where forwarding of ``log`` stopped before the database kept it: a file beside the log."""
    try:
        return int(read_if_regular(log.with_name(log.name + ".forwarded"), 64) or 0)
    except ValueError:
        return 0


_TIME = SchemaSerializer(datetime_schema())


def _json_time(moment: datetime) -> str:
    """A time as a task document has it (the JSON form ``task_to_dict`` writes)."""
    return _TIME.to_python(moment, mode="json")  # type: ignore[no-any-return]


def _refuse_over_limit(agent: str, max_held: int, held: list[str]) -> None:
    if len(held) >= max_held:
        raise BoardError(f"agent {agent} already holds {', '.join('#' + t for t in held)}; finish or release it first")


def _each_result(cursor: Any) -> list[list[tuple[Any, ...]]]:
    """The rows of each statement of the query the cursor just ran, in order ([] for those
    that return none)."""
    results = []
    while True:
        results.append(cursor.fetchall() if cursor.description is not None else [])
        if not cursor.nextset():
            return results


@dataclass
class DatabaseLayout:
    """Where a database board's local files are: the workspace its tasks' files are relative
    to, and the folder for what stays per machine (settings, logs, the daemon's locks):
    ``.tasks/`` in the workspace when it has one (its ``board.toml`` names the database, say),
    else one per database under the user's state directory (``database_state_dir``)."""

    url: str
    workspace: Path
    name: str = "postgres"
    keeps_spares: bool = False
    state_dir: Path = field(init=False)

    def __post_init__(self) -> None:
        own = self.workspace / TASKS_DIR
        self.state_dir = own if own.is_dir() else database_state_dir(self.url)
        confine(self.state_dir)

    @property
    def tasks_dir(self) -> Path:
        return self.state_dir

    def task_path(self, task_id: str) -> Path:
        """Where messages say a task is: its row, named as a path."""
        return Path(self.task_where(task_id))

    def task_where(self, task_id: str) -> str:
        """``task_path`` as text, for every task read (the URL is redacted once)."""
        return self._where_prefix + task_id

    @cached_property
    def _where_prefix(self) -> str:
        # As a path shows it (a URL's "//" made one "/"): messages and ``invalid`` name it so.
        return str(Path(f"{redact(self.url)}#tasks/_"))[:-1]

    def task_id_for(self, path: Path) -> str | None:
        """The task a ``task_path`` names; None for anything else."""
        text = str(path)
        task_id = text[len(self._where_prefix):] if text.startswith(self._where_prefix) else ""
        return task_id if ID_PATTERN.fullmatch(task_id) else None

    def missing_blocker_done(self, task_id: str) -> bool:
        return False

    def exists(self) -> bool:
        return True


@functools.cache
def _host() -> str:
    import socket

    return socket.gethostname()


def _process_identity() -> str:
    """``host:pid`` of this process, as its agent record says it."""
    return f"{_host()}:{os.getpid()}"


class PostgresStore(Store):
    """One board in a PostgreSQL database plus this process's index of it."""

    layout: DatabaseLayout
    url: str

    def __init__(self, url: str, workspace: Path | str = ".", *, clock: Clock = utcnow, actor: str = "board") -> None:
        self.layout = DatabaseLayout(url, Path(workspace).expanduser().resolve())
        super().__init__(clock=clock, actor=actor)
        self.url = url
        self.conn = BoardConnection(url)
        # Closed when the store is collected or the process exits, whoever forgot to.
        weakref.finalize(self, self.conn.close)
        check_schema(self.conn)
        self.agent_records = DatabaseAgentRecords(self.conn)
        self.reservation_book = DatabaseReservationBook(self.conn)
        self.checkpoint_book = DatabaseCheckpointBook(self.conn)
        self.alert_board = DatabaseAlertBoard(self.conn)
        self.notice_journal = DatabaseNoticeJournal(self.conn)
        #: The highest history number read, the numbers below it not seen yet (and since
        #: when), and the numbers this store wrote itself (no need to re-read those tasks).
        self._history_seq = 0
        self._gaps: dict[int, float] = {}
        self._own_seqs: set[int] = set()
        self._lock_depth = 0
        #: Tasks written in the transaction under way: re-read if it rolls back.
        self._touched: set[str] = set()
        #: Refused writes logged in the transaction under way (kept if it rolls back).
        self._refusals: list[dict[str, Any]] = []
        self._recent: dict[frozenset[str], dict[int, dict[str, Any]]] = {}
        self._read_after: str | None = None
        #: The tool calls naming files read so far, by number (``touching_calls``).
        self._touching: dict[int, tuple[str, dict[str, Any]]] = {}
        #: The local agent records forwarded, by name: (mtime, size) of the file then.
        self._forwarded_records: dict[str, tuple[int, int]] = {}

    @classmethod
    def open(cls, location: Path | str = ".", *, url: str | None = None, create: bool = False, whole: bool = True, **kwargs: Any) -> PostgresStore:  # type: ignore[override]
        """Open the board in the database at ``url`` for the workspace at ``location``."""
        if url is None:
            raise BoardError("no database given: pass --db URL or set BOARD_DB")
        store = cls(url, location, **kwargs)
        store.layout.state_dir.mkdir(parents=True, exist_ok=True)
        if whole:
            store.load()
        else:
            store._history_seq = store._last_history_seq()
            store._partial = True
        return store

    def close(self) -> None:
        self.conn.close()

    def follow(self, *, stop: threading.Event, every: float = 30.0, guard: AbstractContextManager[object] | None = None) -> Iterator[BoardNews]:
        # The server names every change: the catch-up through history is for a lost note only.
        from board.store.postgres.follow import follow_database

        return follow_database(self, self.url, stop=stop, every=every, guard=guard)

    def lifetime_lock(self, name: str) -> SessionLock:
        """The advisory lock ``name`` in the board's database, on a connection of its own."""
        return SessionLock(self.url, name)

    def alert_board_of_its_own(self) -> DatabaseAlertBoard:
        conn = BoardConnection(self.url, application_name="board alerts")
        board = DatabaseAlertBoard(conn)
        weakref.finalize(board, conn.close)
        return board

    # -- reading ------------------------------------------------------------------------------

    def load(self) -> None:
        self.start_reading()
        while not self.read_more(LOAD_PAGE)[1]:
            pass

    def kept_in(self) -> str:
        from board.store.postgres.connect import describe

        return describe(self.url)

    def start_reading(self) -> None:
        """Begin reading the whole board afresh, a page at a time (``read_more``); writes made
        meanwhile are caught up by the next ``sync``, from the history seen at the start."""
        self._partial = False
        self._history_seq = self._last_history_seq()
        self._gaps.clear()
        self.graph = self._new_graph()
        self.invalid = {}
        self._read_after = ""

    def read_more(self, limit: int) -> tuple[ChangeSet, bool]:
        """The next ``limit`` tasks (in id order) into the index; True once the board is read."""
        if self._read_after is None:
            return ChangeSet(), True
        rows = self.conn.execute("select id, doc::text from board.tasks where id > %s order by id limit %s", (self._read_after, limit)).fetchall()
        tasks = [task for task in (self._decode(task_id, doc) for task_id, doc in rows) if task is not None]
        self.graph.put_many(tasks)
        done = len(rows) < limit
        self._read_after = None if done else rows[-1][0]
        return ChangeSet(changed={t.id for t in tasks}), done

    def reload(self) -> ChangeSet:
        """Read the whole board again a page at a time into the index as it is (after a lost
        connection: what happened meanwhile was not heard), keeping each task that did not
        change as it was: whoever holds it (a dashboard) keeps holding the same one, not a
        second copy of the board. Returns what changed, went, or cannot be read."""
        if self._partial or self._read_after is not None:
            before = set(self.graph.tasks)
            self.load()
            return ChangeSet(changed=set(self.graph.tasks), removed=before - set(self.graph.tasks))
        self._history_seq = self._last_history_seq()
        self._gaps.clear()
        result = ChangeSet()
        seen: set[str] = set()
        unreadable: set[str] = set()
        after = ""
        while True:
            rows = self.conn.execute("select id, doc::text from board.tasks where id > %s order by id limit %s", (after, RELOAD_PAGE)).fetchall()
            fresh = []
            for task_id, doc in rows:
                seen.add(task_id)
                task = self._decode(task_id, doc)
                if task is None:
                    where = str(self.layout.task_path(task_id))
                    unreadable.add(where)
                    result.invalid.add(where)
                    if task_id in self.graph.tasks:  # as a first read would have it: not on the board
                        self.graph.remove(task_id)
                        result.removed.add(task_id)
                elif self.graph.tasks.get(task_id) != task:
                    fresh.append(task)
                    result.changed.add(task_id)
            self.graph.put_many(fresh)
            if len(rows) < RELOAD_PAGE:
                break
            after = rows[-1][0]
        for task_id in [t for t in self.graph.tasks if t not in seen]:
            self.graph.remove(task_id)
            result.removed.add(task_id)
        self.invalid = {where: reason for where, reason in self.invalid.items() if where in unreadable}
        return result

    def _decode(self, task_id: str, doc: Any) -> Task | None:
        """A task from its row's document: as text (``doc::text``, which pydantic parses
        several times faster than psycopg's JSON decoding and a validation of the result), or
        as what psycopg made of it."""
        where = self.layout.task_where(task_id)
        try:
            if isinstance(doc, str):
                task = parse_task(doc.encode(), where, limit=None)  # made lean
            else:
                task = task_from_dict(doc, where)
                # Integer ids (seed 001's files, imported) are written back as integers.
                task.integer_ids = isinstance(doc, dict) and type(doc.get("id")) is int
                task = lean(task)
        except InvalidTaskFile as error:
            self.invalid[where] = error.reason
            return None
        self.invalid.pop(where, None)
        return task

    def _last_history_seq(self) -> int:
        return int(only_row(self.conn.execute("select coalesce(max(seq), 0) from board.history"))[0])

    def _read_one(self, task_id: str) -> None:
        self._reread_ids([task_id])

    def read_around(self, *task_ids: str) -> None:
        if self._partial:
            self._read_with_around("id = any(%(ids)s)", {"ids": list(task_ids)})

    def read_ready(self) -> list[str] | None:
        # The ready column, which the database's triggers keep right in every write's transaction.
        if not self._partial:
            return None
        return self._read_with_around("ready", {})

    def _read_with_around(self, condition: str, arguments: dict[str, Any]) -> list[str]:
        """Read the tasks ``condition`` selects into the index, then their sub-tasks down the
        tree and their blockers (three queries, each by an index: one query for all of it
        left the planner scanning the whole table); the ids selected."""
        rows = self.conn.execute(f"select id, doc::text from board.tasks where {condition}", arguments).fetchall()
        chosen = [row[0] for row in rows]
        self._reread_ids(chosen, dict(rows))
        below = self.conn.execute(
            """with recursive below(id, doc, depth) as (
                   select id, doc::text, 1 from board.tasks where parent_id = any(%(ids)s)
                   union all
                   select t.id, t.doc::text, b.depth + 1 from board.tasks t join below b on t.parent_id = b.id where b.depth < %(depth)s)
               select id, doc from below""",
            {"ids": chosen, "depth": MAX_PARENT_DEPTH},
        ).fetchall()
        read = set(chosen)
        kids = {task_id: doc for task_id, doc in below if task_id not in read}
        self._reread_ids(sorted(kids, key=id_sort_key), kids)
        read.update(kids)
        blockers = sorted({b for task_id in chosen if (task := self.graph.tasks.get(task_id)) is not None for b in task.blocked_by} - read, key=id_sort_key)
        self._reread_ids(blockers)
        return chosen

    def sync(self) -> ChangeSet:
        """Catch up with every write committed since the last look, by the history table."""
        gaps = list(self._gaps)
        rows = self.conn.execute(
            "select seq, task_id from board.history where seq > %s or seq = any(%s) order by seq", (self._history_seq, gaps)
        ).fetchall()
        now = time.monotonic()
        changed: set[str] = set()
        for seq, task_id in rows:
            self._gaps.pop(seq, None)
            if seq > self._history_seq:
                self._gaps.update(dict.fromkeys(range(self._history_seq + 1, seq), now))
                self._history_seq = seq
            if seq in self._own_seqs:
                self._own_seqs.discard(seq)
            elif task_id is not None:
                changed.add(task_id)
        for seq, since in list(self._gaps.items()):
            if now - since > GAP_SECONDS:
                del self._gaps[seq]  # a rolled-back write: that number never appears
        self._own_seqs = {seq for seq in self._own_seqs if seq > self._history_seq}
        return self._reread_ids(changed) if changed else ChangeSet()

    def _reread_ids(self, task_ids: Iterable[str] | None, found: dict[str, str] | None = None) -> ChangeSet:
        """The tasks named read again into the index (``found``: their documents as text, when
        the caller has them already); a task with no row leaves it. None: every task."""
        if task_ids is None:
            before = set(self.graph.tasks)
            self.load()
            return ChangeSet(changed=set(self.graph.tasks), removed=before - set(self.graph.tasks))
        ids = list(dict.fromkeys(task_ids))
        result = ChangeSet()
        if not ids:
            return result
        if found is None:
            found = dict(self.conn.execute("select id, doc::text from board.tasks where id = any(%s)", (ids,)).fetchall())
        fresh = []
        for task_id in ids:
            if task_id not in found:
                if task_id in self.graph.tasks:
                    self.graph.remove(task_id)
                    result.removed.add(task_id)
                continue
            task = self._decode(task_id, found[task_id])
            if task is None:
                result.invalid.add(str(self.layout.task_path(task_id)))
            elif self.graph.tasks.get(task_id) != task:
                fresh.append(task)
                result.changed.add(task_id)
        self.graph.put_many(fresh)
        return result

    def rescan(self) -> ChangeSet:
        """Reconcile with the table, for writers that bypass the store (SQL by hand, which may
        leave the version as it was): every document is compared."""
        self._ensure_whole()
        stored = [task_id for (task_id,) in self.conn.execute("select id from board.tasks").fetchall()]
        gone = [task_id for task_id in self.graph.tasks if task_id not in set(stored)]
        return self._reread_ids([*stored, *gone])

    def reread(self, paths: Iterable[Path]) -> ChangeSet:
        return ChangeSet()  # no files: changes arrive through history and notifications

    def history(self, task_id: str | None = None) -> list[dict[str, Any]]:
        if task_id is None:
            rows = self.conn.execute("select record from board.history order by seq").fetchall()
        else:
            rows = self.conn.execute("select record from board.history where task_id = %s order by seq", (task_id,)).fetchall()
        return [record for (record,) in rows]

    def history_mark(self) -> int:
        return self._last_history_seq()

    def history_since(self, mark: int) -> tuple[list[dict[str, Any]], int]:
        rows = self.conn.execute("select seq, record from board.history where seq > %s order by seq", (mark,)).fetchall()
        return [record for _, record in rows], (rows[-1][0] if rows else mark)

    def recent_history(self, ops: frozenset[str]) -> list[dict[str, Any]]:
        """Read again a little before the last line seen, so lines that became visible out of
        order (claims commit in any order) are not missed; kept by number, so none twice."""
        kept = self._recent.setdefault(ops, {})
        if kept:
            since = max(kept) - RECENT_OVERLAP
            rows = self.conn.execute(
                "select seq, record from board.history where seq > %s and record ->> 'op' = any(%s) order by seq", (since, list(ops))
            ).fetchall()
        else:
            rows = self.conn.execute(
                "select seq, record from board.history where record ->> 'op' = any(%s) order by seq desc limit %s", (list(ops), RECENT_KEPT)
            ).fetchall()
        kept.update(rows)
        if len(kept) > 2 * RECENT_KEPT:
            for seq in sorted(kept)[:-RECENT_KEPT]:
                del kept[seq]
        return [kept[seq] for seq in sorted(kept)]

    def toolcalls(self, task_id: str) -> list[dict[str, Any]]:
        rows = self.conn.execute("select record from board.tool_calls where task_id = %s order by seq", (validate_id(task_id),)).fetchall()
        return [record for (record,) in rows]

    def touching_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """Read again a little before the last call seen (calls commit in any order, as history
        does), kept by number so none twice."""
        kept = self._touching
        since = max(kept) - RECENT_OVERLAP if kept else 0
        rows = self.conn.execute(
            "select seq, task_id, record from board.tool_calls where seq > %s and task_id is not null "
            "and jsonb_typeof(record -> 'files') = 'array' and record -> 'files' <> '[]'::jsonb order by seq",
            (since,),
        ).fetchall()
        for seq, task_id, record in rows:
            if seq not in kept:
                kept[seq] = (task_id, record)
        return [kept[seq] for seq in sorted(kept)]

    def check(self) -> list[Problem]:
        self._ensure_whole()
        self.rescan()
        problems = [Problem("file.invalid", where, reason) for where, reason in sorted(self.invalid.items())]
        for found in [*self.graph.problems(self.unreadable_tasks()), *cancelled_blockers(self.graph.tasks)]:
            problems.append(Problem(found.kind, str(self.layout.task_path(found.tasks[0])), found.message, found.tasks))
        return problems

    # -- writing ------------------------------------------------------------------------------

    @contextmanager
    def _write_lock(self, *, make_temp: bool = True, shared: bool = False) -> Iterator[None]:
        """One transaction holding the board's advisory lock; a failure undoes all of it, and
        the index forgets what it had taken from it."""
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        if not shared:
            # The rules catch up (sync) once they hold the lock, which stops every claim: most
            # of the catching up is done here, before it, so that claims wait only for the rest.
            # A broken connection refuses the write here, as it would under the lock.
            with self.conn.without_retry():
                self.sync()
        self._lock_depth = 1
        self._touched = set()
        try:
            with self.conn.transaction():
                lock = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
                self.conn.execute(f"select {lock}(%s)", (WRITE_LOCK_KEY,))
                yield
        except BaseException:
            touched, self._touched = self._touched, set()
            refusals, self._refusals = self._refusals, []
            self._lock_depth = 0
            try:
                if refusals:
                    # The refusal stays on record; the rest is undone. Under the board lock again,
                    # so that its line follows whatever a writer wrote of the task meanwhile.
                    with self.conn.transaction():
                        self.conn.execute("select pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
                        for record in refusals:
                            self._insert_history(record)
                if touched:
                    self._reread_ids(touched)
            except DatabaseUnavailable:
                pass  # the connection is gone: the error in hand says so
            raise
        self._lock_depth = 0
        touched, self._touched = self._touched, set()
        self._refusals = []
        if touched:
            self._note_active(touched)

    def _fresh(self, task_id: str) -> Task:
        lock = " for update" if self._lock_depth else ""
        row = self.conn.execute(f"select doc from board.tasks where id = %s{lock}", (task_id,)).fetchone()
        if row is None:
            if task_id in self.graph.tasks:
                self.graph.remove(task_id)
            raise TaskNotFound(task_id)
        task = self._decode(task_id, row[0])
        if task is None:
            where = self.layout.task_path(task_id)
            raise BoardError(f"cannot change task {task_id}: {where}: {self.invalid[str(where)]}")
        if self.graph.tasks.get(task_id) != task:
            self.graph.put(task)
        return task

    def _commit(self, old: Task | None, new: Task, op: str, actor: str | None, extra: dict[str, Any] | None = None) -> Task:
        now = self.clock()
        data = task_to_dict(new)
        data["version"] = (old.version if old is not None else new.version) + 1
        data["updatedAt"] = _iso(now)
        if old is None:
            data["createdAt"] = data.get("createdAt") or _iso(now)
        task = lean(task_from_dict(data, str(self.layout.task_path(new.id))))
        task.integer_ids = new.integer_ids
        before = task_to_dict(old) if old else {}
        after = task_to_dict(task)
        changes = {key: [before.get(key), value] for key, value in after.items() if key not in _UNTRACKED and before.get(key) != value}
        self._touched.add(task.id)
        self._write_task(task, with_integer_ids(dict(after)) if task.integer_ids else after)
        if old is None or old.blocked_by != task.blocked_by:
            self.conn.execute("delete from board.task_edges where task_id = %s", (task.id,))
            if task.blocked_by:
                self.conn.executemany("insert into board.task_edges (task_id, blocker_id) values (%s, %s)", [(task.id, b) for b in task.blocked_by])
        self._insert_history(self._history_record(task.id, task.version, actor, op, changes, extra))
        self.graph.put(task)
        return task

    def _write_task(self, task: Task, doc: dict[str, Any]) -> None:
        lease = task.lease
        stored = json.dumps(doc)
        if len(stored) > MAX_FILE_BYTES // 2:
            # Exported, or read by a file board, it must fit there too: the file's own encoding
            # (indented) is the measure, worked out only for a task near the limit.
            check_readable_back(task, dump_task(task))
        self.conn.execute(
            _UPSERT_TASK,
            (
                task.id, stored, str(task.status), task.owner, PRIORITY_RANK[task.priority], task.version,
                lease.owner if lease else None, lease.token if lease else None, lease.expires_at if lease else None, task.updated_at,
            ),
        )

    def _history_record(self, task_id: str, version: int, actor: str | None, op: str, changes: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
        record: dict[str, Any] = {"ts": _iso(self.clock()), "task": task_id, "version": version, "actor": actor or self.actor, "op": op, "changes": changes}
        # Several machines write here: which process wrote each line tells two of one name apart.
        # (Not a claim's: the database writes those itself, in ``board.claim_next``; the
        # claimer's next line, its first heartbeat, names it.)
        if op != "claim":
            record["process"] = _process_identity()
        if extra:
            record.update(extra)
        return record

    def _insert_history(self, record: dict[str, Any]) -> None:
        row = self.conn.execute(
            "insert into board.history (task_id, version, at, record) values (%s, %s, %s, %s) returning seq",
            (record.get("task"), record.get("version"), record["ts"], json.dumps(record, ensure_ascii=False)),
        )
        self._own_seqs.add(only_row(row)[0])

    def _log(self, task_id: str, version: int, actor: str | None, op: str, changes: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        record = self._history_record(task_id, version, actor, op, changes, extra)
        self._insert_history(record)
        if op in ("conflict", "refused") and self._lock_depth:
            self._refusals.append(record)  # logged again if the refusal rolls the transaction back

    def _on_board(self, task_id: str) -> bool:
        return self.conn.execute("select 1 from board.tasks where id = %s", (task_id,)).fetchone() is not None

    def archived_ids(self) -> set[str]:
        return {task_id for (task_id,) in self.conn.execute("select id from board.archive").fetchall()}

    def _new_task_id(self) -> str:
        row = self.conn.execute("select value from board.meta where key = 'last_task_id'").fetchone()
        floor = int(row[0]) if row is not None else 0
        return next_integer_id(set(self.graph.tasks) | self.archived_ids(), floor)

    def _note_id_issued(self, task_id: str) -> None:
        if task_id.isdigit():
            self.conn.execute(
                "insert into board.meta (key, value) values ('last_task_id', %s) "
                "on conflict (key) do update set value = greatest(board.meta.value, excluded.value)",
                (json.dumps(int(task_id)),),
            )

    def _archive(self, current: Task, actor: str | None, forced: bool) -> None:
        self._touched.add(current.id)
        self.conn.execute(
            "insert into board.archive (id, doc, archived_at) values (%s, %s, %s) "
            "on conflict (id) do update set doc = excluded.doc, archived_at = excluded.archived_at",
            (current.id, json.dumps(with_integer_ids(task_to_dict(current)) if current.integer_ids else task_to_dict(current)), self.clock()),
        )
        self.conn.execute("delete from board.tasks where id = %s", (current.id,))
        self._log(current.id, current.version + 1, actor, "delete", {"status": [str(current.status), None]}, {"forced": True} if forced else None)
        self.graph.remove(current.id)

    def _read_archived(self, task_id: str) -> Task:
        row = self.conn.execute("select doc from board.archive where id = %s", (task_id,)).fetchone()
        if row is None:
            raise BoardError(f"no deleted task {task_id} to restore")
        return task_from_dict(row[0], f"the archived task {task_id}")

    def _drop_archived(self, task_id: str) -> None:
        self.conn.execute("delete from board.archive where id = %s", (task_id,))

    # -- claims -------------------------------------------------------------------------------

    def claim(self, agent: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS, max_held: int | None = 1, actor: str | None = None) -> Task | None:
        """Take the best ready task for ``agent``: the database picks it (``board.claim_next``:
        the first ready task in claim order that no other claim holds, by the claim columns its
        triggers keep) and writes it, in one round trip. Nothing of the board is read here
        beyond the task taken, so a process that only claims never reads the whole board."""
        _check_agent(agent)
        if self._lock_depth:
            return self._claim_in_callers_transaction(agent, lease_seconds, max_held, actor)
        exclusive = False
        for _ in range(CLAIM_ATTEMPTS):
            outcome, doc = self._claim_next(agent, lease_seconds, max_held, actor, exclusive)
            if outcome == "claimed":
                return doc
            if outcome == "none":
                if exclusive:
                    return None
                # Nothing free: maybe nothing is ready, maybe claims under way hold the rest and
                # one of them rolls back. Under the exclusive lock no claim is under way.
                exclusive = True
            elif outcome == "rules":
                # A document not in the rules' form: the rules claim it, if it is still free.
                claimed = self._claim_shared(agent, [str(doc["id"])], lease_seconds, max_held, actor)
                if claimed is not None:
                    return claimed
        raise BoardError(f"could not claim a task for {agent}: every attempt found its pick taken; try again")

    def _claim_next(self, agent: str, lease_seconds: float, max_held: int | None, actor: str | None, exclusive: bool) -> tuple[str, Any]:
        """One ``board.claim_next`` call and its commit: ("claimed", the task), ("none", None),
        ("rules", the document to claim through the rules); refuses an agent over its limit."""
        import psycopg

        raw = self.conn.raw  # the connection now (reopened if it broke)
        try:
            with psycopg.ClientCursor(raw) as claim:
                claim.execute(_CLAIM_AND_NOTIFY, self._claim_params(agent, lease_seconds, max_held, actor, exclusive))
                claim.nextset()  # past the "begin"
                outcome, doc, seq, held = only_row(claim)
        except BaseException as error:
            self._after_failed_claim(raw, None)
            if isinstance(error, psycopg.OperationalError):
                raise self.conn._failed(error) from None  # one line: DatabaseUnavailable
            raise
        if outcome == "held":
            _refuse_over_limit(agent, max_held or 0, list(held))
        if outcome != "claimed":
            return outcome, doc
        self._own_seqs.add(seq)
        task = self._decode(str(doc["id"]), doc)
        if task is None:  # the database wrote what the rules would not read back: say so
            raise BoardError(f"task {doc.get('id')} was claimed but cannot be read: {self.invalid.get(str(self.layout.task_path(str(doc.get('id')))))}")
        self.graph.put(task)
        self._note_active([task.id])
        return outcome, task

    def _claim_params(self, agent: str, lease_seconds: float, max_held: int | None, actor: str | None, exclusive: bool) -> tuple[Any, ...]:
        """``board.claim_next``'s arguments: what the rules take from the clock, read once."""
        now = self.clock()
        expires = now + timedelta(seconds=lease_seconds)
        lease = {"owner": agent, "token": 0, "expiresAt": _json_time(expires), "seconds": float(lease_seconds)}
        return (WRITE_LOCK_KEY, agent, max_held, exclusive, actor or agent, _iso(now), _json_time(now), now, json.dumps(lease), expires)

    def _after_failed_claim(self, raw: Any, picked: Task | None) -> None:
        """Roll back what a failed claim left open; re-read its task if the commit may have happened."""
        import psycopg
        from psycopg.pq import TransactionStatus

        try:
            if raw.info.transaction_status in (TransactionStatus.INTRANS, TransactionStatus.INERROR):
                raw.execute("rollback")
            if picked is not None and raw.info.transaction_status == TransactionStatus.IDLE:
                self._reread_ids([picked.id])  # the write may or may not have committed
        except psycopg.Error:
            pass  # the connection is gone; the error the caller raises says why

    def _claimed(self, task: Task, agent: str, lease_seconds: float) -> Task:
        """A draft of ``task`` claimed by ``agent``: the database's ready column said it may
        start, so the rules do not ask this process's index (which may not hold its blockers)."""
        draft = draft_of(task)
        self._apply_status(draft, Status.IN_PROGRESS, owner=agent, lease_seconds=lease_seconds, ready_known=True)
        return draft

    def _check_holding_stored(self, agent: str, max_held: int | None) -> None:
        """The limit on held tasks, counted in the table (the index may not have caught up)."""
        if max_held is None:
            return
        held = [task_id for (task_id,) in self.conn.execute(_CLAIM_HELD, (agent,)).fetchall()]
        _refuse_over_limit(agent, max_held, held)

    def _claim_shared(self, agent: str, candidates: list[str], lease_seconds: float, max_held: int | None, actor: str | None) -> Task | None:
        """One claim in a transaction of its own under the shared board lock, in two round
        trips (``_CLAIM_BEGIN``, ``_CLAIM_WRITE``); None when no candidate could be taken.
        The task's row and history line are those ``_commit`` writes."""
        import psycopg

        self._prepare_claims()
        raw = self.conn.raw  # the connection now (reopened if it broke): its session has the statements
        cursor = psycopg.ClientCursor(raw)
        params: tuple[int | str, ...]
        if max_held is None:
            query, params = _CLAIM_BEGIN, (WRITE_LOCK_KEY, ",".join(candidates))
        else:
            query, params = _CLAIM_BEGIN_HELD, (WRITE_LOCK_KEY, f"board claim {agent}", agent, ",".join(candidates))
        picked: Task | None = None
        self._lock_depth = 1
        try:
            cursor.execute(query, params)
            results = _each_result(cursor)
            if max_held is not None:
                _refuse_over_limit(agent, max_held, [task_id for (task_id,) in results[2]])
            if results[-1]:
                doc = results[-1][0][0]
                picked = self._decode(str(doc["id"]), doc)
            if picked is None:
                raw.execute("rollback")
                return None
            task, doc, record = self._claim_version(picked, self._claimed(picked, agent, lease_seconds), actor or agent)
            lease = task.lease
            assert lease is not None
            cursor.execute(
                _CLAIM_WRITE,
                (
                    json.dumps(doc), str(task.status), task.owner, PRIORITY_RANK[task.priority], task.version,
                    lease.owner, lease.token, lease.expires_at, task.updated_at, task.id,
                    task.id, task.version, record["ts"], json.dumps(record, ensure_ascii=False),
                    task.id,
                ),
            )
            self._own_seqs.add(_each_result(cursor)[1][0][0])
        except BaseException as error:
            self._after_failed_claim(raw, picked)
            if isinstance(error, psycopg.errors.InvalidSqlStatementName):
                _CLAIM_PREPARED.discard(raw)  # the session was reset (DISCARD ALL): prepare again
                return None
            if isinstance(error, psycopg.OperationalError):
                raise self.conn._failed(error) from None  # one line: DatabaseUnavailable
            raise
        finally:
            self._lock_depth = 0
            cursor.close()
        self.graph.put(task)
        self._note_active([task.id])
        return task

    def _prepare_claims(self) -> None:
        """Prepare the claim's statements in this connection's session, once."""
        raw = self.conn.raw
        if raw in _CLAIM_PREPARED:
            return
        present = {name for (name,) in self.conn.execute("select name from pg_prepared_statements where name = any(%s)", (list(_CLAIM_STATEMENTS),))}
        for name, statement in _CLAIM_STATEMENTS.items():
            if name not in present:
                self.conn.execute(statement)
        _CLAIM_PREPARED.add(self.conn.raw)

    def _claim_version(self, old: Task, new: Task, actor: str) -> tuple[Task, dict[str, Any], dict[str, Any]]:
        """The claimed version of ``old`` (as a task and as its document) and its history line,
        made as ``_commit`` makes them."""
        now = self.clock()
        data = task_to_dict(new)
        data["version"] = old.version + 1
        data["updatedAt"] = _iso(now)
        task = lean(task_from_dict(data, str(self.layout.task_path(new.id))))
        task.integer_ids = new.integer_ids
        before = task_to_dict(old)
        after = task_to_dict(task)
        changes = {key: [before.get(key), value] for key, value in after.items() if key not in _UNTRACKED and before.get(key) != value}
        doc = with_integer_ids(dict(after)) if task.integer_ids else after  # ids keep the JSON type they had
        return task, doc, self._history_record(task.id, task.version, actor, "claim", changes, None)

    def _claim_in_callers_transaction(self, agent: str, lease_seconds: float, max_held: int | None, actor: str | None) -> Task | None:
        """A claim inside a transaction the caller holds (``transaction()``), statement by statement."""
        with self._write_lock(shared=True):
            if max_held is not None:
                self.conn.execute(_CLAIM_AGENT_LOCK, (f"board claim {agent}",))
            self._check_holding_stored(agent, max_held)
            row = self.conn.execute(_CLAIM_BEST).fetchone()
            if row is None:
                return None
            task = self._decode(str(row[0]["id"]), row[0])
            if task is None:
                return None
            self.graph.put(task)
            return self._commit(task, self._claimed(task, agent, lease_seconds), "claim", actor or agent)

    # -- tool calls ---------------------------------------------------------------------------

    def _append_call(self, record: dict[str, Any]) -> None:
        """The call's row, and its task's counts in the same transaction (the row lock orders it
        with any write of the task, so no count is lost)."""
        with self.conn.transaction():
            self.conn.execute(
                "insert into board.tool_calls (task_id, agent, at, record) values (%s, %s, %s, %s)",
                (record.get("task"), record["agent"], record["ts"], json.dumps(record, ensure_ascii=False)),
            )
            if record.get("task") is None:
                return
            row = self.conn.execute("select doc -> 'toolCalls' from board.tasks where id = %s for no key update", (record["task"],)).fetchone()
            if row is None:
                return
            counts = fold(row[0] or {}, [record])
            counts.pop("logged", None)
            self.conn.execute("update board.tasks set doc = jsonb_set(doc, '{toolCalls}', %s), normal = false where id = %s", (json.dumps(counts), record["task"]))

    def sync_tool_calls(self) -> ChangeSet:
        """Re-read tasks in progress whose counts moved (calls do not write history)."""
        known = {t.id: t.tool_calls.total for t in self.graph.tasks.values() if t.status == Status.IN_PROGRESS}
        if not known:
            return ChangeSet()
        rows = self.conn.execute(
            "select id, coalesce((doc -> 'toolCalls' ->> 'total')::bigint, 0) from board.tasks where id = any(%s)", (list(known),)
        ).fetchall()
        stale = [task_id for task_id, total in rows if total != known[task_id]]
        return self._reread_ids(stale) if stale else ChangeSet()

    def refresh_active(self) -> bool:
        """Rebuild this machine's ``active.json`` (who works on what, which ``board hook`` reads
        without a database connection) from the whole board; True if rewritten."""
        self._ensure_whole()
        wanted = {t.id: entry for t in self.graph.tasks.values() if (entry := entry_for(t.status, t.owner, held_files(t.id, t.files, t.metadata))) is not None}
        if read_active(self.state_dir) == wanted:
            return False
        write_active(self.state_dir, wanted)
        return True

    def serve_hooks(self) -> int:
        """Keep what ``board hook`` on this machine works with, since it never opens a database
        connection (importing psycopg alone would cost it 100 ms per tool call): the calls it
        logged in this machine's ``.tasks/agents/`` go into the database, each exactly once; the
        agent records it keeps there (sessions starting, working, idle, ending) reach the
        agents table, where every dashboard reads them; ``.tasks/reservations/`` mirrors the
        reservations table for its guard, and ``active.json`` names every task in progress.
        Called by the coordinator's ticks. Returns the number of calls forwarded."""
        from board.store.files.side import FileReservationBook

        self.sync()
        self.refresh_active()
        forwarded = self._forward_call_logs()
        self._forward_agent_records()
        mirror = FileReservationBook(self.state_dir)
        wanted: dict[str, list[Any]] = {}
        for holder in self.reservation_book.all_holders():
            wanted.setdefault(holder.path, []).append(holder)
        for holder in mirror.all_holders():
            wanted.setdefault(holder.path, [])
        for path, holders in wanted.items():
            if mirror.holders(path) != holders:
                mirror.replace(path, holders)
        return forwarded

    def _forward_call_logs(self) -> int:
        """Each agent's call log read on from where the last forwarding stopped. How far that
        was is kept in ``board.meta``, written in the transaction that inserts the calls: a
        crash anywhere forwards a call once, and two processes serving one machine's hooks wait
        on the same row instead of both forwarding it."""
        forwarded = 0
        agents = self.state_dir / AGENT_LOGS
        for log in sorted(agents.glob(f"*{AGENT_LOG_SUFFIX}")) if agents.is_dir() else []:
            key = f"forwarded:{_HOST}:{log.resolve()}"
            with self.conn.transaction():
                self.conn.execute("insert into board.meta (key, value) values (%s, %s) on conflict (key) do nothing", (key, json.dumps(_legacy_mark(log))))
                offset = int(only_row(self.conn.execute("select value from board.meta where key = %s for update", (key,)))[0])
                records, end = read_jsonl(log, offset)
                if not records:
                    continue
                for record in records:
                    if isinstance(record.get("agent"), str) and isinstance(record.get("tool"), str) and isinstance(record.get("ts"), str):
                        self._append_call(record)
                        forwarded += 1
                self.conn.execute("update board.meta set value = %s where key = %s", (json.dumps(end), key))
        return forwarded

    def _forward_agent_records(self) -> None:
        """The agent records ``board hook`` keeps on this machine, into the agents table when
        they changed since this process last forwarded them. What the hook wrote wins, except a
        heartbeat older than the one the table holds (the agent may have spoken from elsewhere)."""
        agents = self.state_dir / AGENT_LOGS
        for path in sorted(agents.glob("*.json")) if agents.is_dir() else []:
            try:
                stat = path.stat()
                raw = read_if_regular(path, SMALL_FILE_LIMIT)  # never a FIFO waited on
                if raw is None:
                    continue
                local = json_bounds.loads(raw)
            except (OSError, ValueError):
                continue  # being replaced, or broken: the hook never writes half a record
            stamp = (stat.st_mtime_ns, stat.st_size)
            name = local.get("name") if isinstance(local, dict) else None
            if not isinstance(name, str) or name != path.stem or self._forwarded_records.get(name) == stamp:
                continue
            stored = self.agent_records.read(name) or {}
            merged = {**stored, **local}
            beats = [b for b in (stored.get("heartbeatAt"), local.get("heartbeatAt")) if isinstance(b, str)]
            if beats:
                merged["heartbeatAt"] = max(beats)
            if merged != stored:
                self.agent_records.write(name, merged)
            self._forwarded_records[name] = stamp

    def _note_active(self, task_ids: Iterable[str]) -> None:
        """Keep this machine's ``active.json`` in step with the writes just committed here."""
        for task_id in task_ids:
            task = self.graph.tasks.get(task_id)
            note_task(self.state_dir, task_id, entry_for(task.status, task.owner, held_files(task.id, task.files, task.metadata)) if task is not None else None)
