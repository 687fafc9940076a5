"""A markdown plan made into tasks by the ``board`` command: headings, checklists, nested lists
and a plan-mode document; a dry run that changes nothing; importing again, changed; refusals."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from board.store import Store
from tests.plans.helpers import board, board_files, ok, ok_json, refused, tasks_by_subject

HEADINGS = """\
# Plan: the shop's first release

## Context
The shop has no backend yet. This section is about the plan, not work to do.

## Set up the database
PostgreSQL 16, one schema per service.
priority: high
labels: db, infra

- Create the schema
- Seed the test data
  after: Create the schema

## Write the API
after: 1
labels: api
- Products endpoint
- Orders endpoint
  needs: "Products endpoint"

## Deploy to staging
needs: "Write the API", 1
"""

CHECKLIST = """\
- [x] Pick the web framework
- [ ] Write the handlers
  - [ ] Users
  - [ ] Orders
    after: Users
- [ ] Load test
  after: 2
  priority: low
"""

#: Shaped as Claude Code's plan mode writes a plan: a title, context, numbered steps with bold
#: leads and details, the files to change, and how to check it.
PLAN_MODE = """\
# Plan: Add rate limiting to the API

## Context
Clients can flood the API; nothing limits them today.

## Implementation

### 1. Add a token-bucket limiter
- Create `src/limiter.py` with a `TokenBucket` class
- Unit tests in `tests/test_limiter.py`

### 2. Wire it into the middleware
**Depends on:** step 1
Read the limits from `config.toml`.

### 3. Document the limits
**Depends on:** 2

## Files to modify
- `src/app.py`
- `config.toml`

