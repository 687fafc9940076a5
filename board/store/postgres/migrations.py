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


from board.records import NamedTuple
from board.errors import BoardError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import psycopg

    from board.store.postgres.connect import BoardConnection


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

#: The setting a transaction turns on (``set_config(CLAIM_ORDER_DEFERRED, 'on', true)``) to
#: write many tasks without keeping each claim column right row by row; it then calls
#: ``board.rebuild_claim_order()`` once before its commit (an import, migration 3).
CLAIM_ORDER_DEFERRED = "board.claim_order_deferred"
#: The session setting a claim leaves the id of the task it took in, for the notification
#: sent after its commit.
CLAIMED_TASK = "board.claimed_task"

_SCHEMA_3 = f"""
-- A claim decides in the database: each task row keeps whether it is ready and its remaining
-- critical path, the two things the claim order needs beyond the priority and the id, kept
-- right by the triggers below in the transaction of every write that changes them. A claim is
-- then an index scan of the ready tasks in claim order, taking the first one no other claim
-- holds (board.claim_next), without the whole board in the claiming process.
--
-- What the rules (board.graph.TaskGraph) derive readiness and the remaining path from, as
-- columns computed from the document: the task's own weight (0 once completed or cancelled,
-- else metadata.estimate when a positive number, else 1), whether Claude Code hides it
-- (metadata._internal = true), its parent, and its id as a number when it is all digits
-- (numeric ids sort by value first, then the rest by their characters).
alter table board.tasks
    add column weight double precision generated always as (
        case when status in ('completed', 'cancelled') then 0
             when jsonb_typeof(doc -> 'metadata' -> 'estimate') = 'number' and (doc -> 'metadata' -> 'estimate')::numeric > 0
                 then (doc -> 'metadata' -> 'estimate')::double precision
             else 1 end) stored,
    add column hidden boolean generated always as (coalesce(doc -> 'metadata' -> '_internal' = 'true'::jsonb, false)) stored,
    add column parent_id text generated always as (doc ->> 'parent') stored,
    add column id_number numeric generated always as (case when id ~ '^[0-9]+$' then id::numeric end) stored,
    -- Pending, every blocker on the board and completed (a blocker with no row holds it back,
    -- as the rules' index has it), every sub-task finished, not hidden.
    add column ready boolean not null default false,
    -- The work on the longest chain from the task through its dependents
    -- (TaskGraph.remaining_path): its weight plus the largest of its dependents' remaining
    -- paths (of a stuck task, of those in a later wave than its own).
    add column remaining double precision not null default 0,
    -- Set for a task in a dependency cycle or waiting (through its blockers) on one, which the
    -- rules' waves never reach: the wave TaskGraph.waves gives it all the same (one after the
    -- latest of its blockers the waves reached, else the one after the board's last wave).
    -- Only a board imported with a cycle has such tasks.
    add column stuck_wave int,
    -- doc is exactly what the rules write (board.model.task_to_dict): a claim may then write
    -- the claimed document in SQL; any other document is claimed through the rules in Python.
    add column normal boolean not null default false;

-- The claim order: priority, the longest remaining path first, then the id.
create index tasks_claim_order on board.tasks (priority, remaining desc, id_number, id collate "C") where ready;
-- Sub-tasks by parent: a parent is ready only once they are finished.
create index tasks_parent on board.tasks (parent_id) where parent_id is not null;
-- Whether the board has stuck tasks at all.
create index tasks_stuck on board.tasks (id) where stuck_wave is not null;

-- Whether each task is ready now, by the rules' one definition: pending, not hidden, every
-- blocker completed (one with no row holds it back) and every sub-task finished. A view, so
-- the planner reads only the rows a query asks for.
create view board.task_readiness as
    select c.id, c.status = 'pending' and not c.hidden
        and not exists (
            select 1 from board.task_edges e left join board.tasks b on b.id = e.blocker_id
            where e.task_id = c.id and (b.id is null or b.status <> 'completed'))
        and not exists (
            select 1 from board.tasks k where k.parent_id = c.id and k.status not in ('completed', 'cancelled')) as ready
    from board.tasks c;

-- Whether each task named is ready now; writes only the rows that change.
create function board.refresh_ready(ids text[]) returns void language sql as $$
    update board.tasks t set ready = f.ready
    from board.task_readiness f
    where f.id = any(ids) and t.id = f.id and t.ready <> f.ready
$$;

-- The remaining path of each task named, and then of their blockers as far as a value
-- changes: a completion or a new estimate moves the tasks upstream of it, no others.
create function board.refresh_remaining(ids text[]) returns void language plpgsql as $$
declare
    todo text[] := ids;
begin
    while cardinality(todo) > 0 loop
        with fresh as (
            select c.id, c.weight + coalesce((
                select max(d.remaining) from board.task_edges e join board.tasks d on d.id = e.task_id
                where e.blocker_id = c.id and (c.stuck_wave is null or d.stuck_wave > c.stuck_wave)), 0) as remaining
            from board.tasks c where c.id = any(todo)
        ), moved as (
            update board.tasks t set remaining = f.remaining from fresh f
            where t.id = f.id and t.remaining <> f.remaining returning t.id
        )
        select coalesce(array_agg(distinct e.blocker_id), '{{}}') into todo
        from moved m join board.task_edges e on e.task_id = m.id;
    end loop;
end
$$;

-- Every task's claim columns from scratch: the rules' waves (each round takes the tasks whose
-- blockers on the board were all taken; what is never taken is stuck), then the remaining
-- paths wave by wave from the last, then readiness. For a migration, an import, and the rare
-- write that may start or end a cycle.
create function board.rebuild_claim_order() returns void language plpgsql as $$
declare
    level int := 0;
    taken int := 1;
begin
    create temporary table if not exists claim_edges (task_id text, blocker_id text) on commit drop;
    create temporary table if not exists claim_waves (
        id text primary key, wave int, weight double precision, stuck boolean, remaining double precision) on commit drop;
    truncate claim_edges, claim_waves;
    -- The edges whose blocker is on the board: the only ones waves follow.
    insert into claim_edges select e.task_id, e.blocker_id from board.task_edges e
    join board.tasks b on b.id = e.blocker_id join board.tasks t on t.id = e.task_id;
    create index if not exists claim_edges_task on claim_edges (task_id);
    create index if not exists claim_edges_blocker on claim_edges (blocker_id);
    create index if not exists claim_waves_wave on claim_waves (wave);
    insert into claim_waves (id, wave, weight, stuck)
    select t.id, 0, t.weight, false from board.tasks t where not exists (select 1 from claim_edges e where e.task_id = t.id);
    analyze claim_edges;
    analyze claim_waves;
    while taken > 0 loop
        insert into claim_waves (id, wave, weight, stuck)
        select t.id, level + 1, t.weight, false from board.tasks t
        where t.id in (select e.task_id from claim_waves w join claim_edges e on e.blocker_id = w.id where w.wave = level)
          and not exists (select 1 from claim_waves w where w.id = t.id)
          and not exists (select 1 from claim_edges e left join claim_waves w on w.id = e.blocker_id where e.task_id = t.id and w.id is null);
        get diagnostics taken = row_count;
        level := level + 1;
    end loop;
    -- The tasks never taken are stuck: TaskGraph._compute_waves gives each one the wave after
    -- the latest of its blockers it took, or the one after its last wave when it took none.
    insert into claim_waves (id, wave, weight, stuck)
    select t.id, coalesce((select max(w.wave) + 1 from claim_edges e join claim_waves w on w.id = e.blocker_id where e.task_id = t.id), level), t.weight, true
    from board.tasks t where not exists (select 1 from claim_waves w where w.id = t.id);
    while level >= 0 loop
        update claim_waves w set remaining = w.weight + coalesce((
            select max(d.remaining) from claim_edges e join claim_waves d on d.id = e.task_id
            where e.blocker_id = w.id and d.wave > w.wave), 0)
        where w.wave = level;
        level := level - 1;
    end loop;
    update board.tasks t set stuck_wave = case when w.stuck then w.wave end, remaining = w.remaining
    from claim_waves w
    where w.id = t.id and (t.stuck_wave is distinct from case when w.stuck then w.wave end or t.remaining <> w.remaining);
    update board.tasks t set ready = r.ready
    from board.task_readiness r
    where t.id = r.id and t.ready <> r.ready;
    truncate claim_edges, claim_waves;
end
$$;

-- A task written: what its change moves. Its own readiness; its dependents' when it is
-- created, deleted or becomes or stops being completed; its parent's when it is created,
-- deleted, moves, or becomes or stops being finished; its remaining path (and so its
-- blockers') when its weight changes. On a board with stuck tasks a task that comes or goes
-- may move the waves of any of them: everything is rebuilt.
create function board.task_claim_order() returns trigger language plpgsql as $$
declare
    dependents text[];
begin
    if tg_op = 'INSERT' then
        if exists (select 1 from board.tasks t where t.stuck_wave is not null) then
            perform board.rebuild_claim_order();
            return null;
        end if;
        select coalesce(array_agg(e.task_id), '{{}}') into dependents from board.task_edges e where e.blocker_id = new.id;
        perform board.refresh_ready(array[new.id, new.parent_id] || dependents);
        perform board.refresh_remaining(array[new.id]);
        return null;
    end if;
    if tg_op = 'DELETE' then
        if old.stuck_wave is not null or exists (select 1 from board.tasks t where t.stuck_wave is not null) then
            perform board.rebuild_claim_order();
            return null;
        end if;
        -- Its blockers' remaining paths follow when its edges go (task_edges' trigger).
        select coalesce(array_agg(e.task_id), '{{}}') into dependents from board.task_edges e where e.blocker_id = old.id;
        perform board.refresh_ready(array[old.parent_id] || dependents);
        return null;
    end if;
    perform board.refresh_ready(array[new.id, old.parent_id, new.parent_id]);
    if (old.status = 'completed') <> (new.status = 'completed') then
        perform board.refresh_ready(array(select e.task_id from board.task_edges e where e.blocker_id = new.id));
    end if;
    if old.weight <> new.weight then
        perform board.refresh_remaining(array[new.id]);
    end if;
    return null;
end
$$;
-- Fired only by a change the claim columns follow (a claim, which sets ready itself, and a
-- progress or description write fire nothing).
create trigger tasks_claim_order_insert_delete after insert or delete on board.tasks
    for each row when (current_setting('{CLAIM_ORDER_DEFERRED}', true) is distinct from 'on')
    execute function board.task_claim_order();
create trigger tasks_claim_order_update after update on board.tasks
    for each row when (current_setting('{CLAIM_ORDER_DEFERRED}', true) is distinct from 'on' and (
        (old.status in ('completed', 'cancelled')) <> (new.status in ('completed', 'cancelled'))
        or (old.status = 'completed') <> (new.status = 'completed')
        or (new.status = 'pending' and old.status <> 'pending')
        or (new.ready and new.status <> 'pending')
        or old.weight <> new.weight
        or old.hidden <> new.hidden
        or old.parent_id is distinct from new.parent_id))
    execute function board.task_claim_order();

-- An edge written: the dependent's readiness, and the blocker's remaining path. An edge that
-- closes a cycle, or any edge between tasks on a board with stuck tasks, may move the waves:
-- everything is rebuilt.
create function board.edge_claim_order() returns trigger language plpgsql as $$
declare
    edge board.task_edges;
begin
    if tg_op = 'INSERT' then
        edge := new;
    else
        edge := old;
    end if;
    perform board.refresh_ready(array[edge.task_id]);
    if not exists (select 1 from board.tasks b where b.id = edge.blocker_id) then
        return null;  -- a blocker with no row: it holds the task back and that is all
    end if;
    if exists (select 1 from board.tasks t where t.stuck_wave is not null) or (tg_op = 'INSERT' and exists (
            with recursive up (id) as (
                select edge.blocker_id
                union
                select e.blocker_id from up join board.task_edges e on e.task_id = up.id
            )
            select 1 from up where up.id = edge.task_id)) then
        perform board.rebuild_claim_order();
        return null;
    end if;
    perform board.refresh_remaining(array[edge.blocker_id]);
    return null;
end
$$;
create trigger task_edges_claim_order after insert or delete on board.task_edges
    for each row when (current_setting('{CLAIM_ORDER_DEFERRED}', true) is distinct from 'on')
    execute function board.edge_claim_order();

-- The triggers above update the claim columns of rows no write touched (a completion's
-- dependents and blockers): listeners hear of an update only when a column other than those
-- changed, so a completion is not announced as a change of every task upstream of it.
drop trigger tasks_notify on board.tasks;
create trigger tasks_notify after insert or delete on board.tasks
    for each row when (current_setting('{NOTIFY_AFTER_COMMIT}', true) is distinct from 'on')
    execute function board.notify_task();
create trigger tasks_notify_update after update on board.tasks
    for each row when (current_setting('{NOTIFY_AFTER_COMMIT}', true) is distinct from 'on' and (
        old.id, old.doc, old.status, old.owner, old.priority, old.version, old.lease_owner, old.lease_token, old.lease_expires_at, old.updated_at
    ) is distinct from (
        new.id, new.doc, new.status, new.owner, new.priority, new.version, new.lease_owner, new.lease_token, new.lease_expires_at, new.updated_at))
    execute function board.notify_task();

select board.rebuild_claim_order();
"""

