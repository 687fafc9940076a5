"""The claim columns a PostgreSQL board keeps per task (migration 3: ready, remaining, stuck)
against the rules' own index (``TaskGraph``) of the same tasks, on random boards under random
writes of every kind, on a board imported from files with a dependency cycle, and on a board
migrated from schema version 2; and the claim ``board.claim_next`` writes against the one the
rules write in Python."""

from __future__ import annotations

import json
import random
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from board.errors import BoardError
from board.graph import TaskGraph
from board.model import PolicyMark, draft_of, task_from_dict, task_to_dict
from board.status import Status
from board.store.postgres.connect import connect
from board.store.postgres.migrations import MIGRATIONS, migrate
from board.store.postgres.store import PostgresStore
from board.store.postgres.transfer import import_board
from tests.core.test_store import FakeClock
from tests.pg_cluster import PgCluster

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'board[postgres]'")

ORDER = 'select id from board.tasks where ready order by priority, remaining desc, id_number, id collate "C"'


@pytest.fixture
def board_url(pg_url: str) -> str:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    return pg_url


def stored_graph(url: str) -> TaskGraph:
    """The rules' index of the board as stored now, read afresh."""
    with connect(url, autocommit=True) as conn:
        docs = conn.execute("select id, doc from board.tasks").fetchall()
    return TaskGraph(task_from_dict(doc, f"#{task_id}") for task_id, doc in docs)


def assert_columns_match_the_rules(url: str) -> None:
    graph = stored_graph(url)
    remaining = graph.remaining_path()
    with connect(url, autocommit=True) as conn:
        columns = {task_id: (ready, value, wave) for task_id, ready, value, wave in conn.execute("select id, ready, remaining, stuck_wave from board.tasks")}
        order = [task_id for (task_id,) in conn.execute(ORDER)]
    assert {task_id for task_id, (ready, _, _) in columns.items() if ready} == graph.ready_ids()
    # Exactly the same floats: the same sums, in the same order.
    assert {task_id: value for task_id, (_, value, _) in columns.items()} == remaining
    stuck = unreached(graph)
    waves = graph.waves()
    assert {task_id: wave for task_id, (_, _, wave) in columns.items() if wave is not None} == {task_id: waves[task_id] for task_id in stuck}
    assert order == graph.claim_order(graph.ready_ids())


def unreached(graph: TaskGraph) -> set[str]:
    """The tasks the rules' waves never reach: in a cycle, or waiting on one."""
    left = {t.id: {b for b in t.blocked_by if b in graph.tasks} for t in graph.tasks.values()}
    while True:
        free = [task_id for task_id, blockers in left.items() if not blockers]
        if not free:
            return set(left)
        for task_id in free:
            del left[task_id]
        for blockers in left.values():
            blockers.difference_update(free)


