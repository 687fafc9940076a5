"""Reading a board's files into the index: never takes the lock.

Each process keeps an index (a ``TaskGraph``). Other processes' writes reach it through the
history log: the store reads only the history lines appended since it last looked and re-reads
just the tasks they name, so a claim or a completion never rescans the directory. Files changed
by writers that bypass the store (an editor, Claude Code) are picked up by ``reread`` and
``rescan``, which the watcher drives.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from board.errors import InvalidTaskFile
from board.graph import REMOVED_BY, REMOVED_BY_CLAUDE_CODE, removed_by_claude_code
from board.model import Task, validate_id
from board.status import Status
from board.disk.confine import planted_in_place_of_folders
from board.disk.atomic import SpecialFile, Stamp, read_bytes_retrying
from board.disk.atomic import read_jsonl
from board.store.base import ChangeSet
from board.store.file_format import ARCHIVE_DIR
from board.store.history import RecentHistory
from board.store.files.writes import _checksum
from board.store.files.state import FileBoard, keep_logged



class FileIndex(FileBoard):
    """The index side of ``FileStore``."""

    def load(self) -> None:
        """Read every task file from scratch."""
        self._partial = False
        self._history_offset = self._history.end()
        if self._logged_scope is not None:
            # Looked up task by task while only some tasks were read: a whole board makes one
            # pass instead, the next time a write asks (``_logged_version``).
            self._max_logged, self._logged_scope = None, None
            self._logged_crc.clear()
        self.graph = self._new_graph()
        self.invalid = {}
        self._file_stamps = {}
        with self._logs_listed_once():
            self.read_files(self.layout.task_files())
        self._keep_removed_tasks()
        self._note_planted_folders(ChangeSet())

    def start_reading(self) -> None:
        """Begin reading the board's task files, as they are listed now, a page at a time
        (``read_more``): a reader that shows the board while it reads."""
        self._partial = False
        self._unread, self._unread_at = list(self.layout.task_files()), 0

    def read_more(self, limit: int) -> tuple[ChangeSet, bool]:
        """The next ``limit`` task files into the index; True once every one listed is read."""
        page = self._unread[self._unread_at : self._unread_at + limit]
        self._unread_at += len(page)
        done = self._unread_at >= len(self._unread)
        if done:
            self._unread, self._unread_at = [], 0
        with self._logs_listed_once():
            result = self.read_files(page)
        if done:
            result.merge(self._keep_removed_tasks())
        return result, done

    def _note_planted_folders(self, result: ChangeSet) -> None:
        """Report each of the board's folders replaced by a link (or a file) as an invalid
        entry, like a broken task file: board refuses to write there, and says where and why."""
        state_dir = self.layout.state_dir
        planted = planted_in_place_of_folders(state_dir, itself=state_dir != self.layout.tasks_dir)
        if self._mirror is not None:
            planted.update(self._mirror.planted())
        for key in [k for k in self.invalid if self.layout.task_id_for(Path(k)) is None and k not in planted]:
            del self.invalid[key]
            result.invalid.add(key)
        for key, reason in planted.items():
            if self.invalid.get(key) != reason:
                self.invalid[key] = reason
                result.invalid.add(key)

    def read_files(self, files: Iterable[tuple[str, str]]) -> ChangeSet:
        """Read task files, given as (id, path) as ``layout.task_files()`` lists them, into the
        index: a stale read never replaces a newer version, a broken file keeps the last good
        copy, a vanished file leaves the index. Opening a board reads every file through here,
        in one pass that builds the graph once.
        """
        result = ChangeSet()
        fresh: list[Task] = []
        tasks = self.graph.tasks
        with collection_paused():
            for task_id, key in files:
                try:
                    read = read_bytes_retrying(key)
                except SpecialFile as special:
                    # A FIFO, a link, a directory...: reported like a broken file, never read.
                    if self.invalid.get(key) != special.reason:
                        self.invalid[key] = special.reason
                        result.invalid.add(key)
                    continue
                if read is None:
                    self._file_stamps.pop(key, None)
                    if self.invalid.pop(key, None) is not None:
                        result.invalid.add(key)
                    kept = self._removed_by_claude_code(task_id, tasks.get(task_id))
                    if kept is not None:
                        if tasks.get(task_id) != kept:
                            fresh.append(kept)
                            result.changed.add(task_id)
                        continue
                    if task_id in tasks:
                        self.graph.remove(task_id)
                        result.removed.add(task_id)
                    continue
                raw, self._file_stamps[key] = read
                try:
                    task = self._count_logged_calls(self.layout.decode(raw, key, task_id))
                except InvalidTaskFile as error:
                    # Keep the last good copy on screen; report the file.
                    if self.invalid.get(key) != error.reason:
                        self.invalid[key] = error.reason
                        result.invalid.add(key)
                    continue
                if self.invalid and self.invalid.pop(key, None) is not None:
                    result.invalid.add(key)
                # The disk is the truth: whatever the file says now is the state, whatever its
                # version (an outside writer may drop it or keep it). Reads under one store are
                # made one after another, so the last read is the newest.
                current = tasks.get(task_id)
                if current is not None and task == current:
                    continue
                if task_id not in self._logged:
                    self._logged[task_id] = task
                if task.status == Status.COMPLETED:
                    self._mirror_completed(task, raw)
                fresh.append(task)
                result.changed.add(task_id)
            self.graph.put_many(fresh)
        return result

    # -- tasks Claude Code deleted (``mirror``) -----------------------------------------------

    def _mirror_completed(self, task: Task, raw: bytes | None = None) -> None:
        """Keep a copy of a task seen completed, unless one of its version is kept already:
        Claude Code may delete its file at any time after, with no board process running.
        ``raw``: the file's bytes as read (calls logged beyond them are counted again when the
        copy is read, as they are for a file)."""
        mirror = self._mirror
        if mirror is not None and mirror.due(task.id, task.version):
            mirror.keep(task.id, task.version, raw if raw is not None else self.layout.encode(task))

    def _archived_by_board(self, task_id: str) -> bool:
        """Whether board itself deleted the task (its archive holds it)."""
        return os.path.lexists(self.state_dir / ARCHIVE_DIR / self.layout.task_path(task_id).name)

    def _removed_by_claude_code(self, task_id: str, known: Task | None) -> Task | None:
        """The task as board keeps it once its file is gone, when Claude Code deleted it (not
        board: its archive would hold it); None when it leaves the board. ``known``: the task as
        this process last read it, copied now if it was not yet."""
        mirror = self._mirror
        if mirror is None or self._archived_by_board(task_id):
            return None
        if known is not None and removed_by_claude_code(known):
            return known
        if known is not None and mirror.versions().get(task_id, -1) <= known.version:
            if not mirror.keep(task_id, known.version, self.layout.encode(known)):
                return None
            return _marked_removed(known)
        # Not read here (a command about another task), or another process kept a newer copy.
        copy = mirror.read(task_id)
        if copy is None:
            return None
        raw, path = copy
        try:
            task = self._count_logged_calls(self.layout.decode(raw, path, task_id))
        except InvalidTaskFile:
            return None
        return _marked_removed(task)

    def _keep_removed_tasks(self) -> ChangeSet:
        """Put back on the board every copied task whose file Claude Code deleted (after a whole
        read of the list: these are the copies no file was read for)."""
        result = ChangeSet()
        mirror = self._mirror
        if mirror is None:
            return result
        tasks = self.graph.tasks
        kept = []
        for task_id in mirror.versions(relist=True):
            if task_id in tasks or os.path.lexists(self._file_of(task_id)[1]):
                continue  # on the list (a file that cannot be read is reported as such)
            task = self._removed_by_claude_code(task_id, None)
            if task is not None:
                kept.append(task)
                result.changed.add(task_id)
        if kept:
            self.graph.put_many(kept)
        return result

    def _read_path(self, path: Path, task_id: str | None = None, key: str | None = None) -> tuple[Task | InvalidTaskFile, Stamp] | None:
        try:
            read = read_bytes_retrying(key or str(path))
        except SpecialFile as special:
            return InvalidTaskFile(str(path), special.reason), (0, 0, 0)
        if read is None:
            return None
        raw, stamp = read
        if task_id is not None:
            self._read_crc[task_id] = _checksum(raw)
        try:
            return self._count_logged_calls(self.layout.decode(raw, path, task_id)), stamp
        except InvalidTaskFile as error:
            return error, stamp

    def _read_into_index(self, path: Path, task_id: str | None = None) -> ChangeSet:
        """Re-read one path and apply it if it is not older than what the index holds."""
        task_id = task_id or self.layout.task_id_for(path)
        if task_id is None:
            return ChangeSet()
        return self.read_files([(task_id, str(path))])

    def sync(self) -> ChangeSet:
        """Catch up with writes made through any store, by reading the history log's new lines."""
        return self._reread_ids(self._newly_logged())

    def _newly_logged(self) -> dict[str, list[dict[str, Any]]] | None:
        """The history records appended since the last look, by task id; None when the history
        was truncated or replaced, so that the index must be rebuilt."""
        read = self._history.read_on(self._history_offset)
        if read is None:
            return None
        records, self._history_offset = read
        logged: dict[str, list[dict[str, Any]]] = {}
        versions = self._max_logged
        for record in records:
            task_id = record.get("task")
            if task_id is None:
                continue
            task_id = str(task_id)
            version = record.get("version")
            if versions is not None and type(version) is int:
                keep_logged(versions, self._logged_crc, task_id, version, str(record["file"]) if "file" in record else None)
            if task_id not in logged:
                try:
                    validate_id(task_id)  # a hand-edited line must not name a path outside the board
                except ValueError:
                    continue
                logged[task_id] = []
            logged[task_id].append(record)
        return logged

    def _reread_ids(self, task_ids: Iterable[str] | None) -> ChangeSet:
        """Re-read the named tasks into the index (None: every task, from scratch)."""
        if task_ids is None:
            before = set(self.graph.tasks)
            self.load()
            return ChangeSet(changed=set(self.graph.tasks), removed=before - set(self.graph.tasks))
        files = [(task_id, self._file_of(task_id)[1]) for task_id in task_ids]
        if not files:
            return ChangeSet()
        result = self.read_files(files)
        versions = self._max_logged
        if versions is not None:
            for task_id, _ in files:
                task = self.graph.tasks.get(task_id)
                if task is not None and task.version == versions.get(task_id):
                    self._logged[task_id] = task  # the version history names is on disk
        return result

    def reread(self, paths: Iterable[Path]) -> ChangeSet:
        """Re-read specific paths (from a file watcher); other paths are ignored."""
        result = ChangeSet()
        for path in dict.fromkeys(Path(p) for p in paths):
            result.merge(self._read_into_index(path))
        return result

    def rescan(self) -> ChangeSet:
        """Reconcile with the directory: re-read files whose stat changed, drop vanished ones."""
        self._ensure_whole()
        result = ChangeSet()
        seen: set[str] = set()
        for task_id, key in self.layout.task_files():
            seen.add(key)
            if self._file_stamps.get(key) != _stamp(key):
                result.merge(self._read_into_index(Path(key), task_id))
        for key in [k for k in self._file_stamps if k not in seen]:
            result.merge(self._read_into_index(Path(key)))
        for key in [k for k in self.invalid if k not in seen and self.layout.task_id_for(Path(k)) is not None]:
            del self.invalid[key]
            result.invalid.add(key)
        self._note_planted_folders(result)
        return result

    def history_mark(self) -> int:
        return self._history.size()

    def history_since(self, mark: int) -> tuple[list[dict[str, Any]], int]:
        return read_jsonl(self._history.path, mark)

    def recent_history(self, ops: frozenset[str]) -> list[dict[str, Any]]:
        reader = self._recent.get(ops)
        if reader is None:
            reader = self._recent[ops] = RecentHistory(ops)
        return reader.read(self._history.path)

    def history(self, task_id: str | None = None) -> list[dict[str, Any]]:
        records = self._history.all_records()
        if task_id is None:
            return records
        return [r for r in records if str(r.get("task")) == task_id]


def _marked_removed(task: Task) -> Task:
    """The task as board keeps it once Claude Code deleted its file (``graph.removed_by_claude_code``)."""
    marked = task.model_copy(update={REMOVED_BY: REMOVED_BY_CLAUDE_CODE})
    assert removed_by_claude_code(marked)
    return marked


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many objects that all stay alive.

    Loading 10,000 tasks otherwise triggers dozens of collections that each walk every object
    made so far: a third of the load time, to find no garbage.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _stamp(path: Path | str) -> Stamp | None:
    try:
        info = os.lstat(path)  # of the entry itself: a link is never followed
    except FileNotFoundError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)
