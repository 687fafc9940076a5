"""Claude Code agent teams: their config and inboxes read in place, messages written in Claude
Code's own format under its lock, and ``board agents`` / ``board message``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from board.agent_record import AgentRecord
from board.agents import write_agent
from board.claude.teams import Team, TeamMember, append_message, list_teams, read_inbox, read_team
from board.errors import BoardError
from board.roster import Activity, build_roster, member_activity
from board.store import Store
from tests.conftest import REPO
from tests.core.test_cli import board
from tests.coordinator.helpers import started, wait_for
from tests.teams import inbox_message, member, write_inbox, write_team

JS_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@pytest.fixture
def crew(workspace: Path, claude_home: Path) -> Path:
    """A team of three working in ``workspace``: the lead, ana (working on #1) and ben (idle, #2
    still in progress under his name). Returns the team's folder."""
    store = Store.open(workspace)
    store.create("Write the parser")
    store.create("Test the parser")
    store.set_status("1", "in_progress", owner="ana", actor="ana")
    store.set_status("2", "in_progress", owner="ben", actor="ben")
    cwd = str(workspace)
    return write_team(claude_home, "crew", [
        member("team-lead", "crew", agent_type="team-lead", model="claude-opus-4-6", cwd=cwd),
        member("ana", "crew", cwd=cwd),
        member("ben", "crew", cwd=cwd, isActive=False),
    ])


def test_a_team_is_read_as_claude_code_writes_it(crew: Path) -> None:
    team = read_team(crew)
    assert team.problem is None and team.title == "crew" and team.description == "the crew team"
    lead, ana, ben = team.members
    assert (lead.name, lead.lead, lead.agent_type, lead.model) == ("team-lead", True, "team-lead", "claude-opus-4-6")
    assert not ana.lead and ana.active is None and ben.active is False
    assert ana.joined_at == datetime(2026, 11, 20, 23, 0, tzinfo=UTC)
    assert [t.name for t in list_teams()] == ["crew"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"name": "crew", "members": [', "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"name": "crew"}', "no members list"),
    ],
)
def test_a_broken_config_is_a_problem_on_the_team_never_an_exception(crew: Path, workspace: Path, content: str, problem: str) -> None:
    (crew / "config.json").write_text(content)
    team = read_team(crew)
    assert team.problem is not None and problem in team.problem and team.members == ()
    listing = board(workspace, "agents")
    assert listing.returncode == 0, listing.stderr
    assert "team crew: config.json" in listing.stdout and problem in listing.stdout
    sent = board(workspace, "message", "ben", "hello", "--team", "crew")
    assert sent.returncode == 2 and sent.stderr.count("\n") == 1 and "nothing was sent" in sent.stderr
    assert not (crew / "inboxes").exists()


def test_board_message_appends_in_claude_codes_own_format(crew: Path, workspace: Path) -> None:
    earlier = inbox_message("team-lead", "Please take #2", "2026-11-20T23:01:00.000Z", read=True, summary="take #2")
    earlier["color"] = "blue"  # a field board has no use for is kept as it was
    inbox = write_inbox(crew, "ben", [earlier])
    sent = board(workspace, "message", "ben", "Are you\nstill on #2?", "--from", "carol", "--json")
    assert sent.returncode == 0, sent.stderr
    messages = json.loads(inbox.read_text())
    assert messages[0] == earlier
    new = messages[1]
    assert set(new) == {"from", "text", "summary", "timestamp", "read"}
    assert (new["from"], new["text"], new["summary"], new["read"]) == ("carol", "Are you\nstill on #2?", "Are you still on #2?", False)
    assert JS_TIMESTAMP.fullmatch(new["timestamp"]), new["timestamp"]
    assert json.loads(sent.stdout)["message"] == new
    assert not (crew / "inboxes" / "ben.json.lock").exists(), "the lock was left behind"
    assert [p.name for p in (crew / "inboxes").iterdir()] == ["ben.json"], "a temp file was left behind"
    assert read_inbox(read_team(crew), "ben").unread == 1


def test_a_first_message_creates_the_inbox(crew: Path, workspace: Path) -> None:
    assert board(workspace, "message", "ana", "hello").returncode == 0
    assert [m["text"] for m in json.loads((crew / "inboxes" / "ana.json").read_text())] == ["hello"]


