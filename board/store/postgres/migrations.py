"""The board's schema in PostgreSQL, as numbered migrations applied in order.

Everything lives in the ``board`` schema of the database, so a board can share a database with
other applications. ``board.migrations`` records which steps ran. A step is never edited once
released: a change to the schema is a new step at the end of ``MIGRATIONS``.

``migrate`` (``board --db URL init``) applies what is missing, one transaction per step, under an
advisory lock so that processes starting together apply each step once. ``check_schema`` is what
a store calls on open: it refuses a database without a board, or with a schema older or newer
than this code.
"""

from __future__ import annotations

from typing import NamedTuple

from board.errors import BoardError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import psycopg


class Migration(NamedTuple):
    version: int
    description: str
    sql: str


#: The key of the transaction-level advisory lock every migrator takes first ("board_db" in
#: ASCII). Advisory locks are per database, so boards in other databases never wait on it.
LOCK_KEY = 0x626F6172645F6462

_BOOKKEEPING = """
create schema if not exists board;
create table if not exists board.migrations (
    version int primary key,
    description text not null,
    applied_at timestamptz not null default now()
);
"""

_SCHEMA_1 = """
-- One row per task. doc is the whole task document as the file store writes it (camelCase,
-- unknown fields kept); the columns beside it are copies of the fields that queries filter and
-- sort on, written by the store with doc in the same statement. The checks make a store that
-- lets them drift apart fail at once rather than hand out the wrong task.
create table board.tasks (
    id text primary key,
    doc jsonb not null,
    status text not null,
    owner text not null default '',
    -- board.priority.PRIORITY_RANK: lower goes first.
    priority smallint not null,
    version bigint not null,
    lease_owner text,
    lease_token bigint,
    lease_expires_at timestamptz,
    updated_at timestamptz,
    -- A check whose expression is null passes, hence "is not distinct from" where doc may lack
    -- the field. ->> gives a JSON integer id (seed 001 wrote them) as text too.
    constraint tasks_doc_id check (doc ->> 'id' is not distinct from id),
    constraint tasks_doc_status check (doc ->> 'status' is not distinct from status),
    constraint tasks_doc_owner check (coalesce(doc ->> 'owner', '') = owner),
    constraint tasks_doc_version check (coalesce((doc ->> 'version')::bigint, 0) = version),
    constraint tasks_doc_priority check (
        priority is not distinct from case coalesce(doc ->> 'priority', 'medium')
            when 'critical' then 0 when 'high' then 1 when 'medium' then 2 when 'low' then 3 end),
    constraint tasks_doc_lease check (
        lease_owner is not distinct from doc -> 'lease' ->> 'owner'
        and lease_token is not distinct from (doc -> 'lease' ->> 'token')::bigint)
);
-- A claim takes the first pending task in (priority, id) order that no one else has locked.
create index tasks_claimable on board.tasks (priority, id) where status = 'pending';
-- A worker's own tasks, and a heartbeat renewing them.
create index tasks_lease_owner on board.tasks (lease_owner) where lease_owner is not null;
-- The coordinator's sweep for leases that ran out.
create index tasks_lease_expiry on board.tasks (lease_expires_at) where lease_expires_at is not null;

-- blockedBy, one row per edge, so "what does finishing X unblock" is an index lookup. A blocker
-- may name a task that is gone (deleted, archived), so only task_id references tasks.
create table board.task_edges (
    task_id text not null references board.tasks (id) on delete cascade,
    blocker_id text not null,
    primary key (task_id, blocker_id)
);
create index task_edges_blocker on board.task_edges (blocker_id);

-- history.jsonl: kept after its task is deleted, so no reference to tasks.
create table board.history (
    seq bigserial primary key,
    task_id text,
    version bigint,
    at timestamptz not null,
    record jsonb not null
);
create index history_task on board.history (task_id, seq);

create table board.tool_calls (
    seq bigserial primary key,
    task_id text,
    agent text not null,
    at timestamptz not null,
    record jsonb not null
);
create index tool_calls_task on board.tool_calls (task_id, seq);
create index tool_calls_agent on board.tool_calls (agent, seq);

create table board.agents (
    name text primary key,
    record jsonb not null,
    updated_at timestamptz
);

-- One row per holder of a reserved file (the file store keeps the holders of one path in one file).
create table board.reservations (
    path text not null,
    task_id text not null,
    owner text not null,
    mode text not null check (mode in ('read', 'write')),
    expires_at timestamptz not null,
    created_at timestamptz not null,
    primary key (path, task_id, owner)
);
-- Dropping the reservations of a task that finished.
create index reservations_task on board.reservations (task_id);

create table board.checkpoints (
    task_id text not null,
    seq int not null,
    record jsonb not null,
    primary key (task_id, seq)
);

-- alerts.json: the coordinator's current set, replaced as a whole.
create table board.alerts (
    key text primary key,
    record jsonb not null
);

-- Deleted tasks as they were, until restored; ids are never reused.
create table board.archive (
    id text primary key,
    doc jsonb not null,
    archived_at timestamptz not null
);

-- Settings and counters, such as the highest task id issued.
create table board.meta (
    key text primary key,
    value jsonb not null
);

-- Live screens LISTEN instead of polling. A task change names its task (ids are at most 64
-- characters, far under NOTIFY's 8000-byte payload limit); '*' after a truncate means "all of
-- them". PostgreSQL folds identical notifications within one transaction into one.
create function board.notify_task() returns trigger language plpgsql as $$
begin
    if tg_op = 'TRUNCATE' then
        perform pg_notify('board_tasks', '*');
        return null;
    end if;
    if tg_op in ('UPDATE', 'DELETE') then
        perform pg_notify('board_tasks', old.id);
    end if;
    if tg_op in ('INSERT', 'UPDATE') then
        perform pg_notify('board_tasks', new.id);
    end if;
    return null;
end
$$;
create trigger tasks_notify after insert or update or delete on board.tasks
    for each row execute function board.notify_task();
create trigger tasks_notify_truncate after truncate on board.tasks
    for each statement execute function board.notify_task();

-- The other tables a screen shows are small and re-read whole: the payload is the table's name,
-- once per statement however many rows it touched.
create function board.notify_side() returns trigger language plpgsql as $$
begin
    perform pg_notify('board_side', tg_table_name);
    return null;
end
$$;
create trigger alerts_notify after insert or update or delete or truncate on board.alerts
    for each statement execute function board.notify_side();
create trigger agents_notify after insert or update or delete or truncate on board.agents
    for each statement execute function board.notify_side();
create trigger tool_calls_notify after insert or update or delete or truncate on board.tool_calls
    for each statement execute function board.notify_side();
create trigger reservations_notify after insert or update or delete or truncate on board.reservations
    for each statement execute function board.notify_side();
"""

