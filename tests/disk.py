"""Looking at a board's files directly, to check what the code under test left on disk."""

from __future__ import annotations

import json
from pathlib import Path


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (relative path -> bytes)."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def task_file(workspace: Path, task_id: str) -> dict:
    return json.loads((workspace / ".tasks" / f"task_{task_id}.json").read_text())


def history(workspace: Path) -> list[dict]:
    path = workspace / ".tasks" / "history.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