def test_refusals_are_one_line_and_leave_the_inbox_as_it_was(crew: Path, workspace: Path, claude_home: Path) -> None:
    write_team(claude_home, "crew", [*json.loads((crew / "config.json").read_text())["members"], member("dr.who", "crew", cwd=str(workspace))])
    broken = write_inbox(crew, "ana", [])
    broken.write_text('[{"from": "ben", "te')
    before = broken.read_bytes()
    cases = {
        ("ana", "hello"): "is not valid JSON",
        ("dr.who", "hello"): "cannot be messaged from board: its name is not a board agent name",
        ("zed", "hello"): "no team member named 'zed' (members: ana, ben, dr.who, team-lead)",
        ("ben", "   "): "the message is empty",
        ("ben", "x" * 10_001): "at most 10,000",
    }
    for (name, text), why in cases.items():
        result = board(workspace, "message", name, text)
        assert result.returncode == 2, (name, result.stdout)
        assert why in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert broken.read_bytes() == before
    assert sorted(p.name for p in (crew / "inboxes").iterdir()) == ["ana.json"]
    (crew / "inboxes" / "ben.json").write_text('{"not": "a list"}')
    refused = board(workspace, "message", "ben", "hello")
    assert refused.returncode == 2 and "is not a JSON array; nothing was sent" in refused.stderr
    assert json.loads((crew / "inboxes" / "ben.json").read_text()) == {"not": "a list"}


def test_a_board_no_team_works_on_cannot_message(workspace: Path) -> None:
    result = board(workspace, "message", "ben", "hello")
    assert result.returncode == 2 and "no Claude Code team works on this board" in result.stderr


def test_a_stale_claude_code_lock_is_broken(crew: Path, workspace: Path) -> None:
    inbox = write_inbox(crew, "ben", [])
    lock_dir = crew / "inboxes" / "ben.json.lock"
    lock_dir.mkdir()
    old = time.time() - 30
    os.utime(lock_dir, (old, old))  # left by a Claude Code that crashed holding it
    assert board(workspace, "message", "ben", "hello").returncode == 0
    assert [m["text"] for m in json.loads(inbox.read_text())] == ["hello"]
    assert not lock_dir.exists()


def test_board_waits_for_the_lock_claude_code_holds(crew: Path, workspace: Path) -> None:
    """Claude Code holds ben's inbox (it read it empty and is about to write). ``board message``
    must wait: its message goes after Claude's, and Claude's is not overwritten."""
    inbox = crew / "inboxes" / "ben.json"
    (crew / "inboxes").mkdir()
    lock_dir = crew / "inboxes" / "ben.json.lock"
    lock_dir.mkdir()  # taken while the inbox did not exist yet: Claude Code read it as []
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    sender = started(subprocess.Popen([sys.executable, "-m", "board", "-w", str(workspace), "message", "ben", "from board"], env=env, stderr=subprocess.PIPE, text=True))
    try:
        wait_for(inbox.exists, timeout=60, what="board message to create the inbox before locking it")
        ours = [inbox_message("team-lead", "from Claude", "2026-11-20T23:05:00.000Z")]
        temp = inbox.with_name("ben.json.tmp")
        temp.write_text(json.dumps(ours, indent=2))
        os.replace(temp, inbox)
    finally:
        os.rmdir(lock_dir)
    _, err = sender.communicate(timeout=60)
    assert sender.returncode == 0, err
    assert [m["text"] for m in json.loads(inbox.read_text())] == ["from Claude", "from board"]


BOARD_SENDER = """
import os, sys, time
from board.cli import main
workspace, count, ready, go = sys.argv[1:]
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.001)
for n in range(int(count)):
    status = main(["-w", workspace, "message", "ben", f"board {n}", "--from", "board"])
    if status != 0:
        sys.exit(status)
"""


