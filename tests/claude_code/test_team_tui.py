"""An agent team in the real Claude Code TUI, run in tmux as a person runs it: the lead starts two
teammates, each takes a board task of its own and works on it. ``board agents`` and the
dashboard's agents panel show three rows, each agent with its own calls, state, tokens and task.

Claude Code 2.1.197 has no TeamCreate: a session has one team, made when its Agent tool starts
an agent with a ``name`` (a teammate, in-process), and only with agent teams turned on
(``CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS``; without it the same call runs a plain sub-agent)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from board.store import Store
from tests.claude_code.client import Claude, Unavailable, board, board_script, hook_log
from tests.claude_code.fake_api import MAIN, FakeAnthropic, Turn, tool, usage_of
from tests.claude_code.tui import Tmux, prepare_interactive, wait_until
from tests.conftest import LONG

pytestmark = LONG

SONNET = "claude-sonnet-4-5-20250929"
TEAMMATES = ("ben", "cara")


def mark(name: str) -> str:
    """What a teammate's prompt starts with: the fake API tells its conversation by it."""
    return f"TEAMMATE {name}:"


def usage(agent: int, turn: int) -> dict[str, int]:
    """Each agent's messages their own token counts, so a mix-up shows."""
    return {"input_tokens": 1000 * agent + turn, "output_tokens": 100 * agent + 7 * turn, "cache_creation_input_tokens": 10 * agent, "cache_read_input_tokens": 5000 * agent + turn}


def worker_script(workspace: Path, name: str, agent: int) -> list[Turn]:
    """Take a task, write and edit a file, run a command, look at the board, stop."""
    path = str(workspace / "src" / f"{name}.py")
    calls = [
        tool("Bash", command=f"{board_script()} claim --agent {name} --lease 600", description="take a task"),
        tool("Write", file_path=path, content=f"{name} = 1\n"),
        tool("Edit", file_path=path, old_string=f"{name} = 1", new_string=f"{name} = 2"),
        tool("Bash", command=f"{board_script()} agents --json > seen-by-{name}.json", description="look at the board"),
    ]
    return [Turn(calls=turn.calls, usage=usage(agent, n)) for n, turn in enumerate(calls)] + [Turn(text=f"{name} is done.", usage=usage(agent, len(calls)))]


def lead_script(workspace: Path) -> list[Turn]:
    spawn = [
        tool("Agent", description=f"teammate {name}", prompt=f"{mark(name)} take a board task and do it", subagent_type="general-purpose", name=name)
        for name in TEAMMATES
    ]
    own = worker_script(workspace, "team-lead", 3)
    return [Turn(calls=turn.calls, usage=usage(3, 10 + n)) for n, turn in enumerate(spawn)] + own


