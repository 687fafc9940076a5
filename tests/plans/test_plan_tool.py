"""``plan_import`` over MCP: an agent that planned puts its plan on the board in one call, a
dry run first; a refused plan is a tool error naming its line."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.mcp.connect import board_mcp, ok, refused
from tests.plans.helpers import board_files, tasks_by_subject

PLAN = "# Plan\n\n## Schema\npriority: high\n- Tables\n- Indexes\n  after: Tables\n\n## API\nafter: 1\n"


def test_a_plan_dry_run_then_imported_then_imported_again(workspace: Path) -> None:
    async def flow() -> None:
        async with board_mcp(workspace, env={"BOARD_AGENT": "planner"}) as client:
            before = board_files(workspace)
            preview = await ok(client, "plan_import", {"text": PLAN, "dry_run": True})
            assert preview["dryRun"] and [row["subject"] for row in preview["created"]] == ["Schema", "Tables", "Indexes", "API"]
            assert [[task["subject"] for task in wave] for wave in preview["waves"]] == [["Tables"], ["Indexes"], ["Schema"], ["API"]]
            assert board_files(workspace) == before
            made = await ok(client, "plan_import", {"text": PLAN})
            assert [task["id"] for task in made["criticalPath"]] == [row["id"] for row in made["created"][1:3]] + [made["created"][0]["id"], made["created"][3]["id"]]
            again = await ok(client, "plan_import", {"text": PLAN})
            assert len(again["unchanged"]) == 4 and again["created"] == []
            line = await refused(client, "plan_import", {"text": "- A\n  after: B\n- B\n  after: A\n"})
            assert line.endswith("plan.md:1: a dependency cycle: 'A' → 'B' → 'A'; nothing was written")

    anyio.run(flow)
    tasks = tasks_by_subject(workspace)
    assert set(tasks) == {"Schema", "Tables", "Indexes", "API"} and tasks["API"].blocked_by == [tasks["Schema"].id]
    assert tasks["Schema"].priority == "high" and tasks["Indexes"].blocked_by == [tasks["Tables"].id]
