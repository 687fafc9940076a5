"""The follower's watch on a board's folder (``board.disk.watch``): what it reports, and that it
waits without waking. Real folders, real inotify; the threads it runs in are stopped each time."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from board.disk.watch import LOST, FolderWatch, Unavailable

try:
    FolderWatch(Path(__file__).parent).close()
except Unavailable as error:  # pragma: no cover - another OS
    pytest.skip(f"no inotify here: {error}", allow_module_level=True)


class Reader:
    """The watch's batches, read by a thread as the follower reads them."""

    def __init__(self, root: Path, *, timeout: float = 30.0) -> None:
        self.watch = FolderWatch(root)
        self.stop = threading.Event()
        self.batches: list[set[str]] = []
        self.ended = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(timeout,), daemon=True)
        self.thread.start()

    def _run(self, timeout: float) -> None:
        for batch in self.watch.changes(timeout=timeout, debounce=0.03, quiet=0.004, stop=self.stop):
            self.batches.append(batch)
        self.ended.set()

    def seen(self) -> set[str]:
        return set().union(*self.batches) if self.batches else set()

    def wait_for(self, paths: set[str], what: str) -> None:
        deadline = time.monotonic() + 30
        while not paths <= self.seen():
            assert time.monotonic() < deadline, f"waited 30 s for {what}; seen {sorted(self.seen())}"
            time.sleep(0.01)

    def close(self) -> None:
        self.stop.set()
        self.watch.wake()
        self.thread.join(timeout=30)
        self.watch.close()


@contextmanager
def reading(root: Path, **kwargs: float) -> Iterator[Reader]:
    reader = Reader(root, **kwargs)
    try:
        yield reader
    finally:
        reader.close()


def test_changes_in_the_folder_and_its_folders_are_reported_even_in_a_folder_made_later(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    with reading(tmp_path) as reader:
        (tmp_path / "task_1.json").write_text("{}")
        (tmp_path / "agents" / "alice.json").write_text("{}")
        reader.wait_for({str(tmp_path / "task_1.json"), str(tmp_path / "agents" / "alice.json")}, "a task file and an agent's record")
        # A folder made and filled at once: what it held before its watch was added counts too.
        (tmp_path / "checkpoints" / "1").mkdir(parents=True)
        (tmp_path / "checkpoints" / "1" / "1.json").write_text("{}")
        reader.wait_for({str(tmp_path / "checkpoints" / "1" / "1.json")}, "a checkpoint in a new folder")
        (tmp_path / "checkpoints" / "1" / "2.json").write_text("{}")
        reader.wait_for({str(tmp_path / "checkpoints" / "1" / "2.json")}, "the next checkpoint there")
        os.replace(tmp_path / "task_1.json", tmp_path / "task_2.json")
        reader.wait_for({str(tmp_path / "task_2.json")}, "a rename")


def test_a_link_planted_in_the_folder_is_not_followed(tmp_path: Path) -> None:
    board, elsewhere = tmp_path / "board", tmp_path / "elsewhere"
    board.mkdir()
    elsewhere.mkdir()
    (board / "agents").symlink_to(elsewhere)
    with reading(board) as reader:
        (elsewhere / "secret.json").write_text("{}")
        (board / "task_1.json").write_text("{}")
        reader.wait_for({str(board / "task_1.json")}, "the board's own file")
        assert not any("secret" in path for path in reader.seen())


def test_with_nothing_changing_it_answers_each_period_and_does_not_run_between(tmp_path: Path) -> None:
    with reading(tmp_path, timeout=0.5) as reader:
        deadline = time.monotonic() + 30
        while len(reader.batches) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert reader.batches[:2] == [set(), set()]
        used = reader.thread.native_id
        assert used is not None

        def wakeups() -> int:
            # How many times the thread gave up the CPU to wait: once per sleep or select.
            status = Path(f"/proc/self/task/{used}/status").read_text()
            return int(status.split("voluntary_ctxt_switches:")[1].split()[0])

        # A watcher that looked every few milliseconds would wake hundreds of times a second.
        start = wakeups()
        time.sleep(1.0)
        assert wakeups() - start <= 5


def test_a_stop_ends_the_wait_at_once_and_a_root_removed_ends_it_too(tmp_path: Path) -> None:
    reader = Reader(tmp_path)
    time.sleep(0.05)
    began = time.monotonic()
    reader.close()
    assert reader.ended.is_set() and time.monotonic() - began < 5  # not the 30 s period
    root = tmp_path / "board"
    root.mkdir()
    with reading(root) as gone:
        root.rmdir()
        assert gone.ended.wait(30)


def test_events_the_kernel_dropped_are_reported_as_lost(tmp_path: Path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        pytest.skip(f"the kernel queues {limit:,} events: too many to overflow here")
    watch = FolderWatch(tmp_path)
    try:
        for n in range(limit // 2 + 100):  # a create and a close-write each
            (tmp_path / f"f{n}").write_bytes(b"")
        stop = threading.Event()
        first = next(watch.changes(timeout=1.0, debounce=0.03, quiet=0.004, stop=stop))
        assert first == {LOST}
    finally:
        watch.close()