def test_board_message_and_claude_code_append_to_one_inbox_at_once(crew: Path, workspace: Path, tmp_path: Path) -> None:
    """Another process appends to ben's inbox under Claude Code's lock convention, again and
    again, for as long as ``board message`` runs in a third: every message of both arrives,
    each writer's in its own order, and a reader never finds the file anything but a whole
    JSON array."""
    count = 60
    inbox = write_inbox(crew, "ben", [])
    go, stop = tmp_path / "go", tmp_path / "stop"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    claude_ready, board_ready = tmp_path / "claude-ready", tmp_path / "board-ready"
    claude = started(subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "core" / "claude_inbox_writer.py"), str(inbox), "claude", str(claude_ready), str(go), str(stop)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ))
    sender = started(subprocess.Popen(
        [sys.executable, "-c", BOARD_SENDER, str(workspace), str(count), str(board_ready), str(go)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    ))
    wait_for(lambda: claude_ready.exists() and board_ready.exists(), timeout=60, what="both writers to start")
    seen: list[int] = []
    broken: list[str] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            text = inbox.read_text()
            try:
                value = json.loads(text)
            except ValueError:
                broken.append(text[-80:])
                continue
            if not isinstance(value, list):
                broken.append(text[:80])
            seen.append(len(value))

    watcher = threading.Thread(target=watch)
    watcher.start()
    go.touch()
    try:
        _, board_err = sender.communicate(timeout=180)
        stop.touch()
        claude_out, claude_err = claude.communicate(timeout=180)
    finally:
        done.set()
        watcher.join()
    assert sender.returncode == 0, board_err
    assert claude.returncode == 0, claude_err
    sent_by_claude = int(claude_out)
    assert not broken, f"a reader found the inbox half-written: {broken[:3]}"
    assert len(seen) > 1, "the inbox was never read while the writers ran"
    texts = [m["text"] for m in json.loads(inbox.read_text())]
    assert [t for t in texts if t.startswith("board ")] == [f"board {n}" for n in range(count)]
    assert [t for t in texts if t.startswith("claude ")] == [f"claude {n}" for n in range(sent_by_claude)]
    assert len(texts) == count + sent_by_claude
    assert not (crew / "inboxes" / "ben.json.lock").exists()


def test_a_half_written_inbox_is_reported_and_the_last_good_copy_kept(crew: Path) -> None:
    team = read_team(crew)
    inbox = write_inbox(crew, "ben", [inbox_message("team-lead", "Please take #2", "2026-11-20T23:01:00.000Z")])
    assert [m.text for m in read_inbox(team, "ben").messages] == ["Please take #2"]
    inbox.write_text('[{"from": "team-lead", "text": "Please take #2"}, {"from": "an')  # a writer mid-way, in place
    seen = read_inbox(team, "ben")
    assert seen.problem is not None and "not valid JSON" in seen.problem
    assert [m.text for m in seen.messages] == ["Please take #2"]
    (crew / "inboxes" / "ana.json").write_text("{")
    assert read_inbox(team, "ana").messages == () and read_inbox(team, "ana").problem is not None


def test_protocol_messages_read_as_words(crew: Path) -> None:
    idle = json.dumps({"type": "idle_notification", "from": "ana", "idleReason": "available"})
    assigned = json.dumps({"type": "task_assignment", "taskId": "2", "subject": "Test the parser", "assignedBy": "team-lead"})
    write_inbox(crew, "team-lead", [inbox_message("ana", idle, "2026-11-20T23:02:00.000Z"), inbox_message("team-lead", assigned, "2026-11-20T23:03:00.000Z")])
    previews = [m.preview() for m in read_inbox(read_team(crew), "team-lead").messages]
    assert previews == ["idle (available)", "task #2 assigned: Test the parser"]


def test_board_agents_lists_registered_agents_and_team_members(crew: Path, workspace: Path) -> None:
    write_agent(Store.open(workspace, whole=False).agent_records, AgentRecord(name="sim-1", kind="simulated", heartbeat_at=datetime.now(UTC), task=None))
    write_inbox(crew, "ben", [inbox_message("team-lead", "Please take #2", "2026-11-20T23:01:00.000Z")])
    listing = board(workspace, "agents", "--json")
    assert listing.returncode == 0, listing.stderr
    agents = {a["name"]: a for a in json.loads(listing.stdout)["agents"]}
    assert list(agents) == ["sim-1", "team-lead", "ana", "ben"]
    assert agents["sim-1"]["team"] is None and agents["sim-1"]["state"] == "idle"
    assert agents["team-lead"]["lead"] and agents["team-lead"]["agentType"] == "team-lead" and agents["team-lead"]["model"] == "claude-opus-4-6"
    assert agents["ana"]["state"] == "working" and agents["ana"]["task"] == "1" and not agents["ana"]["idleWithTask"]
    assert agents["ben"]["state"] == "idle" and agents["ben"]["idleWithTask"] and agents["ben"]["unread"] == 1
    text = board(workspace, "agents").stdout
    assert re.search(r"^team-lead\s+working\s+crew \(lead\)", text, re.M), text
    assert 'ben (crew) is idle while #2 is in progress under its name: board message ben "..." nudges it' in text


def test_opening_a_teams_task_list_finds_its_team(claude_home: Path) -> None:
    task_list = claude_home / "tasks" / "crew"
    task_list.mkdir(parents=True)
    (task_list / "1.json").write_text(json.dumps({"id": "1", "subject": "Write the parser", "description": "", "status": "in_progress", "owner": "ana", "blocks": [], "blockedBy": []}))
    write_team(claude_home, "crew", [member("team-lead", "crew", agent_type="team-lead"), member("ana", "crew")])
    write_team(claude_home, "other", [member("team-lead", "other"), member("zoe", "other")])
    listing = board(task_list, "agents", "--json")
    assert listing.returncode == 0, listing.stderr
    agents = {a["name"]: a for a in json.loads(listing.stdout)["agents"]}
    assert list(agents) == ["team-lead", "ana"] and agents["ana"]["task"] == "1"
    assert board(task_list, "message", "ana", "hello").returncode == 0
    assert json.loads((claude_home / "teams" / "crew" / "inboxes" / "ana.json").read_text())[0]["text"] == "hello"


def _team(active: bool | None, changed_at: datetime) -> tuple[TeamMember, Team]:
    ben = TeamMember("ben", active=active)
    return ben, Team("crew", Path("/nowhere"), members=(ben,), changed_at=changed_at)


def test_a_members_state_is_the_newer_of_its_hooks_and_its_config() -> None:
    t0 = datetime(2026, 11, 20, 23, 0, tzinfo=UTC)
    record = AgentRecord(name="ben", heartbeat_at=t0, activity="working", activity_at=t0 + timedelta(minutes=2), team="crew")
    ben, team = _team(False, t0 + timedelta(minutes=1))  # config said idle, then the hooks saw a tool call
    assert member_activity(ben, team, record) == Activity.WORKING
    ben, team = _team(False, t0 + timedelta(minutes=3))  # and then the config said idle again
    assert member_activity(ben, team, record) == Activity.IDLE
    idle = record.model_copy(update={"activity": "idle"})
    ben, team = _team(None, t0 + timedelta(minutes=1))
    assert member_activity(ben, team, idle) == Activity.IDLE
    assert member_activity(ben, team, None) == Activity.WORKING
    assert member_activity(ben, team, record.model_copy(update={"activity": "gone"})) == Activity.GONE


def test_a_lead_known_to_board_by_another_name_is_one_row_under_that_name() -> None:
    t0 = datetime(2026, 11, 20, 23, 0, tzinfo=UTC)
    lead, ben = TeamMember("team-lead", agent_id="team-lead@crew", lead=True), TeamMember("ben", agent_id="ben@crew")
    team = Team("crew", Path("/nowhere"), members=(lead, ben), lead_session_id="a0383c7b-262b")
    worker = AgentRecord(name="alice", heartbeat_at=t0, activity="working", activity_at=t0, session_id="a0383c7b-262b", task="4")
    other = AgentRecord(name="bob", heartbeat_at=t0, activity="working", activity_at=t0, session_id="ffff0000")
    rows = [(e.name, e.team, e.lead, e.task, e.messageable) for e in build_roster([worker, other], [team], {}, t0, timedelta(seconds=30))]
    # alice's session leads the team: she is its lead's row, by her name; a message to the
    # lead would go to the member's inbox under another name, so none is offered.
    assert rows == [("bob", None, False, None, True), ("alice", "crew", True, "4", False), ("ben", "crew", False, None, True)]


def test_append_message_refuses_a_name_that_is_no_board_agent_name() -> None:
    odd = TeamMember("dr.who")
    team = Team("crew", Path("/nowhere"), members=(odd,))
    with pytest.raises(BoardError, match="cannot be messaged from board"):
        append_message(team, "dr.who", "carol", "hello")


def test_an_idle_member_with_a_task_in_progress_raises_an_alert_until_it_works_again(crew: Path, workspace: Path, claude_home: Path) -> None:
    raised = json.loads(board(workspace, "alerts", "--json").stdout)
    idle = [a for a in raised if a["kind"] == "agent.idle_with_task"]
    assert [(a["agents"], a["tasks"], a["severity"]) for a in idle] == [(["ben"], ["2"], "warning")]
    members = json.loads((crew / "config.json").read_text())["members"]
    members[2]["isActive"] = True  # ben took a new turn
    write_team(claude_home, "crew", members)
    assert not [a for a in json.loads(board(workspace, "alerts", "--json").stdout) if a["kind"] == "agent.idle_with_task"]


def test_a_members_registry_record_is_folded_into_its_line(crew: Path, workspace: Path) -> None:
    """Claude Code's hooks register a member under its own name: one line, the record's count
    and activity (newer than the config's idle flag) win."""
    later = datetime.now(UTC) + timedelta(minutes=5)
    write_agent(Store.open(workspace, whole=False).agent_records, AgentRecord(
        name="ben", kind="claude-code", team="crew", activity="working", activity_at=later, heartbeat_at=later, tool_calls=9, session_id="s-1",
    ))
    agents = json.loads(board(workspace, "agents", "--json").stdout)["agents"]
    assert [a["name"] for a in agents] == ["team-lead", "ana", "ben"]
    ben = agents[2]
    assert (ben["kind"], ben["state"], ben["toolCalls"], ben["idleWithTask"]) == ("claude-code", "working", 9, False)
    assert not [a for a in json.loads(board(workspace, "alerts", "--json").stdout) if a["kind"] == "agent.idle_with_task"]
