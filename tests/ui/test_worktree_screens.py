"""A task's worktree on the dashboard: its changes on the card and in the details, the diff
view (snapshot), and merging from the keyboard after a confirmation."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from board.store import Store
from board.worktrees import on_board
from tests.ui.conftest import make_app, settled, wait_for
from tests.worktrees.test_worktrees import git, make_repository

pytestmark = pytest.mark.anyio


@pytest.fixture
def worked(tmp_path: Path) -> Path:
    """A repository whose board has one task that changed two files in its worktree, done."""
    repo = make_repository(tmp_path / "project", {"util.py": "X = 1\n", "app.py": "import util\n"})
    store = Store.open(repo, create=True)
    task = store.create("Add Y to util", description="Y is needed by the report.")
    record = on_board.open_for(store, task, "main", actor="worker-1")
    folder = repo / record.path
    (folder / "util.py").write_text("X = 1\nY = 2\n")
    (folder / "report.py").write_text("import util\n\nprint(util.Y)\n")
    on_board.note_changes(store, task.id, actor="worker-1")
    store.close()
    return repo


async def open_diff(pilot: Pilot) -> None:
    await settled(pilot)
    await pilot.press("enter")
    await pilot.pause()
    await pilot.press("d")
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_the_diff_view(worked: Path, snap_compare) -> None:
    assert snap_compare(make_app(worked), terminal_size=(100, 30), run_before=open_diff)


async def test_the_card_and_the_details_show_what_the_worktree_changed(worked: Path) -> None:
    app = make_app(worked)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        from tests.ui.test_plain_text import screen_text

        assert "⎇2 +4−0" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        text = screen_text(app)
        assert "board/1.add-y-to-util: .board-worktrees/1.add-y-to-util, from main" in text
        assert "+3 −0  report.py" in text and "+1 −0  util.py" in text
        # Not completed: no M (merge) in the footer, d (diff) there.
        assert " d Diff " in text and "M Merge" not in text


async def test_merging_from_the_details_asks_first_then_merges(worked: Path) -> None:
    store = Store.open(worked)
    store.set_status("1", "in_progress", owner="worker-1", actor="worker-1", lease_seconds=60)
    store.set_status("1", "completed", actor="worker-1", force=True)
    store.close()
    git(worked / ".board-worktrees" / "1.add-y-to-util", "add", "--all")
    git(worked / ".board-worktrees" / "1.add-y-to-util", "commit", "-q", "-m", "Y")
    app = make_app(worked)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("M")
        await pilot.pause()
        from tests.ui.test_plain_text import screen_text

        assert "Merge #1 into main?" in screen_text(app)
        before = git(worked, "rev-parse", "main")
        assert git(worked, "log", "--format=%s", "main").splitlines() == ["start"]  # asked, not done
        await pilot.press("y")
        await wait_for(pilot, lambda: git(worked, "rev-parse", "main") != before, message="main to take the merge")
    assert (worked / "util.py").read_text() == "X = 1\nY = 2\n"
    assert Store.open(worked).get("1").metadata["worktree"]["merged"] == git(worked, "rev-parse", "main").strip()


async def test_cancelling_a_task_with_a_worktree_asks_what_becomes_of_it(worked: Path) -> None:
    folder = worked / ".board-worktrees" / "1.add-y-to-util"
    app = make_app(worked)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        from tests.ui.test_plain_text import screen_text

        await pilot.press("c")
        await pilot.pause()
        text = screen_text(app)
        assert "Cancel, keep worktree (y)" in text and "Cancel, remove worktree (x)" in text and "Keep the task (n)" in text
        await pilot.press("x")  # uncommitted work in it: refused, nothing done
        await wait_for(pilot, lambda: any("has uncommitted changes (" in n.message for n in app._notifications), message="the refusal")
        assert Store.open(worked).get("1").status == "pending" and (folder / "report.py").exists()
        git(folder, "add", "--all")
        git(folder, "commit", "-q", "-m", "Y")
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("x")
        await wait_for(pilot, lambda: Store.open(worked).get("1").status == "cancelled", message="the cancel")
    assert not folder.exists()
    assert git(worked, "branch", "--list", "board/*").strip() == "board/1.add-y-to-util"  # its commit is not in main: kept


async def test_a_conflicted_task_is_sent_back_from_its_details(worked: Path) -> None:
    store = Store.open(worked)
    store.set_status("1", "in_progress", owner="worker-1", actor="worker-1", lease_seconds=60)
    store.set_status("1", "completed", actor="worker-1", force=True)
    store.close()
    (worked / "util.py").write_text("X = 1\nY = 3\n")  # main changes the same line meanwhile
    git(worked, "commit", "-q", "-am", "Y is 3")
    from board.errors import BoardError
    from board.model import utcnow

    with pytest.raises(BoardError):
        on_board.merge_task(Store.open(worked), "1", actor="person", now=utcnow())
    app = make_app(worked)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        from tests.ui.test_plain_text import screen_text

        await pilot.press("enter")
        await pilot.pause()
        assert "conflicts with main in util.py" in screen_text(app) and "B Send back" in screen_text(app)
        await pilot.press("B")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: "2" in Store.open(worked).tasks, message="the resolving task")
    made = Store.open(worked).get("2")
    assert made.parent == "1" and made.files == ["util.py"] and "git merge main" in made.description
