"""Replaced versions kept as spares and written over, instead of a new file for every write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from board.disk import atomic
from board.store import FileStore, Store
from board.store.claude import ClaudeTaskListLayout
from tests.coordinator.helpers import started


@pytest.fixture
def no_quarantine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spares become usable as soon as they leave their task path, so a test needs no sleep."""
    monkeypatch.setattr(atomic, "SPARE_QUARANTINE_SECONDS", 0.0)


def temp_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_writes_reuse_the_files_they_replaced_instead_of_making_new_ones(store: Store, workspace: Path, no_quarantine: None) -> None:
    store.create("job")
    path = workspace / ".tasks" / "task_1.json"
    inodes = set()
    for n in range(40):
        store.update("1", progress=n + 1)
        inodes.add(path.stat().st_ino)
        assert json.loads(path.read_bytes())["progress"] == n + 1  # every version whole
    # Each write swaps its temp file in and keeps the version it replaced to write over next.
    assert len(inodes) <= 3
    assert len(temp_files(workspace / ".tasks")) <= 2
    assert [h["version"] for h in store.history("1")][-1] == 41
    store.close()
    assert temp_files(workspace / ".tasks") == []


def test_a_process_that_writes_once_keeps_no_spare(workspace: Path) -> None:
    """A command that changes one task renames its new version over the old one: a spare it
    kept would only be deleted at its exit. From its second write on, a process keeps spares."""
    Store.open(workspace, create=True).create("job")
    pool = atomic.SparePool(workspace / ".tasks")
    path = workspace / ".tasks" / "task_1.json"
    for n, spares in ((1, 0), (2, 1)):
        temp = pool.take()
        temp.fill(f'{{"write": {n}}}'.encode())
        pool.move(temp, path)
        assert json.loads(path.read_bytes()) == {"write": n}
        assert len(temp_files(workspace / ".tasks")) == spares  # the second keeps the first's version
    pool.close()
    assert temp_files(workspace / ".tasks") == []


def test_a_spare_is_not_reused_before_its_quarantine_ends(store: Store, workspace: Path) -> None:
    store.create("job")
    path = workspace / ".tasks" / "task_1.json"
    inodes = set()
    for n in range(10):  # well inside one quarantine: no spare is ready yet
        store.update("1", progress=n)
        inodes.add(path.stat().st_ino)
    assert len(inodes) == 10


def test_a_version_someone_still_has_open_is_never_written_over(store: Store, workspace: Path, no_quarantine: None) -> None:
    """A reader in another process opens the task file and reads it only after many writes:
    it must get the whole version it opened, not a later one written into the same inode."""
    store.create("job", description="the version the reader opened")
    reader = started(subprocess.Popen(
        [sys.executable, "-c", "import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); print('open', flush=True); sys.stdin.readline(); sys.stdout.write(os.read(fd, 1 << 20).decode())",
         str(workspace / ".tasks" / "task_1.json")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    ))
    try:
        assert reader.stdout is not None and reader.stdout.readline() == "open\n"
        for n in range(30):
            store.update("1", description=f"version {n}", progress=n)
        output, _ = reader.communicate("read now\n", timeout=30)
    finally:
        reader.kill()
    seen = json.loads(output)
    assert (seen["version"], seen["description"]) == (1, "the version the reader opened")
    assert json.loads((workspace / ".tasks" / "task_1.json").read_bytes())["description"] == "version 29"


def test_a_refused_write_returns_its_spare_untouched(store: Store, workspace: Path, no_quarantine: None) -> None:
    store.create("job")
    store.update("1", progress=1)
    before = {name: (workspace / ".tasks" / name).read_bytes() for name in temp_files(workspace / ".tasks")}
    assert before  # the first version, kept as a spare
    with pytest.raises(Exception):
        store.update("1", progress=500)
    assert {name: (workspace / ".tasks" / name).read_bytes() for name in temp_files(workspace / ".tasks")} == before


def test_a_forked_child_leaves_its_parents_spares_alone(store: Store, workspace: Path, no_quarantine: None) -> None:
    store.create("job")
    store.update("1", progress=1)
    parents = temp_files(workspace / ".tasks")
    assert len(parents) == 1
    pid = os.fork()
    if pid == 0:  # the child writes with the inherited store, then exits normally
        try:
            store.update("1", progress=2)
            store.close()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert set(parents) <= set(temp_files(workspace / ".tasks"))
    assert json.loads((workspace / ".tasks" / parents[0]).read_bytes())["progress"] == 0
    store.update("1", progress=3)  # the parent's spare is still its own to fill
    assert json.loads((workspace / ".tasks" / "task_1.json").read_bytes())["progress"] == 3


def test_a_claude_code_list_is_left_with_no_files_of_ours_between_writes(tmp_path: Path, no_quarantine: None) -> None:
    list_dir = tmp_path / "list"
    list_dir.mkdir()
    store = FileStore(ClaudeTaskListLayout(list_dir))
    store.state_dir.mkdir()
    store.load()
    store.create("job")
    for n in range(5):
        store.update("1", progress=n)
    assert temp_files(list_dir) == []


def test_check_tells_a_running_writers_spares_from_a_killed_writers_files(store: Store, workspace: Path) -> None:
    tasks = workspace / ".tasks"
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead_pid = int(finished.stdout)
    hour_ago = time.time() - 3600
    live = tasks / f".write.{os.getpid()}-0123456789ab.tmp"
    dead = tasks / f".write.{dead_pid}-0123456789ab.tmp"
    for path in (live, dead):
        path.write_bytes(b"{}")
        os.utime(path, (hour_ago, hour_ago))
    assert store.stray_temp_files() == [dead]
    assert store.remove_stray_temp_files() == [dead]
    assert live.exists() and not dead.exists()


def counters(path: Path) -> tuple[int, int]:
    fd = os.open(path, os.O_RDONLY)
    try:
        return atomic.SharedDirectorySync._counters(fd)
    finally:
        os.close(fd)


def test_a_writer_skips_its_directory_fsync_only_when_a_later_one_covers_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fsynced: list[str] = []

    def directory_fsync(directory: Path) -> None:
        fsynced.append(directory.name)
        os_fsync_directory(directory)

    os_fsync_directory = atomic.fsync_directory
    monkeypatch.setattr(atomic, "fsync_directory", directory_fsync)
    first = atomic.SharedDirectorySync(tmp_path / ".synced")
    second = atomic.SharedDirectorySync(tmp_path / ".synced")
    mine = first.note_rename()
    theirs = second.note_rename()
    assert (mine, theirs) == (1, 2)
    second.make_durable(tmp_path, theirs)  # began after both renames: covers both
    assert fsynced == [tmp_path.name] and counters(tmp_path / ".synced") == (2, 2)
    first.make_durable(tmp_path, mine)  # covered by the other writer's fsync: skipped
    assert fsynced == [tmp_path.name]
    later = first.note_rename()
    assert later == 3 and counters(tmp_path / ".synced")[1] == 2
    first.make_durable(tmp_path, later)  # nobody covered this one: fsynced
    assert fsynced == [tmp_path.name] * 2 and counters(tmp_path / ".synced") == (3, 3)
    # A damaged file that claims more durable renames than were ever made is not believed.
    (tmp_path / ".synced").write_bytes((5).to_bytes(8, "little") + (99).to_bytes(8, "little"))
    assert counters(tmp_path / ".synced") == (5, 5)