"""Claims on a PostgreSQL board: the rules a claim keeps (the order, readiness, the held-task
limit, lease tokens, the row and history line a write makes), and many OS processes claiming at
once, some of them killed with SIGKILL at random moments or inside a claim, over the Unix socket
and over TCP together."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from board.active_work import read_active
from board.errors import BoardError, StaleLease
from board.status import Status
from board.store import Store
from board.store.files import FileStore
from board.store.postgres.connect import connect
from board.store.postgres.migrations import TASK_CHANNEL, migrate
from board.store.postgres.store import PostgresStore
from tests.coordinator.helpers import started
from tests.core.test_store import FakeClock
from tests.pg_cluster import PgCluster

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'board[postgres]'")

REPO = Path(__file__).resolve().parents[2]
#: Generous: CI is a loaded 2-core machine.
TIMEOUT = 120.0


@pytest.fixture
def board_url(pg_url: str) -> str:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    return pg_url


def open_board(url: str, workspace: Path, **kwargs) -> PostgresStore:  # noqa: ANN003
    return PostgresStore.open(workspace, url=url, **kwargs)


def rows(url: str, query: str, args: tuple = ()) -> list[tuple]:
    with connect(url, autocommit=True) as conn:
        return conn.execute(query, args).fetchall()


def wait_until(condition: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    """Poll ``condition`` until it holds; fail saying ``what`` was awaited."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


