"""Claude Code's hook events, fed to the installed ``board hook`` as Claude Code runs it.

Each payload in ``payloads/`` follows Claude Code's documented hook input for its event. Each
goes to what ``board hooks install`` wrote into ``.claude/settings.json`` (``hooked``, in
``conftest``: both ways it installs), as Claude Code sends it (``delivery``): to ``board hook``
through a shell, the payload on stdin, from the workspace; or for the events of every tool call,
POSTed to board's server: the same files must change the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from board.store import Store
from tests.hooks.delivery import deliver, entry_for

PAYLOADS = Path(__file__).parent / "payloads"
SESSION = "8c35adc1-5f0e-4a9b-9c1e-2b7d3f6a1e90"


def command_for(workspace: Path, event: str) -> str:
    return entry_for(workspace, event)["command"]


def payload(event: str, cwd: Path, **changes: object) -> dict:
    data = json.loads((PAYLOADS / f"{event}.json").read_text().replace("{cwd}", str(cwd)))
    data.update(changes)
    return data


def fire(workspace: Path, event: str, *, env: dict[str, str] | None = None, cwd: Path | None = None, **changes: object) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("BOARD_", "CLAUDE_"))}
    clean.update(CLAUDE_CONFIG_DIR=str(workspace / ".claude-home"), XDG_CACHE_HOME=str(workspace / ".cache"), **(env or {}))
    data = payload(event, cwd or workspace, **changes)
    if "tool_use_id" in data and "tool_use_id" not in changes:
        data["tool_use_id"] = f"toolu_{uuid.uuid4().hex[:24]}"  # each firing is a call of its own, as Claude Code numbers them
    return deliver(workspace, event, json.dumps(data), env=clean, cwd=cwd or workspace)


def calls(workspace: Path, task_id: str) -> list[dict]:
    log = workspace / ".tasks" / "toolcalls" / f"{task_id}.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def agent_record(workspace: Path, name: str) -> dict:
    return json.loads((workspace / ".tasks" / "agents" / f"{name}.json").read_text())


def silent_ok(result: subprocess.CompletedProcess) -> None:
    assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), result


# -- counting -----------------------------------------------------------------------------------


def test_a_workers_calls_are_counted_on_its_task_with_file_touches(hooked: Path) -> None:
    store = Store.open(hooked)
    task = store.claim_task(store.create("models", files=["src/app/models.py"]).id, "worker-1")
    env = {"BOARD_WORKSPACE": str(hooked), "BOARD_TASK_ID": task.id, "BOARD_AGENT": "worker-1", "BOARD_LEASE_TOKEN": str(task.lease.token)}
    silent_ok(fire(hooked, "PostToolUse", env=env))
    silent_ok(fire(hooked, "PostToolUseFailure", env=env))
    assert [(c["agent"], c["tool"], c["ok"], c["files"]) for c in calls(hooked, task.id)] == [
        ("worker-1", "Write", True, ["src/app/models.py"]),  # relative to the workspace, as --file records it
        ("worker-1", "Bash", False, []),
    ]
    counted = Store.open(hooked).get(task.id).tool_calls
    assert (counted.total, counted.ok, counted.failed, counted.consecutive_failures, counted.last_tool) == (2, 1, 1, 1, "Bash")


def test_a_calls_duration_is_logged_as_claude_code_measured_it(hooked: Path) -> None:
    env = {"BOARD_AGENT": "ann"}
    for duration in (298, 0, -5, "12", True, 10**12, None):
        silent_ok(fire(hooked, "PostToolUse", env=env, duration_ms=duration))
    log = hooked / ".tasks" / "agents" / "ann.calls.jsonl"
    assert [json.loads(line)["ms"] for line in log.read_text().splitlines()] == [298, 0, None, None, None, None, None]


def test_a_sessions_calls_go_to_its_single_task_in_progress(hooked: Path) -> None:
    store = Store.open(hooked)
    silent_ok(fire(hooked, "SessionStart"))  # an interactive session, started in the workspace
    agent = "claude-8c35adc1"
    assert agent_record(hooked, agent)["activity"] == "working"
    task = store.claim_task(store.create("models").id, agent)
    silent_ok(fire(hooked, "PostToolUse"))
    assert [c["agent"] for c in calls(hooked, task.id)] == [agent]


def test_a_session_bound_by_a_board_command_is_counted_under_that_agent(hooked: Path) -> None:
    store = Store.open(hooked)
    task = store.claim_task(store.create("models").id, "ann")
    bash = {"command": "board claim --agent ann", "description": "take a task"}
    silent_ok(fire(hooked, "PostToolUse", tool_name="Bash", tool_input=bash))  # ann's from this call on
    silent_ok(fire(hooked, "PostToolUse"))  # the same session, later
    assert [(c["agent"], c["tool"]) for c in calls(hooked, task.id)] == [("ann", "Bash"), ("ann", "Write")]


@pytest.mark.parametrize("known_before", [False, True], ids=["new name", "name with a record"])
def test_a_session_that_names_itself_is_one_row_under_that_name(hooked: Path, known_before: bool) -> None:
    store = Store.open(hooked)
    task = store.claim_task(store.create("models").id, "ann")
    if known_before:  # ann worked here in an earlier session
        (hooked / ".tasks" / "agents").mkdir(exist_ok=True)
        (hooked / ".tasks" / "agents" / "ann.json").write_text(json.dumps({"name": "ann", "kind": "claude-code", "activity": "gone"}))
    silent_ok(fire(hooked, "SessionStart"))  # under the name made from the session, for now
    assert agent_record(hooked, "claude-8c35adc1")["activity"] == "working"
    bash = {"command": "board claim --agent ann", "description": "take a task"}
    silent_ok(fire(hooked, "PostToolUse", tool_name="Bash", tool_input=bash))
    rows = sorted(p.name for p in (hooked / ".tasks" / "agents").glob("*.json"))
    assert rows == ["ann.json"]
    ann = agent_record(hooked, "ann")
    assert (ann["activity"], ann["task"]) == ("working", task.id)


def test_a_subagents_calls_are_its_own(hooked: Path) -> None:
    silent_ok(fire(hooked, "SubagentStart"))
    name = "claude-8c35adc1-Explore-a7f3c2e1"  # under the session that started it
    assert (agent_record(hooked, name)["activity"], agent_record(hooked, name)["parent"]) == ("working", "claude-8c35adc1")
    silent_ok(fire(hooked, "PostToolUse", agent_id="a7f3c2e1b9d84b6f", agent_type="Explore"))
    log = hooked / ".tasks" / "agents" / f"{name}.calls.jsonl"
    assert [json.loads(line)["task"] for line in log.read_text().splitlines()] == [None]  # no task: counted on the agent
    silent_ok(fire(hooked, "SubagentStop"))
    assert agent_record(hooked, name)["activity"] == "gone"


def test_a_call_that_fits_no_task_is_counted_on_the_agent(hooked: Path) -> None:
    from board.agents import list_agents

    silent_ok(fire(hooked, "PostToolUse"))
    silent_ok(fire(hooked, "PostToolUseFailure"))
    assert [(a.name, a.tool_calls) for a in list_agents(Store.open(hooked, whole=False).agent_records)] == [("claude-8c35adc1", 2)]


# -- the registry -------------------------------------------------------------------------------


def test_sessions_and_teammates_move_through_working_idle_and_gone(hooked: Path) -> None:
    agent = "claude-8c35adc1"
    states = []
    for event in ("SessionStart", "Stop", "SessionStart", "SessionEnd"):
        silent_ok(fire(hooked, event))
        states.append(agent_record(hooked, agent)["activity"])
    assert states == ["working", "idle", "working", "gone"]
    assert agent_record(hooked, agent)["model"] == "claude-sonnet-4-5"
    silent_ok(fire(hooked, "TeammateIdle"))
    record = agent_record(hooked, "implementer")
    assert (record["activity"], record["team"]) == ("idle", "app-team")


def test_the_model_a_session_started_with_is_shown_by_board_agents(hooked: Path) -> None:
    from tests.core.test_cli import board

    silent_ok(fire(hooked, "SessionStart"))  # an interactive session says its model
    listed = json.loads(board(hooked, "agents", "--json").stdout)["agents"]
    assert [(a["name"], a["model"]) for a in listed] == [("claude-8c35adc1", "claude-sonnet-4-5")]
    table = board(hooked, "agents").stdout.splitlines()
    assert table[0].split()[4] == "MODEL" and table[1].split()[4] == "claude-sonnet-4-5", table


def test_a_new_prompt_or_a_tool_call_after_a_stop_shows_the_session_working_again(hooked: Path) -> None:
    agent = "claude-8c35adc1"
    states = []
    for event in ("SessionStart", "Stop", "UserPromptSubmit", "Stop", "PostToolUse", "Stop", "PreToolUse"):
        silent_ok(fire(hooked, event))
        states.append(agent_record(hooked, agent)["activity"])
    assert states == ["working", "idle", "working", "idle", "working", "idle", "working"]


def test_task_completed_completes_a_task_board_missed_on_the_teams_list(hooked: Path) -> None:
    team_list = hooked / ".claude-home" / "tasks" / "app-team"  # the team's list is the board
    team_list.mkdir(parents=True)
    (team_list / ".lock").touch()
    store = Store.open(team_list)
    task = store.claim_task(store.create("models").id, "implementer")
    assert task.id == "1"
    silent_ok(fire(hooked, "TaskCompleted"))
    assert str(Store.open(team_list).get("1").status) == "completed"
    silent_ok(fire(hooked, "TaskCompleted"))  # already completed: nothing to do, nothing said


def test_task_completed_on_another_list_or_the_sessions_own_leaves_the_board_alone(hooked: Path) -> None:
    store = Store.open(hooked)
    assert store.claim_task(store.create("models").id, "implementer").id == "1"
    own_todo = {"teammate_name": None, "team_name": None}
    silent_ok(fire(hooked, "TaskCompleted", **own_todo))
    silent_ok(fire(hooked, "TaskCompleted", env={"BOARD_AGENT": "implementer", "BOARD_TASK_ID": "1"}, **own_todo))
    silent_ok(fire(hooked, "TaskCompleted"))  # the team's list, which is not this board
    silent_ok(fire(hooked, "TaskCompleted", env={"CLAUDE_CODE_TASK_LIST_ID": "plan"}))
    assert str(Store.open(hooked).get("1").status) == "in_progress"


def test_the_sessions_own_todo_list_is_kept_on_its_agent_as_done_or_open(hooked: Path) -> None:
    env = {"BOARD_AGENT": "alice"}
    own = {"teammate_name": None, "team_name": None}
    for todo in ("1", "2", "3"):
        silent_ok(fire(hooked, "TaskCompleted", env=env, hook_event_name="TaskCreated", task_id=todo, **own))
    silent_ok(fire(hooked, "TaskCompleted", env=env, task_id="2", **own))
    silent_ok(fire(hooked, "TaskCompleted", env=env, task_id="2", **own))  # once done, done once
    silent_ok(fire(hooked, "TaskCompleted", env=env, task_id="3"))  # the team's list: a board's task, not a todo
    silent_ok(fire(hooked, "TaskCompleted", env={**env, "CLAUDE_CODE_TASK_LIST_ID": "plan"}, task_id="1", **own))
    assert agent_record(hooked, "alice")["todos"] == {"1": False, "2": True, "3": False}


# -- guarding -----------------------------------------------------------------------------------


def test_an_edit_to_a_file_another_agent_reserved_is_stopped_with_a_reason(hooked: Path) -> None:
    from board.reservations import reserve

    store = Store.open(hooked)
    theirs = store.claim_task(store.create("theirs").id, "bob")
    reserve(store, theirs.id, ["src/app/models.py"], agent="bob", mode="write")
    stopped = fire(hooked, "PreToolUse")
    assert stopped.returncode == 2 and stopped.stdout == ""
    assert stopped.stderr.count("\n") == 1
    assert "src/app/models.py is reserved for writing by bob for task #1" in stopped.stderr and "board message bob" in stopped.stderr
    # bob himself, and another file, pass.
    silent_ok(fire(hooked, "PreToolUse", env={"BOARD_AGENT": "bob"}))
    silent_ok(fire(hooked, "PreToolUse", tool_input={"file_path": str(hooked / "src/other.py"), "old_string": "a", "new_string": "b"}))
    # Once bob's task is finished, his reservation no longer holds.
    store.set_status(theirs.id, "completed", token=theirs.lease.token, actor="bob")
    silent_ok(fire(hooked, "PreToolUse"))


def test_a_reserved_file_is_guarded_however_a_link_reaches_it(hooked: Path) -> None:
    """``board reserve`` and the guard resolve a path the same way: whether the reservation or
    the edit goes through a link, they name the same file."""
    from tests.core.test_cli import board

    (hooked / "src" / "app").mkdir(parents=True)
    (hooked / "app-link").symlink_to("src/app")
    store = Store.open(hooked)
    theirs = store.claim_task(store.create("theirs").id, "bob")
    reserved = board(hooked, "reserve", theirs.id, "app-link/models.py")
    assert reserved.returncode == 0 and "bob reserved src/app/models.py" in reserved.stdout, reserved
    for reached in (hooked / "src/app/models.py", hooked / "app-link/models.py", "src/../app-link/models.py"):
        stopped = fire(hooked, "PreToolUse", tool_input={"file_path": str(reached), "old_string": "class User:", "new_string": "class User(Base):"})
        assert stopped.returncode == 2 and stopped.stdout == "", (reached, stopped)
        assert stopped.stderr.count("\n") == 1 and "src/app/models.py is reserved for writing by bob for task #1" in stopped.stderr

    assert board(hooked, "unreserve", theirs.id).returncode == 0
    assert board(hooked, "reserve", theirs.id, "src/app/models.py").returncode == 0
    stopped = fire(hooked, "PreToolUse", tool_input={"file_path": str(hooked / "app-link/models.py"), "old_string": "a", "new_string": "b"})
    assert stopped.returncode == 2 and "src/app/models.py is reserved for writing by bob" in stopped.stderr
    # The same file, reached through a link, is still bob's own to edit.
    silent_ok(fire(hooked, "PreToolUse", env={"BOARD_AGENT": "bob"}, tool_input={"file_path": str(hooked / "app-link/models.py")}))


def test_a_file_of_another_agents_task_in_progress_warns_by_default_and_blocks_when_asked(hooked: Path) -> None:
    store = Store.open(hooked)
    store.claim_task(store.create("theirs", files=["src/app/models.py"]).id, "bob")
    silent_ok(fire(hooked, "PreToolUse"))  # warn: let through; the touch raises the alert
    assert "belongs to task #1, in progress with bob" in (hooked / ".tasks" / "logs" / "hook.log").read_text()
    (hooked / ".tasks" / "board.toml").write_text('[hooks]\nheld = "block"\n')
    stopped = fire(hooked, "PreToolUse")
    assert stopped.returncode == 2 and "belongs to task #1, in progress with bob" in stopped.stderr
    (hooked / ".tasks" / "board.toml").write_text('[hooks]\nheld = "off"\nreserved = "off"\n')
    silent_ok(fire(hooked, "PreToolUse"))


def test_settings_validate_the_hooks_section() -> None:
    from board.config import BoardSettings
    from pydantic import ValidationError

    from board.claude.hooks.guard import DEFAULTS

    # The hook reads board.toml without pydantic: its defaults must be the settings' own.
    assert DEFAULTS == BoardSettings().hooks.model_dump() == {"reserved": "block", "held": "warn"}
    with pytest.raises(ValidationError):
        BoardSettings.model_validate({"hooks": {"held": "sometimes"}})


# -- never in the way ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    ["no board", "broken task file", "broken registry record", "garbage on stdin", "log is a directory", "log locked"],
)
def test_whatever_goes_wrong_the_hook_exits_0_silently_and_notes_one_line(hooked: Path, tmp_path_factory: pytest.TempPathFactory, damage: str) -> None:
    import fcntl

    store = Store.open(hooked)
    task = store.claim_task(store.create("models").id, "claude-8c35adc1")
    env: dict[str, str] = {}
    cwd = None
    held = None
    notes = hooked / ".tasks" / "logs" / "hook.log"
    if damage == "no board":
        cwd = tmp_path_factory.mktemp("elsewhere")  # outside the workspace, no board above it
        notes = hooked / ".cache" / "board" / "hook.log"
    elif damage == "broken task file":
        (hooked / ".tasks" / f"task_{task.id}.json").write_text("{not json")
    elif damage == "broken registry record":
        (hooked / ".tasks" / "agents").mkdir(exist_ok=True)
        (hooked / ".tasks" / "agents" / "claude-8c35adc1.json").write_text("[1, 2")
    elif damage == "log is a directory":
        (hooked / ".tasks" / "toolcalls").mkdir(exist_ok=True)
        (hooked / ".tasks" / "toolcalls" / f"{task.id}.jsonl").mkdir()
    elif damage == "log locked":
        log = hooked / ".tasks" / "toolcalls" / f"{task.id}.jsonl"
        log.parent.mkdir(exist_ok=True)
        held = open(log, "a")
        fcntl.flock(held, fcntl.LOCK_EX)
    try:
        if damage == "garbage on stdin":
            result = deliver(hooked, "PostToolUse", "not json at all", cwd=hooked, env={**os.environ, "XDG_CACHE_HOME": str(hooked / ".cache")})
            notes = hooked / ".cache" / "board" / "hook.log"
        else:
            result = fire(hooked, "PostToolUse", env=env, cwd=cwd)
    finally:
        if held is not None:
            held.close()
    silent_ok(result)
    if damage in ("no board", "garbage on stdin", "log is a directory", "log locked"):
        lines = notes.read_text().splitlines()
        assert len(lines) == 1 and lines[0].split(" ", 1)[1].startswith("PostToolUse: " if damage != "garbage on stdin" else "?: "), lines


def test_an_event_board_does_not_know_is_ignored(hooked: Path) -> None:
    silent_ok(fire(hooked, "Stop", hook_event_name="PreCompact"))
    assert not (hooked / ".tasks" / "agents").exists()


def test_a_fifo_planted_as_the_boards_settings_holds_no_tool_call(hooked: Path) -> None:
    """Every hook reads ``.tasks/board.toml`` (a database named there, the guard's modes): a
    FIFO planted in its place held each of Claude Code's tool calls for ever. It reads as no
    settings: the defaults."""
    from board.reservations import reserve

    os.mkfifo(hooked / ".tasks" / "board.toml")
    store = Store.open(hooked)
    theirs = store.claim_task(store.create("theirs").id, "bob")
    reserve(store, theirs.id, ["src/app/models.py"], agent="bob", mode="write")
    stopped = fire(hooked, "PreToolUse")  # the guard, on its default, still stops the edit
    assert stopped.returncode == 2 and "reserved for writing by bob" in stopped.stderr
    silent_ok(fire(hooked, "PreToolUse", tool_input={"file_path": str(hooked / "src/other.py"), "old_string": "a", "new_string": "b"}))
