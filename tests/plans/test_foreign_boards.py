"""Boards other tools keep, brought over with ``board plan import --from`` and, for Backlog.md,
sent back with ``board plan export``: Backlog.md's own program writes and reads its folder;
beads' and Task Master's files are written here from their documented formats."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.bench.peers import backlog_program
from tests.plans.helpers import board_files, ok, ok_json, refused, tasks_by_subject


@pytest.fixture(scope="module")
def backlog() -> Path:
    program, why = backlog_program()
    if program is None:
        pytest.skip(f"Backlog.md cannot be installed here: {why}")
    return program


def run_backlog(program: Path, project: Path, *args: str) -> str:
    done = subprocess.run([str(program), *args], cwd=project, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_backlog_folder_over_and_back(workspace: Path, tmp_path: Path, backlog: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    run_backlog(backlog, project, "init", "shop", "--defaults", "--integration-mode", "none", "--no-git")
    run_backlog(backlog, project, "task", "create", "Set up the database", "-l", "db,infra", "--priority", "high", "-d", "PostgreSQL 16")
    run_backlog(backlog, project, "task", "create", "Write the API", "--dep", "task-1", "-l", "api", "--ac", "Returns JSON")
    run_backlog(backlog, project, "task", "create", "Products endpoint", "-p", "task-2")
    run_backlog(backlog, project, "task", "edit", "1", "-s", "Done")

    report = ok_json(workspace, "plan", "import", "--from", "backlog", str(project))
    assert sorted(row["key"] for row in report["created"]) == ["TASK-1", "TASK-2", "TASK-2.1"]
    tasks = tasks_by_subject(workspace)
    database, api, products = tasks["Set up the database"], tasks["Write the API"], tasks["Products endpoint"]
    assert (database.status, database.priority, database.labels, database.description) == ("completed", "high", ["db", "infra"], "PostgreSQL 16")
    assert api.blocked_by == [database.id] and products.parent == api.id and api.status == "pending"
    assert api.metadata["plan"] == {"source": "backlog", "key": "TASK-2", "id": "TASK-2"}
    # What board has no field for is kept: the acceptance criteria, the column, the dates.
    assert "Returns JSON" in api.metadata["backlog"]["body"] and api.metadata["backlog"]["status"] == "To Do"

    run_backlog(backlog, project, "task", "edit", "2", "-t", "Write the REST API")
    again = ok_json(workspace, "plan", "import", "--from", "backlog", str(project))
    assert [(row["id"], row["changed"]) for row in again["updated"]] == [(api.id, ["subject", "metadata"])] and again["created"] == []
    assert len(tasks_by_subject(workspace)) == 3

    back = tmp_path / "back"
    exported = ok_json(workspace, "plan", "export", "--to", "backlog", str(back))
    assert exported["exported"] == 3
    listed = run_backlog(backlog, back, "task", "list", "--plain")
    assert "To Do:" in listed and "Done:" in listed
    assert "TASK-2 - Write the REST API" in listed and "TASK-1 - Set up the database" in listed.split("Done:")[1]
    viewed = run_backlog(backlog, back, "task", "view", "TASK-2", "--plain")
    assert "TASK-1" in viewed and "Returns JSON" in viewed
    # A folder that already holds Backlog.md tasks is never written over.
    before = sorted(p.name for p in (back / "backlog" / "tasks").iterdir())
    assert "already holds Backlog.md tasks" in refused(workspace, "plan", "export", "--to", "backlog", str(back))
    assert sorted(p.name for p in (back / "backlog" / "tasks").iterdir()) == before


# beads' issues.jsonl as ``bd export`` writes it, one issue a line: the fields of its Issue type
# (internal/types/types.go in github.com/steveyegge/beads: id, title, description, status,
# priority 0-4, issue_type, assignee, labels, created_at, updated_at, closed_at, and
# dependencies of {issue_id, depends_on_id, type, created_at, created_by}, type one of blocks,
# related, parent-child, discovered-from).
BEADS = [
    {"id": "bd-a1b2", "title": "Checkout epic", "description": "Everything to take money", "status": "open", "priority": 1, "issue_type": "epic",
     "created_at": "2025-10-01T09:00:00Z", "updated_at": "2025-10-01T09:00:00Z"},
    {"id": "bd-c3d4", "title": "Payment provider client", "status": "closed", "priority": 0, "issue_type": "task", "labels": ["payments"],
     "closed_at": "2025-10-02T09:00:00Z", "created_at": "2025-10-01T09:00:00Z", "updated_at": "2025-10-02T09:00:00Z",
     "dependencies": [{"issue_id": "bd-c3d4", "depends_on_id": "bd-a1b2", "type": "parent-child", "created_at": "2025-10-01T09:00:00Z", "created_by": "amy"}]},
    {"id": "bd-e5f6", "title": "Checkout page", "status": "in_progress", "priority": 2, "issue_type": "feature", "assignee": "amy", "design": "Two steps",
     "created_at": "2025-10-01T09:00:00Z", "updated_at": "2025-10-01T09:00:00Z",
     "dependencies": [
         {"issue_id": "bd-e5f6", "depends_on_id": "bd-c3d4", "type": "blocks", "created_at": "2025-10-01T09:00:00Z", "created_by": "amy"},
         {"issue_id": "bd-e5f6", "depends_on_id": "bd-g7h8", "type": "discovered-from", "created_at": "2025-10-01T09:00:00Z", "created_by": "amy"},
         {"issue_id": "bd-e5f6", "depends_on_id": "bd-a1b2", "type": "parent-child", "created_at": "2025-10-01T09:00:00Z", "created_by": "amy"},
     ]},
    {"id": "bd-g7h8", "title": "Refund flow", "status": "blocked", "priority": 4, "issue_type": "bug", "created_at": "2025-10-01T09:00:00Z", "updated_at": "2025-10-01T09:00:00Z",
     "dependencies": [{"issue_id": "bd-g7h8", "depends_on_id": "bd-e5f6", "type": "related", "created_at": "2025-10-01T09:00:00Z", "created_by": "amy"}]},
    {"id": "bd-x9", "title": "Deleted idea", "status": "tombstone", "priority": 3, "issue_type": "task", "created_at": "2025-10-01T09:00:00Z", "updated_at": "2025-10-01T09:00:00Z"},
]


def write_beads(project: Path, issues: list[dict]) -> None:
    (project / ".beads").mkdir(parents=True, exist_ok=True)
    (project / ".beads" / "issues.jsonl").write_text("".join(json.dumps(issue) + "\n" for issue in issues))


def test_beads_issues_with_their_priorities_blocks_parents_and_other_links(workspace: Path, tmp_path: Path) -> None:
    write_beads(tmp_path, BEADS)
    report = ok_json(workspace, "plan", "import", "--from", "beads", str(tmp_path))
    assert len(report["created"]) == 4 and report["skipped"] == [f"{tmp_path / '.beads' / 'issues.jsonl'}:5 bd-x9 (deleted in beads)"]
    tasks = tasks_by_subject(workspace)
    epic, client, page, refund = tasks["Checkout epic"], tasks["Payment provider client"], tasks["Checkout page"], tasks["Refund flow"]
    assert [t.priority for t in (epic, client, page, refund)] == ["high", "critical", "medium", "low"]
    assert client.status == "completed" and page.status == "pending" and refund.status == "pending"
    assert client.parent == epic.id and page.parent == epic.id and page.blocked_by == [client.id] and refund.blocked_by == []
    assert page.metadata["beads"]["links"] == [{"type": "discovered-from", "id": "bd-g7h8"}]
    assert refund.metadata["beads"]["links"] == [{"type": "related", "id": "bd-e5f6"}]
    assert (page.metadata["beads"]["status"], page.metadata["beads"]["assignee"], page.metadata["beads"]["design"]) == ("in_progress", "amy", "Two steps")
    assert page.metadata["plan"] == {"source": "beads", "key": "bd-e5f6", "id": "bd-e5f6"}

    changed = [dict(issue, status="closed") if issue["id"] == "bd-g7h8" else issue for issue in BEADS]
    write_beads(tmp_path, changed)
    again = ok_json(workspace, "plan", "import", "--from", "beads", str(tmp_path))
    assert again["created"] == [] and [row["id"] for row in again["updated"]] == [refund.id]
    # Closed in beads: the board's task is completed too, by the moves a person would make.
    assert again["completed"] == [refund.id] and tasks_by_subject(workspace)["Refund flow"].status == "completed"


def test_a_beads_issue_blocked_by_one_not_in_the_file_is_refused(workspace: Path, tmp_path: Path) -> None:
    write_beads(tmp_path, [{"id": "bd-1", "title": "One", "dependencies": [{"issue_id": "bd-1", "depends_on_id": "bd-404", "type": "blocks"}]}])
    before = board_files(workspace)
    line = refused(workspace, "plan", "import", "--from", "beads", str(tmp_path))
    assert line == f"board: {tmp_path / '.beads' / 'issues.jsonl'}:1: bd-1 is blocked by bd-404, which is not an issue of {tmp_path / '.beads' / 'issues.jsonl'}"
    assert board_files(workspace) == before


# Task Master's .taskmaster/tasks/tasks.json: the tagged form ({"master": {"tasks": [...],
# "metadata": {...}}}) its current versions write, and the legacy {"tasks": [...]} they migrate
# from (docs/task-structure.md and the tagged task lists rules of eyaltoledano/claude-task-master):
# ids are numbers, a subtask's id is local to its parent, and its dependencies are sibling ids or
# "parent.sub" strings.
TASKMASTER_TASKS = [
    {"id": 1, "title": "Initialize repo", "description": "Create the repository", "details": "Use uv", "testStrategy": "CI passes",
     "status": "done", "priority": "high", "dependencies": [], "subtasks": []},
    {"id": 2, "title": "Build the API", "description": "REST endpoints", "status": "in-progress", "priority": "medium", "dependencies": [1],
     "subtasks": [
         {"id": 1, "title": "Define routes", "description": "", "status": "done", "dependencies": []},
         {"id": 2, "title": "Write handlers", "description": "", "status": "pending", "dependencies": [1]},
         {"id": 3, "title": "Handler tests", "description": "", "status": "pending", "dependencies": ["2.2", 1]},
     ]},
    {"id": 3, "title": "Old idea", "description": "", "status": "cancelled", "priority": "low", "dependencies": [], "subtasks": []},
    {"id": 4, "title": "Deploy", "description": "", "status": "deferred", "priority": "high", "dependencies": [2, 3], "subtasks": []},
]


@pytest.mark.parametrize("tagged", [True, False], ids=["tagged", "legacy"])
def test_task_master_tasks_and_subtasks_in_the_tagged_and_legacy_files(workspace: Path, tmp_path: Path, tagged: bool) -> None:
    folder = tmp_path / ".taskmaster" / "tasks"
    folder.mkdir(parents=True)
    document = (
        {"master": {"tasks": TASKMASTER_TASKS, "metadata": {"created": "2025-10-01T09:00:00Z", "description": "Tasks for master context"}},
         "feature-x": {"tasks": [{"id": 1, "title": "Elsewhere", "status": "pending", "dependencies": []}], "metadata": {}}}
        if tagged else {"tasks": TASKMASTER_TASKS}
    )
    (folder / "tasks.json").write_text(json.dumps(document, indent=2))
    report = ok_json(workspace, "plan", "import", "--from", "taskmaster", str(tmp_path))
    assert sorted(row["key"] for row in report["created"]) == ["1", "2", "2.1", "2.2", "2.3", "3", "4"]
    assert report["skipped"] == (["tag 'feature-x' (1 tasks; --tag feature-x imports it)"] if tagged else [])
    tasks = tasks_by_subject(workspace)
    repo, api, routes, handlers, checks, old, deploy = (tasks[s] for s in ("Initialize repo", "Build the API", "Define routes", "Write handlers", "Handler tests", "Old idea", "Deploy"))
    assert repo.status == "completed" and routes.status == "completed" and old.status == "cancelled" and deploy.status == "pending"
    assert repo.description == "Create the repository\n\nDetails:\nUse uv\n\nTest strategy:\nCI passes"
    assert repo.metadata["taskmaster"]["testStrategy"] == "CI passes" and deploy.metadata["taskmaster"]["status"] == "deferred"
    assert api.blocked_by == [repo.id] and {routes.parent, handlers.parent, checks.parent} == {api.id}
    assert handlers.blocked_by == [routes.id] and sorted(checks.blocked_by) == sorted([handlers.id, routes.id])
    assert sorted(deploy.blocked_by) == sorted([api.id, old.id])
    if tagged:
        ok(workspace, "plan", "import", "--from", "taskmaster", "--tag", "feature-x", str(tmp_path))
        assert tasks_by_subject(workspace)["Elsewhere"].metadata["plan"]["source"] == "taskmaster:feature-x"
        assert "no tag 'nope'" in refused(workspace, "plan", "import", "--from", "taskmaster", "--tag", "nope", str(tmp_path))


def test_a_task_master_cycle_is_refused_and_nothing_is_written(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(json.dumps({"tasks": [
        {"id": 1, "title": "A", "status": "pending", "dependencies": [2]}, {"id": 2, "title": "B", "status": "pending", "dependencies": [1]},
    ]}))
    before = board_files(workspace)
    line = refused(workspace, "plan", "import", "--from", "taskmaster", str(tmp_path / "tasks.json"))
    assert line.startswith(f"board: {tmp_path / 'tasks.json'} (tag master) task 1: a dependency cycle: 'A' → 'B' → 'A'")
    assert board_files(workspace) == before
