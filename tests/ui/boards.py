"""Boards for the dashboard tests, written through the real store."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from board.store import Store

MARKUP_SUBJECT = "[bold red]x[/] and [link=https://example.com]click[/link] $primary"
WIDE_SUBJECT = "修复登录 🚀 emoji ✅ 状态 — wide characters"
LONG_SUBJECT = "A very long subject " + "that keeps going " * 10 + "until the end"


def hostile_board(workspace: Path) -> Path:
    """Markup, wide characters, a 200-character subject, a half-written file and a bad alerts file."""
    moments = iter(datetime(2026, 11, 20, 20, 0, tzinfo=UTC) + timedelta(minutes=n) for n in range(1000))
    store = Store.open(workspace, create=True, actor="tester", clock=lambda: next(moments))
    first = store.create(MARKUP_SUBJECT, description="**bold** and [red]not markup[/red]", priority="critical")
    second = store.create(WIDE_SUBJECT, blocked_by=[first.id], priority="high")
    store.create(LONG_SUBJECT[:200], blocked_by=[second.id])
    store.set_status(first.id, "in_progress", actor="tester")
    (workspace / ".tasks" / "task_90.json").write_text('{"id": "90", "subject": "half wri')
    (workspace / ".tasks" / "task_91.json").write_text(json.dumps({"id": "91", "subject": "", "status": "nonsense"}))
    return workspace