_SCHEMA_3_CLAIM = f"""
-- A claim in one call: the board lock (shared, or exclusive when a claim must know that nothing
-- is free rather than merely taken by claims under way), the agent's lock and its held tasks
-- when it may hold only so many, the first ready task in claim order no other claim holds, and
-- its claimed document, row and history line exactly as the rules write them (op "claim",
-- version + 1, status, owner, startedAt, no error, the lease with token version + 1, a policy
-- mark settled, the changes). The caller gives what the rules take from the clock: now in the
-- document's form and in history's, and the lease without its token. A document not in the
-- rules' form is handed back unwritten ('rules'), for the rules in Python to claim it. The
-- task's id is left in {CLAIMED_TASK} for the notification after the commit.
create function board.claim_next(
    p_lock_key bigint, p_agent text, p_max_held int, p_exclusive boolean, p_actor text,
    p_at text, p_now text, p_now_ts timestamptz, p_lease jsonb, p_expires timestamptz
) returns table (outcome text, task_doc jsonb, history_seq bigint, held_ids text[])
language plpgsql as $$
declare
    v_task board.tasks;
    v_held text[];
    v_doc jsonb;
    v_changes jsonb;
    v_seq bigint;
begin
    perform set_config('{CLAIMED_TASK}', '', false);
    perform set_config('{NOTIFY_AFTER_COMMIT}', 'on', true);
    if p_exclusive then
        perform pg_advisory_xact_lock(p_lock_key);
    else
        perform pg_advisory_xact_lock_shared(p_lock_key);
    end if;
    if p_max_held is not null then
        -- Two claims by one agent cannot both pass the limit; the count is read once the lock is held.
        perform pg_advisory_xact_lock(hashtextextended('board claim ' || p_agent, 0));
        select coalesce(array_agg(h.id order by h.id), '{{}}') into v_held
        from board.tasks h where h.status = 'in_progress' and h.owner = p_agent;
        if cardinality(v_held) >= p_max_held then
            return query select 'held'::text, null::jsonb, null::bigint, v_held;
            return;
        end if;
    end if;
    if p_exclusive then
        select * into v_task from board.tasks t where t.ready
        order by t.priority, t.remaining desc, t.id_number, t.id collate "C" limit 1 for no key update of t;
    else
        select * into v_task from board.tasks t where t.ready
        order by t.priority, t.remaining desc, t.id_number, t.id collate "C" limit 1 for no key update of t skip locked;
    end if;
    if not found then
        return query select 'none'::text, null::jsonb, null::bigint, null::text[];
        return;
    end if;
    if not v_task.normal then
        return query select 'rules'::text, v_task.doc, null::bigint, null::text[];
        return;
    end if;
    v_doc := v_task.doc || jsonb_build_object(
        'status', 'in_progress', 'owner', p_agent, 'error', null,
        'lease', p_lease || jsonb_build_object('token', v_task.version + 1),
        'version', v_task.version + 1, 'updatedAt', p_now);
    if coalesce(v_task.doc -> 'startedAt', 'null'::jsonb) = 'null'::jsonb then
        v_doc := v_doc || jsonb_build_object('startedAt', p_now);
    end if;
    if jsonb_typeof(v_task.doc -> 'policy') = 'object' and (v_task.doc -> 'policy' -> 'settled') is distinct from 'true'::jsonb then
        v_doc := jsonb_set(v_doc, '{{policy,settled}}', 'true'::jsonb);
    end if;
    select coalesce(jsonb_object_agg(k.key, jsonb_build_array(coalesce(v_task.doc -> k.key, 'null'::jsonb), v_doc -> k.key)), '{{}}'::jsonb)
    into v_changes
    from jsonb_object_keys(v_doc) k (key)
    where k.key not in ('version', 'updatedAt') and coalesce(v_task.doc -> k.key, 'null'::jsonb) is distinct from v_doc -> k.key;
    update board.tasks t set doc = v_doc, status = 'in_progress', owner = p_agent, version = v_task.version + 1,
        lease_owner = p_agent, lease_token = v_task.version + 1, lease_expires_at = p_expires, updated_at = p_now_ts, ready = false
    where t.id = v_task.id;
    insert into board.history (task_id, version, at, record)
    values (v_task.id, v_task.version + 1, p_at::timestamptz, jsonb_build_object(
        'ts', p_at, 'task', v_task.id, 'version', v_task.version + 1, 'actor', p_actor, 'op', 'claim', 'changes', v_changes))
    returning seq into v_seq;
    perform set_config('{CLAIMED_TASK}', v_task.id, false);
    return query select 'claimed'::text, v_doc, v_seq, null::text[];
end
$$;
"""