def random_writes(store: PostgresStore, rng: random.Random, steps: int) -> None:
    """Creates, edges added and removed, completions, cancels, reopenings, claims and
    releases, estimates, priorities, parents, hidden tasks and deletes, at random; refusals by
    the rules (a cycle, a task not ready) are part of the game."""
    agents = ["ann", "bob", "cy"]
    for _ in range(steps):
        ids = sorted(store.graph.tasks)
        pick = rng.choice(ids) if ids else None
        move = rng.random()
        try:
            if move < 0.22 or pick is None:
                blockers = rng.sample(ids, min(len(ids), rng.choice([0, 0, 1, 1, 2, 3])))
                metadata = {"estimate": rng.choice([1, 2, 0.5, 3.25, 7, 0, -1, "x", True])} if rng.random() < 0.4 else {}
                if rng.random() < 0.05:
                    metadata["_internal"] = True
                store.create(f"task {len(ids)}", blocked_by=blockers, priority=rng.choice(["critical", "high", "medium", "low"]), metadata=metadata)
            elif move < 0.34:
                other = rng.choice(ids)
                if other != pick:
                    store.add_dependency(pick, other)
            elif move < 0.42:
                task = store.get(pick)
                if task.blocked_by:
                    store.remove_dependency(pick, rng.choice(task.blocked_by))
            elif move < 0.55:
                task = store.claim(rng.choice(agents), max_held=None)
                if task is not None and rng.random() < 0.8:
                    store.set_status(task.id, Status.COMPLETED, token=task.lease.token)
            elif move < 0.60:
                store.set_status(pick, Status.CANCELLED, force=True)
            elif move < 0.66:
                task = store.get(pick)
                if task.status in (Status.COMPLETED, Status.CANCELLED, Status.IN_PROGRESS):
                    store.set_status(pick, Status.PENDING, force=True)
            elif move < 0.74:
                store.update(pick, metadata={"estimate": rng.choice([1, 2.5, 4, 10, 0.125])})
            elif move < 0.79:
                store.update(pick, priority=rng.choice(["critical", "high", "medium", "low"]))
            elif move < 0.85:
                parent = rng.choice(ids)
                store.update(pick, parent=None if parent == pick or rng.random() < 0.3 else parent)
            elif move < 0.88:
                store.update(pick, metadata={"_internal": rng.random() < 0.5})
            elif move < 0.95:
                store.delete(pick, force=True)
            else:
                archived = sorted(store.archived_ids())
                if archived:
                    store.restore(rng.choice(archived))
        except BoardError:
            pass  # refused by the rules: nothing was written


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_claim_columns_follow_random_writes_as_the_rules_index_does(board_url: str, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    store = PostgresStore.open(tmp_path, url=board_url)
    for _ in range(8):
        random_writes(store, rng, 25)
        assert_columns_match_the_rules(board_url)


def write_file_board(root: Path, docs: list[dict]) -> None:
    tasks = root / ".tasks"
    tasks.mkdir(parents=True)
    for doc in docs:
        full = {"subject": f"task {doc['id']}", "status": "pending", "blockedBy": [], "blocks": [], **doc}
        (tasks / f"task_{doc['id']}.json").write_text(json.dumps(full))


def cyclic_docs() -> list[dict]:
    """1 <- 2 <- 3 <- 2 (a cycle of 2 and 3), 4 waits on 3, 5 on 1, 6 stands alone, 7 waits on a task that is not there."""
    return [
        {"id": "1", "blocks": ["2", "5"], "metadata": {"estimate": 4}},
        {"id": "2", "blockedBy": ["1", "3"], "blocks": ["3"]},
        {"id": "3", "blockedBy": ["2"], "blocks": ["2", "4"], "metadata": {"estimate": 2.5}},
        {"id": "4", "blockedBy": ["3"], "priority": "high"},
        {"id": "5", "blockedBy": ["1"]},
        {"id": "6", "priority": "low"},
        {"id": "7", "blockedBy": ["99"], "priority": "critical"},
    ]


def test_a_cycle_imported_from_files_is_ranked_as_the_rules_rank_it_and_writes_keep_it_so(board_url: str, tmp_path: Path) -> None:
    write_file_board(tmp_path / "files", cyclic_docs())
    import_board(board_url, tmp_path / "files")
    assert_columns_match_the_rules(board_url)
    with connect(board_url, autocommit=True) as conn:
        assert {task_id for (task_id,) in conn.execute("select id from board.tasks where stuck_wave is not null")} == {"2", "3", "4"}
    store = PostgresStore.open(tmp_path / "ws", url=board_url)
    store.remove_dependency("2", "3")  # the cycle is broken
    assert_columns_match_the_rules(board_url)
    with connect(board_url, autocommit=True) as conn:
        assert not conn.execute("select id from board.tasks where stuck_wave is not null").fetchall()
    first = store.claim("ann", max_held=None)
    assert first is not None and first.id == "1"
    store.set_status("1", Status.COMPLETED, token=first.lease.token)
    assert_columns_match_the_rules(board_url)
    random_writes(store, random.Random(9), 60)
    assert_columns_match_the_rules(board_url)


def claim_columns_stored(url: str) -> dict[str, tuple[bool, float, int | None]]:
    with connect(url, autocommit=True) as conn:
        return {task_id: (ready, value, wave) for task_id, ready, value, wave in conn.execute("select id, ready, remaining, stuck_wave from board.tasks")}


@pytest.mark.parametrize("seed", [11, 12])
def test_an_imported_board_comes_with_the_claim_columns_the_database_gives_it(board_url: str, tmp_path: Path, seed: int) -> None:
    """Import works the columns out in Python for the whole board at once: they must be what the
    database's own rebuild makes of the same rows, on a board with every kind of task (hidden,
    sub-tasks, estimates, finished, a blocker with no task, a cycle)."""
    from board.store import Store

    files = Store.open(tmp_path / "files", create=True)
    random_writes(files, random.Random(seed), 150)
    for doc in cyclic_docs():
        renamed = {**doc, "id": f"9{doc['id']}", "blockedBy": [f"9{b}" for b in doc.get("blockedBy", [])], "blocks": [f"9{b}" for b in doc.get("blocks", [])]}
        full = {"subject": f"task {renamed['id']}", "status": "pending", **renamed}
        (tmp_path / "files" / ".tasks" / f"task_{renamed['id']}.json").write_text(json.dumps(full))
    with connect(board_url, autocommit=True) as listener:
        listener.execute("listen board_tasks")
        import_board(board_url, tmp_path / "files")
        heard = [note.payload for note in listener.notifies(timeout=0.5, stop_after=50)]
    assert heard == ["*"]  # once, for the whole board: not once per task
    imported = claim_columns_stored(board_url)
    assert len(imported) == len(files.graph.tasks) + 7 and any(wave is not None for _, _, wave in imported.values())
    assert_columns_match_the_rules(board_url)
    with connect(board_url, autocommit=True) as conn:
        conn.execute("select board.rebuild_claim_order()")
    assert claim_columns_stored(board_url) == imported


def test_writes_on_a_board_with_a_cycle_keep_the_columns_as_the_rules_have_them(board_url: str, tmp_path: Path) -> None:
    write_file_board(tmp_path / "files", cyclic_docs())
    import_board(board_url, tmp_path / "files")
    store = PostgresStore.open(tmp_path / "ws", url=board_url)
    random_writes(store, random.Random(5), 80)
    assert_columns_match_the_rules(board_url)
    store.delete("3", force=True)
    assert_columns_match_the_rules(board_url)


def test_a_board_of_schema_version_2_gets_its_claim_columns_when_migrated(pg_url: str, tmp_path: Path) -> None:
    with connect(pg_url, autocommit=True) as conn:
        with conn.transaction():
            conn.execute("create schema board")
            conn.execute("create table board.migrations (version int primary key, description text not null, applied_at timestamptz not null default now())")
            for step in MIGRATIONS[:2]:
                conn.execute(step.sql)
                conn.execute("insert into board.migrations (version, description) values (%s, %s)", (step.version, step.description))
        rng = random.Random(3)
        docs = cyclic_docs() + [
            {"id": str(n), "blockedBy": [str(n - 1)] if n % 4 else [], "priority": rng.choice(["high", "medium", "low"]),
             "status": rng.choice(["pending", "pending", "completed", "cancelled", "in_progress"]), "owner": "ann",
             "metadata": {"estimate": rng.choice([1, 2, 3.5])}}
            for n in range(10, 60)
        ]
        for doc in docs:
            task = task_from_dict({"subject": "s", **doc}, "doc")
            data = task.model_dump(mode="json", by_alias=True)
            conn.execute(
                "insert into board.tasks (id, doc, status, owner, priority, version) values (%s, %s, %s, %s, %s, %s)",
                (task.id, json.dumps(data), str(task.status), task.owner, {"critical": 0, "high": 1, "medium": 2, "low": 3}[str(task.priority)], task.version),
            )
            for blocker in task.blocked_by:
                conn.execute("insert into board.task_edges (task_id, blocker_id) values (%s, %s)", (task.id, blocker))
        assert migrate(conn) == [3, 4]
    assert_columns_match_the_rules(pg_url)


def test_a_claim_written_in_the_database_is_the_one_the_rules_write(board_url: str, pg_cluster: PgCluster, tmp_path: Path) -> None:
    """Two boards alike: on one every document is claimed by ``board.claim_next``, on the other
    (its documents marked as not the rules' own) by the rules in Python; rows and history match."""
    other_url = pg_cluster.create_database(f"{unquote(urlsplit(board_url).path.lstrip('/'))}_rules")
    with connect(other_url, autocommit=True) as conn:
        migrate(conn)
    clocks = [FakeClock(), FakeClock()]
    stores = [PostgresStore.open(tmp_path / name, url=url, clock=clock, actor="tester") for url, name, clock in ((board_url, "a", clocks[0]), (other_url, "b", clocks[1]))]
    for store in stores:
        rng = random.Random(11)
        for n in range(30):
            store.create(f"job {n}", priority=rng.choice(["high", "medium", "low"]), blocked_by=[str(n - 2)] if n > 2 and n % 3 == 0 else [],
                         metadata={"estimate": rng.choice([1, 2, 5.5])})
        task = store.claim("ann", lease_seconds=30)
        store.release(task.id, token=task.lease.token)  # claimed again below, with a policy mark and a start time kept
        store.start("5", "bob")
        store.set_status("5", Status.FAILED, error="broke")
        store.set_status("5", Status.PENDING)
    # A pending task with a start time and an unsettled policy mark (a policy sent it back),
    # written in the rules' form on both boards.
    draft = draft_of(stores[0].get("8"))
    draft.started_at = clocks[0].now
    draft.policy = PolicyMark(name="stalled", status=Status.PENDING, reason="no progress", fired_at=clocks[0].now, owner="cy", progress=40)
    for url in (board_url, other_url):
        with connect(url, autocommit=True) as conn:
            conn.execute("update board.tasks set doc = %s where id = '8'", (json.dumps(task_to_dict(draft)),))
    with connect(other_url, autocommit=True) as conn:
        conn.execute("update board.tasks set normal = false")
    with connect(board_url, autocommit=True) as conn:
        assert conn.execute("select bool_and(normal) from board.tasks").fetchone()[0] is True
    for n in range(40):
        for clock in clocks:
            clock.advance(1.5 + n / 1000)
        agent, seconds = ["ann", "bob", "cy"][n % 3], [30, 90.5, 600][n % 3]
        claimed = [store.claim(agent, lease_seconds=seconds, max_held=None, actor=None if n % 2 else "boss") for store in stores]
        assert claimed[0] == claimed[1]
        if claimed[0] is None:
            break
        if n % 4 == 0:
            for store, task in zip(stores, claimed):
                store.set_status(task.id, Status.COMPLETED, token=task.lease.token)
    row = "select id, doc, status, owner, priority, version, lease_owner, lease_token, lease_expires_at, updated_at, ready, remaining from board.tasks order by id"
    history = "select task_id, version, at, record from board.history order by seq"
    with connect(board_url, autocommit=True) as a, connect(other_url, autocommit=True) as b:
        assert a.execute(row).fetchall() == b.execute(row).fetchall()
        assert a.execute(history).fetchall() == b.execute(history).fetchall()
        [settled] = [record for (record,) in a.execute("select record from board.history where task_id = '8' and record ->> 'op' = 'claim'")]
        assert settled["changes"]["policy"][1]["settled"] is True and "startedAt" not in settled["changes"]


def test_a_claim_reads_only_the_task_it_takes(board_url: str, tmp_path: Path) -> None:
    writer = PostgresStore.open(tmp_path, url=board_url)
    with writer.transaction():
        for n in range(200):
            writer.create(f"job {n}", blocked_by=[str(n)] if n % 2 else [])
    claimer = PostgresStore.open(tmp_path, url=board_url, whole=False)
    task = claimer.claim("ann")
    assert task is not None and task.id == "1"
    assert set(claimer.graph.tasks) == {"1"}


def test_processes_claiming_at_once_take_every_task_once_and_in_claim_order(board_url: str, pg_cluster: PgCluster, tmp_path: Path) -> None:
    """Six processes (socket and TCP) claim a board of priorities, chains and estimates until
    nothing is ready. Each process's claims rank ever later, and a task is taken only once every
    task before it is taken or being taken: at most as many as the other processes' claims
    under way."""
    from tests.postgres.test_claims import claim_lines, run_claimers

    store = PostgresStore.open(tmp_path, url=board_url)
    rng = random.Random(21)
    with store.transaction():
        for n in range(1, 401):
            blocked_by = [str(n - 1)] if n % 5 and n > 1 and rng.random() < 0.3 else []
            store.create(f"job {n}", priority=rng.choice(["critical", "high", "medium", "low"]), blocked_by=blocked_by,
                         metadata={"estimate": rng.choice([1, 2, 3.5, 8])} if rng.random() < 0.5 else {})
    graph = stored_graph(board_url)
    rank = {task_id: n for n, task_id in enumerate(graph.claim_order(graph.ready_ids()))}
    tcp_url = pg_cluster.tcp_url(unquote(urlsplit(board_url).path.lstrip("/")))
    claimers = run_claimers("claim", [board_url, tcp_url] * 3, tmp_path)
    given = [task_id for claimer in claimers for task_id in claimer.heard("claimed")]
    assert sorted(given) == sorted(rank), "every ready task claimed exactly once, and nothing else"
    for claimer in claimers:
        mine = [rank[task_id] for task_id in claimer.heard("claimed")]
        assert mine == sorted(mine), f"{claimer.agent} claimed out of order"
    lines = [task_id for _, task_id, op, _, _ in claim_lines(board_url) if op == "claim"]
    assert sorted(lines) == sorted(given)
    for before, task_id in enumerate(lines):
        assert rank[task_id] <= before + len(claimers) - 1, f"#{task_id} taken while {rank[task_id] - before} better tasks were free"
    with connect(board_url, autocommit=True) as conn:
        held = dict(conn.execute("select id, owner from board.tasks where status = 'in_progress'").fetchall())
        assert not conn.execute("select id from board.tasks where ready").fetchall()
    by_agent = {task_id: claimer.agent for claimer in claimers for task_id in claimer.heard("claimed")}
    assert held == by_agent


def test_processes_claiming_and_completing_free_each_chain_link_once(board_url: str, tmp_path: Path) -> None:
    """Four processes claim and complete (one task held at a time) a board of chains: every task
    is done once, by the one process it was given to, and nothing is left ready or held."""
    from tests.postgres.test_claims import assert_one_holder_at_a_time, run_claimers

    store = PostgresStore.open(tmp_path, url=board_url)
    with store.transaction():
        for n in range(1, 121):
            store.create(f"job {n}", blocked_by=[str(n - 1)] if n % 6 != 1 else [], metadata={"estimate": n % 4 + 1})
    claimers = run_claimers("work", [board_url] * 4, tmp_path)
    done = [task_id for claimer in claimers for task_id in claimer.heard("completed")]
    assert sorted(done, key=int) == [str(n) for n in range(1, 121)]
    assert_one_holder_at_a_time(board_url)
    with connect(board_url, autocommit=True) as conn:
        assert conn.execute("select count(*) from board.tasks where status <> 'completed' or ready").fetchone()[0] == 0
