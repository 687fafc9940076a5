"""History on a PostgreSQL board under load: real processes claim tasks under leases that run
out while another reclaims them, over and over. Along each task's history every line follows
the one that made it possible, and no line is stamped before the one it follows."""

from __future__ import annotations

import json
from datetime import datetime
from itertools import pairwise
from pathlib import Path

import pytest

from board.store.files import FileStore
from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate
from tests.postgres.test_claims import Claimer, kill_all, make_tasks, open_board, rows, wait_until
from tests.postgres.test_transfer import board, ok

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'board[postgres]'")

TASKS = 6
CLAIMERS = 3
#: Reclaims to wait for: each is a chance for a claim waiting on the board lock to follow it.
RECLAIMS = 300
#: What a claim may follow, and a reclaim.
MADE_POSSIBLE_BY = {"claim": {"create", "reclaim"}, "reclaim": {"claim"}}


@pytest.fixture
def board_url(pg_url: str) -> str:
    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    return pg_url


def history_by_task(url: str) -> dict[str, list[tuple[int, datetime, dict]]]:
    """Each task's history lines, (seq, at, record), in the order the board numbered them."""
    lines: dict[str, list[tuple[int, datetime, dict]]] = {}
    for seq, task_id, at, record in rows(url, "select seq, task_id, at, record from board.history order by seq"):
        lines.setdefault(task_id, []).append((seq, at, record))
    return lines


def stamp(record: dict) -> datetime:
    return datetime.fromisoformat(record["ts"])


def test_each_tasks_history_follows_cause_and_time_while_processes_claim_and_reclaim(board_url: str, tmp_path: Path) -> None:
    make_tasks(open_board(board_url, tmp_path), TASKS)
    processes = [Claimer("churn", board_url, tmp_path, f"agent{n}") for n in range(CLAIMERS)]
    processes.append(Claimer("reclaim", board_url, tmp_path, "coordinator"))
    try:
        for process in processes:
            process.wait_for("backend")
        for process in processes:
            process.go()

        def reclaimed_enough() -> bool:
            for process in processes:
                assert process.process.poll() is None, f"{process.agent} exited ({process.process.returncode}): {process.stderr()}"
            with connect(board_url, autocommit=True) as conn:
                return conn.execute("select count(*) from board.history where record ->> 'op' = 'reclaim'").fetchone()[0] >= RECLAIMS

        wait_until(reclaimed_enough, f"{RECLAIMS} reclaims")
    finally:
        kill_all(processes)

    history = history_by_task(board_url)
    assert sorted(history) == [str(n) for n in range(1, TASKS + 1)]
    back_in_time = []
    for task_id, lines in history.items():
        ops = [record["op"] for _, _, record in lines]
        assert ops[0] == "create", f"#{task_id} begins with {ops[0]}"
        assert [record["version"] for _, _, record in lines] == list(range(1, len(lines) + 1)), f"#{task_id}: versions out of order"
        for (_, _, before), (_, _, after) in pairwise(lines):
            assert before["op"] in MADE_POSSIBLE_BY[after["op"]], f"#{task_id}: {after['op']} v{after['version']} after {before['op']} v{before['version']}"
        for _, at, record in lines:
            assert at == stamp(record), f"#{task_id} v{record['version']}: column at {at} is not its line's ts {record['ts']}"
        back_in_time += [
            f"#{task_id} v{after['version']} {after['op']} at {after['ts']}, {(stamp(before) - stamp(after)).total_seconds() * 1000:.1f} ms "
            f"before v{before['version']} {before['op']} at {before['ts']}"
            for (_, _, before), (_, _, after) in pairwise(lines)
            if stamp(after) < stamp(before)
        ]
    assert not back_in_time, f"{len(back_in_time)} history lines stamped before the line they follow, e.g. " + "; ".join(back_in_time[:3])


def test_an_import_keeps_history_as_the_files_have_it_and_later_lines_follow_its_times(board_url: str, tmp_path: Path) -> None:
    files = FileStore.open(tmp_path / "files", create=True)
    files.create("schema")
    files.update("1", description="the tables")
    files.close()
    # Lines from machines whose clocks ran far ahead, the second stamped before the first.
    log = tmp_path / "files" / ".tasks" / "history.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    lines[0]["ts"], lines[1]["ts"] = "2999-06-01T00:00:00Z", "2999-01-01T00:00:00Z"
    log.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    ok(board("--db", board_url, "import", str(tmp_path / "files")))
    assert [record for (record,) in rows(board_url, "select record from board.history order by seq")] == lines
    store = open_board(board_url, tmp_path / "db")
    store.update("1", description="the tables, indexed")
    assert [record["ts"] for record in store.history("1")] == ["2999-06-01T00:00:00Z", "2999-01-01T00:00:00Z", "2999-01-01T00:00:00Z"]
    assert rows(board_url, "select at from board.history order by seq desc limit 1")[0][0] == datetime.fromisoformat("2999-01-01T00:00:00Z")