## Verification
1. Run `pytest tests/test_limiter.py`
2. **Load test** — hammer `/products` and expect 429s
"""


def write(workspace: Path, text: str, name: str = "plan.md") -> Path:
    path = workspace / name
    path.write_text(text)
    return path


def test_a_dry_run_shows_the_tasks_waves_and_critical_path_and_changes_nothing(workspace: Path) -> None:
    write(workspace, HEADINGS)
    before = board_files(workspace)
    shown = ok(workspace, "plan", "import", "plan.md", "--dry-run")
    assert "7 tasks: 7 would create" in shown and "dry run: nothing was changed" in shown
    assert "not tasks: plan.md:3 Context" in shown
    chain = "Create the schema → Seed the test data → Set up the database → Products endpoint → Orders endpoint → Write the API → Deploy to staging"
    assert f"critical path (7 tasks): {chain}" in shown
    report = ok_json(workspace, "plan", "import", "plan.md", "--dry-run")
    # Sub-tasks come before their parent, blockers before what waits on them, and a sub-task
    # waits on what its parent waits on (the endpoints are written once the database is set up).
    waves = [[task["subject"] for task in wave] for wave in report["waves"]]
    assert waves == [[subject] for subject in chain.split(" → ")]
    assert [task["subject"] for task in report["criticalPath"]] == chain.split(" → ")
    assert all(task["id"] is None for task in report["created"])
    assert board_files(workspace) == before


def test_a_dry_run_before_there_is_a_board_shows_the_plan_and_makes_no_board(tmp_path: Path) -> None:
    folder = tmp_path / "fresh"
    folder.mkdir()
    write(folder, HEADINGS)
    shown = ok(folder, "plan", "import", "plan.md", "--dry-run")
    assert "7 tasks: 7 would create" in shown and "critical path (7 tasks)" in shown
    assert sorted(p.name for p in folder.iterdir()) == ["plan.md"]  # no .tasks/ made


def test_headings_become_tasks_with_their_items_as_sub_tasks_and_their_fields(workspace: Path) -> None:
    write(workspace, HEADINGS)
    report = ok_json(workspace, "plan", "import", "plan.md")
    assert len(report["created"]) == 7 and not report["dryRun"]
    tasks = tasks_by_subject(workspace)
    database, schema, seed = tasks["Set up the database"], tasks["Create the schema"], tasks["Seed the test data"]
    api, products, orders, deploy = tasks["Write the API"], tasks["Products endpoint"], tasks["Orders endpoint"], tasks["Deploy to staging"]
    assert "Context" not in tasks and len(tasks) == 7
    assert (database.priority, database.labels, database.description) == ("high", ["db", "infra"], "PostgreSQL 16, one schema per service.")
    assert schema.parent == database.id and seed.parent == database.id and seed.blocked_by == [schema.id]
    assert api.blocked_by == [database.id] and api.labels == ["api"] and products.parent == api.id
    # A sub-task waits on its own dependencies, then on its parent's.
    assert products.blocked_by == [database.id] and orders.blocked_by == [products.id, database.id]
    assert sorted(deploy.blocked_by) == sorted([api.id, database.id])
    assert seed.metadata["plan"] == {"source": "plan.md", "key": "set up the database / seed the test data"}
    # The waves the run reported have the ids the tasks were given.
    assert [task["id"] for task in report["criticalPath"]] == [schema.id, seed.id, database.id, products.id, orders.id, api.id, deploy.id]


def test_importing_again_updates_what_changed_never_duplicates_and_reports_what_left(workspace: Path) -> None:
    write(workspace, HEADINGS)
    ok(workspace, "plan", "import", "plan.md")
    first = tasks_by_subject(workspace)
    again = ok_json(workspace, "plan", "import", "plan.md")
    assert (len(again["created"]), len(again["updated"]), len(again["unchanged"])) == (0, 0, 7)
    # An agent's work is the agent's: progress on a task survives a re-import.
    store = Store.open(workspace)
    store.claim_task(first["Create the schema"].id, "alice", lease_seconds=600)
    store.close()
    changed = HEADINGS.replace("priority: high", "priority: critical").replace("- Orders endpoint\n  needs: \"Products endpoint\"\n", "")
    changed = changed.replace("needs: \"Write the API\", 1", "needs: \"Write the API\"\nDeploy with the blue-green script.")
    write(workspace, changed)
    report = ok_json(workspace, "plan", "import", "plan.md")
    assert report["created"] == [] and {row["subject"]: row["changed"] for row in report["updated"]} == {
        "Set up the database": ["priority"], "Deploy to staging": ["description", "dependencies"],
    }
    assert [(row["subject"], row["status"]) for row in report["removed"]] == [("Orders endpoint", "pending")]
    now = tasks_by_subject(workspace)
    assert len(now) == 7 and {t.id for t in now.values()} == {t.id for t in first.values()}
    assert now["Set up the database"].priority == "critical" and now["Deploy to staging"].blocked_by == [now["Write the API"].id]
    assert now["Create the schema"].status == "in_progress" and now["Create the schema"].owner == "alice"
    assert now["Orders endpoint"].status == "pending"  # reported, not deleted
    pruned = ok(workspace, "plan", "import", "plan.md", "--prune")
    assert f"#{first['Orders endpoint'].id} Orders endpoint: no longer in the plan; cancelled" in pruned
    assert tasks_by_subject(workspace)["Orders endpoint"].status == "cancelled"


def test_a_renamed_task_is_a_new_one_unless_it_keeps_a_key(workspace: Path) -> None:
    write(workspace, "- Write the parser\n  key: parser\n- Write the docs\n")
    ok(workspace, "plan", "import", "plan.md")
    before = tasks_by_subject(workspace)
    write(workspace, "- Write the parser in Rust\n  key: parser\n- Write the user guide\n")
    report = ok_json(workspace, "plan", "import", "plan.md")
    assert [(row["id"], row["changed"]) for row in report["updated"]] == [(before["Write the parser"].id, ["subject"])]
    assert [row["subject"] for row in report["created"]] == ["Write the user guide"]
    assert [row["subject"] for row in report["removed"]] == ["Write the docs"]


def test_a_checklist_of_nested_items_and_a_done_item_made_done_without_a_story_of_work(workspace: Path) -> None:
    write(workspace, CHECKLIST, "todo.md")
    ok(workspace, "plan", "import", "todo.md")
    tasks = tasks_by_subject(workspace)
    assert set(tasks) == {"Pick the web framework", "Write the handlers", "Users", "Orders", "Load test"}
    framework = tasks["Pick the web framework"]
    assert framework.status == "completed" and framework.progress == 100 and framework.started_at is None and framework.owner == ""
    store = Store.open(workspace)
    assert [entry["op"] for entry in store.history(framework.id)] == ["create"]
    store.close()
    assert tasks["Orders"].parent == tasks["Write the handlers"].id and tasks["Orders"].blocked_by == [tasks["Users"].id]
    assert tasks["Load test"].blocked_by == [tasks["Write the handlers"].id] and tasks["Load test"].priority == "low"


def test_done_in_the_plan_completes_a_task_an_agent_is_working_on(workspace: Path) -> None:
    write(workspace, CHECKLIST, "todo.md")
    ok(workspace, "plan", "import", "todo.md")
    users = tasks_by_subject(workspace)["Users"]
    store = Store.open(workspace)
    store.claim_task(users.id, "bob", lease_seconds=600)
    store.close()
    write(workspace, CHECKLIST.replace("  - [ ] Users", "  - [x] Users"), "todo.md")
    report = ok_json(workspace, "plan", "import", "todo.md")
    assert report["completed"] == [users.id]
    assert tasks_by_subject(workspace)["Users"].status == "completed"


def test_a_plan_mode_document_keeps_its_steps_and_drops_its_notes(workspace: Path) -> None:
    write(workspace, PLAN_MODE)
    report = ok_json(workspace, "plan", "import", "plan.md")
    assert report["skipped"] == ["plan.md:3 Context", "plan.md:19 Files to modify"]
    tasks = tasks_by_subject(workspace)
    assert set(tasks) == {
        "Implementation", "Add a token-bucket limiter", "Create `src/limiter.py` with a `TokenBucket` class", "Unit tests in `tests/test_limiter.py`",
        "Wire it into the middleware", "Document the limits", "Verification", "Run `pytest tests/test_limiter.py`", "Load test",
    }
    limiter, middleware, docs = tasks["Add a token-bucket limiter"], tasks["Wire it into the middleware"], tasks["Document the limits"]
    assert middleware.blocked_by == [limiter.id] and docs.blocked_by == [middleware.id]
    assert limiter.parent == tasks["Implementation"].id and middleware.description == "Read the limits from `config.toml`."
    assert tasks["Load test"].description == "hammer `/products` and expect 429s" and tasks["Load test"].parent == tasks["Verification"].id


@pytest.mark.parametrize(
    ("plan", "line"),
    [
        ("## Schema\nafter: API\n\n## API\nafter: Schema\n", "plan.md:1: a dependency cycle: 'Schema' → 'API' → 'Schema'; nothing was written"),
        ("- One\n- Two\n  after: \"Three\"\n", "plan.md:3: no task in the plan is called 'Three'; write its title as it is written, or its step number"),
        ("- One\n  after: 4\n- Two\n", "plan.md:2: there is no step 4 in the plan (its steps are numbered from 1 at each level, 2.1 being the first under 2)"),
        ("## API\n- Tests\n- Docs\n- Tests\n## UI\n- Tests\n", "plan.md:4: 'Tests' is written twice under 'API' (first at line 2); give one of them another title or a 'key:' line, so a re-import can tell them apart"),
        ("- One\n  priority: soon\n", "plan.md:2: unknown priority 'soon'; write critical, high, medium or low"),
        ("- One\n  labels: two words\n", "plan.md:2: 'two words' is not a label: one word of 1-40 characters, no spaces or commas"),
        ("- One\n```\n- not a task\n", "plan.md: a code block opened with ``` is never closed; close it so the lines after it are read as the plan"),
        ("Just prose, no tasks.\n", "plan.md: no tasks found: write a heading or a list item for each task (see 'Plans' in the README)"),
        ("- One\n  after: #99\n", "plan.md:1: waits on #99, which is not on the board"),
    ],
)
def test_a_malformed_plan_is_one_line_naming_where_and_nothing_is_written(workspace: Path, plan: str, line: str) -> None:
    write(workspace, plan)
    before = board_files(workspace)
    assert refused(workspace, "plan", "import", "plan.md") == f"board: {line}"
    assert board_files(workspace) == before


def test_a_missing_file_and_a_misused_option_are_one_line_each(workspace: Path) -> None:
    assert refused(workspace, "plan", "import", "nowhere.md") == "board: nowhere.md: no such file"
    write(workspace, "- One\n")
    assert refused(workspace, "plan", "import", "plan.md", "--tag", "x") == "board: --tag is Task Master's: pass it with --from taskmaster"


def test_from_a_plan_file_to_a_finished_run_in_two_commands(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    write(project, HEADINGS)
    ok(project, "plan", "import", "plan.md", cwd=project)
    done = board(project, "run", "--workers", "2", "--", "sh", "-c", 'echo "$1" >> done.txt', "_", "{subject}", cwd=project)
    assert done.returncode == 0, done.stderr
    finished = (project / "done.txt").read_text().splitlines()
    assert sorted(finished) == sorted(tasks_by_subject(project)) and len(finished) == 7
    # Each ran after what it waits on: sub-tasks before their parent, blockers before dependents.
    order = {subject: place for place, subject in enumerate(finished)}
    assert order["Create the schema"] < order["Seed the test data"] < order["Set up the database"] < order["Write the API"] < order["Deploy to staging"]
    assert json.loads(ok(project, "task", "list", "--json", cwd=project))[0]["status"] == "completed"


def test_a_plan_that_is_not_a_regular_file_or_too_big_is_refused_in_one_line(workspace: Path) -> None:
    fifo = workspace / "plan.fifo"
    os.mkfifo(fifo)
    big = workspace / "big.md"
    big.write_bytes(b"# x\n" + b"- item\n" * (5 * 1024 * 1024 // 7))
    (workspace / "linked.md").symlink_to(write(workspace, HEADINGS))
    before = board_files(workspace)
    for name, says in (("plan.fifo", "plan.fifo"), ("big.md", "over the"), ("/dev/zero", "/dev/zero")):
        done = refused(workspace, "plan", "import", name)
        assert says in done, done
    assert board_files(workspace) == before
    # A link to a plan is the person's own file, and is read.
    assert "7 tasks: 7 would create" in ok(workspace, "plan", "import", "linked.md", "--dry-run")


def test_a_foreign_file_too_big_to_be_a_board_is_refused_before_it_is_read(workspace: Path) -> None:
    issues = workspace / "issues.jsonl"
    with open(issues, "wb") as handle:
        handle.truncate(65 * 1024 * 1024)  # sparse: no disk is spent
    line = refused(workspace, "plan", "import", "--from", "beads", str(issues))
    assert "over the 67,108,864 bytes a plan file may be" in line
