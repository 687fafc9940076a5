"""The ``board`` command as people and agents run it.

Most tests call the command in this process (``board``), which is the same code a process
runs, minus a second of start-up each; ``board_process`` runs a real one where the process
itself is what is checked (exit status, output streams).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from board.cli import main
from tests.conftest import REPO
from tests.disk import snapshot, task_file, write_task_document
from tests.conftest import BOTH_BACKENDS, files_only

pytestmark = BOTH_BACKENDS


def board_process(workspace: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "board", "-w", str(workspace), *args], capture_output=True, text=True, env=env, timeout=60)


def board(workspace: Path, *args: str) -> subprocess.CompletedProcess:
    """``board -w WORKSPACE ARGS`` run in this process; its exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(["-w", str(workspace), *args])
        except SystemExit as exit:  # argparse: a usage mistake, or --help
            status = exit.code if isinstance(exit.code, int) else 2
    return subprocess.CompletedProcess(["board", *args], status, out.getvalue(), err.getvalue())


@pytest.fixture
def three(workspace: Path) -> Path:
    for args in (["Design schema", "--priority", "high"], ["Repository layer", "--blocked-by", "1"], ["API", "--blocked-by", "2"]):
        assert board(workspace, "task", "create", *args).returncode == 0
    return workspace


def test_create_list_show_and_update(three: Path) -> None:
    listing = board(three, "task", "list")
    assert listing.returncode == 0
    lines = listing.stdout.splitlines()
    assert lines[0].split()[:2] == ["ID", "STATUS"]
    assert lines[1].split()[:3] == ["1", "ready", "high"] and lines[2].split()[:2] == ["2", "waiting-deps"]
    shown = json.loads(board(three, "task", "show", "2", "--json").stdout)
    assert shown["blockedBy"] == ["1"] and shown["derived"]["openBlockers"] == ["1"] and shown["derived"]["wave"] == 1
    assert board(three, "task", "update", "1", "--status", "in_progress", "--owner", "me", "--progress", "40").returncode == 0
    assert (task_file(three, "1")["status"], task_file(three, "1")["progress"]) == ("in_progress", 40)
    assert board(three, "task", "update", "3", "--add-blocks", "2").returncode == 2  # would be a cycle


def test_ready_filter_and_json_on_read_commands(three: Path) -> None:
    ready = json.loads(board(three, "--json", "task", "list", "--ready").stdout)
    assert [t["id"] for t in ready] == ["1"]
    assert json.loads(board(three, "task", "list", "--status", "pending", "--format", "json").stdout)[2]["id"] == "3"


def test_prompt_format_is_the_compact_list_agents_read(three: Path) -> None:
    board(three, "claim", "--agent", "alice")
    board(three, "toolcall", "1", "Edit", "--file", "schema.sql")
    out = board(three, "task", "list", "--format", "prompt").stdout.splitlines()
    assert out == [
        "[>] #1 Design schema (in_progress, @alice, 1 tool call)",
        "[ ] #2 Repository layer (blocked by #1)",
        "[ ] #3 API (blocked by #2)",
        "Progress: 0/3 completed (0%), 1 in progress, 0 ready",
    ]


