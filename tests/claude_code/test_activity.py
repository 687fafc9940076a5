"""What the agents panel shows of a Claude Code session while it works, between turns too."""

from __future__ import annotations

import json
from pathlib import Path

from tests.claude_code.client import Claude, hook_log
from tests.claude_code.fake_api import Turn, tool


def snapshot(name: str) -> Turn:
    """A Bash call copying the session's agent record aside, as the board holds it at that moment."""
    return tool("Bash", command=f"cat .tasks/agents/claude-*.json > {name}", description="look at the board")


def test_a_session_shows_working_through_its_second_turn(claude: Claude, hooked: Path) -> None:
    script = [
        snapshot("first-turn.json"),
        Turn(text="First part done."),
        snapshot("second-turn.json"),
        tool("Read", file_path=str(hooked / "second-turn.json")),
        snapshot("after-a-call.json"),
        Turn(text="Second part done."),
    ]
    session = claude.run(hooked, script, prompts=["do the first part", "now the second part"])
    assert session.returncode == 0, session.stderr
    assert [m["result"] for m in session.messages if m.get("type") == "result"] == ["First part done.", "Second part done."]
    seen = {name: json.loads((hooked / f"{name}.json").read_text())["activity"] for name in ("first-turn", "second-turn", "after-a-call")}
    assert seen == {"first-turn": "working", "second-turn": "working", "after-a-call": "working"}, hook_log(hooked)
