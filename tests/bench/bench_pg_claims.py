"""Claims per second on a PostgreSQL board, by many OS processes at once, beside the file store.

Run: python tests/bench/bench_pg_claims.py [--procs 4 16 64] [--tasks 20000] [--seconds 20]
     [--backends socket tcp files] [--chains 20] [--complete] [--no-floor] [--no-pgqueuer]
     [--pgqueuer-driver asyncpg|psycopg] [--quick] [--dir DIR]

Prints figures; fails on nothing. A throwaway PostgreSQL server (``tests/pg_cluster.py``: fsync
on, ``synchronous_commit`` on) holds each board; ``socket`` connects over its Unix socket, ``tcp``
over 127.0.0.1. ``files`` is the same board in files under --dir (default: the current directory,
as ``bench_store.py``), every claim fsynced.

Each run: a board of --tasks tasks of mixed priorities, with a few dependency chains (each link
completed by whoever claims it, so the next becomes ready); the claimers are started, open the
board and say so, then are released together and claim (``max_held=None``) until nothing is left
or --seconds run out. With --complete every claimer completes each task it claims before the next
claim (``max_held=1``): a claim-and-complete cycle, and the rate counts cycles.

Checked after every run: duplicates (a task with two claim lines in history, given to two
processes, or held on the board by someone other than the process it was given to, or under
another lease token) and lost (a claim a process was given that the board does not show, a
claim in history no process was given, or a ready task left behind when the claimers found
nothing more). Both must be 0. Latency is the time one ``store.claim`` call takes, seen by its
caller. CPU is per claim: the claiming processes', and their PostgreSQL backends' (read from
/proc). Last, two floors measured in the same run, by as many connections: one-row inserts,
each its own durable commit; and the least a claim can be, one ``UPDATE ... FOR UPDATE SKIP
LOCKED`` of a bare queue table, each its own durable commit, from Python processes and from
pgbench's C client (when pgbench is installed): what this machine allows any claim.

Then a peer, on the same server: pgqueuer (``peers.pgqueuer_program``: pinned, from PyPI, in its
own venv in the cache), a PostgreSQL job queue built on the same ``FOR UPDATE SKIP LOCKED``, so
board's claim is seen beside a queue people use and not only beside the floors. For each
--procs count: a fresh database set up by ``pgq install``, more jobs than can be taken put in
with ``Queries.enqueue``, then as many OS processes of the venv's python, released together for
the same --seconds, each a worker as pgqueuer's QueueManager is one: per job
``Queries.dequeue(batch_size=1)`` and then ``Queries.log_jobs`` marking it successful (the job
leaves the queue for its log), over the Unix socket as board's ``socket`` runs, by asyncpg
(pgqueuer's first driver) or psycopg (board's; --pgqueuer-driver). A job picked twice (in
pgqueuer's log, or handed to two workers) counts as a duplicate. Its rate is printed beside
board's socket rate and the bare statement's (from Python), with board / pgqueuer and board /
bare. pgqueuer's rate counts two commits a job (the pick, the finish): board's like it only with
--complete, where a claim and its completion are one cycle. --no-pgqueuer skips it; when
pgqueuer cannot be installed the run says why and goes on without it.

The load average is printed before and after: on a shared machine the figures follow it.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from board.model import task_from_dict, task_to_dict
from board.priority import PRIORITY_RANK
from board.status import Status
from board.store import Store

#: Dependency chains on each board (--chains), of CHAIN_LENGTH tasks each blocked by the one before.
CHAINS = 20
CHAIN_LENGTH = 10
PRIORITIES = (("critical", 0.05), ("high", 0.20), ("medium", 0.55), ("low", 0.20))
TEMPLATE = "board_bench_template"


# -- the board ------------------------------------------------------------------------------------


def board_docs(count: int, chains: int = CHAINS, seed: int = 7) -> list[dict[str, Any]]:
    """``count`` task documents as the store writes them: ids 1..count, priorities drawn at
    random, and ``chains`` chains of CHAIN_LENGTH tasks spread over the ids."""
    rng = random.Random(seed)
    names, weights = zip(*PRIORITIES)
    blocked_by: dict[int, list[str]] = {}
    blocks: dict[int, list[str]] = {}
    heads = range(1, count + 1, max(count // chains, CHAIN_LENGTH)) if chains else range(0)
    for head in list(heads)[:chains]:
        for n in range(head + 1, min(head + CHAIN_LENGTH, count + 1)):
            blocked_by[n] = [str(n - 1)]
            blocks[n - 1] = [str(n)]
    docs = []
    for n in range(1, count + 1):
        raw = {
            "id": str(n), "subject": f"task {n}", "status": "pending", "priority": rng.choices(names, weights)[0],
            "blockedBy": blocked_by.get(n, []), "blocks": blocks.get(n, []), "version": 1,
            "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
        }
        docs.append(task_to_dict(task_from_dict(raw, f"bench task {n}")))
    return docs


def creation_line(doc: dict[str, Any]) -> dict[str, Any]:
    """The history line of a task's creation, as the store writes it."""
    changes = {key: [None, value] for key, value in doc.items() if key not in ("version", "updatedAt")}
    return {"ts": doc["createdAt"], "task": doc["id"], "version": 1, "actor": "bench", "op": "create", "changes": changes}


