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
    looks = 0  # how many times the follower has read the board
    follower = AlertsFollower(store.alert_board, store.local_dir)

    def snapshot() -> StoreSnapshot:
        nonlocal looks
        store.rescan()  # as the dashboard's reader keeps its store current
        taken = StoreSnapshot.of(store)
        looks += 1
        return taken

    def until(condition, what: str) -> None:
        deadline = time.monotonic() + 30
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.01)

    thread = threading.Thread(target=follower.run, args=(snapshot, lambda alerts, coordinator: shown.append((alerts, coordinator))), kwargs={"now": utcnow, "settings": BoardSettings()})
    thread.start()
    try:
        follower.wake()
        until(lambda: shown, "the first alerts")
        assert shown == [([], False)]  # evaluated locally: nothing wrong yet
        (workspace / ".tasks" / "task_9.json").write_text("{ not json")
        follower.wake()
        until(lambda: len(shown) == 2, "the invalid file's alert")
        alerts, from_coordinator = shown[-1]
        assert [a.kind for a in alerts] == ["file.invalid"] and not from_coordinator
        # Woken with nothing new, it reads the board again and shows nothing. It handles one
        # wake after the other, so once a later change is shown, that look has been decided.
        before = looks
        follower.wake()
        until(lambda: looks > before, "another look at the board")
        (workspace / ".tasks" / "task_9.json").unlink()
        follower.wake()
        until(lambda: shown[-1] == ([], False), "the alert to clear")
        assert len(shown) == 3  # the same alerts again were not shown again
    finally:
        follower.stop()
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_on_a_board_whose_evaluation_is_costly_an_idle_follower_evaluates_again_only_as_its_share_of_a_core_allows(workspace: Path, monkeypatch) -> None:
    """Once a minute with nothing changed, the alerts are evaluated again (some clear with time);
    where that takes half a second (a board of 30,000 tasks on a slow machine), at most once in
    500 s: a thousandth of a core. A wake (a change on disk) evaluates at once all the same."""
    from board.ui import board_alerts

    class Clock:
        now = 1000.0

        def monotonic(self) -> float:
            return self.now

    clock = Clock()
    monkeypatch.setattr(board_alerts, "time", clock)
    monkeypatch.setattr(board_alerts, "ALERTS_RECHECK_SECONDS", 0.001)
    store = Store.open(workspace)
    store.create("fine")
    follower = AlertsFollower(store.alert_board, store.local_dir)
    rounds = 0
    stamp = follower.alert_board.stamp

    def counted_stamp():
        nonlocal rounds
        rounds += 1
        return stamp()

    monkeypatch.setattr(follower.alert_board, "stamp", counted_stamp)
    looks: list[float] = []

    def costly_snapshot() -> StoreSnapshot:
        looks.append(clock.now)
        clock.now += 0.5  # what the evaluation costs
        return StoreSnapshot.of(store)

    def until(condition, what: str) -> None:
        deadline = time.monotonic() + 30
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.005)

    def some_rounds() -> None:
        before = rounds
        until(lambda: rounds >= before + 20, "the follower to go round")

    thread = threading.Thread(target=follower.run, args=(costly_snapshot, lambda alerts, coordinator: None), kwargs={"now": utcnow, "settings": BoardSettings()})
    thread.start()
    try:
        until(lambda: looks, "the first evaluation")
        for seconds in (61, 300, 499):
            clock.now = 1000.5 + seconds
            some_rounds()
        assert looks == [1000.0]
        clock.now = 1000.5 + 501
        until(lambda: len(looks) == 2, "the next evaluation once its share allows")
        clock.now += 10
        follower.wake()
        until(lambda: len(looks) == 3, "an evaluation on a wake")
    finally:
        follower.stop()
        thread.join(timeout=30)
    assert not thread.is_alive()
