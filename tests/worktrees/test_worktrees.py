"""A git worktree per task: ``board run --worktrees`` with real commands that change and commit
files in real repositories, ``board diff``, ``board merge`` (clean, conflicting, refused), the
next attempt of a killed worker, and links planted where the worktrees go."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from board.store import Store
from board.workspace_files import workspace_file
from tests.conftest import BOTH_BACKENDS, LONG, board_kept_in
from tests.coordinator.helpers import REPO, board_cli

pytestmark = LONG


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def board(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "board", "-w", str(repo), *args], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=180)
    if check and done.returncode != 0:
        raise AssertionError(f"board {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done


def make_repository(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Person")
    git(path, "config", "user.email", "person@example.com")
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "--all")
    git(path, "commit", "-q", "-m", "start")
    return path


def agent(tmp_path: Path, script: str) -> Path:
    """A stand-in for a coding agent: a shell script run once per task in its worktree."""
    path = tmp_path / "agent.sh"
    path.write_text("#!/bin/sh\nset -e\n" + script)
    path.chmod(0o755)
    return path


def task_json(repo: Path, task_id: str) -> dict:
    return json.loads(board(repo, "task", "show", task_id, "--json").stdout)


def clashing_tasks_run(repo: Path, tmp_path: Path, workers: int, other_tasks: str = "") -> Path:
    """Tasks #1 "Return two" and #2 "Return three", which change the same line of app.py,
    run in their worktrees; ``other_tasks``: more ``case`` arms of the agent. Its script."""
    board(repo, "task", "create", "Return two")
    board(repo, "task", "create", "Return three")
    script = agent(
        tmp_path,
        'case "$BOARD_TASK_ID" in\n'
        '  1) printf "def main():\\n    return 2\\n" > app.py ;;\n'
        '  2) printf "def main():\\n    return 3\\n" > app.py ;;\n' + other_tasks + "esac\n",
    )
    board(repo, "run", "--worktrees", "--workers", str(workers), "--", str(script))
    return script


@pytest.fixture
def repo(tmp_path: Path, backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with a board: in its files, or (for tests marked BOTH_BACKENDS) in
    PostgreSQL, named by ``BOARD_DB`` for every command the test runs."""
    repo = make_repository(tmp_path / "project", {"app.py": "def main():\n    return 1\n", "README": "project\n", "lib/util.py": "X = 1\n"})
    board_kept_in(backend, request, monkeypatch)
    (repo / ".tasks").mkdir()
    Store.open(repo, create=True).close()
    return repo


@BOTH_BACKENDS
def test_two_tasks_on_different_files_run_in_their_own_worktrees_and_merge_cleanly(repo: Path, tmp_path: Path) -> None:
    board(repo, "task", "create", "Change the app")
    board(repo, "task", "create", "Change the util")
    script = agent(
        tmp_path,
        'test "$PWD" = "$BOARD_WORKTREE"\n'
        'case "$BOARD_TASK_ID" in\n'
        '  1) printf "def main():\\n    return 2\\n" > app.py; git commit -qam "app returns 2" ;;\n'
        '  2) echo "Y = 2" >> lib/util.py; echo "new" > lib/new.py ;;\n'  # left uncommitted: board commits it
        "esac\n",
    )
    done = board(repo, "run", "--worktrees", "--workers", "2", "--", str(script))
    assert "each task runs in its own worktree" in done.stderr + done.stdout
    one, two = task_json(repo, "1"), task_json(repo, "2")
    assert (one["status"], two["status"]) == ("completed", "completed")
    assert one["metadata"]["worktree"]["branch"] == "board/1.change-the-app"
    assert one["metadata"]["worktree"]["changes"] == {"files": 1, "added": 1, "removed": 1, "list": [["app.py", 1, 1]]}
    assert two["metadata"]["worktree"]["changes"]["list"] == [["lib/new.py", 1, 0], ["lib/util.py", 1, 0]]
    # The workspace itself was never touched, and git does not list the worktrees.
    assert (repo / "app.py").read_text() == "def main():\n    return 1\n"
    assert all(line.startswith("?? .tasks/") for line in git(repo, "status", "--porcelain", "--untracked-files=all").splitlines())
    # What was left uncommitted is on the task's branch.
    assert "lib/new.py" in git(repo, "show", "--name-only", "--format=", "board/2.change-the-util")
    assert "+Y = 2" in board(repo, "diff", "2").stdout
    assert board(repo, "diff", "2", "--stat").stdout.splitlines()[-1] == "#2 on board/2.change-the-util: 2 files +2 −0 against main"

    first = board(repo, "merge", "1").stdout
    assert "fast-forward" in first
    second = board(repo, "merge", "2").stdout
    assert "merge commit" in second  # main moved on since #2 began
    assert (repo / "app.py").read_text() == "def main():\n    return 2\n"
    assert (repo / "lib" / "util.py").read_text() == "X = 1\nY = 2\n"
    assert git(repo, "branch", "--list", "board/*") == ""
    assert not (repo / ".board-worktrees" / "1.change-the-app").exists()
    assert task_json(repo, "2")["metadata"]["worktree"]["merged"] == git(repo, "rev-parse", "main").strip()
    # A merged task's diff is what its merge brought in.
    assert "+Y = 2" in board(repo, "diff", "2").stdout


