"""The dashboard on a board in PostgreSQL: live through the server's notifications, keys written
through the same rules, and "reconnecting" while the server restarts, back by itself after."""

from __future__ import annotations

from pathlib import Path

import pytest

from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate
from board.ui.lanes import Lane
from tests.pg_cluster import PgCluster
from tests.ui.conftest import make_app, settled, wait_for

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def database_board(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    monkeypatch.setenv("BOARD_DB", pg_url)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    store = Store.open(tmp_path)
    store.create("schema")
    store.create("store", blocked_by=["1"])
    return store


async def test_the_dashboard_follows_a_database_board_and_writes_through_it(database_board: Store, tmp_path: Path) -> None:
    app = make_app(tmp_path, watch=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        assert app.lanes.lane_index("1")[0] == Lane.READY and app.lanes.lane_index("2")[0] == Lane.WAITING_DEPS
        # Another process (another machine, as far as the server knows) writes: it shows.
        database_board.create("written elsewhere")
        await wait_for(pilot, lambda: "3" in app.graph.tasks, timeout=30, message="the new task on screen")
        database_board.record_toolcall("3", "Edit", agent="ann")
        await wait_for(pilot, lambda: app.graph.tasks["3"].tool_calls.total == 1, timeout=30, message="the tool call on screen")
        # A key writes through the store's rules, and every reader sees it.
        app.select("1")
        await pilot.press("s")
        await wait_for(pilot, lambda: app.lanes.lane_index("1")[0] == Lane.IN_PROGRESS, timeout=30, message="the start on screen")
        database_board.sync()
        assert database_board.get("1").status == "in_progress"


async def test_the_dashboard_says_reconnecting_and_comes_back_by_itself(database_board: Store, tmp_path: Path, pg_cluster: PgCluster) -> None:
    app = make_app(tmp_path, watch=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        pg_cluster.stop()
        try:
            await wait_for(pilot, lambda: app._connection_problem is not None, timeout=30, message="the header to say the database is gone")
            assert app.header_bar._hint.startswith("reconnecting… lost the connection to the board's database")
            assert "schema" in {t.subject for t in app.graph.tasks.values()}  # the board stays on screen
            # The alerts and agents panels look too while the server is gone, and keep what they show.
            app.alerts_follower.wake()
            await wait_for(pilot, lambda: app.alerts_follower.unavailable is not None, timeout=30, message="the alerts follower to meet the outage")
            assert "cannot connect to PostgreSQL" in app.alerts_follower.unavailable or "lost the connection" in app.alerts_follower.unavailable
            app._post_agents()
            assert app.is_running
        finally:
            pg_cluster.start()
        await wait_for(pilot, lambda: app._connection_problem is None, timeout=60, message="the dashboard to reconnect")
        writer = Store.open(tmp_path)
        writer.create("after the restart")
        await wait_for(pilot, lambda: any(t.subject == "after the restart" for t in app.graph.tasks.values()), timeout=30, message="a write after the restart on screen")
        app.alerts_follower.wake()
        await wait_for(pilot, lambda: app.alerts_follower.unavailable is None, timeout=30, message="the alerts follower to reach the server again")
        assert app.is_running
        writer.close()
        # The board read again after the reconnect is held once: what is shown is the reader's copy.
        with app.store_lock:
            assert all(task is app.store.graph.tasks[task.id] for task in app.graph)


WRITER = r"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from board.store import Store
store = Store.open(Path(sys.argv[1]))
# A completion that unblocks its dependents, a new task waiting on it, a change of order in a lane.
store.set_status(sys.argv[3], "completed", force=True)
store.create("written by another process", blocked_by=[sys.argv[4]])
store.update(sys.argv[5], priority="critical")
store.close()
"""


def _lanes_of_a_fresh_read(workspace: Path) -> tuple[dict[Lane, list[str]], dict[str, int]]:
    """Every lane and count as a store that read the whole board anew arranges them."""
    from board.ui.lanes import Lanes

    store = Store.open(workspace)
    try:
        lanes = Lanes()
        lanes.rebuild(store.graph)
        return {lane: list(ids) for lane, ids in lanes.ids.items()}, dict(+lanes.counts)
    finally:
        store.close()


async def test_a_board_of_many_pages_shows_exact_lanes_and_follows_another_process(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    import board.ui.app
    from tests.bench.pg_board import fill_database

    # Several pages after the first chunk, so the lanes are built from a read in pieces.
    monkeypatch.setattr(board.ui.app, "FIRST_CHUNK", 50)
    monkeypatch.setattr(board.ui.app, "LOAD_CHUNK", 120)
    fill_database(pg_url, 700)
    monkeypatch.setenv("BOARD_DB", pg_url)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    expected_lanes, expected_counts = _lanes_of_a_fresh_read(tmp_path)
    app = make_app(tmp_path, watch=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot, timeout=60)
        assert len(app.graph) == 700
        assert dict(+app.lanes.counts) == expected_counts
        assert {lane: list(ids) for lane, ids in app.lanes.ids.items()} == expected_lanes

        graph = app.graph
        finishing = next(t.id for t in graph if t.status == "in_progress" and any(graph.tasks[d].status == "pending" for d in graph.dependents(t.id)))
        pending = next(t.id for t in graph if t.status == "pending")
        reordered = next(t.id for t in graph if t.status == "pending" and t.priority != "critical" and t.id != pending)
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(Path(__file__).resolve().parents[2]), finishing, pending, reordered])
        try:
            await wait_for(pilot, lambda: writer.poll() is not None, timeout=60, message="the other process to write")
            assert writer.returncode == 0
        finally:
            if writer.poll() is None:
                writer.kill()
                writer.wait()
        expected_lanes, expected_counts = _lanes_of_a_fresh_read(tmp_path)
        assert len(expected_lanes[Lane.WAITING_DEPS]) + len(expected_lanes[Lane.READY]) > 0

        def shows_the_board_as_written() -> bool:
            return dict(+app.lanes.counts) == expected_counts and {lane: list(ids) for lane, ids in app.lanes.ids.items()} == expected_lanes

        await wait_for(pilot, shows_the_board_as_written, timeout=30, message="the lanes as the other process left them")
        assert app.graph.tasks[finishing].status == "completed" and len(app.graph) == 701
        # The cards drawn are those tasks': the top of the Ready lane shows its first task.
        first_ready = app.lanes.ids[Lane.READY][0]
        column = app.kanban.columns[Lane.READY]
        column.scroll_to_card(0)
        await pilot.pause()
        assert f"#{first_ready}" in column.render_line(0).text


def test_the_alerts_follower_waits_out_a_server_restart(database_board: Store, tmp_path: Path, pg_cluster: PgCluster) -> None:
    import threading
    import time

    from board.config import BoardSettings
    from board.model import utcnow
    from board.ui.board_alerts import AlertsFollower, StoreSnapshot

    class CountedBoard:
        """The store's alert board, counting the rounds that asked it (and how they ended)."""

        def __init__(self, board: object) -> None:
            self.board = board
            self.asked: list[str] = []

        def stamp(self) -> object:
            try:
                stamp = self.board.stamp()  # type: ignore[attr-defined]
            except Exception as error:
                self.asked.append(type(error).__name__)
                raise
            self.asked.append("answered")
            return stamp

        def __getattr__(self, name: str) -> object:
            return getattr(self.board, name)

    counted = CountedBoard(database_board.alert_board)
    shown: list[list] = []
    follower = AlertsFollower(counted, database_board.local_dir)  # type: ignore[arg-type]
    thread = threading.Thread(
        target=follower.run,
        args=(lambda: StoreSnapshot.of(database_board), lambda alerts, coordinator: shown.append(alerts)),
        kwargs={"now": utcnow, "settings": BoardSettings()},
    )
    thread.start()

    def until(condition, message: str) -> None:
        deadline = time.monotonic() + 60
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {message}")
            threading.Event().wait(0.01)

    try:
        follower.wake()
        until(lambda: shown, "the first alerts")
        pg_cluster.stop()
        try:
            asked = len(counted.asked)
            follower.wake()
            until(lambda: len(counted.asked) > asked, "a round while the server is down")
            assert counted.asked[-1] == "DatabaseUnavailable" and thread.is_alive()
        finally:
            pg_cluster.start()
        rounds = len(shown)
        database_board.set_status("1", "cancelled")  # #2 waits on it: an alert
        follower.wake()
        until(lambda: len(shown) > rounds, "the alerts after the restart")
        assert any(alert.kind == "graph.cancelled_blocker" for alert in shown[-1]) and thread.is_alive()
    finally:
        follower.stop()
        thread.join(timeout=30)
    assert not thread.is_alive()
