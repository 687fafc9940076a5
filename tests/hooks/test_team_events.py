"""Sub-agents and agent teams, as the installed ``board hook`` records them: one row per agent.

``payloads/team-2.1.197.jsonl`` is every hook event the real Claude Code 2.1.197 sent while its
interactive TUI ran an agent team (the lead started teammate ``ben``, in-process, who wrote a
file and ran a command, then idled); ``team-config-2.1.197.json`` is the team's config.json as
the lead printed it then. Paths read ``{cwd}`` (the workspace) and ``{home}`` (HOME).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path


from board.store import Store
from tests.claude_code.client import board_script
from tests.hooks.delivery import deliver
from tests.hooks.test_hook_events import PAYLOADS, agent_record, payload, silent_ok

TEAM = "session-a0383c7b"


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOARD_", "CLAUDE_"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), **extra)
    return env


def hook(workspace: Path, data: dict, env: dict[str, str]) -> subprocess.CompletedProcess:
    return deliver(workspace, data["hook_event_name"], json.dumps(data), env=env, cwd=workspace)


def agents_json(workspace: Path, env: dict[str, str]) -> dict:
    done = subprocess.run([board_script(), "-w", str(workspace), "agents", "--json"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def rows(workspace: Path) -> list[str]:
    return sorted(p.stem for p in (workspace / ".tasks" / "agents").glob("*.json"))


def calls_of(workspace: Path, name: str) -> list[str]:
    log = workspace / ".tasks" / "agents" / f"{name}.calls.jsonl"
    return [json.loads(line)["tool"] for line in log.read_text().splitlines()] if log.exists() else []


def test_a_sub_agent_of_a_worker_is_a_row_under_it_and_its_end_leaves_the_worker_working(hooked: Path, tmp_path_factory) -> None:
    store = Store.open(hooked)
    task = store.claim_task(store.create("models").id, "alice")
    env = environment(tmp_path_factory.mktemp("home"), BOARD_AGENT="alice", BOARD_TASK_ID=task.id, BOARD_WORKSPACE=str(hooked))
    silent_ok(hook(hooked, payload("SessionStart", hooked), env))
    silent_ok(hook(hooked, payload("SubagentStart", hooked), env))
    silent_ok(hook(hooked, payload("PostToolUse", hooked, agent_id="a7f3c2e1b9d84b6f", agent_type="Explore"), env))
    silent_ok(hook(hooked, payload("SubagentStop", hooked), env))
    alice = agent_record(hooked, "alice")
    assert (alice["activity"], alice.get("agentType")) == ("working", None)
    sub = agent_record(hooked, "alice-Explore-a7f3c2e1")
    assert (sub["parent"], sub["agentType"], sub["activity"], sub["task"]) == ("alice", "Explore", "gone", task.id)
    assert calls_of(hooked, "alice-Explore-a7f3c2e1") == ["Write"] and calls_of(hooked, "alice") == []
    listed = [(a["name"], a["state"], a["parent"]) for a in agents_json(hooked, env)["agents"]]
    assert listed == [("alice", "working", None), ("alice-Explore-a7f3c2e1", "gone", "alice")]


def test_a_recorded_team_is_one_row_per_member_on_the_workspaces_board(hooked: Path, tmp_path_factory) -> None:
    home = tmp_path_factory.mktemp("home")
    env = environment(home)
    recorded = [json.loads(line.replace("{cwd}", str(hooked)).replace("{home}", str(home))) for line in (PAYLOADS / "team-2.1.197.jsonl").read_text().splitlines()]
    team_dir = home / ".claude" / "teams" / TEAM
    for data in recorded:
        if data.get("tool_name") == "Agent" and data["hook_event_name"] == "PreToolUse":
            # The Agent call made the team: its config.json and its (empty) task list appear.
            team_dir.mkdir(parents=True)
            (team_dir / "config.json").write_text((PAYLOADS / "team-config-2.1.197.json").read_text().replace("{cwd}", str(hooked)))
            (home / ".claude" / "tasks" / TEAM).mkdir(parents=True)
        silent_ok(hook(hooked, data, env))

    assert rows(hooked) == ["ben", "team-lead"]
    assert calls_of(hooked, "ben") == ["Write", "Bash"]
    assert calls_of(hooked, "team-lead") == ["Agent", "Bash", "Bash"]
    ben = agent_record(hooked, "ben")  # idle after his turn; gone with the session he ran in
    assert (ben["activity"], ben["team"], ben["agentType"]) == ("gone", TEAM, "general-purpose")
    lead = agent_record(hooked, "team-lead")
    assert (lead["activity"], lead["team"]) == ("gone", TEAM)
    assert list((home / ".claude" / "tasks" / TEAM).iterdir()) == []  # nothing written beside the team's empty list
    listed = [(a["name"], a["team"], a["lead"], a["state"], a["toolCalls"]) for a in agents_json(hooked, env)["agents"]]
    assert listed == [("team-lead", TEAM, True, "gone", 3), ("ben", TEAM, False, "gone", 2)]
