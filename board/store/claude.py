"""Claude Code's task lists, read and written in place: ``~/.claude/tasks/<list-id>/<id>.json``.

How a task document reads and is written there (board's fields under ``metadata.board``, its
finer statuses shown to Claude Code as the nearest of its three) is ``board.store.file_format``.

Locking follows Claude Code's convention (that of the proper-lockfile package): the list's
zero-byte ``.lock`` file is locked by creating the directory ``.lock.lock``; a lock directory
older than 10 s is stale, and a holder refreshes it every 5 s. ``.highwatermark`` holds the
highest id ever issued, so ids are never reused after a delete.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from board import json_bounds
from board.errors import BoardError, InvalidTaskFile
from board.model import MAX_FILE_BYTES, Task, lean, share_fields_sets, task_from_dict, task_to_dict
from board.disk import confine
from board.disk.atomic import read_regular, write_atomic
from board.store.file_format import CLAUDE_STATE_DIR, CLAUDE_TASK_FILE, HIGH_WATER_MARK, LIST_LOCK, from_claude, next_integer_id, task_file_name, task_files_in, task_id_in
from board.store.file_format import to_claude as claude_document
from board.store.lock import LOCK_TIMEOUT_SECONDS

STALE_AFTER_SECONDS = 10.0
REFRESH_EVERY_SECONDS = 5.0


def claude_config_dir() -> Path:
    """Claude Code's own folder: ``$CLAUDE_CONFIG_DIR`` when set, else ``~/.claude``."""
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(config).expanduser() if config else Path.home() / ".claude"


def claude_tasks_root() -> Path:
    """Where Claude Code keeps task lists (``$CLAUDE_CONFIG_DIR/tasks``, else ``~/.claude/tasks``)."""
    return claude_config_dir() / "tasks"