@BOTH_BACKENDS
def test_two_tasks_changing_the_same_lines_conflict_change_nothing_and_go_back_to_an_agent(repo: Path, tmp_path: Path) -> None:
    # The task that settles the conflict: merge the base and keep both meanings.
    script = clashing_tasks_run(repo, tmp_path, 2, '  *) git merge -q main || true; printf "def main():\\n    return 2 + 3\\n" > app.py; git commit -qam "both" ;;\n')
    board(repo, "merge", "1")
    main_before, tree_before = git(repo, "rev-parse", "main"), (repo / "app.py").read_text()
    branch_before = git(repo, "rev-parse", "board/2.return-three")

    refused = board(repo, "merge", "2", check=False)
    assert refused.returncode == 1
    assert refused.stderr.count("\n") == 1
    assert "#2 conflicts with main in app.py (also changed by #1): nothing was merged" in refused.stderr
    assert git(repo, "rev-parse", "main") == main_before and (repo / "app.py").read_text() == tree_before
    assert git(repo, "rev-parse", "board/2.return-three") == branch_before
    assert (repo / ".board-worktrees" / "2.return-three").is_dir()
    assert task_json(repo, "2")["metadata"]["worktree"]["conflict"]["files"] == ["app.py"]

    alerts = json.loads(board(repo, "alerts", "--json").stdout)
    conflict = [a for a in alerts if a["kind"] == "merge.conflict"]
    assert conflict and conflict[0]["tasks"] == ["2"] and "board merge 2 --send-back" in conflict[0]["action"]

    sent = board(repo, "merge", "2", "--send-back").stdout
    assert sent.startswith("#3 Resolve the merge conflict of #2 with main")
    resolver = task_json(repo, "3")
    assert resolver["parent"] == "2" and resolver["files"] == ["app.py"] and "git merge main" in resolver["description"]
    board(repo, "run", "--worktrees", "--workers", "1", "--", str(script))
    assert task_json(repo, "3")["status"] == "completed"
    board(repo, "merge", "3")
    assert (repo / "app.py").read_text() == "def main():\n    return 2 + 3\n"
    assert task_json(repo, "2")["metadata"]["worktree"]["merged"] == git(repo, "rev-parse", "main").strip()
    assert not [a for a in json.loads(board(repo, "alerts", "--json").stdout) if a["kind"] == "merge.conflict"]


