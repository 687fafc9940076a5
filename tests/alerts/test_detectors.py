"""The detectors as pure functions of plain data: no files, no git, a fixed clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from board.alerts.detectors import (
    IdleMember,
    Touch,
    detect_expired_leases,
    detect_idle_with_task,
    detect_file_conflicts,
    detect_reservation_conflicts,
    detect_upstream_drift,
    detect_waiting,
    detect_write_conflicts,
    held_files,
)
from board.alerts import Severity
from board.gitstate import GitState
from board.model import Task
from board.reservations import Reservation
from tests.alerts.conftest import Repos, git, of_kind, refresh, start
from tests.conftest import BOTH_BACKENDS

pytestmark = BOTH_BACKENDS

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def task(task_id: str, owner: str, status: str = "in_progress", files: tuple[str, ...] = ()) -> Task:
    return Task(id=task_id, subject=f"task {task_id}", status=status, owner=owner, files=list(files))


def board_of(*tasks: Task) -> dict[str, Task]:
    return {t.id: t for t in tasks}


def reservation(path: str, owner: str, task_id: str, mode: str = "write") -> Reservation:
    return Reservation(path, owner, task_id, mode, NOW + timedelta(minutes=5), NOW - timedelta(minutes=1))


def test_declared_paths_are_normalised_before_comparing() -> None:
    tasks = board_of(task("1", "alice", files=("./src/a.py",)), task("2", "bob", files=("src/lib/../a.py",)))
    alerts = detect_file_conflicts(tasks, [])
    assert [a.files for a in alerts] == [("src/a.py",)]


def test_finished_and_pending_tasks_hold_nothing() -> None:
    tasks = board_of(task("1", "alice", files=("a.py",)), task("2", "bob", "completed", ("a.py",)), task("3", "", "pending", ("a.py",)))
    assert detect_file_conflicts(tasks, []) == []
    assert held_files(tasks, [Touch("2", "bob", "a.py", NOW)]) == {"a.py": {"1"}}


def test_three_owners_on_one_file_are_one_alert() -> None:
    tasks = board_of(*(task(str(i), name, files=("a.py",)) for i, name in enumerate(["alice", "bob", "carol"], 1)))
    alerts = detect_file_conflicts(tasks, [])
    assert len(alerts) == 1 and alerts[0].tasks == ("1", "2", "3")
    assert alerts[0].message == "#1 (alice), #2 (bob) and #3 (carol) all work on a.py"


def test_readers_touching_a_file_others_read_is_sharing() -> None:
    held = [reservation("a.py", "alice", "1", "read"), reservation("a.py", "bob", "2", "read")]
    assert detect_reservation_conflicts(held, [Touch("2", "bob", "a.py", NOW)]) == []
    # carol holds no read reservation of her own: touching it conflicts with both readers
    alerts = detect_reservation_conflicts(held, [Touch("3", "carol", "a.py", NOW)])
    assert [(a.agents, a.tasks) for a in alerts] == [(("alice", "bob", "carol"), ("1", "2", "3"))]


def test_a_touch_after_the_reservation_ran_out_is_not_a_conflict() -> None:
    held = [reservation("a.py", "alice", "1")]
    assert detect_reservation_conflicts(held, [Touch("2", "bob", "a.py", NOW + timedelta(minutes=6))]) == []


def test_upstream_drift_severity_follows_held_files() -> None:
    tasks = board_of(task("1", "alice", files=("src/a.py",)))
    holdings = held_files(tasks, [])
    behind = GitState(head="h", branch="main", upstream="origin/main", behind=2, upstream_changed=("docs/x.md",))
    [warning] = detect_upstream_drift(behind, tasks, holdings)
    assert (warning.severity, warning.tasks, warning.key) == ("warning", (), "drift.upstream:origin/main")
    touching = GitState(head="h", branch="main", upstream="origin/main", behind=2, upstream_changed=("docs/x.md", "src/a.py"))
    [error] = detect_upstream_drift(touching, tasks, holdings)
    assert (error.severity, error.tasks, error.files) == ("error", ("1",), ("src/a.py",))
    assert detect_upstream_drift(GitState(head="h", branch="main", upstream="origin/main", ahead=3), tasks, holdings) == []
    assert detect_upstream_drift(None, tasks, holdings) == []


def test_write_conflicts_group_by_task_within_the_window() -> None:
    history = [
        {"ts": "2026-01-01T11:50:00Z", "task": "1", "op": "conflict", "actor": "bob", "version": 4, "expected": 3},
        {"ts": "2026-01-01T11:58:00Z", "task": "1", "op": "conflict", "actor": "carol", "version": 5, "expected": 4},
        {"ts": "2026-01-01T11:40:00Z", "task": "2", "op": "conflict", "actor": "bob", "version": 2, "expected": 1},
        {"ts": "2026-01-01T11:59:00Z", "task": "3", "op": "update", "actor": "bob", "version": 2},
    ]
    [alert] = detect_write_conflicts(history, NOW, timedelta(minutes=15))
    assert alert.tasks == ("1",) and alert.agents == ("bob", "carol")
    assert "2 stale writes were refused" in alert.message and "carol" in alert.message


def test_reclaim_alert_ends_with_the_window_or_a_new_claim() -> None:
    reclaim = {"ts": "2026-01-01T11:59:30Z", "task": "4", "op": "reclaim", "reason": "lease of alice expired at 11:59:29Z", "changes": {"owner": ["alice", ""]}}
    [alert] = detect_expired_leases([reclaim], NOW, timedelta(seconds=60))
    assert alert.agents == ("alice",) and alert.key == "lease.expired:4"
    assert detect_expired_leases([reclaim], NOW + timedelta(seconds=31), timedelta(seconds=60)) == []
    claim = {"ts": "2026-01-01T11:59:40Z", "task": "4", "op": "claim"}
    assert detect_expired_leases([reclaim, claim], NOW, timedelta(seconds=60)) == []


def test_alert_messages_stay_one_line_whatever_the_task_says() -> None:
    tasks = board_of(Task(id="1", subject="waiting", status="waiting", owner="alice", active_form="line one\nline two [b]x[/b]"))
    [alert] = detect_waiting(tasks, NOW, timedelta(minutes=30))
    assert "\n" not in alert.message and "[b]x[/b]" in alert.message


def test_a_waiting_task_shows_its_question_and_escalates_to_an_error_once_it_has_waited_too_long() -> None:
    asked = Task(id="5", subject="Pick a database", status="waiting", owner="alice", question="Postgres\nor SQLite?", asked_at=NOW - timedelta(minutes=29))
    [alert] = detect_waiting(board_of(asked), NOW, timedelta(minutes=30))
    assert alert.severity == Severity.INFO and alert.message == "#5 needs you: Postgres or SQLite?"
    assert "board answer 5" in alert.action and "alice" in alert.action
    [late] = detect_waiting(board_of(asked), NOW + timedelta(minutes=1), timedelta(minutes=30))
    assert late.severity == Severity.ERROR and late.message == "#5 needs you for 30 min: Postgres or SQLite?"
    assert late.key == alert.key  # the same alert, raised: notified once as a new error


def test_drift_alerts_are_kept_when_git_times_out(repos: Repos, tmp_path: Path) -> None:
    start(repos.a, "edit the app", "alice", ["src/app.py"])
    (repos.b / "src" / "app.py").write_text("upstream\n")
    git(repos.b, "commit", "-q", "-am", "upstream")
    git(repos.b, "push", "-q", "origin", "main")
    before = of_kind(refresh(repos.a, fetch=True, now=NOW), "drift.upstream")
    assert [a.severity for a in before] == ["error"]

    git(repos.a, "pull", "-q", "--ff-only")  # the condition ends, but git cannot say so in time
    settings = repos.a / ".tasks" / "board.toml"
    settings.write_text("[git]\ntimeout_seconds = 0.000001\n")
    after = of_kind(refresh(repos.a, now=NOW + timedelta(seconds=5)), "drift.upstream")
    assert after == before and after[0].since == NOW

    settings.unlink()
    assert of_kind(refresh(repos.a, now=NOW + timedelta(seconds=6)), "drift.upstream") == []


def test_an_idle_team_member_holding_work_in_progress_needs_a_nudge() -> None:
    tasks = board_of(task("1", "ben"), task("2", "ben"), task("3", "ben", "completed"), task("4", "ana"), task("5", "zed", "paused"))
    idle = [IdleMember("ben", "crew"), IdleMember("zed", "crew"), IdleMember("cy", "crew")]
    alerts = detect_idle_with_task(tasks, idle)
    assert len(alerts) == 1, "zed's task is paused and cy holds nothing: only ben is stuck"
    alert = alerts[0]
    assert (alert.key, alert.kind, alert.severity) == ("agent.idle_with_task:crew:ben", "agent.idle_with_task", Severity.WARNING)
    assert alert.tasks == ("1", "2") and alert.agents == ("ben",)
    assert alert.message == "ben (crew) is idle while #1 and #2 are in progress under its name"
    assert alert.action.startswith('nudge ben: board message ben "..."')
    assert detect_idle_with_task(tasks, []) == []


def test_a_nudge_to_a_name_board_cannot_write_to_says_so() -> None:
    alerts = detect_idle_with_task(board_of(task("1", "dr.who")), [IdleMember("dr.who", "crew", messageable=False)])
    assert "cannot message it" in alerts[0].action and "board message" not in alerts[0].action