def find_claude_list(list_id: str | None) -> Path:
    """A named task list, or the most recently changed one when no name is given."""
    root = claude_tasks_root()
    lists = [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    if not lists:
        raise BoardError(f"no Claude Code task lists in {root}")
    if list_id is None:
        return max(lists, key=lambda p: p.stat().st_mtime)
    chosen = root / list_id
    if chosen.parent != root or not chosen.is_dir():
        names = ", ".join(sorted(p.name for p in lists)[:10])
        raise BoardError(f"no Claude Code task list {list_id!r} in {root} (there are: {names})")
    return chosen


class ClaudeTaskListLayout:
    """A Claude Code task list directory; board's own files go in its ``.board/`` folder."""

    name = "claude-code"
    #: Claude Code's directory holds its own files; board leaves nothing there between writes.
    keeps_spares = False
    FILE = CLAUDE_TASK_FILE

    def __init__(self, list_dir: Path, *, workspace: Path | None = None) -> None:
        self._high_water: tuple[tuple[int, int, int] | None, int] = (None, 0)
        self._held = 0
        self._lock: HeldDirectoryLock | None = None
        self._holder = threading.RLock()
        self.tasks_dir = list_dir
        self.state_dir = list_dir / CLAUDE_STATE_DIR
        confine.confine(list_dir)  # .board/ and everything else below: never through a link
        #: Claude Code lists live outside the project; task files are relative to where board runs.
        self.workspace = workspace or Path.cwd()

    def task_path(self, task_id: str) -> Path:
        return self.tasks_dir / task_file_name(task_id, claude=True)

    def task_key(self, task_id: str) -> str:
        return os.path.join(self.tasks_dir, task_file_name(task_id, claude=True))

    def task_id_for(self, path: Path) -> str | None:
        return task_id_in(path, self.tasks_dir, self.FILE)

    def task_files(self) -> Iterator[tuple[str, str]]:
        return task_files_in(self.tasks_dir, self.FILE)

    def decode(self, raw: bytes, path: Path | str, task_id: str | None = None, *, compact: bool = True) -> Task:
        if len(raw) > MAX_FILE_BYTES:
            raise InvalidTaskFile(str(path), f"file is {len(raw):,} bytes; the limit is {MAX_FILE_BYTES:,}")
        try:
            data = json_bounds.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise InvalidTaskFile(str(path), f"not valid JSON ({error})") from None
        if not isinstance(data, dict):
            raise InvalidTaskFile(str(path), "top level must be a JSON object")
        task = task_from_dict(from_claude(data), str(path))
        expected = task_id or self.task_id_for(Path(path))
        if expected is not None and task.id != expected:
            raise InvalidTaskFile(str(path), f"id {task.id!r} does not match the file name (expected {expected!r})")
        # As small in memory as a task of board's own files (``lean``): a dashboard holds them all.
        return lean(task) if compact else share_fields_sets(task)

    def encode(self, task: Task) -> bytes:
        return (json.dumps(to_claude(task), ensure_ascii=False, indent=2) + "\n").encode("utf-8")

    @contextmanager
    def lock(self) -> Iterator[object]:
        """Reentrant, like board's own filelock: a locked pass may call locked store methods."""
        with self._holder:
            if self._held:
                self._held += 1
                try:
                    yield self
                finally:
                    self._held -= 1
                return
            with directory_lock(self.tasks_dir / LIST_LOCK) as held:
                self._held, self._lock = 1, held
                try:
                    yield self
                finally:
                    self._held, self._lock = 0, None

    def confirm_lock(self) -> None:
        """Just before a write is published: the list's lock must still be ours."""
        if self._lock is not None:
            self._lock.confirm()

    def next_id(self, existing: set[str]) -> str:
        return next_integer_id(existing, floor=self._high_water_mark())

    def note_id_issued(self, task_id: str) -> None:
        if task_id.isdigit() and int(task_id) > self._high_water_mark():
            write_atomic(self.tasks_dir / HIGH_WATER_MARK, task_id.encode())

    def _high_water_mark(self) -> int:
        """The highest id Claude Code (or board) ever issued in this list; re-read on change."""
        path = self.tasks_dir / HIGH_WATER_MARK
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return 0
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        if self._high_water[0] == stamp:
            return self._high_water[1]
        try:
            text = read_regular(path).decode(errors="replace").strip()
        except OSError:
            return 0
        mark = int(text) if text.isdigit() else 0
        self._high_water = (stamp, mark)
        return mark

    def missing_blocker_done(self, task_id: str) -> bool:
        """Claude Code deletes a task once it is completed and never reuses its id: a missing
        blocker at or below the high-water mark was done, not forgotten."""
        return task_id.isdigit() and int(task_id) <= self._high_water_mark()

    def exists(self) -> bool:
        return self.tasks_dir.is_dir()

    def create(self) -> None:
        self.tasks_dir.mkdir(parents=True, exist_ok=True)
        (self.tasks_dir / LIST_LOCK).touch(exist_ok=True)
        confine.make_folders(self.state_dir)


def to_claude(task: Task) -> dict[str, Any]:
    """A board task as Claude Code expects it (``file_format.to_claude``)."""
    return claude_document(task_to_dict(task))


class HeldDirectoryLock:
    """A ``.lock.lock`` directory this process made. After a stall (a stopped process, a
    swapped-out machine) longer than ``STALE_AFTER_SECONDS``, Claude Code may have broken it
    and made its own under the same name, perhaps on the same inode; so, as proper-lockfile
    does, the lock is known by the modification time this process last gave it."""

    def __init__(self, lock_dir: Path, lock_name: str = "the task list's lock") -> None:
        self.lock_dir = lock_dir
        self.lock_name = lock_name
        self._guard = threading.Lock()
        self._identity = self._look()

    def _look(self) -> tuple[int, int, int] | None:
        try:
            info = os.lstat(self.lock_dir)
        except FileNotFoundError:
            return None
        return (info.st_dev, info.st_ino, info.st_mtime_ns)

    def is_ours(self) -> bool:
        return self._identity is not None and self._look() == self._identity

    def refresh(self) -> bool:
        """Touch the lock if it is still ours (so nobody judges it stale); False if it is not."""
        with self._guard:
            if not self.is_ours():
                return False
            try:
                os.utime(self.lock_dir)
            except FileNotFoundError:
                return False
            self._identity = self._look()
            return self._identity is not None

    def confirm(self) -> None:
        """Raise unless the lock is still ours, refreshed: called just before a write is published."""
        if not self.refresh():
            raise BoardError(
                f"{self.lock_name} was broken by another writer while this one was stalled; nothing was written: try again"
            )

    def release(self) -> None:
        """Remove the lock, only if it is still ours: never another writer's."""
        if self.is_ours():
            try:
                confine.remove_folder(self.lock_dir)
            except FileNotFoundError:
                pass


@contextmanager
def directory_lock(
    lock_file: Path, *, timeout: float = LOCK_TIMEOUT_SECONDS, what: str = "the task list", lock_name: str | None = None,
) -> Iterator[HeldDirectoryLock]:
    """Hold ``<lock_file>.lock`` (a directory), the way Claude Code locks its task lists and
    its teams' inboxes (``what`` and ``lock_name`` name them in refusals)."""
    lock_dir = lock_file.with_name(lock_file.name + ".lock")
    deadline = time.monotonic() + timeout
    pause = 0.0005
    while True:
        try:
            confine.make_folder(lock_dir)
            break
        except FileExistsError:
            try:
                age = time.time() - lock_dir.lstat().st_mtime
            except FileNotFoundError:
                continue
            if _stale(age):
                _break_stale(lock_dir)
                continue
            if time.monotonic() > deadline:
                raise BoardError(f"{what} is locked ({lock_dir} is held by another writer); try again") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
    held = HeldDirectoryLock(lock_dir, lock_name or f"{what}'s lock")
    stop = threading.Event()
    refresher = threading.Thread(target=_keep_fresh, args=(held, stop), daemon=True)
    refresher.start()
    try:
        yield held
    finally:
        stop.set()
        refresher.join()
        held.release()


def _keep_fresh(held: HeldDirectoryLock, stop: threading.Event) -> None:
    while not stop.wait(REFRESH_EVERY_SECONDS):
        if not held.refresh():
            return


def _stale(age: float) -> bool:
    """Whether a lock last refreshed ``age`` seconds ago is no live holder's. A holder refreshes
    it to now: one older than the threshold, or dated further ahead than that (planted, or left
    by a clock set back), is not held."""
    return abs(age) > STALE_AFTER_SECONDS


def _break_stale(lock_dir: Path) -> None:
    """Remove a stale lock by renaming it first, so two breakers cannot both remove a fresh one."""
    grave = lock_dir.with_name(f"{lock_dir.name}.stale.{os.getpid()}.{time.monotonic_ns()}")
    try:
        confine.rename(lock_dir, grave)
    except (FileNotFoundError, OSError):
        return
    try:
        if _stale(time.time() - grave.stat().st_mtime):
            confine.remove_folder(grave)
        else:  # someone refreshed it between our look and the rename: give it back
            confine.rename(grave, lock_dir)
    except OSError:
        pass