def test_claim_prints_id_and_token_and_exits_3_when_nothing_is_ready(three: Path) -> None:
    claimed = board_process(three, "claim", "--agent", "alice", "--lease", "60")
    assert claimed.returncode == 0
    task_id, token, subject = claimed.stdout.rstrip("\n").split("\t")
    assert (task_id, subject) == ("1", "Design schema") and int(token) == task_file(three, "1")["lease"]["token"]
    nothing = board_process(three, "claim", "--agent", "bob")
    assert nothing.returncode == 3 and nothing.stdout.strip() == "nothing is ready"
    assert board(three, "heartbeat", "--agent", "alice").stdout.startswith("renewed 1 lease")
    stale = board(three, "task", "update", "1", "--status", "completed", "--token", str(int(token) - 1))
    assert stale.returncode == 2 and "stale" in stale.stderr
    assert board(three, "task", "update", "1", "--status", "completed", "--token", token).returncode == 0
    assert board(three, "claim", "--agent", "bob").stdout.startswith("2\t")
    refused = board(three, "release", "2")  # bob holds it: no token, no release
    assert refused.returncode == 2 and "held by bob" in refused.stderr and "token" in refused.stderr
    assert task_file(three, "2")["owner"] == "bob"
    assert board(three, "release", "2", "--force").stdout.strip() == "#2 pending"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["task", "show", "../x"], "not a valid id"),
        (["task", "show", "404"], "no task with id '404'"),
        (["task", "update", "1", "--progress", "abc"], "not a whole number"),
        (["task", "update", "1", "--progress", "101"], "outside 0-100"),
        (["task", "update", "3", "--status", "completed"], "cannot move a task from pending to completed"),
        (["task", "update", "1", "--add-blocked-by", "3"], "#1 -> #3 -> #2 -> #1"),
        (["task", "update", "1", "--status", "finished"], "invalid choice"),
        (["task", "update", "1"], "nothing to change"),
        (["task", "create", ""], "'subject'"),
        (["task", "create", "x", "--blocked-by", "99"], "no task with id '99'"),
        (["claim", "--agent", "bad name"], "not a valid agent name"),
        (["claim", "--agent", "a", "--lease", "0"], "between 1 and 86400"),
        (["release", "1"], "only a task being worked on can be released"),
        (["frobnicate"], "'frobnicate' is not a command"),
        (["task", "update", "1", "--description", "\udcff"], "is not valid UTF-8 text; nothing was changed"),
        (["worker", "--name", "../x", "--simulate"], "'../x' is not a valid agent name"),
        (["claim", "--agent", "a", "--max", "0"], "argument --max: must be at least 1"),
        (["toolcall", "1", "Edit", "--agent", "../x"], "'../x' is not a valid agent name"),
        (["reserve", "1", "src/a.py", "--agent", "../x"], "'../x' is not a valid agent name"),
        (["task", "create", "x" * 10_000], "new task 'xxxxxxxx"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_changes_nothing(three: Path, args: list[str], expected: str) -> None:
    before = snapshot(three)
    result = board(three, *args)
    assert result.returncode == 2
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert len(result.stderr) < 300, "user text is quoted shortened"
    assert snapshot(three) == before


@files_only("broken files")
def test_broken_files_are_reported_and_everything_else_keeps_working(three: Path) -> None:
    tasks = three / ".tasks"
    (tasks / "task_7.json").write_text('{"id": "7", "subject": ')
    (tasks / "task_8.json").write_text(json.dumps({"id": "8", "subject": "x", "progress": "lots"}))
    (tasks / "task_9.json").write_text(json.dumps({"id": "9", "subject": "x" * 10, "description": "y" * (2 * 1024 * 1024)}))
    before = snapshot(three)
    listing = board(three, "task", "list")
    # Never silently absent: each unreadable task has a row saying why, after the three that read.
    assert listing.returncode == 0 and len(listing.stdout.splitlines()) == 7
    rows = {line.split()[0]: line for line in listing.stdout.splitlines()[4:]}
    assert sorted(rows) == ["7", "8", "9"] and all(line.split()[1] == "unreadable" for line in rows.values())
    assert "not valid JSON" in rows["7"] and "field 'progress'" in rows["8"] and "limit is 1,048,576" in rows["9"]
    listed = json.loads(board(three, "task", "list", "--json").stdout)
    assert [entry["id"] for entry in listed if "unreadable" in entry] == ["7", "8", "9"]
    filtered = board(three, "task", "list", "--status", "pending")
    assert "task_7.json: not valid JSON" in filtered.stderr  # a filtered list names them below
    shown = board(three, "task", "show", "8")
    assert shown.returncode == 2 and "cannot be read" in shown.stderr
    check = board(three, "check")
    assert check.returncode == 1
    assert len(check.stdout.splitlines()) == 3 and all(".tasks/task_" in line for line in check.stdout.splitlines())
    assert snapshot(three) == before
    assert board(three, "claim", "--agent", "alice").returncode == 0  # the board still works


def test_check_names_a_broken_settings_file_that_the_commands_pass_over(three: Path) -> None:
    """A command that only reads a setting on its way takes the defaults when board.toml is
    broken; ``board check`` is where the person hears of it."""
    settings = three / ".tasks" / "board.toml"
    settings.write_text("[lease]\nseconds = 0\n")
    assert board(three, "task", "list").returncode == 0
    check = board(three, "check")
    assert check.returncode == 1
    assert check.stdout.splitlines() == [f"{settings}: setting 'lease.seconds': Input should be greater than or equal to 1"]
    settings.write_text("[lease]\nseconds = 5\n")
    assert board(three, "check").stdout.startswith("ok: 3 tasks")


def test_check_fix_repairs_one_sided_edges(three: Path) -> None:
    doc = task_file(three, "1")
    doc["blocks"] = []
    write_task_document(three, "1", doc)
    assert board(three, "check").returncode == 1
    fixed = board(three, "check", "--fix")
    assert fixed.returncode == 0 and "fixed: #1 now lists #2 in blocks" in fixed.stdout
    assert board(three, "check").stdout.startswith("ok: 3 tasks")


@files_only("temp files")
def test_check_reports_and_fix_removes_temp_files_left_by_killed_writers(three: Path) -> None:
    tasks = three / ".tasks"
    stray = tasks / ".write.0badc0ffee00.tmp"
    stray.write_bytes(b"")
    os.utime(stray, (os.path.getmtime(stray) - 3600,) * 2)  # an hour old: nobody is using it
    in_flight = tasks / ".write.1234567890ab.tmp"
    in_flight.write_bytes(b"")  # just made: a writer may be waiting for the lock with it
    checked = board(three, "check")
    assert checked.returncode == 1 and checked.stdout.splitlines() == [f"{stray}: a temp file left by a writer killed mid-write ('board check --fix' removes it)"]
    fixed = board(three, "check", "--fix")
    assert fixed.returncode == 0 and "fixed: removed .write.0badc0ffee00.tmp" in fixed.stdout
    assert not stray.exists() and in_flight.exists()


def test_init_and_a_missing_board(tmp_path: Path) -> None:
    missing = board(tmp_path, "task", "list")
    assert missing.returncode == 2 and "run 'board init'" in missing.stderr
    assert board(tmp_path, "init").returncode == 0
    assert (tmp_path / ".tasks" / ".lock").exists()
    assert board(tmp_path, "task", "list").stdout.strip() == "no tasks"


@files_only("waits on the lock file")
def test_a_refused_update_writes_none_of_its_parts_even_when_the_board_changed_while_it_waited(three: Path) -> None:
    """The update waits for the board lock, held by another board writer that, before letting
    go, makes the update's new edge a cycle. The update must judge its edge on the board it
    finds under the lock and write nothing: not its progress, not the edge."""
    from tests.coordinator.helpers import board_cli, started, wait_for

    assert board(three, "task", "create", "Docs").returncode == 0
    go, holding = three / "go", three / "holding"
    writer = started(subprocess.Popen([sys.executable, "-c", HOLD_THEN_LINK, str(three), str(go), str(holding)], env={**os.environ, "PYTHONPATH": str(REPO)}))
    wait_for(holding.exists, timeout=60, what="the other writer to hold the board lock")
    update = board_cli(three, "task", "update", "4", "--progress", "7", "--add-blocked-by", "3", stderr=subprocess.PIPE)
    lock, fd_dir = str(three / ".tasks" / ".lock"), Path(f"/proc/{update.pid}/fd")

    def waits_for_the_lock() -> bool:
        try:
            return any(os.readlink(fd) == lock for fd in fd_dir.iterdir())
        except OSError:
            return False

    wait_for(waits_for_the_lock, timeout=60, what="the update to wait for the board lock")
    go.touch()
    _, err = update.communicate(timeout=60)
    assert writer.wait(timeout=60) == 0
    assert update.returncode == 2
    assert err.decode().strip() == "board: refused: that would create a dependency cycle #4 -> #3 -> #2 -> #1 -> #4"
    assert task_file(three, "4")["progress"] == 0
    assert task_file(three, "4")["blockedBy"] == []
    assert "4" not in task_file(three, "3")["blocks"]
    assert task_file(three, "1")["blockedBy"] == ["4"]  # the other writer's edge stands


HOLD_THEN_LINK = """
import sys, time
from pathlib import Path
from board.store import Store
workspace, go, holding = (Path(a) for a in sys.argv[1:])
store = Store.open(workspace)
with store.transaction():
    holding.touch()
    while not go.exists():
        time.sleep(0.02)
    store.link([("1", "4")])
"""


@files_only("a board in files is found by its directory")
def test_the_board_is_found_from_any_subdirectory_of_its_workspace(three: Path, monkeypatch, capsys) -> None:
    deep = three / "src" / "app"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert main(["task", "update", "1", "--progress", "40"]) == 0
    assert task_file(three, "1")["progress"] == 40
    capsys.readouterr()
    assert main(["task", "list", "--json"]) == 0
    assert [t["id"] for t in json.loads(capsys.readouterr().out)] == ["1", "2", "3"]
    # 'init' makes a board where it is asked, never upward.
    assert main(["init"]) == 0
    assert (deep / ".tasks").is_dir()
    capsys.readouterr()
    assert main(["task", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_outside_any_workspace_the_error_names_where_you_are(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["task", "list"]) == 2
    assert capsys.readouterr().err.strip() == f"board: no board in {tmp_path}: run 'board init' there or pass --workspace"
    assert list(tmp_path.iterdir()) == []


def test_task_text_reaches_the_terminal_as_visible_escapes(workspace: Path) -> None:
    """A subject, owner or description holding terminal escapes is printed with them shown,
    never as control bytes, by every command; --json stays valid and round-trips."""
    evil = "title \x1b]0;pwned\x07 clear \x1b[2J csi \x9b bidi \u202e del \x7f"
    assert board(workspace, "task", "create", evil, "--description", "two\nlines \x1b[31mred").returncode == 0
    assert board(workspace, "task", "update", "1", "--owner", "mal\x1blory").returncode == 0
    for args in (["task", "list"], ["task", "show", "1"], ["task", "list", "--format", "prompt"], ["check"], ["alerts"], ["task", "list", "--json"], ["task", "show", "1", "--json"]):
        done = board_process(workspace, *args)
        for raw in (done.stdout, done.stderr):
            assert not any(ch in raw for ch in "\x1b\x07\x9b\u202e\x7f"), (args, raw)
        if "--json" in args:
            data = json.loads(done.stdout)
            first = data[0] if isinstance(data, list) else data
            assert first["subject"] == evil and first["owner"] == "mal\x1blory"
        elif args[:2] != ["check"] and args[:1] != ["alerts"]:
            assert "\\x1b" in done.stdout, (args, done.stdout)
    shown = board_process(workspace, "task", "show", "1").stdout
    assert "two\nlines \\x1b[31mred" in shown  # a description keeps its lines
    refused = board_process(workspace, "task", "create", "x" * 10_000)
    assert refused.returncode == 2 and len(refused.stderr) < 300, refused.stderr


def test_labels_are_added_removed_listed_and_refused_plainly(three: Path) -> None:
    assert board(three, "task", "create", "Rate limits", "--label", "api", "--label", "perf").returncode == 0
    assert task_file(three, "4")["labels"] == ["api", "perf"]
    assert board(three, "task", "update", "1", "--label", "db", "--label", "api").returncode == 0
    assert board(three, "task", "update", "4", "--remove-label", "perf", "--label", "urgent").returncode == 0
    assert task_file(three, "4")["labels"] == ["api", "urgent"]
    assert [t["id"] for t in json.loads(board(three, "task", "list", "--label", "api", "--json").stdout)] == ["1", "4"]
    assert [t["id"] for t in json.loads(board(three, "task", "list", "--label", "api", "--label", "db", "--json").stdout)] == ["1"]
    listing = board(three, "task", "list").stdout.splitlines()
    assert "LABELS" in listing[0] and "api,urgent" in listing[4]
    assert "labels     db, api" in board(three, "task", "show", "1").stdout
    history_ops = [r for r in __import__("tests.disk", fromlist=["history"]).history(three) if r["task"] == "4"]
    assert history_ops[-1]["changes"]["labels"] == [["api", "perf"], ["api", "urgent"]]

    before = snapshot(three)
    for args, expected in (
        (["task", "list", "--label", "nope"], "no task on this board has the label 'nope' (labels in use: api, db, urgent)"),
        (["task", "update", "4", "--remove-label", "perf"], "task 4 has no label 'perf'; nothing was changed"),
        (["task", "update", "4", "--label", "two words"], "'two words' is not a valid label"),
        (["task", "create", "x", "--label", "a,b"], "'a,b' is not a valid label"),
    ):
        refused = board(three, *args)
        assert refused.returncode == 2 and expected in refused.stderr, (args, refused.stderr)
    assert snapshot(three) == before


def test_a_label_in_a_file_board_did_not_write_is_kept_and_an_unknown_field_beside_it_too(three: Path) -> None:
    document = task_file(three, "2")
    write_task_document(three, "2", {**document, "labels": ["imported"], "team": {"name": "core"}})
    assert board(three, "task", "update", "2", "--label", "db").returncode == 0
    assert task_file(three, "2")["labels"] == ["imported", "db"] and task_file(three, "2")["team"] == {"name": "core"}


def test_search_finds_words_in_subject_and_description_completed_tasks_included(three: Path) -> None:
    assert board(three, "task", "create", "Write the changelog", "--description", "Mention the REPOSITORY move").returncode == 0
    assert board(three, "task", "update", "1", "--status", "in_progress", "--owner", "me").returncode == 0
    assert board(three, "task", "update", "1", "--status", "completed", "--owner", "me").returncode == 0
    assert [t["id"] for t in json.loads(board(three, "task", "search", "schema", "--json").stdout)] == ["1"]
    assert [t["id"] for t in json.loads(board(three, "task", "search", "repository", "--json").stdout)] == ["2", "4"]
    assert [t["id"] for t in json.loads(board(three, "task", "search", "repository", "move", "--json").stdout)] == ["4"]
    assert [t["id"] for t in json.loads(board(three, "task", "search", "repository", "--status", "pending", "--json").stdout)] == ["2", "4"]
    nothing = board(three, "task", "search", "kubernetes")
    assert nothing.returncode == 0 and nothing.stdout.strip() == "no task holds 'kubernetes'"


def test_list_filters_by_owner_and_sorts_by_priority_id_or_latest_change(three: Path) -> None:
    assert board(three, "task", "create", "Urgent fix", "--priority", "critical").returncode == 0
    assert board(three, "task", "update", "2", "--owner", "bob").returncode == 0  # the latest change
    ids = lambda *args: [t["id"] for t in json.loads(board(three, "task", "list", "--json", *args).stdout)]  # noqa: E731
    assert ids() == ids("--sort", "id") == ["1", "2", "3", "4"]
    assert ids("--sort", "priority") == ["4", "1", "2", "3"]  # critical, high, then medium by id
    assert ids("--sort", "updated")[0] == "2"
    assert ids("--owner", "bob") == ["2"]
    assert board(three, "task", "list", "--sort", "size").returncode == 2


def test_every_option_of_every_command_says_what_it_is_for() -> None:
    import argparse

    from board.cli import build_parser

    silent = []

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    assert sub.description, f"{path} {name} has no description"
                    walk(sub, f"{path} {name}")
            elif not action.help and not isinstance(action, argparse._HelpAction):
                silent.append(f"{path} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser(), "board")
    assert silent == []


@pytest.mark.parametrize(
    "args",
    [["init"], ["task", "create", "Docs"], ["task", "update", "1", "--progress", "5"], ["task", "list"], ["task", "search", "schema"],
     ["task", "show", "1"], ["check"], ["claim", "--agent", "a"], ["heartbeat", "--agent", "a"], ["toolcall", "1", "Edit"],
     ["checkpoint", "1"], ["resume", "1"], ["alerts"], ["reserve", "1", "a.py"], ["reservations"], ["unreserve", "1"],
     ["release", "1", "--force"], ["task", "delete", "4"], ["task", "restore", "4"], ["coordinator", "--once"]],
)
def test_json_is_honoured_by_every_command_that_prints(three: Path, args: list[str]) -> None:
    assert board(three, "task", "create", "Docs").returncode == 0
    if args[0] in ("heartbeat", "toolcall", "release", "reserve", "unreserve", "checkpoint", "resume") or args[:2] == ["task", "restore"]:
        assert board(three, "claim", "--agent", "a").returncode == 0
        board(three, "checkpoint", "1")
        board(three, "task", "delete", "4")
    done = board(three, "--json", *args)
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)


@pytest.mark.parametrize("args", [["run"], ["worker", "--simulate"], ["demo"], ["ui"], ["coordinator"]])
def test_json_is_refused_plainly_where_a_command_prints_a_live_log_or_a_screen(three: Path, args: list[str]) -> None:
    before = snapshot(three)
    refused = board(three, "--json", *args)
    assert refused.returncode == 2 and "--json" in refused.stderr and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert snapshot(three) == before


def test_a_question_and_its_answer_from_the_command_line(three: Path) -> None:
    assert board(three, "task", "update", "1", "--status", "in_progress", "--owner", "me").returncode == 0
    before = snapshot(three)
    for args, expected in (
        (["task", "update", "1", "--question", "Which engine?"], "pass it with --status waiting"),
        (["task", "update", "1", "--status", "waiting", "--question", "   "], "the question is empty"),
        (["answer", "1", "Postgres"], "only a waiting task can be answered; task 1 is in_progress"),
    ):
        refused = board(three, *args)
        assert refused.returncode == 2 and expected in refused.stderr, (args, refused.stderr)
    assert snapshot(three) == before

    assert board(three, "task", "update", "1", "--status", "waiting", "--question", "Which engine?").returncode == 0
    waiting = task_file(three, "1")
    assert (waiting["status"], waiting["question"], waiting["answer"], waiting["owner"]) == ("waiting", "Which engine?", None, "me")
    assert waiting["askedAt"]
    assert "asks: Which engine?" in board(three, "task", "list", "--format", "prompt").stdout
    assert "question   Which engine?" in board(three, "task", "show", "1").stdout
    refused = board(three, "task", "update", "1", "--status", "pending")
    assert refused.returncode == 2 and "board answer 1" in refused.stderr  # it says how, instead of a dance

    answered = board(three, "answer", "1", "Postgres, SQLite in tests")
    assert answered.returncode == 0 and answered.stdout.strip() == "#1 answered; back to me"
    task = task_file(three, "1")
    assert (task["status"], task["owner"], task["answer"], task["question"]) == ("in_progress", "me", "Postgres, SQLite in tests", "Which engine?")
    assert "answered: Postgres, SQLite in tests" in board(three, "task", "list", "--format", "prompt").stdout

    # Asked again: the new question clears the old answer (history keeps it); --requeue gives it to any agent.
    assert board(three, "task", "update", "1", "--status", "waiting", "--question", "Which version?", "--force").returncode == 0  # "me" holds a lease now
    assert task_file(three, "1")["answer"] is None
    assert board(three, "--json", "answer", "1", "15", "--requeue").returncode == 0
    task = task_file(three, "1")
    assert (task["status"], task["owner"], task["answer"]) == ("pending", "", "15")
    assert [r["op"] for r in __import__("tests.disk", fromlist=["history"]).history(three) if r["task"] == "1"][-1] == "status:pending (answered)"