def test_a_task_starts_from_the_unmerged_work_of_the_tasks_it_waits_for(repo: Path, tmp_path: Path) -> None:
    board(repo, "task", "create", "Write the util")
    board(repo, "task", "create", "Use the util", "--blocked-by", "1")
    script = agent(
        tmp_path,
        'case "$BOARD_TASK_ID" in\n'
        '  1) echo "def helper(): return 7" >> lib/util.py ;;\n'
        '  2) grep -q helper lib/util.py; echo "from lib.util import helper" >> app.py ;;\n'
        "esac\n",
    )
    board(repo, "run", "--worktrees", "--workers", "1", "--", str(script))
    assert task_json(repo, "2")["status"] == "completed"  # it found #1's helper in its worktree
    # Its own change is what it shows, not its blocker's.
    assert task_json(repo, "2")["metadata"]["worktree"]["changes"]["list"] == [["app.py", 1, 0]]
    board(repo, "merge", "1")
    board(repo, "merge", "2")
    assert "helper" in (repo / "lib" / "util.py").read_text() and "import helper" in (repo / "app.py").read_text()


def test_a_worker_killed_mid_task_leaves_its_worktree_and_commits_to_the_next_attempt(repo: Path, tmp_path: Path) -> None:
    (repo / ".tasks" / "board.toml").write_text("[lease]\nseconds = 1\nclock_skew_seconds = 0\n")
    board(repo, "task", "create", "Two steps")
    marker = tmp_path / "first-step-done"
    script = agent(
        tmp_path,
        f'if [ ! -e "{marker}" ]; then echo one > step1; git add step1; git commit -qm "step 1"; touch "{marker}"; sleep 600; fi\n'
        "echo two > step2\n",
    )
    worker = board_cli(repo, "worker", "--worktrees", "--base", "main", "--name", "first", "--", str(script), start_new_session=True)
    from tests.coordinator.helpers import wait_for

    wait_for(lambda: marker.exists(), timeout=60, what="the first attempt's commit")
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    board(repo, "run", "--worktrees", "--workers", "1", "--", str(script))
    assert task_json(repo, "1")["status"] == "completed"
    log = git(repo, "log", "--format=%s", "board/1.two-steps")
    assert log.splitlines()[:2] == ["#1 Two steps", "step 1"]  # the same branch, both attempts' work
    assert task_json(repo, "1")["metadata"]["worktree"]["path"] == ".board-worktrees/1.two-steps"


def test_merge_is_refused_when_the_checked_out_base_has_uncommitted_changes_it_would_touch(repo: Path, tmp_path: Path) -> None:
    board(repo, "task", "create", "Change the app")
    board(repo, "run", "--worktrees", "--workers", "1", "--", str(agent(tmp_path, "echo '# more' >> app.py\n")))
    (repo / "app.py").write_text("mine, not committed\n")
    (repo / "README").write_text("also mine\n")
    refused = board(repo, "merge", "1", check=False)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "main is checked out in" in refused.stderr and "uncommitted changes to app.py" in refused.stderr
    assert (repo / "app.py").read_text() == "mine, not committed\n"
    assert git(repo, "log", "--format=%s", "main").splitlines() == ["start"]
    (repo / "app.py").write_text("def main():\n    return 1\n")  # put back: only README stays changed
    board(repo, "merge", "1")
    assert (repo / "app.py").read_text().endswith("# more\n")
    assert (repo / "README").read_text() == "also mine\n"  # a file the merge leaves alone keeps its change


def test_a_workspace_inside_a_repository_gets_its_own_folder_in_each_worktree(tmp_path: Path) -> None:
    top = make_repository(tmp_path / "mono", {"service/app.py": "A = 1\n", "other/b.py": "B = 1\n"})
    workspace = top / "service"
    board(workspace, "init")
    board(workspace, "task", "create", "Change A")
    board(workspace, "run", "--worktrees", "--workers", "1", "--", str(agent(tmp_path, 'test -e app.py; echo "A = 2" > app.py; echo x >> ../other/b.py\n')))
    changes = task_json(workspace, "1")["metadata"]["worktree"]["changes"]
    assert [entry[0] for entry in changes["list"]] == ["app.py"]  # the other folder is not the board's
    # The hook's path for a file in the worktree is the workspace's file.
    inside = workspace / ".board-worktrees" / "1.change-a" / "service" / "app.py"
    assert workspace_file(workspace, str(inside)) == "app.py"
    assert workspace_file(workspace, str(workspace / ".board-worktrees" / "1.change-a" / "other" / "b.py")) is None


