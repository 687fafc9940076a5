"""The dashboard on a hostile board: special entries in .tasks/ and a disk that refuses writes.

A FIFO or a link to /dev/zero used to freeze the dashboard (it could not even be quit); a
write refused by the disk used to end it with a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from board.ui.lanes import Lane
from tests.conftest import REPO, SAMPLE
from tests.ui.conftest import make_app, settled, wait_for

pytestmark = pytest.mark.anyio


def error_notifications(app) -> list[str]:
    return [n.message for n in app._notifications if n.severity == "error"]


async def test_a_fifo_and_a_link_to_dev_zero_appearing_never_stop_the_dashboard(sample: Path) -> None:
    app = make_app(sample, watch=True, reconcile_seconds=1)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        tasks = sample / ".tasks"
        os.mkfifo(tasks / "task_90.json")
        (tasks / "task_91.json").symlink_to("/dev/zero")
        await wait_for(pilot, lambda: {"task_90.json", "task_91.json"} <= {Path(key).name for key in app.store.invalid}, timeout=30, message="both entries reported")
        reasons = {Path(key).name: reason for key, reason in app.store.invalid.items()}
        assert "FIFO" in reasons["task_90.json"] and "symbolic link" in reasons["task_91.json"]
        # The board goes on following other writers.
        subprocess.run([sys.executable, "-m", "board", "-w", str(sample), "task", "update", "7", "--status", "completed", "--force"], check=True, cwd=REPO, capture_output=True)
        await wait_for(pilot, lambda: app.lanes.lane_index("7") is not None and app.lanes.lane_index("7")[0] == Lane.DONE, timeout=30, message="a later write shown")
        await pilot.press("q")
        await wait_for(pilot, lambda: app.return_code is not None or not app.is_running, timeout=10, message="the dashboard to quit")


async def test_a_write_the_disk_refuses_is_one_notification_and_the_dashboard_lives_on(small_disk: Path) -> None:
    workspace = small_disk / "sample"
    shutil.copytree(SAMPLE, workspace)
    app = make_app(workspace)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        remounted = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True, text=True)
        if remounted.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {remounted.stderr.strip()}")
        before = (workspace / ".tasks" / "task_32.json").read_bytes()
        app.select("32")
        await pilot.press("s")
        await wait_for(pilot, lambda: error_notifications(app), timeout=30, message="the refusal")
        assert error_notifications(app)[-1].startswith("start #32: the file system is read-only"), error_notifications(app)
        assert len(error_notifications(app)[-1].splitlines()) == 1
        assert (workspace / ".tasks" / "task_32.json").read_bytes() == before
        assert app.is_running
        await pilot.press("down")  # still answering keys
        await pilot.press("q")


async def test_a_task_file_nested_a_thousand_deep_is_counted_unreadable_and_the_dashboard_lives_on(sample: Path) -> None:
    """Such a file once took the dashboard down at start (exiting 0) and left a running one
    showing nothing."""
    app = make_app(sample, watch=True, reconcile_seconds=1)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        path = sample / ".tasks" / "task_7.json"
        path.write_text(path.read_text().rstrip().removesuffix("}") + ', "x": ' + "[" * 999 + "]" * 999 + "}\n")
        # The write is not atomic: the dashboard may first meet the file half written (not JSON
        # yet), and says so, before it reads the whole of it.
        await wait_for(
            pilot,
            lambda: any(alert.kind == "file.invalid" and alert.tasks == ("7",) and "nested more than" in alert.message for alert in app.alerts),
            timeout=30,
            message="the alert to say the file is nested too deep",
        )
        await wait_for(pilot, lambda: "1 unreadable" in app.header_bar.render().plain, timeout=30, message="the header to count it")
        # The board goes on following other writers.
        subprocess.run([sys.executable, "-m", "board", "-w", str(sample), "task", "update", "8", "--status", "completed", "--force"], check=True, cwd=REPO, capture_output=True)
        await wait_for(pilot, lambda: app.lanes.lane_index("8") is not None and app.lanes.lane_index("8")[0] == Lane.DONE, timeout=30, message="a later write shown")
        assert app.is_running


async def test_an_agents_token_cost_shows_beside_its_calls_once_it_has_spent_any(sample: Path) -> None:
    """The tokens Claude Code's transcripts give an agent (``board.claude.transcripts``), priced: the
    agents panel shows the estimate as its log grows, and nothing for an agent that spent none."""
    from board.ui.widgets.agents_panel import AgentsPanel

    app = make_app(sample, watch=True, reconcile_seconds=1)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        panel = app.query_one(AgentsPanel)
        assert "$" not in panel.render().plain
        # One message of claude-sonnet-4-5: 1M output tokens at $15 and 1M cache reads at $0.30.
        line = {"ts": "2026-11-24T21:00:00Z", "agent": "alice", "task": "7", "model": "claude-sonnet-4-5", "messages": 1,
                "input": 0, "output": 1_000_000, "cacheWrite": 0, "cacheRead": 1_000_000}
        (sample / ".tasks" / "agents" / "alice.tokens.jsonl").write_text(json.dumps(line) + "\n")
        await wait_for(pilot, lambda: "$15.30" in panel.render().plain, timeout=30, message="alice's cost in the panel")
        shown = [row for row in panel.render().plain.splitlines() if "$" in row]
        assert len(shown) == 1 and "alice" in shown[0], shown


async def test_an_agents_own_todo_list_shows_beside_it_as_done_of_total(sample: Path) -> None:
    """The todo list Claude Code's hooks keep on an agent's record (``todos``: id to done)."""
    from board.ui.widgets.agents_panel import AgentsPanel

    app = make_app(sample, watch=True, reconcile_seconds=1)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        panel = app.query_one(AgentsPanel)
        assert "todos" not in panel.render().plain
        record = sample / ".tasks" / "agents" / "alice.json"
        data = json.loads(record.read_text())
        record.write_text(json.dumps({**data, "todos": {"1": True, "2": False, "3": False}}))
        await wait_for(pilot, lambda: "1/3 todos" in panel.render().plain, timeout=30, message="alice's todos in the panel")
        shown = [row for row in panel.render().plain.splitlines() if "todos" in row]
        assert len(shown) == 1 and "alice" in shown[0], shown
