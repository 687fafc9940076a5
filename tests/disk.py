"""Looking at what a board stored, directly, to check what the code under test left behind:
its files, or (when ``BOARD_DB`` names a database) its rows."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (relative path -> bytes); with a database board, every
    task row and history row as well, so "nothing changed" covers what the database holds."""
    files = {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}
    if os.environ.get("BOARD_DB"):
        for table, key in (("tasks", "id"), ("history", "seq"), ("archive", "id"), ("tool_calls", "seq")):
            for row_key, row in _rows(f"select {key}, to_jsonb(t) from board.{table} t order by {key}"):
                files[f"db:{table}/{row_key}"] = json.dumps(row, sort_keys=True).encode()
    return files


def task_file(workspace: Path, task_id: str) -> dict:
    """The task's stored document."""
    if os.environ.get("BOARD_DB"):
        rows = _rows("select doc from board.tasks where id = %s", (task_id,))
        if not rows:
            raise FileNotFoundError(f"no row for task {task_id}")
        return rows[0][0]
    return json.loads((workspace / ".tasks" / f"task_{task_id}.json").read_text())


def history(workspace: Path) -> list[dict]:
    if os.environ.get("BOARD_DB"):
        return [record for (record,) in _rows("select record from board.history order by seq")]
    path = workspace / ".tasks" / "history.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _rows(query: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(os.environ["BOARD_DB"]) as conn:
        return conn.execute(query, args).fetchall()


def on_board(workspace: Path, task_id: str) -> bool:
    """Whether the task is stored on the board (its file, or its row)."""
    if os.environ.get("BOARD_DB"):
        return bool(_rows("select 1 from board.tasks where id = %s", (task_id,)))
    return (workspace / ".tasks" / f"task_{task_id}.json").exists()


def archived(workspace: Path, task_id: str) -> bool:
    """Whether the task is in the archive of deleted tasks."""
    if os.environ.get("BOARD_DB"):
        return bool(_rows("select 1 from board.archive where id = %s", (task_id,)))
    return (workspace / ".tasks" / "archive" / f"task_{task_id}.json").exists()


def write_task_document(workspace: Path, task_id: str, doc: dict) -> None:
    """Rewrite a task's stored document as an outside writer would: an editor saving the
    file, or a script updating the row by hand (the columns kept in step with the document)."""
    if not os.environ.get("BOARD_DB"):
        (workspace / ".tasks" / f"task_{task_id}.json").write_text(json.dumps(doc))
        return
    import psycopg

    lease = doc.get("lease") or {}
    rank = {"critical": 0, "high": 1, "medium": 2, "low": 3}[doc.get("priority", "medium")]
    with psycopg.connect(os.environ["BOARD_DB"]) as conn:
        conn.execute(
            "update board.tasks set doc = %s, status = %s, owner = %s, priority = %s, version = %s, lease_owner = %s, lease_token = %s "
            "where id = %s",
            (json.dumps(doc), doc.get("status"), doc.get("owner", ""), rank, doc.get("version", 0), lease.get("owner"), lease.get("token"), task_id),
        )