def test_a_link_planted_where_the_worktrees_go_is_refused_and_nothing_is_written_through_it(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".board-worktrees").symlink_to(elsewhere)
    board(repo, "task", "create", "Anything")
    refused = board(repo, "worktree", "1", check=False)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "is not a folder (a link or a file is in its place)" in refused.stderr
    assert list(elsewhere.iterdir()) == []
    assert git(repo, "branch", "--list", "board/*") == ""
    assert "worktree" not in task_json(repo, "1")["metadata"]


def test_bad_requests_are_one_line_and_change_nothing(repo: Path) -> None:
    board(repo, "task", "create", "Not started")
    for args, says in (
        (("diff", "1"), "task #1 has no worktree"),
        (("merge", "1"), "task #1 has no worktree"),
        (("merge", "9"), "9"),
        (("worktree", "1", "--base", "nope"), "'nope' is not a branch of this repository"),
        (("run", "--worktrees", "--base", "nope", "--", "true"), "no branch 'nope'"),
        (("run", "--worktrees", "--simulate"), "give a command, not --simulate"),
    ):
        done = board(repo, *args, check=False)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and says in done.stderr, (args, done.stderr)
    board(repo, "worktree", "1")
    made = task_json(repo, "1")["metadata"]["worktree"]
    refused = board(repo, "merge", "1", check=False)
    assert refused.returncode == 2 and "task #1 is pending: only a completed task is merged" in refused.stderr
    (repo / made["path"] / "scratch.txt").write_text("unsaved")
    kept = board(repo, "worktree", "1", "--remove", check=False)
    assert kept.returncode == 2 and "has uncommitted changes (scratch.txt)" in kept.stderr
    assert (repo / made["path"] / "scratch.txt").exists()
    assert "removed" in board(repo, "worktree", "1", "--remove", "--force").stdout
    assert git(repo, "branch", "--list", "board/*") == ""
    assert Store.open(repo).get("1").metadata == {}


def test_ending_a_task_keeps_its_worktree_unless_asked_and_never_drops_uncommitted_work(repo: Path) -> None:
    board(repo, "task", "create", "Cancelled")
    board(repo, "task", "create", "Deleted")
    for task_id in ("1", "2"):
        board(repo, "worktree", task_id)
    cancelled = board(repo, "task", "update", "1", "--status", "cancelled").stdout
    assert "its worktree .board-worktrees/1.cancelled is kept (board worktree 1 --remove removes it)" in cancelled
    assert (repo / ".board-worktrees" / "1.cancelled").is_dir()
    (repo / ".board-worktrees" / "2.deleted" / "draft.txt").write_text("half done")
    refused = board(repo, "task", "delete", "2", "--worktree", "remove", check=False)
    assert refused.returncode == 2 and "has uncommitted changes (draft.txt): nothing was done" in refused.stderr
    assert task_json(repo, "2")["status"] == "pending" and (repo / ".board-worktrees" / "2.deleted" / "draft.txt").exists()
    (repo / ".board-worktrees" / "2.deleted" / "draft.txt").unlink()
    deleted = board(repo, "task", "delete", "2", "--worktree", "remove").stdout
    assert "removed .board-worktrees/2.deleted; deleted board/2.deleted" in deleted
    assert not (repo / ".board-worktrees" / "2.deleted").exists()
    # board check names what is left without a task, and a task whose worktree vanished.
    board(repo, "task", "create", "Vanishing")
    board(repo, "worktree", "3")
    git(repo, "worktree", "remove", "--force", ".board-worktrees/3.vanishing")
    (repo / ".board-worktrees" / "made-by-hand").mkdir()
    checked = board(repo, "check", check=False)
    assert checked.returncode == 1
    assert "#3: its worktree .board-worktrees/3.vanishing is gone (its branch keeps its commits)" in checked.stdout
    assert ".board-worktrees/made-by-hand: no task's worktree" in checked.stdout


