"""The dashboard follows the files: other processes' writes, bad files, a vanishing .tasks/."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from board.alerts import Severity
from board.status import Status
from board.ui.lanes import Lane
from tests.conftest import REPO
from tests.ui.boards import SAMPLE_ALERTS, coordinator_lock_held, write_alerts_file
from tests.ui.conftest import make_app, settled, wait_for

pytestmark = pytest.mark.anyio  # async tests run on asyncio (anyio ships with watchfiles)


def run_board(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "board", *args], check=True, cwd=REPO, capture_output=True)


def column_text(app, lane: Lane) -> str:
    column = app.kanban.columns[lane]
    return "\n".join(column.render_line(y).text for y in range(column.size.height))


async def test_a_write_from_another_process_shows_on_screen(sample: Path) -> None:
    app = make_app(sample, watch=True, reconcile_seconds=30)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        assert "77%" not in column_text(app, Lane.IN_PROGRESS)
        run_board("--workspace", str(sample), "task", "update", "7", "--progress", "77")
        await wait_for(pilot, lambda: app.graph.tasks["7"].progress == 77, message="progress change read")
        await pilot.pause()
        assert "77%" in column_text(app, Lane.IN_PROGRESS)
        run_board("--workspace", str(sample), "task", "update", "7", "--status", "completed")
        await wait_for(pilot, lambda: app.lanes.lane_index("7") is not None and app.lanes.lane_index("7")[0] == Lane.DONE, message="completion")
        # #21 waited only on #7: it moved to Ready without being written itself.
        assert app.lanes.lane_index("21")[0] == Lane.READY


async def test_half_written_files_become_alerts_and_the_rest_keeps_working(sample: Path) -> None:
    app = make_app(sample, watch=True, reconcile_seconds=30)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        path = sample / ".tasks" / "task_7.json"
        good = path.read_text()
        path.write_text(good[: len(good) // 2])
        await wait_for(pilot, lambda: any(a.kind == "file.invalid" for a in app.alerts), message="invalid alert")
        assert not app.alerts_from_coordinator  # no coordinator: the dashboard's own evaluation
        assert error_notifications(app) == [next(a.message for a in app.alerts if a.kind == "file.invalid")]
        assert app.view.badge("7") == (Severity.ERROR, 1)
        assert app.graph.tasks["7"].status == Status.IN_PROGRESS  # the last good copy stays
        path.write_text(good.replace('"progress": 60', '"progress": 61'))
        await wait_for(pilot, lambda: not any(a.kind == "file.invalid" for a in app.alerts), message="alert cleared")
        await wait_for(pilot, lambda: app.graph.tasks["7"].progress == 61, message="repaired file read")


async def test_tasks_directory_deleted_and_recreated(sample: Path, tmp_path: Path) -> None:
    backup = tmp_path / "backup"
    shutil.copytree(sample / ".tasks", backup)
    app = make_app(sample, watch=True, reconcile_seconds=0.5)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        shutil.rmtree(sample / ".tasks")
        await wait_for(pilot, lambda: len(app.graph) == 0, message="board emptied")
        await wait_for(pilot, lambda: "is gone" in app.header_bar._hint, message="header says the board is gone")
        shutil.copytree(backup, sample / ".tasks")
        await wait_for(pilot, lambda: len(app.graph) == 32, message="board back")
        assert app.header_bar._hint == ""
        run_board("--workspace", str(sample), "task", "update", "8", "--progress", "88")
        await wait_for(pilot, lambda: app.graph.tasks["8"].progress == 88, message="watching the new directory")


def write_alerts_elsewhere(workspace: Path, alerts: list[dict[str, object]]) -> None:
    """Another process writes ``alerts.json``, as the coordinator does."""
    code = "import json, sys; from pathlib import Path; from tests.ui.boards import write_alerts_file; write_alerts_file(Path(sys.argv[1]), json.loads(sys.argv[2]))"
    subprocess.run([sys.executable, "-c", code, str(workspace), json.dumps(alerts)], check=True, cwd=REPO, capture_output=True)


def error_notifications(app) -> list[str]:
    return [n.message for n in app._notifications if n.severity == "error"]


async def test_a_new_error_is_notified_once_and_its_key_jumps_to_its_task(sample: Path) -> None:
    warnings_only = [a for a in SAMPLE_ALERTS if a["severity"] != "error"]
    drift = next(a for a in SAMPLE_ALERTS if a["severity"] == "error")
    write_alerts_file(sample, warnings_only)
    with coordinator_lock_held(sample):
        app = make_app(sample, watch=True, reconcile_seconds=30)
        async with app.run_test(size=(150, 42)) as pilot:
            await settled(pilot)
            assert app.alerts_from_coordinator and error_notifications(app) == []
            write_alerts_elsewhere(sample, [drift, *warnings_only])
            await wait_for(pilot, lambda: any(a.key == drift["key"] for a in app.alerts), message="the new error")
            assert error_notifications(app) == [drift["message"]]
            # The next tick rewrites the file with the error still there and one more warning: no repeat.
            moved = {**warnings_only[0], "key": "conflict.files:7,9", "tasks": ["7", "9"]}
            write_alerts_elsewhere(sample, [drift, moved, *warnings_only])
            await wait_for(pilot, lambda: len(app.alerts) == 5, message="the rewritten file")
            assert error_notifications(app) == [drift["message"]]
            # e, then enter on the first (worst) alert: its task is selected and the board has the keys.
            app.select("1")
            await pilot.press("e", "enter")
            await pilot.pause()
            assert app.view.selected == "7" and app.focused is app.kanban


OUTSIDE_WRITER = """
import json, sys
path, version = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
doc.update(status="in_progress", owner="outsider", progress=42)
if version == "none":
    del doc["version"]
