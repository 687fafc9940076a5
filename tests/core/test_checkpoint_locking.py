"""Checkpoints must not hold the board lock while they run git or hash files."""

from __future__ import annotations

from filelock import FileLock

from board import gitstate
from board.checkpoints import write_checkpoint


def test_git_runs_outside_the_board_lock(store, monkeypatch):
    task = store.create("job")
    seen = []

    def head_while_checking_the_lock(workspace):
        probe = FileLock(store.layout.tasks_dir / ".lock", timeout=0)
        probe.acquire()  # raises Timeout if the checkpoint held the board lock here
        probe.release()
        seen.append(workspace)
        return None

    monkeypatch.setattr(gitstate, "head", head_while_checking_the_lock)
    write_checkpoint(store, task.id, reason="test")
    assert seen == [store.layout.workspace]