#: The setting a transaction turns on (``set_config(NOTIFY_AFTER_COMMIT, 'on', true)``) to keep
#: its task changes from notifying inside it; it notifies itself once it has committed.
NOTIFY_AFTER_COMMIT = "board.notify_after_commit"

_SCHEMA_2 = f"""
-- A transaction that notifies takes a lock for the whole server before its commit and holds it
-- until the commit is on disk, so notifying transactions reach the disk one at a time, never
-- several in one flush. Claims are many small transactions at once: each claim turns
-- {NOTIFY_AFTER_COMMIT} on for itself, and notifies its task's id right after its commit, in a
-- transaction of its own that writes nothing to the log and so waits for no flush.
drop trigger tasks_notify on board.tasks;
create trigger tasks_notify after insert or update or delete on board.tasks
    for each row when (current_setting('{NOTIFY_AFTER_COMMIT}', true) is distinct from 'on')
    execute function board.notify_task();
-- What an agent holds, which a claim with a limit counts: its tasks in progress.
create index tasks_in_progress_owner on board.tasks (owner) where status = 'in_progress';
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "tasks, their edges, history, tool calls, agents, reservations, checkpoints, alerts, archive, meta; notify triggers", _SCHEMA_1),
    Migration(2, "claims notify after their commit; tasks in progress by owner", _SCHEMA_2),
)
LATEST = MIGRATIONS[-1].version
TASK_CHANNEL = "board_tasks"
SIDE_CHANNEL = "board_side"
INIT_HINT = "run 'board --db URL init'"


def schema_version(conn: psycopg.Connection) -> int | None:
    """The newest migration applied to this database; None when it has no board."""
    with _reading(conn):
        return _current(conn)


def migrate(conn: psycopg.Connection) -> list[int]:
    """Apply the migrations the database lacks, in order, one transaction each; returns their versions.

    Safe to run from several processes at once: each takes the same advisory lock before looking
    at the schema, so each step is applied by exactly one of them. A database whose schema is
    newer than this code is refused and left as it is.
    """
    import psycopg

    _need_no_transaction(conn)
    applied: list[int] = []
    while True:
        step: Migration | None = None
        try:
            with conn.transaction():
                conn.execute("select pg_advisory_xact_lock(%s)", (LOCK_KEY,))
                current = _current(conn)
                if current is None:
                    conn.execute(_BOOKKEEPING)
                    current = 0
                _refuse_newer(current)
                step = next((step for step in MIGRATIONS if step.version > current), None)
                if step is None:
                    return applied
                conn.execute(step.sql)
                conn.execute("insert into board.migrations (version, description) values (%s, %s)", (step.version, step.description))
        except psycopg.Error as error:
            target = f" to version {step.version}" if step else ""
            raise BoardError(f"could not migrate the board schema{target}: {_first_line(error)}") from None
        applied.append(step.version)


def check_schema(conn: psycopg.Connection) -> int:
    """Refuse a database a store cannot use as it is: no board, or a schema of another version."""
    version = schema_version(conn)
    if version is None:
        raise BoardError(f"no board in this database: {INIT_HINT}")
    _refuse_newer(version)
    if version < LATEST:
        raise BoardError(f"the database's board schema is version {version}, older than this board ({LATEST}): {INIT_HINT} to migrate")
    return version


def _current(conn: psycopg.Connection) -> int | None:
    exists = conn.execute("select to_regclass('board.migrations') is not null").fetchone()
    if not exists or not exists[0]:
        return None
    row = conn.execute("select max(version) from board.migrations").fetchone()
    return row[0] if row else None


def _refuse_newer(version: int) -> None:
    if version > LATEST:
        raise BoardError(f"the database's board schema is version {version}, newer than this board ({LATEST}); upgrade board")


def _need_no_transaction(conn: psycopg.Connection) -> None:
    from psycopg.pq import TransactionStatus

    if conn.info.transaction_status != TransactionStatus.IDLE:
        # Inside a caller's transaction each step would become a savepoint: nothing would commit,
        # and the advisory lock would be held, until the caller finished.
        raise RuntimeError("migrate needs a connection with no transaction open")


def _reading(conn: psycopg.Connection):  # noqa: ANN202
    """A transaction for a read, unless the caller has one open (which is then left open)."""
    import contextlib

    from psycopg.pq import TransactionStatus

    if conn.info.transaction_status == TransactionStatus.IDLE:
        return conn.transaction()
    return contextlib.nullcontext()


def _first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