def test_with_automatic_merges_completed_tasks_go_into_the_base_in_dependency_order(repo: Path, tmp_path: Path) -> None:
    (repo / ".tasks" / "board.toml").write_text('[worktrees]\nenabled = true\nmerge = "auto"\n')
    board(repo, "task", "create", "Base layer")
    board(repo, "task", "create", "On top", "--blocked-by", "1")
    board(repo, "task", "create", "Independent")
    script = agent(
        tmp_path,
        'case "$BOARD_TASK_ID" in\n'
        # Meanwhile a person commits another value on main: #1 cannot be merged.
        '  1) echo "LAYER = 1" > lib/util.py; cd "$BOARD_WORKSPACE"; echo "LAYER = 0" > lib/util.py; git commit -qam "a person"; cd - ;;\n'
        '  2) echo "TOP = LAYER" >> lib/util.py ;;\n'
        '  3) echo "more" >> README ;;\n'
        "esac\n",
    )
    board(repo, "run", "--workers", "1", "--", str(script))  # worktrees from board.toml
    one, two, three = (task_json(repo, i)["metadata"]["worktree"] for i in ("1", "2", "3"))
    assert one["conflict"]["files"] == ["lib/util.py"] and "merged" not in one
    # #2 waits on #1: its merge is not even tried while #1 is not merged.
    assert "merged" not in two and "conflict" not in two
    assert three["merged"] and (repo / "README").read_text() == "project\nmore\n"
    assert (repo / "lib" / "util.py").read_text() == "LAYER = 0\n"
    assert [t["status"] for t in json.loads(board(repo, "task", "list", "--json").stdout)] == ["completed"] * 3


def test_the_worktree_demo_leaves_a_diff_on_every_card_and_one_conflict_to_resolve(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "board", "demo", "--worktrees", "--no-ui", "--pace", "0.02", "--keep"],
        capture_output=True, text=True, timeout=180, env=dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(tmp_path)),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    repo = Path(done.stdout.strip().splitlines()[-1].removeprefix("kept the demo board in "))
    assert repo.is_relative_to(tmp_path)
    tasks = json.loads(board(repo, "task", "list", "--json").stdout)
    assert [t["status"] for t in tasks] == ["completed"] * 5
    for task in tasks:
        assert task_json(repo, task["id"])["metadata"]["worktree"]["changes"]["files"] == 1
    for task_id in ("1", "3", "2", "4"):
        board(repo, "merge", task_id)
    assert board(repo, "merge", "5", check=False).returncode == 1  # French and the exclamation mark clash
    run = subprocess.run([sys.executable, "app.py", "Ann"], cwd=repo, capture_output=True, text=True, check=True)
    assert run.stdout == "Hello, Ann!\n"


def test_the_files_a_worktree_changed_count_for_conflicts_and_the_guard_as_declared_ones_do(repo: Path) -> None:
    from board.active_work import read_active
    from board.worktrees import on_board

    store = Store.open(repo)
    mine = store.claim_task(store.create("Change the app quietly").id, "alice")
    store.claim_task(store.create("Declares the app", files=["app.py"]).id, "bob")
    record = on_board.open_for(store, mine, "main", actor="alice")
    assert not [a for a in json.loads(board(repo, "alerts", "--json").stdout) if a["kind"] == "conflict.files"]
    (repo / record.path / "app.py").write_text("changed\n")  # never declared, never reported
    on_board.note_changes(store, mine.id, actor="alice")
    conflicts = [a for a in json.loads(board(repo, "alerts", "--json").stdout) if a["kind"] == "conflict.files"]
    assert len(conflicts) == 1 and conflicts[0]["tasks"] == ["1", "2"] and conflicts[0]["files"] == ["app.py"]
    # What the guard reads (this machine's index of tasks in progress) holds it too.
    assert read_active(store.state_dir)[mine.id]["files"] == ["app.py"]


