"""Boards for the dashboard tests, written through the real store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
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
    store.set_status(first.id, "in_progress", owner="tester", actor="tester")
    (workspace / ".tasks" / "task_90.json").write_text('{"id": "90", "subject": "half wri')
    (workspace / ".tasks" / "task_91.json").write_text(json.dumps({"id": "91", "subject": "", "status": "nonsense"}))
    return workspace


#: Alerts a coordinator might have written for the sample board, first seen at fixed moments.
SAMPLE_ALERTS = [
    {
        "key": "conflict.files:7,8", "kind": "conflict.files", "severity": "warning", "tasks": ["7", "8"],
        "agents": ["alice", "carol"], "files": ["src/app/models.py"],
        "message": "#7 (alice) and #8 (carol) both work on src/app/models.py",
        "action": "agree who edits src/app/models.py: reserve it (board reserve ID PATH) or make one task wait for the other",
        "since": "2026-11-20T23:34:20Z",
    },
    {
        "key": "drift.upstream:origin/main:held", "kind": "drift.upstream", "severity": "error", "tasks": ["7"],
        "agents": ["alice"], "files": ["src/app/db.py"],
        "message": "2 commits behind origin/main, which changed src/app/db.py, held by #7 (alice)",
        "action": "pause #7 and rebase onto origin/main (git pull --rebase), then resolve src/app/db.py",
        "since": "2026-11-20T23:25:00Z",
    },
    {
        "key": "lease.expired:12", "kind": "lease.expired", "severity": "warning", "tasks": ["12"],
        "agents": ["erin"], "files": [],
        "message": "#12 was taken back at 23:20:05: lease of erin expired",
        "action": "check on erin (crashed or hung?); #12 is pending again and will be reassigned",
        "since": "2026-11-20T23:20:05Z",
    },
    {
        "key": "human.waiting:20", "kind": "human.waiting", "severity": "info", "tasks": ["20"],
        "agents": [], "files": [],
        "message": "#20 is waiting for you: Health and readiness endpoints",
        "action": "answer #20, then resume it (board task update 20 --status in_progress)",
        "since": "2026-11-20T23:36:50Z",
    },
]


def write_alerts_file(workspace: Path, alerts: list[dict[str, object]]) -> None:
    """``alerts.json`` as the coordinator writes it (atomically: never seen half-written)."""
    path = workspace / ".tasks" / "alerts.json"
    temporary = path.with_name(".alerts.json.tmp")
    temporary.write_text(json.dumps({"alerts": alerts}, indent=2))
    temporary.replace(path)


@contextmanager
def coordinator_lock_held(workspace: Path) -> Iterator[None]:
    """Hold the coordinator's lock as a running coordinator does, so ``alerts.json`` counts as current."""
    from board.coordinator.daemon import CoordinatorLock

    lock = CoordinatorLock(workspace / ".tasks")
    assert lock.acquire()
    try:
        yield
    finally:
        lock.release()


def team_board(claude_home: Path) -> Path:
    """A Claude Code team at work on its own task list (``tasks/crew``): the lead planned it,
    ana writes the tokenizer, ben went idle with the parser still in progress under his name and
    an unread message from the lead. Returns the task list's folder."""
    from tests.teams import inbox_message, member, write_inbox, write_team

    task_list = claude_home / "tasks" / "crew"
    task_list.mkdir(parents=True)
    (task_list / ".lock").touch()
    moments = iter(datetime(2026, 11, 20, 23, 0, tzinfo=UTC) + timedelta(seconds=20 * n) for n in range(1000))
    store = Store.open(task_list, actor="team-lead", clock=lambda: next(moments))
    plan = store.create("Plan the parser work", active_form="Planning")
    tokenizer = store.create("Write the tokenizer", blocked_by=[plan.id], active_form="Writing the tokenizer")
    parser = store.create("Write the parser", blocked_by=[plan.id], active_form="Writing the parser")
    store.create("Test the parser", blocked_by=[tokenizer.id, parser.id])
    store.set_status(plan.id, "in_progress", owner="team-lead", actor="team-lead")
    store.set_status(plan.id, "completed", actor="team-lead")
    store.set_status(tokenizer.id, "in_progress", owner="ana", actor="ana")
    store.set_status(parser.id, "in_progress", owner="ben", actor="ben")
    for tool in ("Read", "Grep", "Edit", "Edit", "Bash", "Edit", "Bash"):
        store.record_toolcall(tokenizer.id, tool, agent="ana")
    for tool in ("Read", "Edit", "Bash"):
        store.record_toolcall(parser.id, tool, agent="ben", ok=tool != "Bash")
    team = write_team(claude_home, "crew", [
        member("team-lead", "crew", agent_type="team-lead", model="claude-opus-4-6"),
        member("ana", "crew"),
        member("ben", "crew", model="claude-haiku-4-5", isActive=False),
    ])
    idle = json.dumps({"type": "idle_notification", "from": "ben", "timestamp": "2026-11-20T23:20:00.000Z", "idleReason": "available"})
    write_inbox(team, "team-lead", [inbox_message("ben", idle, "2026-11-20T23:20:00.000Z", read=True)])
    write_inbox(team, "ben", [
        inbox_message("team-lead", "Start on #3 once the plan is done.", "2026-11-20T23:03:00.000Z", read=True, summary="start on #3"),
        inbox_message("team-lead", "How far is the parser? The tests in #4 wait on it.", "2026-11-20T23:30:00.000Z", summary="how far is the parser?"),
    ])
    return task_list
