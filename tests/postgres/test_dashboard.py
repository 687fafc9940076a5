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
