"""Rebuild ``sample_workspace/`` through the real store, with a fixed clock.

Run ``python tests/build_sample_workspace.py`` after changing the story below; the result is
committed, and ``tests/core/test_sample_workspace.py`` checks it still matches this script.
"""

from __future__ import annotations

import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from board.agent_record import AgentRecord
from board.agents import write_agent
from board.store import Store

START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


class StepClock:
    """Every reading is one minute after the last, so history reads like a working day."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


# id, subject, priority, blocked by, parent, files, description
TASKS: list[tuple[str, str, str, list[str], str | None, list[str], str]] = [
    ("1", "Write the project charter and API sketch", "high", [], None, ["docs/charter.md"], "Who the service is for, the resources it exposes, and what v1 leaves out."),
    ("2", "Set up the repository, CI and linting", "high", [], None, [".github/workflows/ci.yml", "pyproject.toml"], "CI runs lint, type checks and tests on every push."),
    ("3", "Design the database schema", "high", ["1"], None, ["docs/schema.md"], "Users, orders, products, and the audit table. **Postgres 16.**"),
    ("4", "Choose the web framework and project layout", "medium", ["1", "2"], None, ["src/app/__init__.py"], "Compare two frameworks on startup time and typing support; record the choice."),
    ("5", "Data layer: integration review", "high", ["6", "7", "8"], None, [], "Review the data layer as a whole once its parts are in."),
    ("6", "Write migrations for users, orders and products", "medium", ["3"], "5", ["migrations/0001_initial.sql"], ""),
    ("7", "Implement the repository layer", "high", ["3", "4"], "5", ["src/app/repository.py", "src/app/models.py"], "One repository per aggregate; no ORM sessions leak into handlers."),
    ("8", "Seed data and test fixtures", "low", ["6"], "5", ["tests/fixtures/seed.sql"], ""),
    ("9", "Auth: password hashing and the user model", "critical", ["3"], "10", ["src/app/auth/passwords.py"], "argon2id with parameters from the charter."),
    ("10", "Authentication: end-to-end review", "critical", ["9", "11", "12"], None, [], ""),
    ("11", "Auth: issue and refresh JWTs", "critical", ["9"], "10", ["src/app/auth/tokens.py"], "Short-lived access tokens, rotating refresh tokens."),
    ("12", "Auth: login and registration endpoints", "high", ["11", "14"], "10", ["src/app/api/auth.py"], ""),
    ("13", "API: write the OpenAPI specification", "high", ["4"], None, ["openapi.yaml"], ""),
    ("14", "API: request validation and the error format", "high", ["13"], None, ["src/app/api/errors.py"], "Problem+JSON (RFC 9457) for every error."),
    ("15", "API: users endpoints", "medium", ["7", "14"], None, ["src/app/api/users.py"], ""),
    ("16", "API: orders endpoints", "medium", ["7", "14"], None, ["src/app/api/orders.py"], ""),
    ("17", "API: products endpoints", "medium", ["13"], None, ["src/app/api/products.py"], "Pricing rules are still open with the product team."),
    ("18", "Rate-limiting middleware", "medium", ["13"], None, ["src/app/middleware/ratelimit.py"], "Token bucket per API key."),
    ("19", "Request logging and tracing", "low", ["4"], None, ["src/app/middleware/logging.py"], ""),
    ("20", "Health and readiness endpoints", "medium", ["4"], None, ["src/app/api/health.py"], ""),
    ("21", "Unit tests for the repository layer", "medium", ["7"], None, ["tests/test_repository.py"], ""),
    ("22", "Integration tests against Postgres", "high", ["15", "16"], None, ["tests/integration/"], ""),
    ("23", "Load-test the API", "medium", ["22", "18"], None, ["bench/locustfile.py"], ""),
    ("24", "Security review", "critical", ["10", "15"], None, [], "Threat model, dependency audit, auth flows."),
    ("25", "Write the API reference docs", "medium", ["15", "16", "17"], None, ["docs/api.md"], ""),
    ("26", "Write the operator guide", "low", ["2"], None, ["docs/operations.md"], "Configuration, backups, upgrades, on-call runbook."),
    ("27", "Dockerfile and compose setup", "high", ["4"], None, ["Dockerfile", "compose.yaml"], ""),
    ("28", "Staging deploy pipeline", "high", ["27"], None, [".github/workflows/deploy.yml"], ""),
    ("29", "Port the legacy CSV importer", "low", [], None, ["src/app/importer.py"], "Dropped: the last CSV customer moved to the API."),
    ("30", "Release v1.0", "critical", ["5", "10", "22", "23", "24", "25", "28"], None, [], "Tag, publish the image, announce."),
    ("31", "Changelog and release notes", "medium", ["25"], None, ["CHANGELOG.md"], ""),
    ("32", "Benchmark the JSON serializer", "low", [], None, ["bench/serializer.py"], "Compare the stdlib encoder with orjson on our payloads."),
]

LABELS = {
    "3": ["db"], "4": ["db"], "5": ["db", "test"], "7": ["db"], "11": ["api"], "13": ["api"], "17": ["api"],
    "18": ["api", "perf"], "20": ["ops"], "21": ["test"], "27": ["ops"], "28": ["ops"], "30": ["release"],
    "31": ["docs"], "32": ["perf"],
}

# What happened, in order: (id, agent, tool calls ok, tool calls failed, final status, progress, note)
WORK = [
    ("1", "alice", 12, 0, "completed", 100, None),
    ("2", "bob", 18, 1, "completed", 100, None),
    ("3", "alice", 9, 0, "completed", 100, None),
    ("4", "bob", 7, 0, "completed", 100, None),
    ("13", "carol", 14, 0, "completed", 100, None),
    ("6", "carol", 11, 2, "completed", 100, None),
    ("9", "dave", 16, 0, "completed", 100, None),
    ("18", "dave", 21, 4, "failed", 70, "load tests time out: the token bucket is shared across workers"),
    ("17", "carol", 5, 0, "blocked", 20, "pricing rules are not decided yet"),
    ("19", "erin", 6, 0, "paused", 35, None),
    ("7", "alice", 21, 2, "in_progress", 60, None),
    ("11", "bob", 9, 1, "in_progress", 45, None),
    ("8", "carol", 3, 0, "in_progress", 25, None),
    # Asked last, so the question is fresh when the board opens (and its alert an info, not late).
    ("20", "dave", 4, 0, "waiting", 50, "Which paths should the probes check: /healthz and /readyz, or the ops team's /status?"),
]

TOOLS = ["Read", "Grep", "Edit", "Bash", "Edit", "Read", "Bash", "Write"]


def build(target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    clock = StepClock()
    store = Store.open(target, create=True, clock=clock, actor="alice")
    for task_id, subject, priority, _, parent, files, description in sorted(TASKS, key=lambda t: int(t[0])):
        store.create(subject, task_id=task_id, priority=priority, files=files, labels=LABELS.get(task_id, []), description=description, actor="alice")
    for task_id, _, _, blocked_by, parent, _, _ in TASKS:
        for blocker in blocked_by:
            store.add_dependency(task_id, blocker, actor="alice")
        if parent:
            store.update(task_id, parent=parent, actor="alice")
    for task_id, agent, ok, failed, final, progress, note in WORK:
        task = store.claim_task(task_id, agent, lease_seconds=600)
        assert task.lease is not None
        token = task.lease.token
        task_files = store.get(task_id).files
        for call in range(ok + failed):
            tool = TOOLS[(int(task_id) + call) % len(TOOLS)]
            touched = task_files[:1] if tool in ("Edit", "Write") else []
            store.record_toolcall(task_id, tool, ok=call >= failed, ms=150 + 37 * call, files=touched, agent=agent, token=token)
            clock.now += timedelta(minutes=2)  # a call takes three minutes of the sample's day
        store.update(task_id, progress=progress, actor=agent, token=token)
        if final == "in_progress":
            continue
        store.set_status(task_id, final, actor=agent, token=token, error=note if final == "failed" else None, fields={"question": note} if final == "waiting" else None)
        if final == "blocked" and note:
            store.update(task_id, error=None, metadata={"reason": note}, actor=agent)
    store.set_status("29", "cancelled", actor="human", reason="the last CSV customer moved to the API")
    now = clock()
    for name, task, minutes_ago in [("alice", "7", 0), ("bob", "11", 0), ("carol", "8", 1), ("dave", "20", 3), ("erin", None, 45)]:
        write_agent(
            store.agent_records,
            AgentRecord(name=name, kind="claude-code", pid=None, host="devbox", task=task, heartbeat_at=now - timedelta(minutes=minutes_ago), started_at=START),
        )
    (store.local_dir / "board.toml").write_text("# Settings for this board; every line is optional.\n[lease]\nseconds = 30\n")


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "sample_workspace")