class Claimer:
    """One ``tests.postgres.claimer`` process and what it has said so far."""

    def __init__(self, mode: str, url: str, workspace: Path, agent: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.agent = agent
        self.process = started(subprocess.Popen(
            [sys.executable, "-m", "tests.postgres.claimer", mode, url, str(workspace), agent],
            cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        ))
        self.said: list[dict] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.said.append(json.loads(line))

    def heard(self, key: str) -> list:
        return [line[key] for line in list(self.said) if key in line]

    def wait_for(self, key: str, count: int = 1) -> None:
        def enough() -> bool:
            if len(self.heard(key)) >= count:
                return True
            assert self.process.poll() is None or self._reader.is_alive(), (
                f"{self.agent} exited ({self.process.returncode}) before saying {key!r}: {self.stderr()}"
            )
            return False

        wait_until(enough, f"{self.agent} to say {key!r} {count} times")

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=TIMEOUT)
        self._reader.join(timeout=TIMEOUT)

    def finish(self) -> None:
        """Wait until it has exited by itself, having said everything."""
        assert self.process.wait(timeout=TIMEOUT) == 0, f"{self.agent} failed: {self.stderr()}"
        self._reader.join(timeout=TIMEOUT)

    def stderr(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return ""
        return self.process.stderr.read()


def start_claimers(mode: str, urls: list[str], workspace: Path) -> list[Claimer]:
    """Claimers (one per URL), each connected and waiting, then all released together."""
    claimers = [Claimer(mode, url, workspace, f"agent{n}") for n, url in enumerate(urls)]
    for claimer in claimers:
        claimer.wait_for("backend")
    for claimer in claimers:
        claimer.go()
    return claimers


def kill_all(claimers: list[Claimer]) -> None:
    for claimer in claimers:
        claimer.kill()


def run_claimers(mode: str, urls: list[str], workspace: Path) -> list[Claimer]:
    """``start_claimers``, each run until it finds nothing more; every one is ended however it goes."""
    claimers = start_claimers(mode, urls, workspace)
    try:
        for claimer in claimers:
            claimer.finish()
    finally:
        kill_all(claimers)
    return claimers


def make_tasks(store: Store, count: int, *, seed: int = 1, chains: int = 0) -> None:
    """``count`` tasks of mixed priorities, in one transaction; every ``chains``-th task waits on the one before."""
    rng = random.Random(seed)
    with store.transaction():
        for n in range(1, count + 1):
            blocked_by = [str(n - 1)] if chains and n % chains and n > 1 else []
            store.create(f"job {n}", priority=rng.choice(["critical", "high", "medium", "medium", "low"]), blocked_by=blocked_by)


def claim_lines(url: str) -> list[tuple[int, str, str, str, int]]:
    """(seq, task, op, actor, version) of every history line, in order."""
    return [
        (seq, task_id, record["op"], record["actor"], record["version"])
        for seq, task_id, record in rows(url, "select seq, task_id, record from board.history order by seq")
    ]


def assert_one_holder_at_a_time(url: str) -> None:
    """Along each task's history: a claim only while nobody holds it, and only its holder (or a
    reclaim) ends the hold, each write the next version."""
    holder: dict[str, str | None] = {}
    version: dict[str, int] = {}
    for _, task_id, op, actor, at in claim_lines(url):
        if op == "refused":
            continue  # a late write refused for its stale token: on record, nothing written
        if task_id in version:
            assert at == version[task_id] + 1, f"#{task_id}: version {at} after {version[task_id]} ({op} by {actor})"
        version[task_id] = at
        if op == "claim":
            assert holder.get(task_id) is None, f"#{task_id} claimed by {actor} while {holder[task_id]} held it"
            holder[task_id] = actor
        elif op == "status:completed":
            assert holder.get(task_id) == actor, f"#{task_id} completed by {actor}, held by {holder.get(task_id)}"
            holder[task_id] = None
        elif op == "reclaim":
            holder[task_id] = None


# -- the rules --------------------------------------------------------------------------------


def scripted_claims(store: Store) -> list[str]:
    """Claims until nothing is ready, completing every third claimed task (freeing what waits on it)."""
    order = []
    while (task := store.claim("ann", max_held=None)) is not None:
        order.append(task.id)
        if len(order) % 3 == 0 or task.blocks:
            store.set_status(task.id, Status.COMPLETED, token=task.lease.token)
    return order


def build_ranked_board(store: Store) -> str:
    """Priorities, chains of several lengths (remaining path), estimates, a parent with sub-tasks,
    and a task Claude Code keeps to itself (its id is returned)."""
    make_tasks(store, 30, seed=5, chains=4)
    store.create("estimated long", priority="medium", metadata={"estimate": 50})
    parent = store.create("parent", priority="critical")
    store.create("child a", priority="low", parent=parent.id)
    store.create("child b", priority="low", parent=parent.id)
    return store.create("hidden", metadata={"_internal": True}).id


def test_claims_come_in_the_same_order_as_on_files(board_url: str, tmp_path: Path) -> None:
    files = FileStore.open(tmp_path / "files", create=True)
    database = open_board(board_url, tmp_path / "db")
    hidden = build_ranked_board(files)
    assert build_ranked_board(database) == hidden
    expected = scripted_claims(files)
    assert len(expected) >= 30 and hidden not in expected
    assert scripted_claims(database) == expected


def test_a_claim_writes_the_row_and_history_line_any_other_write_of_the_claim_would(board_url: str, pg_cluster: PgCluster, tmp_path: Path) -> None:
    other = f"{unquote(urlsplit(board_url).path.lstrip('/'))}_same"
    other_url = pg_cluster.create_database(other)
    try:
        with connect(other_url, autocommit=True) as conn:
            migrate(conn)
        stores = [open_board(url, tmp_path / name, clock=FakeClock(), actor="tester") for url, name in ((board_url, "a"), (other_url, "b"))]
        for store in stores:
            store.create("first", priority="high", metadata={"estimate": 3})
            store.create("second", blocked_by=["1"])
        claimed = stores[0].claim("ann", lease_seconds=90)
        assigned = stores[1].claim_task("1", "ann", lease_seconds=90)  # through the rules' own write
        assert claimed == assigned
        assert claimed.lease.token == claimed.version == 3
        row = "select doc, status, owner, priority, version, lease_owner, lease_token, lease_expires_at, updated_at from board.tasks where id = '1'"
        assert rows(board_url, row) == rows(other_url, row)
        last = "select task_id, version, at, record from board.history order by seq desc limit 1"
        assert rows(board_url, last) == rows(other_url, last)
        assert rows(board_url, last)[0][3]["op"] == "claim"
        for store in stores:
            store.close()
    finally:
        pg_cluster.drop_database(other)


def test_the_held_limit_says_what_the_agent_holds(board_url: str, tmp_path: Path) -> None:
    store = open_board(board_url, tmp_path)
    make_tasks(store, 3)
    held = open_board(board_url, tmp_path).claim("ann")  # by another process, as far as this store knows
    with pytest.raises(BoardError, match=f"^agent ann already holds #{held.id}; finish or release it first$"):
        store.claim("ann")
    assert store.claim("ann", max_held=2) is not None
    assert store.claim("bob").owner == "bob"


def test_two_claims_by_one_agent_at_once_never_both_pass_the_limit(board_url: str, tmp_path: Path) -> None:
    first, second = open_board(board_url, tmp_path), open_board(board_url, tmp_path)
    make_tasks(first, 40)
    for _ in range(10):
        start = threading.Barrier(2)
        outcomes: list = []

        def claim(store: PostgresStore) -> None:
            start.wait(timeout=TIMEOUT)
            try:
                outcomes.append(store.claim("ann"))
            except BoardError as error:
                outcomes.append(error)

        threads = [threading.Thread(target=claim, args=(store,)) for store in (first, second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=TIMEOUT)
        [task] = [o for o in outcomes if not isinstance(o, BoardError)]
        [refused] = [o for o in outcomes if isinstance(o, BoardError)]
        assert "already holds" in str(refused)
        first.set_status(task.id, Status.COMPLETED, token=task.lease.token, actor="ann")
    assert sum(1 for line in claim_lines(board_url) if line[2] == "claim") == 10
    assert_one_holder_at_a_time(board_url)


def test_a_claim_tells_listeners_once_it_has_committed(board_url: str, tmp_path: Path) -> None:
    store = open_board(board_url, tmp_path)
    make_tasks(store, 3)
    with connect(board_url, autocommit=True) as listener:
        listener.execute(f"listen {TASK_CHANNEL}")
        task = store.claim("ann")
        store.update("3" if task.id != "3" else "2", description="a write after the claim")
        got = [n.payload for n in listener.notifies(timeout=30, stop_after=2)]
    # Once: from the claim after its commit, not also from the trigger inside its transaction.
    assert got == [task.id, "3" if task.id != "3" else "2"]


def test_a_claim_inside_a_transaction_is_part_of_it(board_url: str, tmp_path: Path) -> None:
    store = open_board(board_url, tmp_path)
    make_tasks(store, 3)
    with pytest.raises(RuntimeError), store.transaction():
        assert store.claim("ann") is not None
        raise RuntimeError("changed my mind")
    assert rows(board_url, "select count(*) from board.tasks where status = 'in_progress'") == [(0,)]
    with store.transaction():
        claimed = store.claim("ann")
    assert rows(board_url, "select owner, lease_token from board.tasks where id = %s", (claimed.id,)) == [("ann", claimed.lease.token)]


def test_claim_statements_dropped_from_the_session_are_prepared_again(board_url: str, tmp_path: Path) -> None:
    store = open_board(board_url, tmp_path)
    make_tasks(store, 3)
    # Documents the rules did not write (an import's): claimed through the rules' statements.
    store.conn.execute("update board.tasks set normal = false")
    assert store.claim("ann", max_held=None) is not None
    store.conn.execute("deallocate board_claim_pick")
    assert store.claim("ann", max_held=None) is not None
    assert store.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


# -- processes, and SIGKILL -------------------------------------------------------------------


def test_a_claimer_killed_inside_its_claim_leaves_the_task_claimable(board_url: str, tmp_path: Path) -> None:
    store = open_board(board_url, tmp_path)
    store.create("first", priority="high")
    store.create("second", priority="low")
    [hanging] = start_claimers("hang", [board_url], tmp_path)
    try:
        hanging.wait_for("picked")
        assert hanging.heard("picked") == ["1"]
        backend = hanging.heard("backend")[0]
        # #1 is picked and locked, nothing written: another claimer passes it by while the lock holds.
        assert store.claim("bob", max_held=None).id == "2"
        hanging.kill()
        wait_until(lambda: not rows(board_url, "select 1 from pg_stat_activity where pid = %s", (backend,)), "the dead claimer's session to end")
        claimed = store.claim("bob", max_held=None)
    finally:
        hanging.kill()
    assert claimed is not None and claimed.id == "1" and claimed.lease.token == 2
    assert [(task, op, actor) for _, task, op, actor, _ in claim_lines(board_url)] == [
        ("1", "create", "board"), ("2", "create", "board"), ("2", "claim", "bob"), ("1", "claim", "bob")
    ]


def test_claimers_killed_at_random_moments_lose_nothing_and_never_share_a_task(board_url: str, tmp_path: Path) -> None:
    clock = FakeClock()
    clock.now = datetime.now(UTC)
    store = open_board(board_url, tmp_path, clock=clock)
    count = 240
    make_tasks(store, count, seed=2, chains=6)
    rng = random.Random(11)
    claimers = start_claimers("work", [board_url] * 6, tmp_path)
    victims = rng.sample(claimers, 3)
    try:
        for victim in victims:
            victim.wait_for("claimed", rng.randint(1, 8))
            time.sleep(rng.uniform(0, 0.03))  # a random moment: in a claim, a completion, or between
            victim.kill()
        for claimer in claimers:
            if claimer not in victims:
                claimer.finish()
    finally:
        kill_all(claimers)

    assert_one_holder_at_a_time(board_url)
    board = {task_id: (status, owner, token) for task_id, status, owner, token in rows(board_url, "select id, status, owner, lease_token from board.tasks")}
    for claimer in claimers:
        for task_id, token in zip(claimer.heard("claimed"), claimer.heard("token")):
            status, owner, held_token = board[task_id]
            assert owner == claimer.agent, f"#{task_id} was given to {claimer.agent} but {owner} has it"
            if task_id in claimer.heard("completed"):
                assert status == "completed"
            else:  # killed before it said so, or before it completed the task
                assert claimer in victims and (status == "completed" or (status, held_token) == ("in_progress", token))
    # Whatever is left in progress is held by a dead claimer; the rest is completed or pending.
    stranded = {task_id for task_id, (status, _, _) in board.items() if status == "in_progress"}
    assert {board[task_id][1] for task_id in stranded} <= {victim.agent for victim in victims}
    assert {status for status, _, _ in board.values()} <= {"completed", "in_progress", "pending"}

    # Once the dead claimers' leases run out, their tasks come back and every task gets done once more.
    clock.advance(3600)
    assert {task.id for task in store.reclaim_expired()} == stranded
    for task_id in stranded:
        with pytest.raises(StaleLease):
            store.renew_lease(task_id, board[task_id][2])
    [last] = start_claimers("work", [board_url], tmp_path)
    try:
        last.finish()
    finally:
        last.kill()
    assert rows(board_url, "select status, count(*) from board.tasks group by status") == [("completed", count)]
    assert_one_holder_at_a_time(board_url)
    claims = Counter(task_id for _, task_id, op, _, _ in claim_lines(board_url) if op == "claim")
    reclaims = Counter(task_id for _, task_id, op, _, _ in claim_lines(board_url) if op == "reclaim")
    assert all(claims[task_id] == 1 + reclaims[task_id] for task_id in board)


def test_clients_over_tcp_and_over_the_socket_claim_one_board_together_without_duplicates(
    board_url: str, pg_cluster: PgCluster, tmp_path: Path
) -> None:
    (tmp_path / ".tasks").mkdir()  # one workspace's files, whichever URL names the database
    store = open_board(board_url, tmp_path)
    count = 300
    make_tasks(store, count, seed=3)
    tcp_url = pg_cluster.tcp_url(unquote(urlsplit(board_url).path.lstrip("/")))
    claimers = run_claimers("claim", [tcp_url, board_url] * 3, tmp_path)
    given = [(task_id, claimer.agent, token) for claimer in claimers for task_id, token in zip(claimer.heard("claimed"), claimer.heard("token"))]
    assert sorted(task_id for task_id, _, _ in given) == sorted(str(n) for n in range(1, count + 1))
    assert all(claimer.heard("claimed") for claimer in claimers[:2]), "a TCP or a socket client claimed nothing: the race did not happen"
    held = {task_id: (owner, token) for task_id, owner, token in rows(board_url, "select id, owner, lease_token from board.tasks")}
    assert all(held[task_id] == (agent, token) for task_id, agent, token in given)
    assert Counter(task_id for _, task_id, op, _, _ in claim_lines(board_url) if op == "claim") == Counter(list(held))
    # The six share one workspace, as agents on one machine do: what 'board hook' reads there
    # names every claim (each claimer adds its own entry as the others add theirs).
    assert read_active(store.state_dir) == {task_id: {"owner": agent, "files": []} for task_id, agent, _ in given}