def agents(workspace: Path, env: dict[str, str]) -> dict[str, Any]:
    done = board("agents", "--json", cwd=workspace, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def tokens_of(turns: list[Turn]) -> dict[str, int]:
    fields = {"input": "input_tokens", "output": "output_tokens", "cacheWrite": "cache_creation_input_tokens", "cacheRead": "cache_read_input_tokens"}
    return {field: sum(usage_of(turn)[key] for turn in turns) for field, key in fields.items()}


def private_tmux(tmp_path: Path) -> Tmux:
    try:
        return Tmux(tmp_path / "tmux")
    except Unavailable as reason:
        pytest.skip(str(reason))


def start_the_team(tmux: Tmux, claude: Claude, workspace: Path, api: FakeAnthropic, **extra: str) -> dict[str, str]:
    """The TUI started in ``workspace`` and asked to start the team; returns its environment."""
    env = claude.environment(ANTHROPIC_BASE_URL=api.url, CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS="1", TERM="xterm-256color", **extra)
    # The lead on a priced model, so its cost shows; its teammates take the team's default.
    tmux.start("claude", [str(claude.executable), "--dangerously-skip-permissions", "--model", SONNET], cwd=workspace, env=env)
    wait_until(lambda: "bypass permissions on" in tmux.screen("claude"), "the prompt", explain=lambda: tmux.screen("claude"))
    tmux.type("claude", "start the team")
    return env


def test_a_lead_and_two_teammates_in_the_tui_are_three_rows_with_their_own_calls_states_tokens_and_tasks(claude: Claude, hooked: Path, tmp_path: Path) -> None:
    store = Store.open(hooked)
    for subject in ("models", "views", "migrations"):
        store.create(subject)
    prepare_interactive(claude, hooked)
    scripts = {MAIN: lead_script(hooked), **{mark(name): worker_script(hooked, name, n + 1) for n, name in enumerate(TEAMMATES)}}
    names = {MAIN: "team-lead", **{mark(name): name for name in TEAMMATES}}
    with FakeAnthropic(scripts[MAIN], agents={key: turns for key, turns in scripts.items() if key != MAIN}) as api, private_tmux(tmp_path) as tmux:
        env = start_the_team(tmux, claude, hooked, api)

        def as_expected() -> dict[str, Any] | None:
            """The agents as board lists them, once they are what the API served each: its
            scripted calls counted, every message's tokens, idle after its last turn."""
            if not api.script_spent:
                return None
            listed = agents(hooked, env)
            rows = {row["name"]: row for row in listed["agents"]}
            if set(rows) != set(names.values()):
                return None
            for key, name in names.items():
                served = api.served(key)
                calls = sum(len(turn.calls) for turn in served)
                tokens = {field: rows[name]["tokens"][field] for field in ("input", "output", "cacheWrite", "cacheRead")}
                if (rows[name]["toolCalls"], tokens, rows[name]["state"]) != (calls, tokens_of(served), "idle"):
                    return None
            return listed

        def progress() -> str:
            served = {names[key]: len(api.served(key)) for key in names}
            rows = {row["name"]: row for row in agents(hooked, env)["agents"]}
            wanted = {
                names[key]: (sum(len(turn.calls) for turn in api.served(key)), tokens_of(api.served(key)), "idle") for key in names
            }
            seen = {
                name: (row["toolCalls"], {field: row["tokens"][field] for field in ("input", "output", "cacheWrite", "cacheRead")}, row["state"])
                for name, row in rows.items()
            }
            return f"served {served}\nwanted {wanted}\nseen {seen}\n{tmux.screen('claude')}\n{json.dumps(agents(hooked, env), indent=1)}\n{hook_log(hooked)}"

        listed = wait_until(as_expected, "three idle agents with the calls and tokens the API served each", explain=progress)
        rows = {row["name"]: row for row in listed["agents"]}
        (team,) = listed["teams"]
        assert rows["team-lead"]["tokens"]["cost"] > 0 and all(rows[name]["tokens"]["unpriced"] for name in TEAMMATES), rows
        assert sorted(team["members"]) == ["ben", "cara", "team-lead"], team
        assert {name: (row["team"], row["lead"]) for name, row in rows.items()} == {"team-lead": (team["name"], True), "ben": (team["name"], False), "cara": (team["name"], False)}
        # Each claimed a task of its own, and its calls from the claim on counted there.
        board_now = Store.open(hooked)
        for name, row in rows.items():
            task = board_now.get(row["task"])
            assert (task.owner, str(task.status), task.tool_calls.total) == (name, "in_progress", 4), (name, hook_log(hooked))
        assert len({row["task"] for row in rows.values()}) == 3
        # Working, each as itself, while it looked at the board.
        for name in ("team-lead", *TEAMMATES):
            seen = {row["name"]: row for row in json.loads((hooked / f"seen-by-{name}.json").read_text())["agents"]}
            assert seen[name]["state"] == "working", (name, seen)
        assert (hooked / "src" / "ben.py").read_text() == "ben = 2\n" and (hooked / "src" / "cara.py").read_text() == "cara = 2\n"

        # board's own dashboard, beside it, shows the three in its agents panel.
        tmux.start("board", [board_script(), "ui"], cwd=hooked, env=env)
        # Two lines a member, the first: idle mark, name, lead star, task, calls, estimated cost
        # ("$?": the teammates' model has no price in board's table).
        def panel_row(name: str, row: dict[str, Any]) -> re.Pattern[str]:
            cost = "$?" if row["tokens"]["unpriced"] and not row["tokens"]["cost"] else f"${row['tokens']['cost']:.2f}"
            return re.compile(rf"│ ○ {re.escape(name)}{' ★' if row['lead'] else ''} #{row['task']} .*⚒{row['toolCalls']} {re.escape(cost)} ")

        panel_rows = [panel_row(name, row) for name, row in rows.items()]
        wait_until(
            lambda: f"─ {team['name']} ─" in tmux.screen("board") and all(row.search(tmux.screen("board")) for row in panel_rows),
            "the agents panel's three rows: idle, on their tasks, with their calls", explain=lambda: tmux.screen("board"),
        )


def test_a_worker_leading_a_team_is_one_row_under_its_own_name(claude: Claude, hooked: Path, tmp_path: Path) -> None:
    store = Store.open(hooked)
    task = store.claim_task(store.create("models").id, "alice")
    prepare_interactive(claude, hooked)
    lead = [
        tool("Agent", description="teammate ben", prompt=f"{mark('ben')} write src/ben.py", subagent_type="general-purpose", name="ben"),
        tool("Write", file_path=str(hooked / "src" / "alice.py"), content="alice = 1\n"),
        Turn(text="The team is at work."),
    ]
    ben = [tool("Write", file_path=str(hooked / "src" / "ben.py"), content="ben = 1\n"), Turn(text="ben is done.")]
    with FakeAnthropic(lead, agents={mark("ben"): ben}) as api, private_tmux(tmp_path) as tmux:
        env = start_the_team(tmux, claude, hooked, api, BOARD_AGENT="alice", BOARD_TASK_ID=task.id, BOARD_WORKSPACE=str(hooked))

        def settled() -> dict[str, Any] | None:
            if not api.script_spent:
                return None
            listed = agents(hooked, env)
            states = {row["name"]: row["state"] for row in listed["agents"]}
            return listed if states.get("alice") == "idle" and states.get("ben") == "idle" else None

        listed = wait_until(settled, "alice and ben idle", explain=lambda: f"{tmux.screen('claude')}\n{json.dumps(agents(hooked, env), indent=1)}\n{hook_log(hooked)}")
        (team,) = listed["teams"]
        rows = [(row["name"], row["team"], row["lead"], row["task"], row["toolCalls"]) for row in listed["agents"]]
        assert rows == [("alice", team["name"], True, task.id, 2), ("ben", team["name"], False, None, 1)], hook_log(hooked)


def test_when_the_leads_session_ends_its_in_process_teammates_are_gone_too(claude: Claude, hooked: Path, tmp_path: Path) -> None:
    prepare_interactive(claude, hooked)
    lead = [tool("Agent", description="teammate ben", prompt=f"{mark('ben')} write src/ben.py", subagent_type="general-purpose", name="ben"), Turn(text="Started.")]
    ben = [tool("Write", file_path=str(hooked / "src" / "ben.py"), content="ben = 1\n"), Turn(text="ben is done.")]
    with FakeAnthropic(lead, agents={mark("ben"): ben}) as api, private_tmux(tmp_path) as tmux:
        env = start_the_team(tmux, claude, hooked, api)

        def states() -> dict[str, str]:
            return {row["name"]: row["state"] for row in agents(hooked, env)["agents"]}

        def at_rest() -> bool:
            """Both idle, and the lead's turns all ended: ben's end reaches the lead as a
            message it answers in one more turn, after ben shows idle. A /exit typed during
            that turn is not run."""
            if not api.script_spent or len(api.served(MAIN)) <= len(lead) or states() != {"team-lead": "idle", "ben": "idle"}:
                return False
            rows = {row["name"]: row for row in agents(hooked, env)["agents"]}
            return {field: rows["team-lead"]["tokens"][field] for field in ("input", "output", "cacheWrite", "cacheRead")} == tokens_of(api.served(MAIN))

        explain = lambda: f"{tmux.screen('claude')}\n{states()}\nlead served {len(api.served(MAIN))}\n{hook_log(hooked)}"  # noqa: E731
        wait_until(at_rest, "the lead and ben idle, the lead's answer to ben's end read", explain=explain)
        tmux.type("claude", "/exit")
        # The session ended: its in-process teammate ended with it.
        wait_until(lambda: states() == {"team-lead": "gone", "ben": "gone"}, "the lead and ben gone", explain=explain)