def test_many_workers_starting_at_once_each_get_their_worktree(tmp_path: Path) -> None:
    """Workers starting tasks together make worktrees at the same moment: git's own files must
    not be read half made (``failed to read .git/worktrees/…/commondir``) by another's make."""
    script = agent(tmp_path, 'echo "$BOARD_TASK_ID" > "task-$BOARD_TASK_ID.txt"\n')
    for attempt in range(3):
        repo = make_repository(tmp_path / f"project-{attempt}", {"README": "x\n"})
        board(repo, "init")
        for number in range(8):
            board(repo, "task", "create", f"Task {number}")
        done = board(repo, "run", "--worktrees", "--workers", "8", "--", str(script), check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert len(git(repo, "branch", "--list", "board/*").splitlines()) == 8


def test_claude_code_settings_copied_into_a_worktree_are_never_part_of_its_work(repo: Path, tmp_path: Path) -> None:
    """``board hooks install`` leaves ``.claude/settings.json`` uncommitted in the workspace;
    each worktree gets a copy, which must not show as a change, be committed on the task's
    branch, nor stop the merge (the workspace's own copy is in the way of a branch holding it)."""
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text('{"hooks": {}}\n')
    board(repo, "task", "create", "Change the app")
    board(repo, "run", "--worktrees", "--workers", "1", "--", str(agent(tmp_path, "test -f .claude/settings.json; echo '# more' >> app.py\n")))
    assert task_json(repo, "1")["metadata"]["worktree"]["changes"]["list"] == [["app.py", 1, 0]]
    assert git(repo, "show", "--name-only", "--format=", "board/1.change-the-app").split() == ["app.py"]
    assert "settings.json" not in board(repo, "diff", "1").stdout
    board(repo, "merge", "1")
    assert not (repo / ".board-worktrees" / "1.change-the-app").exists()  # removed once merged
    assert (repo / ".claude" / "settings.json").read_text() == '{"hooks": {}}\n'


def test_a_worktree_record_an_agent_forged_sends_git_nowhere(repo: Path, tmp_path: Path) -> None:
    """An agent can write any metadata: a record naming another task's worktree (which a merge
    would commit in, merge early and remove), a folder outside .board-worktrees/, the base as
    the branch, or an option, is no record at all; nor is a folder whose .git names another
    repository."""
    outside = make_repository(tmp_path / "other", {"o.txt": "theirs\n"})
    git(repo, "branch", "release")
    board(repo, "task", "create", "Honest work")
    board(repo, "worktree", "1")
    honest = repo / ".board-worktrees" / "1.honest-work"
    (honest / "app.py").write_text("half done\n")
    git(honest, "commit", "-q", "-am", "step one")
    (honest / "wip.txt").write_text("not committed\n")
    store = Store.open(repo)
    forgeries = (
        {"branch": "board/1.honest-work", "base": "main", "path": ".board-worktrees/1.honest-work", "from": ""},  # #1's
        {"branch": "board/1.honest-work", "base": "main", "path": ".board-worktrees/1.honest-work", "from": ""},  # with a resolver's mark
        {"branch": "main", "base": "release", "path": ".board-worktrees/9.x", "from": ""},
        {"branch": "board/9.x", "base": "main", "path": "../other", "from": ""},
        {"branch": "board/9.x", "base": "board/9.x", "path": ".board-worktrees/9.x", "from": ""},
        {"branch": "board/9.x", "base": "--output=/tmp/owned", "path": ".board-worktrees/9.x", "from": ""},
        {"branch": "board/9.x", "base": "main", "path": ".board-worktrees/9.x", "from": "HEAD~1; rm -rf /"},
    )
    for number, forged in enumerate(forgeries):
        metadata = {"worktree": forged, **({"resolvesMergeOf": "1"} if number == 1 else {})}
        task = store.create("Forged", metadata=metadata)
        store.set_status(task.id, "in_progress", owner="mallory", actor="mallory", lease_seconds=60)
        store.set_status(task.id, "completed", actor="mallory", force=True)
        for args in (("merge", task.id), ("worktree", task.id, "--remove", "--force"), ("diff", task.id)):
            done = board(repo, *args, check=False)
            assert done.returncode == 2 and done.stderr.count("\n") == 1, (forged, args, done.stderr)
    # A folder of .board-worktrees/ whose .git names another repository: board runs no git there.
    sneaky = store.create("Sneaky")
    store.update(sneaky.id, metadata={"worktree": {"branch": f"board/{sneaky.id}.x", "base": "main", "path": f".board-worktrees/{sneaky.id}.x", "from": ""}})
    planted = repo / ".board-worktrees" / f"{sneaky.id}.x"
    planted.mkdir()
    (planted / ".git").write_text(f"gitdir: {outside / '.git'}\n")
    (planted / "o.txt").write_text("changed through the plant\n")
    store.set_status(sneaky.id, "in_progress", owner="mallory", actor="mallory", lease_seconds=60)
    store.set_status(sneaky.id, "completed", actor="mallory", force=True)
    assert board(repo, "merge", sneaky.id, check=False).returncode == 2
    assert git(outside, "log", "--format=%s").splitlines() == ["start"] and git(outside, "status", "--porcelain") == ""
    # #1's work is all there: its commit, its branch, its uncommitted file.
    assert (honest / "wip.txt").read_text() == "not committed\n"
    assert git(repo, "log", "--format=%s", "board/1.honest-work").splitlines()[0] == "step one"
    assert git(repo, "log", "--format=%s", "main").splitlines() == ["start"]
    assert git(repo, "branch", "--list", "main", "release").split() == ["*", "main", "release"]
    refused = board(repo, "run", "--worktrees", "--base=-x", "--", "true", check=False)
    assert refused.returncode == 2 and "not a branch name" in refused.stderr


def test_tasks_whose_ids_and_subjects_run_together_get_worktrees_of_their_own(repo: Path) -> None:
    """Task ``1`` "A b" and task ``1-a`` "B" once both made ``1-a-b``: the second took over the
    first's worktree, and its merge carried the first's unfinished work away."""
    store = Store.open(repo)
    store.create("A b", task_id="1")
    store.create("B", task_id="1-a")
    board(repo, "worktree", "1")
    (repo / ".board-worktrees" / "1.a-b" / "wip.txt").write_text("#1's, unfinished\n")
    made = board(repo, "worktree", "1-a").stdout
    assert "1-a.b" in made and (repo / ".board-worktrees" / "1-a.b").is_dir()
    assert not (repo / ".board-worktrees" / "1-a.b" / "wip.txt").exists()
    # A branch left by a task deleted before is someone's work: a new task never adopts it.
    git(repo, "branch", "board/7.later")
    store.create("Later", task_id="7")
    assert "board/7.later-2" in board(repo, "worktree", "7").stdout


def test_a_worktree_in_the_middle_of_a_merge_is_neither_committed_nor_merged(repo: Path, tmp_path: Path) -> None:
    clashing_tasks_run(repo, tmp_path, 1)
    board(repo, "merge", "1")
    assert board(repo, "merge", "2", check=False).returncode == 1
    three = repo / ".board-worktrees" / "2.return-three"
    assert subprocess.run(["git", "-C", str(three), "merge", "-q", "main"], capture_output=True).returncode != 0  # left with conflicts
    before = git(repo, "rev-parse", "main")
    refused = board(repo, "merge", "2", check=False)
    assert refused.returncode == 2 and "in the middle of a merge with conflicts in app.py" in refused.stderr
    assert git(repo, "rev-parse", "main") == before and "<<<<<<<" not in (repo / "app.py").read_text()
    # Committed with its markers left in: still refused.
    git(three, "commit", "-q", "-am", "markers and all")
    refused = board(repo, "merge", "2", check=False)
    assert refused.returncode == 2 and "leaves conflict markers in app.py" in refused.stderr
    assert git(repo, "rev-parse", "main") == before
    # A conflict names the other tasks whose work meets this one's (#2, not merged), not #1,
    # merged before #3 began: that is in #3's base already.
    board(repo, "task", "create", "Return four")
    board(repo, "worktree", "3")
    (repo / ".board-worktrees" / "3.return-four" / "app.py").write_text("def main():\n    return 4\n")
    (repo / "app.py").write_text("def main():\n    return 5\n")
    git(repo, "commit", "-q", "-am", "a person's five")
    store = Store.open(repo)
    store.set_status("3", "in_progress", owner="w", actor="w", lease_seconds=60)
    store.set_status("3", "completed", actor="w", force=True)
    conflict = board(repo, "merge", "3", check=False)
    assert conflict.returncode == 1 and "#3 conflicts with main in app.py (also changed by #2): nothing was merged" in conflict.stderr


def test_automatic_merges_wait_for_a_command_still_running_in_the_worktree(repo: Path) -> None:
    from board.model import utcnow
    from board.worktrees import on_board

    store = Store.open(repo)
    task = store.create("Done early")
    on_board.open_for(store, task, "main", actor="w")
    (repo / ".board-worktrees" / "1.done-early" / "late.txt").write_text("still writing\n")
    store.set_status("1", "in_progress", owner="w", actor="w", lease_seconds=60)
    store.set_status("1", "completed", actor="w", force=True)
    merged: list[str] = []
    on_board.merge_completed(store, utcnow(), actor="coordinator", merged=merged, refused=[], running=lambda task_id: task_id == "1")
    assert merged == [] and (repo / ".board-worktrees" / "1.done-early" / "late.txt").exists()
    on_board.merge_completed(store, utcnow(), actor="coordinator", merged=merged, refused=[], running=lambda task_id: False)
    assert merged and (repo / "late.txt").read_text() == "still writing\n"


def test_a_link_planted_as_the_worktrees_lock_fails_the_task_not_the_worker(repo: Path, tmp_path: Path) -> None:
    (repo / ".board-worktrees").mkdir()
    (repo / ".board-worktrees" / ".lock").symlink_to(tmp_path / "elsewhere")
    board(repo, "task", "create", "Anything")
    done = board(repo, "run", "--worktrees", "--workers", "1", "--", str(agent(tmp_path, "true\n")), check=False)
    assert done.returncode == 1 and "restarted" not in done.stdout + done.stderr and "started worker-1r1" not in done.stdout + done.stderr
    failed = task_json(repo, "1")
    assert failed["status"] == "failed" and "cannot lock" in failed["error"]
    assert not (tmp_path / "elsewhere").exists()


def test_a_worktree_lock_held_for_ever_by_another_process_is_one_line_after_a_while(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whoever can open ``.board-worktrees/.lock`` could keep it: making a worktree waited for
    ever. It waits ``WORKTREE_LOCK_SECONDS`` (git's own work on a big repository takes seconds),
    then says so in one line."""
    from board.worktrees import git_work
    from tests.core.test_active_work import held_by_another_process

    monkeypatch.setattr(git_work, "WORKTREE_LOCK_SECONDS", 0.5, raising=False)
    folder = tmp_path / ".board-worktrees"
    folder.mkdir()
    holder = held_by_another_process(folder / ".lock")
    try:
        with pytest.raises(git_work.WorktreeError, match="locked by another process"):
            with git_work.making_worktrees(folder):
                pass
    finally:
        holder.kill()
        holder.wait()
    with git_work.making_worktrees(folder):
        pass  # free again
