"""The throwaway server itself: both ways in, the settings the other tests rely on, restarts."""

from __future__ import annotations

import os

import pytest

from tests.pg_cluster import PgCluster, _alive

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'board[postgres]'")


def test_socket_and_tcp_reach_the_same_database(pg_cluster: PgCluster, pg_url: str) -> None:
    name = psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]
    with psycopg.connect(pg_cluster.socket_url(name)) as conn:
        # A Unix socket has no server address; TCP does.
        assert conn.execute("select inet_server_addr()").fetchone() == (None,)
        conn.execute("create table t (x int)")
        conn.execute("insert into t values (42)")
    with psycopg.connect(pg_cluster.tcp_url(name)) as conn:
        assert str(conn.execute("select inet_server_addr()").fetchone()[0]) == "127.0.0.1"
        assert conn.execute("select x from t").fetchall() == [(42,)]


def test_each_test_gets_an_empty_database_of_its_own(pg_cluster: PgCluster, pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("select current_database()").fetchone()[0].startswith("test_")
        tables = conn.execute("select count(*) from pg_tables where schemaname not in ('pg_catalog', 'information_schema')").fetchone()
        assert tables == (0,)


def test_the_settings_benchmarks_and_durability_need(pg_cluster: PgCluster) -> None:
    with psycopg.connect(pg_cluster.socket_url()) as conn:
        settings = dict(conn.execute(
            "select name, setting from pg_settings where name in ('fsync', 'synchronous_commit', 'max_connections', 'listen_addresses', 'unix_socket_directories')"
        ).fetchall())
    assert settings["fsync"] == "on"
    assert settings["synchronous_commit"] == "on"
    assert int(settings["max_connections"]) >= 150
    assert settings["listen_addresses"] == "127.0.0.1"
    assert settings["unix_socket_directories"] == str(pg_cluster.base)


def test_the_server_never_runs_as_root(pg_cluster: PgCluster) -> None:
    pid = pg_cluster.pid
    assert pid is not None and _alive(pid)
    owner = os.stat(f"/proc/{pid}").st_uid
    assert owner != 0
    if os.geteuid() != 0:
        assert owner == os.geteuid()


def test_a_restart_keeps_committed_data_and_cuts_sessions(pg_cluster: PgCluster, pg_url: str) -> None:
    before = pg_cluster.pid
    with psycopg.connect(pg_url) as conn:
        conn.execute("create table kept (x text)")
        conn.execute("insert into kept values ('survives')")
        conn.commit()
        pg_cluster.restart()
        with pytest.raises(psycopg.OperationalError):
            conn.execute("select 1")
    assert pg_cluster.pid != before
    assert not _alive(before)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("select x from kept").fetchall() == [("survives",)]


def test_stop_ends_the_server_and_start_brings_it_back(pg_cluster: PgCluster, pg_url: str) -> None:
    pid = pg_cluster.pid
    pg_cluster.stop()
    try:
        assert not _alive(pid)
        assert not pg_cluster.is_running()
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(pg_url, connect_timeout=5)
    finally:
        pg_cluster.start()
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("select 1").fetchone() == (1,)


def test_a_cluster_of_its_own_is_removed_by_close(pg_cluster: PgCluster) -> None:
    # A second server beside the session's, as a benchmark would start one.
    with PgCluster.running(pg_cluster.bindir) as cluster:
        pid, base = cluster.pid, cluster.base
        with psycopg.connect(cluster.tcp_url()) as conn:
            assert conn.execute("select 1").fetchone() == (1,)
    assert not _alive(pid)
    assert not base.exists()