#: The setting a transaction turns on (``set_config(HISTORY_AS_GIVEN, 'on', true)``) to write
#: history lines with the times they have, earlier than their task's last or not (an import
#: copying a board's history as it was, migration 4).
HISTORY_AS_GIVEN = "board.history_as_given"

_SCHEMA_4 = f"""
-- Along each task's history time never goes back. A writer stamps a line with its own clock,
-- read before it waits for the locks that order it after the task's last line (a claim reads
-- it before waiting for the board lock a reclaim holds), and clocks of different machines
-- differ: a line stamped before the task's last line is given that line's time, in the column
-- and in the record, so that it sorts with its cause. Every writer of a task's history holds
-- what orders it (the board lock, or the task's row for a claim), so the last line read here
-- is the one it follows.
create function board.history_in_time() returns trigger language plpgsql as $$
declare
    last_at timestamptz;
    last_ts jsonb;
begin
    select h.at, h.record -> 'ts' into last_at, last_ts
    from board.history h where h.task_id = new.task_id order by h.seq desc limit 1;
    if last_at > new.at then
        new.at := last_at;
        new.record := jsonb_set(new.record, '{{ts}}', coalesce(
            last_ts, to_jsonb(to_char(last_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))));
    end if;
    return new;
end
$$;
create trigger history_in_time before insert on board.history
    for each row when (new.task_id is not null and current_setting('{HISTORY_AS_GIVEN}', true) is distinct from 'on')
    execute function board.history_in_time();
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "tasks, their edges, history, tool calls, agents, reservations, checkpoints, alerts, archive, meta; notify triggers", _SCHEMA_1),
    Migration(2, "claims notify after their commit; tasks in progress by owner", _SCHEMA_2),
    Migration(3, "claims decided in the database: readiness and remaining path per task, the claim order's index, board.claim_next", _SCHEMA_3 + _SCHEMA_3_CLAIM),
    Migration(4, "each task's history in time order: a line stamped before the task's last gets its time", _SCHEMA_4),
)
LATEST = MIGRATIONS[-1].version
TASK_CHANNEL = "board_tasks"
SIDE_CHANNEL = "board_side"
INIT_HINT = "run 'board --db URL init'"


def schema_version(conn: psycopg.Connection | BoardConnection) -> int | None:
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


def check_schema(conn: psycopg.Connection | BoardConnection) -> int:
    """Refuse a database a store cannot use as it is: no board, or a schema of another version."""
    version = schema_version(conn)
    if version is None:
        raise BoardError(f"no board in this database: {INIT_HINT}")
    _refuse_newer(version)
    if version < LATEST:
        raise BoardError(f"the database's board schema is version {version}, older than this board ({LATEST}): {INIT_HINT} to migrate")
    return version


def _current(conn: psycopg.Connection | BoardConnection) -> int | None:
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


def _reading(conn: psycopg.Connection | BoardConnection):  # noqa: ANN202
    """A transaction for a read, unless the caller has one open (which is then left open)."""
    import contextlib

    from psycopg.pq import TransactionStatus

    if conn.info.transaction_status == TransactionStatus.IDLE:
        return conn.transaction()
    return contextlib.nullcontext()


def _first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
