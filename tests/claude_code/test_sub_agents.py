"""A sub-agent the real Claude Code starts (its Agent tool) is a row of its own under its parent."""

from __future__ import annotations

import json
from pathlib import Path

from board.store import Store
from tests.claude_code.client import Claude, agent_record, hook_log, logged_calls
from tests.claude_code.fake_api import Turn, tool


def test_a_sub_agent_is_its_own_row_under_its_parent_and_its_end_leaves_the_parent_working(claude: Claude, hooked: Path) -> None:
    store = Store.open(hooked)
    task = store.claim_task(store.create("models").id, "alice")
    script = [
        tool("Agent", description="write the module", prompt="write src/sub.py", subagent_type="general-purpose"),
        tool("Write", file_path=str(hooked / "src" / "sub.py"), content="sub = 1\n"),  # the sub-agent's call
        Turn(text="Sub-agent done."),  # the sub-agent's last answer: it stops
        tool("Bash", command="cat .tasks/agents/alice.json > after-sub.json", description="look at the board"),
    ]
    env = {"BOARD_AGENT": "alice", "BOARD_TASK_ID": task.id, "BOARD_WORKSPACE": str(hooked)}
    session = claude.run(hooked, script, env=env)
    assert session.returncode == 0, session.stderr
    assert (hooked / "src" / "sub.py").read_text() == "sub = 1\n"  # the sub-agent really ran

    # While alice's session ran on after its sub-agent stopped, alice was working, as herself.
    seen = json.loads((hooked / "after-sub.json").read_text())
    assert (seen["activity"], seen.get("agentType")) == ("working", None), hook_log(hooked)

    rows = sorted(p.stem for p in (hooked / ".tasks" / "agents").glob("*.json"))
    subs = [name for name in rows if name != "alice"]
    assert len(subs) == 1 and subs[0].startswith("alice-general-purpose-"), (rows, hook_log(hooked))
    sub = agent_record(hooked, subs[0])
    assert (sub["parent"], sub["agentType"], sub["activity"], sub["task"]) == ("alice", "general-purpose", "gone", task.id)
    # Its call is its own, on the task its parent works on; the parent's calls are the parent's.
    on_task = [(c["agent"], c["tool"]) for c in logged_calls(hooked, task=task.id)]
    assert on_task == [(subs[0], "Write"), ("alice", "Agent"), ("alice", "Bash")], hook_log(hooked)  # Agent returns when its sub-agent did
    assert agent_record(hooked, "alice")["activity"] == "gone"  # the session's end, not the sub-agent's