def make_file_board(root: Path, docs: list[dict[str, Any]]) -> None:
    """The board in files, written straight to disk (setup, not what is measured)."""
    Store.open(root, create=True).close()
    tasks_dir = root / ".tasks"
    for doc in docs:
        (tasks_dir / f"task_{doc['id']}.json").write_text(json.dumps(doc))


def make_pg_template(cluster: Any, docs: list[dict[str, Any]]) -> None:
    """A database holding the board, which each run copies (``create database ... template``)."""
    from board.store.postgres.connect import connect
    from board.store.postgres.migrations import HISTORY_AS_GIVEN, migrate

    url = cluster.create_database(TEMPLATE)
    with connect(url, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction(), conn.cursor() as cursor:
            # As an import writes a board: the documents are the rules' own, and the claim
            # columns are computed once at the end.
            cursor.execute("select set_config('board.claim_order_deferred', 'on', true)")
            with cursor.copy("copy board.tasks (id, doc, status, owner, priority, version, updated_at, normal) from stdin") as copy:
                for doc in docs:
                    copy.write_row((doc["id"], json.dumps(doc), doc["status"], "", PRIORITY_RANK[doc["priority"]], doc["version"], doc["updatedAt"], True))
            with cursor.copy("copy board.task_edges (task_id, blocker_id) from stdin") as copy:
                for doc in docs:
                    for blocker in doc["blockedBy"]:
                        copy.write_row((doc["id"], blocker))
            # Each task's creation line, as every board board writes has: the server plans a
            # claim's lookup of its task's last line by what history holds.
            cursor.execute("select set_config(%s, 'on', true)", (HISTORY_AS_GIVEN,))
            with cursor.copy("copy board.history (task_id, version, at, record) from stdin") as copy:
                for doc in docs:
                    copy.write_row((doc["id"], 1, doc["createdAt"], json.dumps(creation_line(doc))))
            cursor.execute("select set_config('board.claim_order_deferred', 'off', true)")
            cursor.execute("select board.rebuild_claim_order()")
        conn.execute("vacuum analyze")


def copy_pg_board(cluster: Any, name: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(cluster.socket_url("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("create database {} template {}").format(sql.Identifier(name), sql.Identifier(TEMPLATE)))


# -- the claimers ---------------------------------------------------------------------------------


class Claimed(NamedTuple):
    agent: str
    ids: list[str]
    tokens: list[int]
    latencies: list[float]  # seconds per claim call that returned a task
    last_claim: float  # time.monotonic() when its last claim returned
    errors: list[str]
    cpu: float  # user + system seconds from the start signal to the end
    server_cpu: float | None  # the same for its PostgreSQL backend, when /proc shows it
    drained: bool  # it stopped because nothing was left, not because time ran out


def _open(where: dict[str, str]) -> Store:
    if "url" in where:
        return Store.open(where["workspace"], db=where["url"])
    return Store.open(where["workspace"])


def _backend_cpu(store: Store) -> float | None:
    """CPU seconds the store's PostgreSQL backend has used (a local server, readable /proc)."""
    conn = getattr(store, "conn", None)
    if conn is None:
        return None
    try:
        stat = Path(f"/proc/{conn.info.backend_pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _claimer(where: dict[str, str], agent: str, seconds: float, complete: bool, ready: Any, start: Any, out: Any) -> None:
    try:
        store = _open(where)
    except BaseException as error:  # say so rather than leave the parent waiting
        ready.put((agent, f"{type(error).__name__}: {error}"))
        return
    ready.put((agent, None))
    start.wait()
    deadline = time.monotonic() + seconds
    before = resource.getrusage(resource.RUSAGE_SELF)
    server_before = _backend_cpu(store)
    ids: list[str] = []
    tokens: list[int] = []
    latencies: list[float] = []
    errors: list[str] = []
    last = time.monotonic()
    drained = False
    while time.monotonic() < deadline:
        began = time.perf_counter()
        try:
            task = store.claim(agent, max_held=1 if complete else None)
        except Exception as error:  # counted and shown: a claim must not fail
            errors.append(f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
            if len(errors) > 20:
                break
            continue
        took = time.perf_counter() - began
        if task is None:
            store.sync()  # a claim on PostgreSQL reads only the task it takes: catch up to see what is left
            if not any(t.status == Status.PENDING for t in store.graph.tasks.values()):
                drained = True
                break
            time.sleep(0.002)  # a chain's next link waits on a claimer completing the one before
            continue
        last = time.monotonic()
        latencies.append(took)
        ids.append(task.id)
        assert task.lease is not None
        tokens.append(task.lease.token)
        if complete or task.blocks:
            try:
                store.set_status(task.id, Status.COMPLETED, token=task.lease.token, actor=agent)
            except Exception as error:
                errors.append(f"complete: {type(error).__name__}: {error}")
            last = time.monotonic()
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    server_after = _backend_cpu(store)
    server_cpu = server_after - server_before if server_before is not None and server_after is not None else None
    out.put(Claimed(agent, ids, tokens, latencies, last, errors, cpu, server_cpu, drained))
    store.close()


class Run(NamedTuple):
    backend: str
    processes: int
    claims: int
    rate: float
    p50_ms: float
    p99_ms: float
    duplicates: int
    lost: int
    errors: list[str]
    cpu_ms: float  # CPU of the claimers per claim
    server_cpu_ms: float | None  # CPU of their PostgreSQL backends per claim
    drained: bool
    seconds: float


def run_claimers(backend: str, where: dict[str, str], processes: int, seconds: float, complete: bool) -> tuple[list[Claimed], float, float]:
    """Start the claimers, wait until each has opened the board, release them together."""
    context = multiprocessing.get_context("fork")
    ready, out = context.Queue(), context.Queue()
    start = context.Event()
    workers = [
        context.Process(target=_claimer, args=(where, f"agent{i}", seconds, complete, ready, start, out), daemon=True)
        for i in range(processes)
    ]
    try:
        for worker in workers:
            worker.start()
        for _ in workers:
            agent, failure = ready.get(timeout=600)
            if failure:
                raise RuntimeError(f"{agent} could not open the board: {failure}")
        released = time.monotonic()
        start.set()
        results = [out.get(timeout=seconds + 600) for _ in workers]
        for worker in workers:
            worker.join(timeout=60)
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.kill()  # by its pid
                worker.join()
    ended = max((r.last_claim for r in results), default=released)
    return results, released, ended


def check(backend: str, where: dict[str, str], results: list[Claimed]) -> tuple[int, int]:
    """Duplicates and lost claims, from what the claimers were given and what the board holds."""
    given: dict[str, list[tuple[str, int]]] = {}
    for result in results:
        for task_id, token in zip(result.ids, result.tokens):
            given.setdefault(task_id, []).append((result.agent, token))
    if "url" in where:
        import psycopg

        with psycopg.connect(where["url"]) as conn:
            claim_lines = Counter(
                task_id for (task_id,) in conn.execute("select task_id from board.history where record ->> 'op' = 'claim'")
            )
            board = {
                task_id: (status, owner, token)
                for task_id, status, owner, token in conn.execute("select id, status, owner, lease_token from board.tasks")
            }
    else:
        store = Store.open(where["workspace"])
        claim_lines = Counter(str(h["task"]) for h in store.history() if h.get("op") == "claim")
        board = {t.id: (str(t.status), t.owner, t.lease.token if t.lease else None) for t in store.tasks.values()}
        store.close()
    duplicates = sum(len(holders) - 1 for holders in given.values())
    duplicates += sum(count - 1 for count in claim_lines.values() if count > 1)
    lost = sum(1 for task_id in claim_lines if task_id not in given)  # committed, never handed out
    for task_id, holders in given.items():
        status, owner, token = board.get(task_id, (None, None, None))
        if status not in ("in_progress", "completed"):
            lost += 1  # handed out, not on the board
        elif (owner, token if status == "in_progress" else holders[0][1]) not in holders:
            duplicates += 1  # someone else holds what this claimer was given, or under another lease
    if any(r.drained for r in results):
        # Someone found nothing left: every task must have been handed out.
        lost += sum(1 for status, _, _ in board.values() if status == "pending")
    return duplicates, lost


def bench(backend: str, where: dict[str, str], processes: int, seconds: float, complete: bool) -> Run:
    results, released, ended = run_claimers(backend, where, processes, seconds, complete)
    duplicates, lost = check(backend, where, results)
    latencies = sorted(lat for r in results for lat in r.latencies)
    claims = len(latencies)
    elapsed = max(ended - released, 1e-9)

    def percentile(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000 if latencies else float("nan")

    return Run(
        backend=backend, processes=processes, claims=claims, rate=claims / elapsed,
        p50_ms=statistics.median(latencies) * 1000 if latencies else float("nan"), p99_ms=percentile(0.99),
        duplicates=duplicates, lost=lost, errors=[e for r in results for e in r.errors],
        cpu_ms=sum(r.cpu for r in results) * 1000 / max(claims, 1),
        server_cpu_ms=None if any(r.server_cpu is None for r in results) else sum(r.server_cpu or 0 for r in results) * 1000 / max(claims, 1),
        drained=all(r.drained for r in results), seconds=elapsed,
    )


# -- a floor: bare durable commits ----------------------------------------------------------------


def _committer(url: str, seconds: float, ready: Any, start: Any, out: Any) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        ready.put(None)
        start.wait()
        deadline = time.monotonic() + seconds
        done = 0
        while time.monotonic() < deadline:
            conn.execute("insert into bench_commits (at) values (now())")
            done += 1
    out.put(done)


def _fresh_database(cluster: Any, name: str, *setup: str) -> str:
    """A new empty database ``name`` (dropped first if there), ``setup`` run in it; its socket URL."""
    import psycopg

    with psycopg.connect(cluster.socket_url("postgres"), autocommit=True) as conn:
        conn.execute(f"drop database if exists {name} with (force)")
        conn.execute(f"create database {name}")
    url = cluster.socket_url(name)
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in setup:
            conn.execute(statement)
    return url


def _rate(target: Any, url: str, processes: int, seconds: float) -> float:
    """What ``processes`` processes running ``target(url, seconds, ready, start, out)`` together
    did a second: each says it is ready, all start at once, each puts its count."""
    context = multiprocessing.get_context("fork")
    ready, out = context.Queue(), context.Queue()
    start = context.Event()
    workers = [context.Process(target=target, args=(url, seconds, ready, start, out), daemon=True) for _ in range(processes)]
    try:
        for worker in workers:
            worker.start()
        for _ in workers:
            ready.get(timeout=120)
        began = time.monotonic()
        start.set()
        done = sum(out.get(timeout=seconds + 120) for _ in workers)
        elapsed = time.monotonic() - began
        for worker in workers:
            worker.join(timeout=60)
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.kill()
                worker.join()
    return done / elapsed


def bench_bare_commits(cluster: Any, processes: int, seconds: float) -> float:
    """One-row inserts per second, each its own durable commit, by ``processes`` connections
    over the socket: what this machine's disk and server allow, with no board at all."""
    url = _fresh_database(cluster, "board_bench_commits", "create table bench_commits (n bigserial primary key, at timestamptz)")
    return _rate(_committer, url, processes, seconds)


# -- a second floor: the least a claim can be ------------------------------------------------------

#: A queue table as small as a claim allows: a priority, a state, an owner and a payload of the
#: size of a task document, with the ready rows indexed in order.
_QUEUE_SETUP = """
create table bench_queue (id bigserial primary key, priority int not null, state text not null, owner text, payload jsonb);
insert into bench_queue (priority, state, payload)
select g % 4, 'ready', jsonb_build_object('subject', 'task ' || g, 'description', repeat('x', 400)) from generate_series(1, {rows}) g;
create index bench_queue_ready on bench_queue (priority, id) where state = 'ready';
"""
#: The least a claim can be: take the first ready row no one else is taking, in one statement,
#: one durable commit; no document, history, lease or rule.
_QUEUE_CLAIM = (
    "update bench_queue set state = 'taken', owner = %s where id = ("
    "select id from bench_queue where state = 'ready' order by priority, id limit 1 for update skip locked) returning id"
)


def _queue_claimer(url: str, seconds: float, ready: Any, start: Any, out: Any) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        agent = f"q{os.getpid()}"
        ready.put(None)
        start.wait()
        deadline = time.monotonic() + seconds
        done = 0
        while time.monotonic() < deadline:
            if conn.execute(_QUEUE_CLAIM, (agent,), prepare=True).fetchone() is not None:
                done += 1
    out.put(done)


def _queue_database(cluster: Any, rows: int) -> str:
    return _fresh_database(cluster, "board_bench_queue", _QUEUE_SETUP.format(rows=rows), "vacuum analyze bench_queue")


def bench_bare_claims(cluster: Any, processes: int, seconds: float) -> tuple[float, float | None]:
    """Claims per second of the least a claim can be (``_QUEUE_CLAIM``) by ``processes``
    connections over the socket: from Python processes through psycopg, as board's claimers,
    and from pgbench's C client when pgbench is installed (None when not)."""
    rows = 400_000
    python_rate = _rate(_queue_claimer, _queue_database(cluster, rows), processes, seconds)
    if shutil.which("pgbench") is None:
        return python_rate, None
    _queue_database(cluster, rows)  # afresh, for the C client
    script = _QUEUE_CLAIM.replace("%s", "'c' || :client_id") + ";\n"
    return python_rate, _pgbench(cluster, "board_bench_queue", script, processes, seconds)


def _pgbench(cluster: Any, database: str, script: str, processes: int, seconds: float) -> float | None:
    """Transactions a second of ``script`` run by pgbench's ``processes`` clients over the
    socket; None without pgbench."""
    pgbench = shutil.which("pgbench")
    if pgbench is None:
        return None
    folder = Path(tempfile.mkdtemp(prefix="board-bench-pgbench-"))
    try:
        (folder / "script.sql").write_text(script)
        done = subprocess.run(
            [pgbench, "-n", "-M", "prepared", "-c", str(processes), "-j", str(min(processes, os.cpu_count() or 1)), "-T", str(max(1, round(seconds))),
             "-f", str(folder / "script.sql"), "-h", str(cluster.base), "-p", str(cluster.port), "-U", "postgres", database],
            capture_output=True, text=True, timeout=seconds + 120,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    found = re.search(r"tps = ([0-9.]+)", done.stdout)
    return float(found.group(1)) if found else None


def bench_claim_next_alone(cluster: Any, processes: int, seconds: float) -> float | None:
    """board's own claim (``board.claim_next`` and the notification after its commit) on a copy
    of the board, by pgbench's clients: the server's part of a claim, with no Python."""
    from board.store.postgres.migrations import CLAIMED_TASK, TASK_CHANNEL
    from board.store.postgres.store import WRITE_LOCK_KEY

    name = "board_bench_claim_next"
    copy_pg_board(cluster, name)
    agent = "'c' || :client_id"
    script = (
        f"select * from board.claim_next({WRITE_LOCK_KEY}, {agent}, null::int, false, {agent}, '2026-01-01T00:00:00Z', "
        f"'2026-01-01T00:00:00Z', now(), jsonb_build_object('owner', {agent}, 'token', 0, 'expiresAt', '2026-01-01T00:00:30Z', "
        f"'seconds', 30.0), now() + interval '30 seconds');\n"
        f"select pg_notify('{TASK_CHANNEL}', id) from (select current_setting('{CLAIMED_TASK}', true) as id) c where c.id <> '';\n"
    )
    try:
        return _pgbench(cluster, name, script, processes, seconds)
    finally:
        cluster.drop_database(name)


# -- a peer: pgqueuer's own dequeue ----------------------------------------------------------------

#: Run by the pgqueuer venv's python (``peers.pgqueuer_program``), as ``enqueue URL DRIVER JOBS
#: WEIGHTS`` (jobs through ``Queries.enqueue`` in batches) or ``work URL DRIVER`` (one worker: says
#: ``ready``, waits for ``go START SECONDS`` on stdin, then dequeues and finishes jobs until
#: START + SECONDS on the monotonic clock, and prints what it did as JSON). Only pgqueuer's public
#: API: per job ``Queries.dequeue(batch_size=1)`` and then ``Queries.log_jobs`` with the job as
#: ``successful``, the call QueueManager's status-log buffer makes for each finished job (with
#: ``batch_size=1`` it flushes every job): the job leaves the queue table for the log table.
PGQUEUER_WORKER = r"""
import asyncio, json, os, random, resource, sys, time, uuid
from datetime import timedelta

from pgqueuer import Queries
from pgqueuer.queries import EntrypointExecutionParameter

ENTRYPOINT = "bench"


async def connect(url, driver):
    if driver == "asyncpg":
        import asyncpg
        from pgqueuer.db import AsyncpgDriver

        connection = await asyncpg.connect(url)
        return connection, AsyncpgDriver(connection)
    import psycopg
    from pgqueuer.db import PsycopgDriver

    connection = await psycopg.AsyncConnection.connect(url, autocommit=True)
    return connection, PsycopgDriver(connection)


def backend_cpu(pid):
    try:
        fields = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def enqueue(url, driver, jobs, weights):
    connection, db = await connect(url, driver)
    queries = Queries(db)
    rng = random.Random(7)
    priorities = rng.choices(range(len(weights)), weights, k=jobs)  # larger runs first in pgqueuer
    batch = 5000
    for first in range(0, jobs, batch):
        numbers = range(first, min(first + batch, jobs))
        await queries.enqueue(
            [ENTRYPOINT] * len(numbers),
            [json.dumps({"subject": f"task {n}", "description": "x" * 400}).encode() for n in numbers],
            [priorities[n] for n in numbers],
        )
    settings = queries.qbe.settings
    print(json.dumps({"queue_table": settings.queue_table, "log_table": settings.queue_table_log}))
    await connection.close()


async def work(url, driver):
    connection, db = await connect(url, driver)
    queries = Queries(db)
    entrypoints = {ENTRYPOINT: EntrypointExecutionParameter(concurrency_limit=0)}
    manager = uuid.uuid4()
    heartbeat_timeout = timedelta(seconds=30)  # QueueManager.run's default
    backend = (await db.fetch("select pg_backend_pid() as pid"))[0]["pid"]
    print("ready", flush=True)
    _, start, seconds = sys.stdin.readline().split()
    deadline = float(start) + float(seconds)
    before = resource.getrusage(resource.RUSAGE_SELF)
    server_before = backend_cpu(backend)
    ids, errors, empty = [], [], 0
    last = time.monotonic()
    while time.monotonic() < deadline:
        try:
            jobs = await queries.dequeue(
                batch_size=1, entrypoints=entrypoints, queue_manager_id=manager,
                global_concurrency_limit=None, heartbeat_timeout=heartbeat_timeout,
            )
            if not jobs:
                empty += 1
                await asyncio.sleep(0.001)
                continue
            for job in jobs:
                await queries.log_jobs([(job, "successful", None)])
                ids.append(job.id)
            last = time.monotonic()
        except Exception as error:
            errors.append(f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
            if len(errors) > 20:
                break
    after = resource.getrusage(resource.RUSAGE_SELF)
    server_after = backend_cpu(backend)
    print(json.dumps({
        "ids": ids, "last": last, "empty": empty, "errors": errors,
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "server_cpu": None if server_before is None or server_after is None else server_after - server_before,
    }), flush=True)
    await connection.close()


if sys.argv[1] == "enqueue":
    asyncio.run(enqueue(sys.argv[2], sys.argv[3], int(sys.argv[4]), json.loads(sys.argv[5])))
else:
    asyncio.run(work(sys.argv[2], sys.argv[3]))
"""


class PeerRun(NamedTuple):
    processes: int
    jobs: int  # dequeued and finished
    rate: float
    duplicates: int  # jobs picked twice (in pgqueuer's log, or handed to two workers)
    unfinished: int  # jobs left picked, or handed out and not logged as successful
    ran_dry: bool  # some dequeue found nothing: the figure undercounts
    errors: list[str]
    cpu_ms: float  # CPU of the workers per job
    server_cpu_ms: float | None  # CPU of their PostgreSQL backends per job
    seconds: float


def bench_pgqueuer(cluster: Any, python: Path, folder: Path, processes: int, seconds: float, driver: str) -> PeerRun:
    """pgqueuer's dequeue-and-finish by ``processes`` OS processes over the socket, on a fresh
    database that ``pgq install`` set up and ``Queries.enqueue`` filled with more jobs than they
    can take in ``seconds``; released together, as board's claimers are."""
    import psycopg

    script = folder / "pgqueuer_worker.py"
    script.write_text(PGQUEUER_WORKER)
    name = "board_bench_pgqueuer"
    url = _fresh_database(cluster, name)
    installed = subprocess.run([str(python.parent / "pgq"), "--pg-dsn", url, "install"], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    if installed.returncode != 0:
        raise RuntimeError(f"pgq install failed: {installed.stderr.strip()[-300:]}")
    # The same mix of priorities as the board's tasks; pgqueuer takes the largest first.
    weights = [weight for _, weight in reversed(PRIORITIES)]
    jobs = max(20_000, int(seconds * 6000))
    filled = subprocess.run(
        [str(python), str(script), "enqueue", url, driver, str(jobs), json.dumps(weights)],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    if filled.returncode != 0:
        raise RuntimeError(f"enqueueing pgqueuer jobs failed: {filled.stderr.strip()[-300:]}")
    tables = json.loads(filled.stdout.strip().splitlines()[-1])
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("vacuum analyze")  # as the board's template and the bare queue get

    workers: list[subprocess.Popen[str]] = []
    logs = [open(folder / f"pgqueuer_worker_{i}.log", "w+") for i in range(processes)]
    try:
        for log in logs:
            workers.append(subprocess.Popen(
                [str(python), str(script), "work", url, driver],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
            ))  # fmt: skip
        for worker, log in zip(workers, logs):
            assert worker.stdout is not None
            if worker.stdout.readline().strip() != "ready":
                worker.wait(timeout=60)
                log.seek(0)
                raise RuntimeError(f"a pgqueuer worker did not start: {log.read().strip()[-300:]}")
        released = time.monotonic()
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write(f"go {released} {seconds}\n")
            worker.stdin.flush()
        reports = []
        for worker, log in zip(workers, logs):
            out, _ = worker.communicate(timeout=seconds + 120)
            if worker.returncode != 0 or not out.strip():
                log.seek(0)
                raise RuntimeError(f"a pgqueuer worker failed: {log.read().strip()[-300:]}")
            reports.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()  # by its pid
                worker.wait()
        for log in logs:
            log.close()

    given = Counter(job_id for report in reports for job_id in report["ids"])
    log_table, queue_table = tables["log_table"], tables["queue_table"]
    with psycopg.connect(url, autocommit=True) as conn:

        def count(query: str) -> int:
            row = conn.execute(query).fetchone()
            return int(row[0]) if row else 0

        picked_twice = count(f"select count(*) from (select job_id from \"{log_table}\" where status = 'picked' group by job_id having count(*) > 1) twice")
        left_picked = count(f"select count(*) from \"{queue_table}\" where status = 'picked'")
        finished = count(f"select count(distinct job_id) from \"{log_table}\" where status = 'successful'")
    cluster.drop_database(name)
    done = sum(given.values())
    elapsed = max(max((report["last"] for report in reports), default=released) - released, 1e-9)
    server = [report["server_cpu"] for report in reports]
    return PeerRun(
        processes=processes, jobs=done, rate=done / elapsed,
        duplicates=picked_twice + sum(count - 1 for count in given.values()),
        unfinished=left_picked + abs(len(given) - finished),
        ran_dry=any(report["empty"] for report in reports), errors=[e for report in reports for e in report["errors"]],
        cpu_ms=sum(report["cpu"] for report in reports) * 1000 / max(done, 1),
        server_cpu_ms=None if None in server else sum(server) * 1000 / max(done, 1), seconds=elapsed,
    )  # fmt: skip


def _ratio(board: float | None, other: float | None) -> str:
    return f"{board / other:5.2f}" if board and other else "    -"


def _peer_row(run: PeerRun, board: float | None, bare: float | None) -> str:
    server = f"{run.server_cpu_ms:6.2f}" if run.server_cpu_ms is not None else "     -"
    board_text = f"{board:8.0f}" if board is not None else "       -"
    bare_text = f"{bare:8.0f}" if bare is not None else "       -"
    return (
        f"  {run.processes:4d}  {run.jobs:7d}  {run.rate:8.0f}  {run.duplicates:3d}  {run.unfinished:4d}  {run.cpu_ms:6.2f}  {server}"
        f"  {board_text}  {bare_text}  {_ratio(board, run.rate):>14}  {_ratio(board, bare):>10}"
        + ("  RAN DRY: jobs were short" if run.ran_dry else "")
        + (f"  ERRORS {len(run.errors)}: {run.errors[0]}" if run.errors else "")
    )


# -- main -----------------------------------------------------------------------------------------


def _row(run: Run) -> str:
    drained = "emptied" if run.drained else "time up"
    server = f"{run.server_cpu_ms:6.2f}" if run.server_cpu_ms is not None else "     -"
    return (
        f"  {run.processes:4d}  {run.backend:6s}  {run.claims:7d}  {run.rate:8.0f}  {run.p50_ms:7.2f}  {run.p99_ms:8.2f}"
        f"  {run.duplicates:3d}  {run.lost:4d}  {run.cpu_ms:6.2f}  {server}  {drained} after {run.seconds:.1f} s"
        + (f"  ERRORS {len(run.errors)}: {run.errors[0]}" if run.errors else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--procs", type=int, nargs="+", default=[4, 16, 64], help="claiming processes per run (default: 4 16 64)")
    parser.add_argument("--tasks", type=int, default=None, help="tasks on each board (default 20,000; --quick 5,000)")
    parser.add_argument("--seconds", type=float, default=None, help="time budget of each run (default 20; --quick 8)")
    parser.add_argument("--backends", nargs="+", choices=("socket", "tcp", "files"), default=["socket", "tcp", "files"])
    parser.add_argument("--chains", type=int, default=CHAINS, help=f"dependency chains of {CHAIN_LENGTH} tasks on each board (default {CHAINS})")
    parser.add_argument("--complete", action="store_true", help="complete each task before the next claim (max_held=1)")
    parser.add_argument("--no-floor", action="store_true", help="skip the bare-commit baseline")
    parser.add_argument("--no-pgqueuer", action="store_true", help="skip the pgqueuer comparison")
    parser.add_argument(
        "--pgqueuer-driver", choices=("asyncpg", "psycopg"), default="asyncpg",
        help="how pgqueuer's workers reach PostgreSQL (default asyncpg, its first choice; psycopg is board's)",
    )  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="smaller, shorter runs")
    parser.add_argument("--dir", default=".", help="where to make the file boards and workspaces (default: current directory)")
    args = parser.parse_args()
    tasks = args.tasks or (5000 if args.quick else 20_000)
    seconds = args.seconds or (8.0 if args.quick else 20.0)

    import psycopg

    from tests.bench.peers import PGQUEUER_VERSION, pgqueuer_program
    from tests.pg_cluster import PgCluster

    pgqueuer, pgqueuer_why = (None, "skipped (--no-pgqueuer)") if args.no_pgqueuer else pgqueuer_program()
    docs = board_docs(tasks, args.chains)
    blocked = sum(1 for doc in docs if doc["blockedBy"])
    base = Path(tempfile.mkdtemp(dir=args.dir, prefix="board-bench-pg-"))
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {tasks:,} tasks ({blocked} of them in chains, waiting), at most {seconds:.0f} s a run")
    print(f"  {'complete each task before the next claim (max_held=1)' if args.complete else 'claims only (max_held=None); chain links completed to free the next'}")
    runs: list[Run] = []
    floors: dict[int, float] = {}
    bare: dict[int, tuple[float, float | None]] = {}
    peer_runs: list[PeerRun] = []
    try:
        with PgCluster.running() as cluster:
            with psycopg.connect(cluster.socket_url("postgres"), autocommit=True) as conn:
                version = conn.execute("show server_version").fetchone()[0]
                sync = conn.execute("show synchronous_commit").fetchone()[0]
                fsync = conn.execute("show fsync").fetchone()[0]
            print(f"  PostgreSQL {version}, fsync {fsync}, synchronous_commit {sync}; data in {cluster.base}; files under {base}")
            if {"socket", "tcp"} & set(args.backends):
                make_pg_template(cluster, docs)
            print("\n  CPU ms: CPU per claim of the claiming processes, and of their PostgreSQL backends")
            print(f"  {'procs':>4}  {'where':6s}  {'claims':>7}  {'claims/s':>8}  {'p50 ms':>7}  {'p99 ms':>8}  dup  lost  CPU ms  server")
            for number, processes in enumerate(args.procs):
                for backend in args.backends:
                    workspace = base / f"{backend}-{processes}"
                    workspace.mkdir()
                    if backend == "files":
                        make_file_board(workspace, docs)
                        where = {"workspace": str(workspace)}
                    else:
                        name = f"board_bench_{number}_{backend}"
                        copy_pg_board(cluster, name)
                        where = {"workspace": str(workspace), "url": cluster.socket_url(name) if backend == "socket" else cluster.tcp_url(name)}
                    run = bench(backend, where, processes, seconds, args.complete)
                    runs.append(run)
                    print(_row(run), flush=True)
                    if backend != "files":
                        cluster.drop_database(name)
            if not args.no_floor:
                for processes in args.procs:
                    floors[processes] = bench_bare_commits(cluster, processes, 3.0 if args.quick else 5.0)
                print("\n  baseline, bare durable commits (one-row insert each) over the socket, no board:")
                print("  " + "   ".join(f"{p} processes {rate:,.0f}/s" for p, rate in floors.items()))
                bare = {processes: bench_bare_claims(cluster, processes, 3.0 if args.quick else 5.0) for processes in args.procs}
                print("\n  baseline, the least a claim can be (one UPDATE ... FOR UPDATE SKIP LOCKED, each its own durable")
                print("  commit, no document, history or lease) over the socket: from Python processes / from pgbench's C client:")
                print("  " + "   ".join(f"{p} processes {py:,.0f}/s / " + (f"{c:,.0f}/s" if c is not None else "no pgbench") for p, (py, c) in bare.items()))
                if {"socket", "tcp"} & set(args.backends) and shutil.which("pgbench"):
                    alone = {processes: bench_claim_next_alone(cluster, processes, 3.0 if args.quick else 5.0) for processes in args.procs}
                    print("\n  board's claim with no Python: board.claim_next and its notification, by pgbench's C client:")
                    print("  " + "   ".join(f"{p} processes " + (f"{rate:,.0f}/s" if rate is not None else "failed") for p, rate in alone.items()))
            if pgqueuer is None:
                if not args.no_pgqueuer:
                    print(f"\n  pgqueuer not measured: {pgqueuer_why}")
            else:
                board_rates = {r.processes: r.rate for r in runs if r.backend == "socket"}
                print(f"\n  pgqueuer {PGQUEUER_VERSION} ({args.pgqueuer_driver}) over the socket, each job Queries.dequeue(batch_size=1) then")
                print("  Queries.log_jobs (successful), as its QueueManager: two commits a job; board's rate is of "
                      + ("claim-and-complete cycles" if args.complete else "claims alone (one commit each)"))
                print(f"  {'procs':>4}  {'jobs':>7}  {'jobs/s':>8}  dup  left  CPU ms  server  {'board/s':>8}  {'bare/s':>8}  board/pgqueuer  board/bare")
                for processes in args.procs:
                    try:
                        peer = bench_pgqueuer(cluster, pgqueuer, base, processes, seconds, args.pgqueuer_driver)
                    except (RuntimeError, subprocess.SubprocessError) as error:  # a peer's failure is not board's
                        print(f"  {processes:4d}  pgqueuer failed: {error}", flush=True)
                        continue
                    peer_runs.append(peer)
                    print(_peer_row(peer, board_rates.get(processes), bare[processes][0] if processes in bare else None), flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"\n  load average at the end: {os.getloadavg()[0]:.1f} (1 min), {os.getloadavg()[1]:.1f} (5 min)")
    bad = [r for r in runs if r.duplicates or r.lost or r.errors]
    print("\n  0 duplicates, 0 lost in every run" if not bad else f"\n  {len(bad)} runs with duplicates, lost claims or errors")
    bad_peer = [r for r in peer_runs if r.duplicates or r.unfinished or r.errors or r.ran_dry]
    if bad_peer:
        print(f"  pgqueuer: {len(bad_peer)} runs with jobs taken twice, left unfinished, errors, or a queue that ran dry")
    target = [r for r in runs if r.processes == 16 and r.backend in ("socket", "tcp")]
    if target:
        print("  target >= 5,000 claims/s at 16 processes: " + ", ".join(f"{r.backend} {r.rate:,.0f}" for r in target))


if __name__ == "__main__":
    main()
