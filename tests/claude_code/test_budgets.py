"""A budget stops the real Claude Code under ``board run`` while it works, not when its turn ends."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from board.store import Store
from tests.claude_code.client import Claude, board, board_script, hook_log
from tests.claude_code.fake_api import FakeAnthropic, Turn, tool

SONNET = "claude-sonnet-4-5-20250929"
#: 100,000 output tokens of Sonnet at $15 a million: $1.50, over a $1.00 budget at once.
EXPENSIVE = {"input_tokens": 10, "output_tokens": 100_000, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
RUN_LIMIT_SECONDS = 240


def test_a_run_pauses_the_task_and_stops_claude_once_its_budget_is_spent(claude: Claude, hooked: Path, tmp_path: Path) -> None:
    Store.open(hooked).create("the expensive task")
    (hooked / ".tasks" / "board.toml").write_text("[lease]\nseconds = 6\n[coordinator]\ntick_seconds = 0.5\n")
    marker = tmp_path / "slept-to-the-end"
    script = [
        Turn(calls=tool("Write", file_path=str(hooked / "src" / "a.py"), content="a = 1\n").calls, usage=EXPENSIVE),
        # The budget is spent by now: this call is stopped before it ends.
        tool("Bash", command=f"sleep 90 && touch {marker}", description="a long step", timeout=120000),
        Turn(text="Done."),
    ]
    with FakeAnthropic(script) as api:
        env = claude.environment(ANTHROPIC_BASE_URL=api.url)
        command = [str(claude.executable), "-p", "do task {id}", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--model", SONNET]
        run = subprocess.Popen(
            [board_script(), "run", "--workers", "1", "--budget-usd", "1", "--", *command],
            cwd=hooked, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            output, _ = run.communicate(timeout=RUN_LIMIT_SECONDS)
        finally:
            if run.poll() is None:
                subprocess.run(["kill", "-KILL", f"-{run.pid}"], check=False)
                run.wait()
        served = api.exchange.turns_served

    task = Store.open(hooked).get("1")
    log = (hooked / ".tasks" / "logs" / "run.log").read_text() if (hooked / ".tasks" / "logs" / "run.log").exists() else output
    assert task.status == "paused" and task.policy is not None and task.policy.name == "budget", (task, output, hook_log(hooked))
    assert task.budget is not None and task.budget.usd == 1.0  # the run's budget, written on the task it started
    assert "spent $1.50 of $1.00" in task.policy.reason, task.policy.reason
    assert "budget" in log and "its command was stopped" in log, log
    # Claude Code was stopped in its long step: the step never finished, the last turn never came.
    assert not marker.exists() and served == 2, (served, output)
    alerts = json.loads(board("alerts", "--json", cwd=hooked, env=env).stdout)
    assert any(a["kind"] == "budget.over" and a["tasks"] == ["1"] for a in alerts), alerts

    # Undone by a person, the task goes on and is not paused again for the same budget.
    undone = board("undo", "1", cwd=hooked, env=env)
    assert undone.returncode == 0, undone.stderr
    once = board("coordinator", "--once", cwd=hooked, env=env)
    assert once.returncode == 0, once.stderr
    assert Store.open(hooked).get("1").status == "in_progress"
    # A new budget is judged afresh: still over it, the task is paused again.
    raised = board("task", "update", "1", "--budget-usd", "1.2", cwd=hooked, env=env)
    assert raised.returncode == 0, raised.stderr
    assert board("coordinator", "--once", cwd=hooked, env=env).returncode == 0
    assert Store.open(hooked).get("1").status == "paused"
