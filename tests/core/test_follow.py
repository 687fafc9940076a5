"""``Store.follow``: what other writers change reaches a follower's index, in batches, and a
quiet board still hands out a batch every period."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from board.store import Store
from board.store.base import BoardNews

from tests.conftest import BOTH_BACKENDS, files_only
from tests.disk import write_task_document

pytestmark = BOTH_BACKENDS


@contextmanager
def following(store: Store, *, every: float, guard: threading.Lock | None = None) -> Iterator["queue.Queue[BoardNews]"]:
    """``store`` followed in a thread of its own, its news in a queue; stopped, and the store
    closed, at the end."""
    news: queue.Queue[BoardNews] = queue.Queue()
    stop = threading.Event()

    def follow() -> None:
        for batch in store.follow(stop=stop, every=every, guard=guard):
            news.put(batch)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    try:
        yield news
    finally:
        stop.set()
        thread.join(timeout=10)
        assert not thread.is_alive()
        store.close()


@pytest.fixture
def followed(workspace: Path) -> Iterator[tuple[Store, "queue.Queue[BoardNews]"]]:
    """A store followed in a thread of its own, its news in a queue, stopped at the end."""
    store = Store.open(workspace)
    with following(store, every=0.5, guard=threading.Lock()) as news:
        time.sleep(0.3)  # the watcher (or the listening connection) is up
        yield store, news


def _news_until(news: "queue.Queue[BoardNews]", wanted, seconds: float = 10.0) -> BoardNews:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            batch = news.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        if wanted(batch):
            return batch
    raise AssertionError("the follower never said so")


def test_a_task_another_writer_creates_reaches_the_followers_index(followed, workspace: Path) -> None:
    store, news = followed
    other = Store.open(workspace)
    created = other.create("written elsewhere")
    other.close()
    batch = _news_until(news, lambda b: created.id in b.changes.changed)
    assert created.id in batch.named
    assert store.graph.tasks[created.id].subject == "written elsewhere"


def test_a_quiet_board_still_hands_out_a_batch_every_period(followed) -> None:
    _, news = followed
    while not news.empty():
        news.get()
    started = time.monotonic()
    batch = news.get(timeout=5)
    assert not batch.changes and batch.lost is None
    assert time.monotonic() - started < 3


@files_only("a file written by hand, behind the store's back")
def test_a_task_file_written_by_hand_is_read_and_named(followed, workspace: Path) -> None:
    store, news = followed
    write_task_document(workspace, "7", {"id": "7", "subject": "by hand"})
    batch = _news_until(news, lambda b: "7" in b.changes.changed)
    assert batch.paths and "7" in batch.named
    assert store.graph.tasks["7"].subject == "by hand"


@files_only("the board's own folders")
def test_side_files_are_named_by_the_table_a_database_keeps_them_in(followed, workspace: Path) -> None:
    _, news = followed
    (workspace / ".tasks" / "alerts.json").write_text('{"alerts": []}\n')
    _news_until(news, lambda b: "alerts" in b.side)


def test_what_another_writer_wrote_before_the_follow_began_reaches_the_followers_index(workspace: Path) -> None:
    """A dashboard reads its board, then starts to follow it: a write in between (announced
    before anyone listened) reaches it at once, not at the next catch-up an hour later."""
    store = Store.open(workspace)
    other = Store.open(workspace)
    created = other.create("written before the follow began")
    other.close()
    with following(store, every=3600) as news:
        _news_until(news, lambda b: created.id in b.changes.changed)
        assert store.graph.tasks[created.id].subject == "written before the follow began"


@files_only("a file written by hand, behind the store's back")
def test_a_task_file_written_by_hand_before_the_follow_began_is_read(workspace: Path) -> None:
    store = Store.open(workspace)
    write_task_document(workspace, "7", {"id": "7", "subject": "by hand, before the follow"})
    with following(store, every=3600) as news:
        _news_until(news, lambda b: "7" in b.changes.changed)
        assert store.graph.tasks["7"].subject == "by hand, before the follow"


@files_only("the look at every file is the file store's")
def test_a_large_boards_look_at_every_file_with_no_event_to_prompt_it_is_spaced_out_by_its_cost(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file is looked at once a minute in case a change came with no event; where that look
    takes half a second of CPU (a board of 100,000 tasks), at most one in 500 s: a thousandth of
    a core. A folder that changed with no event is looked at in full at once all the same."""
    from board.store.files import follow

    class Clock:
        wall = 1000.0
        cpu = 0.0

        def monotonic(self) -> float:
            return self.wall

        def thread_time(self) -> float:
            return self.cpu

    clock = Clock()
    monkeypatch.setattr(follow, "time", clock)
    store = Store.open(workspace)
    store.load()
    looks = []
    rescan = store.rescan

    def costly_rescan():
        looks.append(clock.wall)
        clock.cpu += 0.5
        return rescan()

    monkeypatch.setattr(store, "rescan", costly_rescan)
    follower = follow.FileFollower(store, stop=threading.Event(), every=2.0, guard=None)
    follower._reconcile()
    for seconds in (61, 300, 499):
        clock.wall = 1000.0 + seconds
        follower._reconcile()
    assert looks == [1000.0]
    clock.wall = 1501.0
    follower._reconcile()
    assert looks == [1000.0, 1501.0]
    # Written by hand with no watch to hear it: the folder's own time moves (set, not waited for).
    tasks_dir = workspace / ".tasks"
    moved = tasks_dir.stat().st_mtime_ns + 10**9
    (tasks_dir / "task_77.json").write_text('{"id": "77", "subject": "by hand", "status": "pending"}')
    os.utime(tasks_dir, ns=(moved, moved))
    clock.wall = 1503.0
    follower._reconcile()
    assert looks == [1000.0, 1501.0, 1503.0]
    assert store.tasks["77"].subject == "by hand"
    store.close()
