"""What a task spent in tokens, on its card, in its detail view and in the board's header, live."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.ui.card import CARD_HEIGHT
from board.ui.lanes import Lane
from tests.ui.conftest import make_app, settled, wait_for

pytestmark = pytest.mark.anyio


def spend_line(agent: str, task: str, output: int, cache_read: int) -> str:
    """One line of a tokens log as ``board.claude.transcripts`` writes it (claude-sonnet-4-5: $15 a
    million output tokens, $0.30 a million cache reads)."""
    return json.dumps({"ts": "2026-11-24T21:00:00Z", "agent": agent, "task": task, "model": "claude-sonnet-4-5", "messages": 1,
                       "input": 0, "output": output, "cacheWrite": 0, "cacheRead": cache_read}) + "\n"  # fmt: skip


def log_spend(sample: Path, agent: str, task: str, output: int, cache_read: int) -> None:
    """What one look at a transcript appends: the task's log, then its agent's."""
    line = spend_line(agent, task, output, cache_read)
    (sample / ".tasks" / "tokens").mkdir(exist_ok=True)
    with (sample / ".tasks" / "tokens" / f"{task}.jsonl").open("a") as handle:
        handle.write(line)
    with (sample / ".tasks" / "agents" / f"{agent}.tokens.jsonl").open("a") as handle:
        handle.write(line)


async def test_a_tasks_cost_shows_on_its_card_in_its_detail_and_in_the_header_as_it_grows(sample: Path) -> None:
    (sample / ".tasks" / "board.toml").write_text("[budget]\ntask_usd = 20\n")
    app = make_app(sample, watch=True, reconcile_seconds=1)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)
        column = app.kanban.columns[Lane.IN_PROGRESS]

        def foot(task_id: str) -> str:
            """The card's last line as the column draws it (its cache included)."""
            index = app.lanes.lane_index(task_id)[1]
            return column.render_line(index * CARD_HEIGHT + 2 - int(column.scroll_y)).text

        assert "$" not in foot("7") and "spent" not in app.header_bar.render().plain
        log_spend(sample, "alice", "7", 1_000_000, 1_000_000)  # $15.30
        await wait_for(pilot, lambda: "$15.30" in foot("7"), timeout=30, message="the cost on #7's card")
        assert "$15.30 spent" in app.header_bar.render().plain
        assert "$" not in foot("8")  # a task that spent nothing shows nothing

        log_spend(sample, "carol", "8", 100_000, 0)  # $1.50 more for the board
        await wait_for(pilot, lambda: "$16.80 spent" in app.header_bar.render().plain, timeout=30, message="the board's total")
        assert "$1.50" in foot("8")

        app.select("7")
        await pilot.press("enter")
        await pilot.pause()
        fields = app.screen.query_one("#detail-fields")
        shown = "\n".join(fields.render_line(y).text for y in range(fields.size.height))
        assert "2,000,000 tokens, $15.30" in shown, shown
        assert "$20.00 (the board default): 76% spent" in shown, shown
