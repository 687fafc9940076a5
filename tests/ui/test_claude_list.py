"""The dashboard on a Claude Code task list: opened in place, following Claude Code's rewrites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.ui.lanes import Lane
from tests.core.test_claude_lists import claude_writes
from tests.ui.conftest import make_app, settled, wait_for

pytestmark = pytest.mark.anyio


@pytest.fixture
def claude_list(tmp_path: Path) -> Path:
    directory = tmp_path / "tasks" / "plan"
    directory.mkdir(parents=True)
    (directory / ".lock").touch()
    (directory / ".highwatermark").write_text("3")
    claude_writes(directory, {"id": "1", "subject": "Read the code", "status": "completed", "blocks": ["2"], "blockedBy": []})
    claude_writes(directory, {"id": "2", "subject": "Write the parser", "status": "pending", "blocks": ["3"], "blockedBy": ["1"]})
    claude_writes(directory, {"id": "3", "subject": "Test the parser", "status": "pending", "blocks": [], "blockedBy": ["2"]})
    return directory


async def test_a_claude_code_list_updates_live_and_keys_write_its_format(claude_list: Path) -> None:
    app = make_app(claude_list, watch=True, reconcile_seconds=30)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        assert app.lanes.lane_index("2")[0] == Lane.READY
        app.select("2")
        await pilot.press("s")
        await wait_for(pilot, lambda: json.loads((claude_list / "2.json").read_text())["status"] == "in_progress", message="start written")
        written = json.loads((claude_list / "2.json").read_text())
        assert set(written) <= {"id", "subject", "description", "activeForm", "status", "owner", "blocks", "blockedBy", "metadata"}
        assert written["metadata"]["board"]["status"] == "in_progress"
        # Claude Code marks it done, rewriting the whole file with only its own fields.
        written["status"] = "completed"
        claude_writes(claude_list, written)
        await wait_for(pilot, lambda: app.lanes.lane_index("2")[0] == Lane.DONE, message="Claude Code's completion")
        assert app.lanes.lane_index("3")[0] == Lane.READY


async def test_a_claude_rewrite_that_drops_boards_fields_shows_at_once(claude_list: Path) -> None:
    from board.store import Store

    Store.open(claude_list).set_status("2", "in_progress", owner="board-agent")  # version 2 in metadata.board
    app = make_app(claude_list, watch=True, reconcile_seconds=30)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        assert app.lanes.lane_index("2")[0] == Lane.IN_PROGRESS
        doc = json.loads((claude_list / "2.json").read_text())
        doc["status"] = "pending"
        doc["owner"] = ""
        doc["metadata"].pop("board")  # Claude Code rewrote it: board's version is gone with its fields
        claude_writes(claude_list, doc)
        await wait_for(pilot, lambda: app.lanes.lane_index("2")[0] == Lane.READY, message="Claude Code's rewrite on screen")
        assert app.graph.tasks["2"].version == 0


def header_line(app) -> str:
    from board.ui.widgets.board_header import BoardHeader

    return str(app.query_one(BoardHeader).render())


async def test_a_done_task_claude_code_deletes_still_counts_in_the_header_and_the_done_column(claude_list: Path) -> None:
    app = make_app(claude_list, watch=True, reconcile_seconds=30)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        assert "1/3 done" in header_line(app)
        (claude_list / "1.json").unlink()  # Claude Code deletes a task once it is done
        await wait_for(pilot, lambda: getattr(app.graph.tasks.get("1"), "removedBy", None) == "claude-code", message="the deleted task kept on screen")
        assert "1/3 done" in header_line(app)
        assert app.lanes.lane_index("1")[0] == Lane.DONE
        assert app.lanes.lane_index("2")[0] == Lane.READY
        await wait_for(pilot, lambda: "removed" in app.export_screenshot(), message="the card's mark")
