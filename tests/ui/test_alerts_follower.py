"""The dashboard's alerts follower on its own, without Textual: a real board, a real thread."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from board.config import BoardSettings
from board.model import utcnow
from board.store import Store
from board.ui.board_alerts import AlertsFollower, StoreSnapshot


def test_the_follower_shows_a_new_problem_when_woken_and_ends_when_stopped(workspace: Path) -> None:
    store = Store.open(workspace)
    store.create("fine")
    shown: list[tuple[list, bool]] = []
    follower = AlertsFollower(store.alert_board, store.local_dir)

    def snapshot() -> StoreSnapshot:
        store.rescan()  # as the dashboard's reader keeps its store current
        return StoreSnapshot.of(store)

    thread = threading.Thread(target=follower.run, args=(snapshot, lambda alerts, coordinator: shown.append((alerts, coordinator))), kwargs={"now": utcnow, "settings": BoardSettings()})
    thread.start()
    try:
        follower.wake()
        deadline = time.monotonic() + 30
        while not shown and time.monotonic() < deadline:
            time.sleep(0.01)
        assert shown and shown[0] == ([], False)  # evaluated locally: nothing wrong yet
        (workspace / ".tasks" / "task_9.json").write_text("{ not json")
        follower.wake()
        while len(shown) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        alerts, from_coordinator = shown[-1]
        assert [a.kind for a in alerts] == ["file.invalid"] and not from_coordinator
        follower.wake()
        time.sleep(0.5)
        assert len(shown) == 2  # the same alerts again are not shown again
    finally:
        follower.stop()
        thread.join(timeout=30)
    assert not thread.is_alive()