else:
    doc["version"] = doc["version"] + int(version)
open(path, "w").write(json.dumps(doc))
"""


@pytest.mark.parametrize("version", ["none", "0", "-1"], ids=["no version", "same version", "lower version"])
async def test_an_outside_rewrite_shows_whatever_its_version(sample: Path, version: str) -> None:
    app = make_app(sample, watch=True, reconcile_seconds=30)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        assert app.lanes.lane_index("26")[0] == Lane.READY
        path = sample / ".tasks" / "task_26.json"
        subprocess.run([sys.executable, "-c", OUTSIDE_WRITER, str(path), version], check=True, timeout=60)
        await wait_for(pilot, lambda: app.lanes.lane_index("26")[0] == Lane.IN_PROGRESS, message="the outside edit on screen")
        shown = app.graph.tasks["26"]
        assert (shown.owner, shown.progress) == ("outsider", 42)
        assert "42%" in column_text(app, Lane.IN_PROGRESS)


async def test_what_the_readers_post_as_the_dashboard_closes_is_let_go(sample: Path) -> None:
    """The readers run in threads until the dashboard has closed: a message they post meanwhile
    reaches an app whose screens are gone, and must not end it with an error."""
    from board.ui.messages import AgentsChanged, AlertsChanged, BoardChanged

    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        moved = app.graph.tasks["7"].model_copy(update={"status": Status.COMPLETED, "owner": "zoe"})
    assert not app.is_running and not app.screen_stack
    app.on_board_changed(BoardChanged(tasks=[moved]))
    app.on_alerts_changed(AlertsChanged([], from_coordinator=False))
    app.on_agents_changed(AgentsChanged([]))


async def test_what_needs_the_person_is_worked_out_from_the_tasks_only_once_the_tasks_change(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked every second: alerts change on their own (an alert's wording speaks of the hours a
    task has waited), and on a large board the tasks' part cost an idle dashboard a tenth of a
    core each time it was worked out again."""
    from board import notify
    from board.alerts import Alert
    from board.ui.messages import AlertsChanged, BoardChanged

    worked_out = 0
    tasks_part = notify.tasks_needing_you

    def counted(*args, **kwargs):
        nonlocal worked_out
        worked_out += 1
        return tasks_part(*args, **kwargs)

    monkeypatch.setattr(notify, "tasks_needing_you", counted)
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        first = app._needs_you()
        assert app._needs_you() is first
        before = worked_out
        error = Alert(key="graph.cycle:1,2", kind="graph.cycle", severity=Severity.ERROR, message="#1 and #2 wait on each other", action="drop one edge", tasks=("1", "2"))
        app.on_alerts_changed(AlertsChanged([error], from_coordinator=False))
        notices = app._needs_you()
        assert worked_out == before
        assert [n.key for n in notices] == [n.key for n in first if not n.key.startswith("alert:")] + ["alert:graph.cycle:1,2"]
        moved = app.graph.tasks["7"].model_copy(update={"status": Status.FAILED, "error": "tests failed"})
        app.session.store.tasks["7"] = moved
        app.on_board_changed(BoardChanged(tasks=[moved]))
        assert any(n.key.startswith("failed:7:") for n in app._needs_you())
        assert worked_out == before + 1


async def test_errors_already_on_a_large_board_are_announced_together_counted_as_the_board_counts(sample: Path) -> None:
    from board.alerts import Alert

    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.clear_notifications()
        errors = [Alert(key=f"human.waiting:{n}", kind="human.waiting", severity=Severity.ERROR, message=f"#{n} needs you", action="answer it", tasks=(str(n),)) for n in range(1000, 2640)]
        app._notify_new_errors(errors, first=True)
        await pilot.pause()
        [told] = list(app._notifications)
        assert told.title == "1,640 errors on this board"
        assert told.message == "#1000 needs you (and 1,639 more: press e for the alerts)"
