"""drift.* alerts against real repositories: a bare upstream, the board's clone, another clone."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from board.gitstate import gather_git_state, parse_status_v2
from board.model import utcnow
from board.store import Store
from tests.alerts.conftest import Repos, board, commit_file, git, of_kind, refresh, start
from tests.conftest import BOTH_BACKENDS

pytestmark = BOTH_BACKENDS


def test_upstream_ahead_warns_then_errors_when_a_held_file_changed_and_clears_after_pull(repos: Repos) -> None:
    task = start(repos.a, "edit the app", "alice", ["src/app.py"])
    assert of_kind(refresh(repos.a), "drift.upstream") == []

    commit_file(repos.b, "docs/readme.md", "new docs\n")
    git(repos.b, "push", "-q", "origin", "main")
    alerts = of_kind(refresh(repos.a, fetch=True), "drift.upstream")
    assert len(alerts) == 1
    warning = alerts[0]
    assert warning.severity == "warning"
    assert warning.tasks == ()
    assert warning.files == ("docs/readme.md",)
    assert "1 commit behind origin/main" in warning.message

    commit_file(repos.b, "src/app.py", "rewritten upstream\n")
    git(repos.b, "push", "-q", "origin", "main")
    alerts = of_kind(refresh(repos.a, fetch=True), "drift.upstream")
    assert len(alerts) == 1
    error = alerts[0]
    assert error.severity == "error"
    assert error.tasks == (task,)
    assert error.agents == ("alice",)
    assert error.files == ("src/app.py",)
    assert "2 commits behind" in error.message and "src/app.py" in error.message

    git(repos.a, "pull", "-q", "--ff-only")
    assert of_kind(refresh(repos.a), "drift.upstream") == []


def test_git_is_never_fetched_unless_asked(repos: Repos) -> None:
    commit_file(repos.b, "src/util.py", "upstream only\n")
    git(repos.b, "push", "-q", "origin", "main")
    assert of_kind(refresh(repos.a), "drift.upstream") == []
    assert of_kind(refresh(repos.a, fetch=True), "drift.upstream") != []


def test_fetch_setting_in_board_toml_fetches_at_most_once_a_minute(repos: Repos) -> None:
    (repos.a / ".tasks" / "board.toml").write_text("[git]\nfetch = true\n")
    commit_file(repos.b, "src/util.py", "upstream only\n")
    git(repos.b, "push", "-q", "origin", "main")
    now = utcnow()
    [first] = of_kind(refresh(repos.a, now=now), "drift.upstream")
    assert "1 commit behind" in first.message

    commit_file(repos.b, "src/util.py", "again\n")
    git(repos.b, "push", "-q", "origin", "main")
    [soon] = of_kind(refresh(repos.a, now=now + timedelta(seconds=30)), "drift.upstream")
    assert "1 commit behind" in soon.message  # not fetched again yet
    [later] = of_kind(refresh(repos.a, now=now + timedelta(seconds=61)), "drift.upstream")
    assert "2 commits behind" in later.message


def test_force_push_is_caught_across_runs_and_clears_after_reset(repos: Repos) -> None:
    task = start(repos.a, "edit the app", "alice", ["src/app.py"])
    commit_file(repos.b, "src/util.py", "will be rewritten\n")
    git(repos.b, "push", "-q", "origin", "main")
    git(repos.a, "pull", "-q", "--ff-only")
    assert of_kind(refresh(repos.a), "drift.force_push") == []  # remembers the upstream head

    git(repos.b, "reset", "-q", "--hard", "HEAD~1")
    commit_file(repos.b, "src/util.py", "history rewritten\n", "rewrite")
    git(repos.b, "push", "-q", "--force", "origin", "main")

    # board alerts --fetch, a separate process, sees the rewrite from the head it remembered.
    done = board(repos.a, "alerts", "--fetch", "--json")
    assert done.returncode == 0, done.stderr
    assert "drift.force_push" in done.stdout

    alerts = of_kind(refresh(repos.a), "drift.force_push")  # still there without fetching again
    assert len(alerts) == 1
    assert alerts[0].severity == "error"
    assert alerts[0].tasks == (task,)
    assert "origin/main was force-pushed" in alerts[0].message

    git(repos.a, "reset", "-q", "--hard", "origin/main")
    assert of_kind(refresh(repos.a), "drift.force_push") == []


def test_a_fast_forward_is_not_a_force_push(repos: Repos) -> None:
    refresh(repos.a)
    commit_file(repos.b, "src/util.py", "normal push\n")
    git(repos.b, "push", "-q", "origin", "main")
    assert of_kind(refresh(repos.a, fetch=True), "drift.force_push") == []


def test_dirty_file_of_another_agents_task(repos: Repos) -> None:
    alice_task = start(repos.a, "edit the app", "alice", ["src/app.py"])
    bob_task = start(repos.a, "edit docs", "bob", ["docs/readme.md"])
    (repos.a / "src" / "app.py").write_text("alice is working\n")
    assert of_kind(refresh(repos.a), "drift.dirty") == []  # the owner's own work in progress

    done = board(repos.a, "toolcall", bob_task, "Edit", "--file", "src/app.py", "--agent", "bob")
    assert done.returncode == 0, done.stderr
    alerts = of_kind(refresh(repos.a), "drift.dirty")
    assert len(alerts) == 1
    assert alerts[0].tasks == (alice_task, bob_task)  # the task holding it first, then the toucher's
    assert alerts[0].files == ("src/app.py",)
    assert alerts[0].agents == ("alice", "bob")

    git(repos.a, "commit", "-q", "-am", "alice's work")
    assert of_kind(refresh(repos.a), "drift.dirty") == []


def test_untracked_file_held_by_a_task_counts_as_dirty(repos: Repos) -> None:
    alice_task = start(repos.a, "add a module", "alice", ["src/new.py"])
    bob_task = start(repos.a, "other", "bob")
    (repos.a / "src" / "new.py").write_text("bob wrote this\n")
    Store.open(repos.a).record_toolcall(bob_task, "Write", files=["./src/new.py"], agent="bob")
    alerts = of_kind(refresh(repos.a), "drift.dirty")
    assert [a.tasks for a in alerts] == [(alice_task, bob_task)]


def test_a_workspace_that_is_not_a_repository_has_no_drift_alerts(tmp_path: Path) -> None:
    workspace = tmp_path / "plain"
    workspace.mkdir()
    Store.open(workspace, create=True)
    start(workspace, "edit", "alice", ["a.py"])
    assert gather_git_state(workspace) is None
    alerts = refresh(workspace, fetch=True)
    assert [a for a in alerts if a.kind.startswith("drift.") and a.kind != "drift.external_change"] == []
    done = board(workspace, "alerts")
    assert done.returncode == 0 and done.stdout.strip() == "no alerts"


def test_git_state_counts_ahead_and_lists_dirty_and_untracked_paths(repos: Repos) -> None:
    commit_file(repos.a, "src/util.py", "local commit\n")
    (repos.a / "src" / "app.py").write_text("dirty\n")
    (repos.a / "notes").mkdir()
    (repos.a / "notes" / "todo.txt").write_text("untracked\n")
    state = gather_git_state(repos.a, repos.a / ".tasks")
    assert state is not None
    assert (state.branch, state.upstream, state.ahead, state.behind) == ("main", "origin/main", 1, 0)
    assert state.dirty == ("src/app.py",)
    assert state.untracked == ("notes/todo.txt",)
    assert state.upstream_head == git(repos.a, "rev-parse", "origin/main").strip()


def test_git_state_paths_are_relative_to_a_workspace_in_a_subdirectory(repos: Repos) -> None:
    (repos.a / "src" / "app.py").write_text("dirty\n")
    (repos.a / "docs" / "readme.md").write_text("dirty too\n")
    state = gather_git_state(repos.a / "src")
    assert state is not None
    assert state.dirty == ("app.py",)


def test_status_parser_handles_renames_and_conflicts() -> None:
    output = "\0".join(
        [
            "# branch.oid 0123456789abcdef0123456789abcdef01234567",
            "# branch.head feature",
            "# branch.upstream origin/feature",
            "# branch.ab +2 -3",
            "1 .M N... 100644 100644 100644 abc abc sub/file with spaces.py",
            "2 R. N... 100644 100644 100644 abc abc R100 new.py",
            "old.py",
            "u UU N... 100644 100644 100644 100644 a b c both.py",
            "? fresh.txt",
            "? .tasks/task_1.json",
            "",
        ]
    )
    status = parse_status_v2(output)
    assert (status.branch, status.upstream, status.ahead, status.behind) == ("feature", "origin/feature", 2, 3)
    assert status.dirty == ("both.py", "new.py", "old.py", "sub/file with spaces.py")
    assert status.untracked == ("fresh.txt",)
