"""The task store: every read and write of a board goes through here.

Writes take the board lock, bring the in-memory index up to date, re-read the target file,
compare-and-set on ``version``, write atomically and append one line to ``history.jsonl``.

Each process keeps an index (a ``TaskGraph``). Other processes' writes reach it through the
history log: under the lock the store reads only the history lines appended since it last
looked and re-reads just the tasks they name, so a claim or a completion never rescans the
directory. Files changed by writers that bypass the store (an editor, Claude Code) are picked
up by ``reread``/``rescan``, which the watcher drives.
"""

from __future__ import annotations

import errno
import fcntl
import gc
import json
import os
import re
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from board.active_work import entry_for, note_task, read_active, write_active
from board.errors import BoardError, GraphError, InvalidTaskFile, LeaseHeld, NotReady, StaleLease, TaskNotFound, VersionConflict
from board.graph import TaskGraph, cancelled_blockers, sorted_ids
from board.model import (
    Lease,
    Priority,
    Seen,
    Task,
    ToolCalls,
    draft_of,
    lean,
    by_policy,
    live_lease_holder,
    task_from_dict,
    task_to_dict,
    utcnow,
    validate_id,
)
from board.status import Status, check_transition
from board.store import DEFAULT_LEASE_SECONDS
from board.store.atomic import fsync_directory, write_atomic, KeptOpen, SharedDirectorySync, SparePool, SpecialFile, Stamp, TempFile, json_line, made_by_running_process, name_names_a_process, read_bytes_retrying, read_jsonl
from board.store.history import HistoryLog
from board.store.layout import Layout, detect_layout
from board.text import shortened
from board.names import ID_PATTERN
from board.toolcall_log import TASK_LOGS, append_call, call_record, check_tool_name, fold, read_unfolded, task_log

#: Optimistic claims tried before one is made wholly under the lock (see ``Store.claim``).
OPTIMISTIC_CLAIM_ATTEMPTS = 3
#: A temp file this old cannot belong to a live writer (it would have given up waiting for the
#: lock long before), so it was left by one that was killed.
STRAY_TEMP_AGE_SECONDS = 600.0
#: Stray temp files ``board check`` names one by one; past this, the rest are counted.
STRAY_TEMP_LISTED = 10
#: A rename not (yet) counted by ``SharedDirectorySync``: the writer fsyncs the directory itself.
NOT_COUNTED = 1 << 62
#: The history line a writer is about to append; empty once it has been appended.
PENDING_HISTORY = ".history-pending.json"
Clock = Callable[[], datetime]
#: The task and version of a history line, as ``json_line`` writes them.
_LOGGED_VERSION = re.compile(rb'"task":"((?:[^"\\]|\\.)*)","version":(\d+)(?:,"file":"([0-9a-f]+)")?')
#: Fields that change on every write and would only clutter the history's change lists.
_UNTRACKED = frozenset({"version", "updatedAt"})


@dataclass
class ChangeSet:
    """What a refresh found: ids whose task changed or vanished, and files that went bad or good."""

    changed: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    invalid: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.changed or self.removed or self.invalid)

    def merge(self, other: ChangeSet) -> None:
        self.changed |= other.changed
        self.removed |= other.removed
        self.invalid |= other.invalid


@dataclass(frozen=True)
class Problem:
    """A broken file or a broken rule in the files on disk, for ``board check`` and alerts."""

    kind: str
    where: str
    message: str
    tasks: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "where": self.where, "message": self.message, "tasks": list(self.tasks)}


class Store:
    """One board on disk plus this process's index of it."""

    def __init__(self, layout: Layout, *, clock: Clock = utcnow, actor: str = "board") -> None:
        self.layout = layout
        self.clock = clock
        self.actor = actor
        self.graph = self._new_graph()
        #: Files that failed to parse or validate: path -> one-line reason.
        self.invalid: dict[str, str] = {}
        self._history_offset = 0
        self._file_stamps: dict[str, Stamp] = {}  # keyed by str(path): cheaper than Path in hot loops
        self._paths: dict[str, tuple[Path, str]] = {}  # task id -> its file, as Path and as str
        #: Each task as this store last knew it accounted for by history (its own writes, lines
        #: it read, or first sight): what an outside edit is measured against.
        self._logged: dict[str, Task] = {}
        #: The highest version history records for each task, and the checksum of the file
        #: that version wrote; read from the log on first need.
        self._max_logged: dict[str, int] | None = None
        self._logged_crc: dict[str, str] = {}
        #: Checksum of each task file as last read under the lock (``_fresh``).
        self._read_crc: dict[str, str] = {}
        self._history = HistoryLog(layout.state_dir / "history.jsonl")
        self._pending = PendingNote(layout.state_dir / PENDING_HISTORY)
        self._intents = ClaimIntents(layout.state_dir / ".claiming")
        self._spares = SparePool(layout.tasks_dir, enabled=layout.keeps_spares)
        #: While this store holds the write lock: the temp file made for its first write, and the
        #: directories whose renames still need an fsync.
        self._temp: TempFile | None = None
        self._unsynced: set[Path] = set()
        self._last_rename = 0
        self._directory_sync = SharedDirectorySync(layout.state_dir / ".synced")
        self._lock_depth = 0
        #: True while the index holds only the tasks asked for (``open(..., whole=False)``).
        self._partial = False

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def open(cls, location: Path | str, *, create: bool = False, whole: bool = True, **kwargs: Any) -> Store:
        """Open the board at ``location``: a workspace with ``.tasks/``, or a Claude Code task list.

        ``whole=False`` reads no task file until a task is asked for, for a command about one
        task: ``get``, ``mutate``, ``update``, ``release`` and ``record_toolcall`` then read that
        task's file alone (every rule of a write still applies: they concern the task itself and
        the history log). Whatever needs the rest of the board (``tasks``, a status move, links,
        claims, heartbeats, checks) reads the whole board first. ``graph`` holds only what was
        read: derived views (readiness, waves, progress from sub-tasks) need a whole store.
        """
        layout = detect_layout(Path(location).expanduser().resolve())
        if not layout.exists():
            if not create:
                raise BoardError(f"no board in {location}: run 'board init' there or pass --workspace")
            layout.create()
        layout.state_dir.mkdir(exist_ok=True)
        store = cls(layout, **kwargs)
        if whole:
            store.load()
        else:
            store._history_offset = store._history.end()
            store._partial = True
        return store

    def _ensure_whole(self) -> None:
        """Read the whole board if only some of its tasks were read so far."""
        if self._partial:
            self.load()

    def _new_graph(self) -> TaskGraph:
        return TaskGraph(missing_blocker_done=self.layout.missing_blocker_done)

    def close(self) -> None:
        """Delete this store's spare files now rather than when it is collected or the process
        exits, and close the files it keeps open. The store stays usable."""
        self._spares.close()
        self._history.close()

    @property
    def state_dir(self) -> Path:
        return self.layout.state_dir

    @property
    def history_path(self) -> Path:
        return self._history.path

    @property
    def tasks(self) -> dict[str, Task]:
        self._ensure_whole()
        return self.graph.tasks

    def get(self, task_id: str) -> Task:
        task = self.graph.tasks.get(task_id)
        if task is None and self._partial:
            try:
                validate_id(task_id)  # it names a file
            except ValueError:
                raise TaskNotFound(task_id) from None
            self.read_files([(task_id, self._file_of(task_id)[1])])
            task = self.graph.tasks.get(task_id)
        if task is None:
            reason = self.invalid.get(str(self.layout.task_path(task_id)))
            if reason is not None:
                raise BoardError(f"task {task_id} cannot be read: {self.layout.task_path(task_id)}: {reason}")
            raise TaskNotFound(task_id)
        return task

    # -- reading (never locks) ----------------------------------------------------------------

    def load(self) -> None:
        """Read every task file from scratch."""
        self._partial = False
        self._history_offset = self._history.end()
        self.graph = self._new_graph()
        self.invalid = {}
        self._file_stamps = {}
        self.read_files(self.layout.task_files())

    def read_files(self, files: Iterable[tuple[str, str]]) -> ChangeSet:
        """Read task files, given as (id, path) as ``layout.task_files()`` lists them, into the
        index: a stale read never replaces a newer version, a broken file keeps the last good
        copy, a vanished file leaves the index. Opening a board reads every file through here,
        in one pass that builds the graph once.
        """
        result = ChangeSet()
        fresh: list[Task] = []
        tasks = self.graph.tasks
        with _collection_paused():
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
                fresh.append(task)
                result.changed.add(task_id)
            self.graph.put_many(fresh)
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

    def _count_logged_calls(self, task: Task) -> Task:
        """The task with the calls its log holds beyond what its document counted.

        Tool calls are appended to the task's log without rewriting its file (``board hook``
        cannot afford a rewrite per call); every read adds them, so every reader sees exact
        counts, and the next write of the task stores them.
        """
        calls = task.tool_calls
        unfolded = read_unfolded(self.toolcalls_path(task.id), calls.logged, calls.total)
        if unfolded is None:
            return task
        records, offset = unfolded
        counts = fold(calls.model_dump(by_alias=True), records)
        counts["logged"] = offset
        counted = task.model_copy()
        counted.tool_calls = ToolCalls.model_validate(counts)
        return lean(counted)

    def logged_task_paths(self, paths: Iterable[Path]) -> set[Path]:
        """The task files whose tool-call logs are among ``paths`` (a watcher's changed files):
        a call changes a task's counts without touching its file, so its log stands in for it."""
        logs = self.state_dir / TASK_LOGS
        return {self.layout.task_path(p.stem) for p in map(Path, paths) if p.parent == logs and p.suffix == ".jsonl" and ID_PATTERN.fullmatch(p.stem)}

    def sync_tool_calls(self) -> ChangeSet:
        """Count the calls logged since the last look on tasks in progress (the ones policies
        and alerts judge by their calls); history says nothing of calls."""
        stale = []
        for task in self.graph.tasks.values():
            if task.status == Status.IN_PROGRESS:
                try:
                    size = os.stat(self.toolcalls_path(task.id)).st_size
                except (OSError, ValueError):
                    continue
                if size > (task.tool_calls.logged or 0):
                    stale.append(task.id)
        return self._reread_ids(stale) if stale else ChangeSet()

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
            if versions is not None and type(version) is int and version >= versions.get(task_id, -1):
                versions[task_id] = version
                if "file" in record:
                    self._logged_crc[task_id] = str(record["file"])
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
        for key in [k for k in self.invalid if k not in seen]:
            del self.invalid[key]
            result.invalid.add(key)
        return result

    def history(self, task_id: str | None = None) -> list[dict[str, Any]]:
        records = self._history.all_records()
        if task_id is None:
            return records
        return [r for r in records if str(r.get("task")) == task_id]

    def _file_of(self, task_id: str) -> tuple[Path, str]:
        """A task's file as Path and as str, remembered: building paths showed in claim profiles."""
        known = self._paths.get(task_id)
        if known is None:
            path = self.layout.task_path(task_id)
            known = self._paths[task_id] = (path, str(path))
        return known

    # -- writing ------------------------------------------------------------------------------

    def _fresh(self, task_id: str) -> Task:
        """The task as it is on disk now (called under the lock)."""
        path = self.layout.task_path(task_id)
        read = self._read_path(path, task_id)
        if read is None:
            if task_id in self.graph.tasks:
                self.graph.remove(task_id)
            raise TaskNotFound(task_id)
        outcome, self._file_stamps[str(path)] = read
        if isinstance(outcome, InvalidTaskFile):
            raise BoardError(f"cannot change task {task_id}: {outcome}")
        current = self.graph.tasks.get(task_id)
        if current is None or current != outcome:
            self.graph.put(outcome)
        return outcome

    def _commit(self, old: Task | None, new: Task, op: str, actor: str | None, extra: dict[str, Any] | None = None) -> Task:
        """Validate, write atomically, log. Called under the lock with ``new`` already changed."""
        if old is not None:
            outside = self.outside_edit(old, self._read_crc.get(old.id))
            if outside is not None:
                # Say what an outside writer changed before board's own write builds on it.
                self._log(old.id, old.version, "outside", "outside edit", outside)
                self._logged[old.id] = old
        prepared = self._prepare(old, new, op, actor, extra)
        temp = self._temp if self._temp is not None and self._temp.empty else self._spares.take()
        temp.fill(prepared.data)
        return self._publish(prepared, temp)

    def _note_active(self, old: Task | None, new: Task | None) -> None:
        """Keep ``active.json`` (who works on what, for ``board hook``) in step with a write."""
        before = entry_for(old.status, old.owner, old.files) if old is not None else None
        after = entry_for(new.status, new.owner, new.files) if new is not None else None
        if before is not None or after is not None:
            task_id = new.id if new is not None else old.id  # type: ignore[union-attr]
            note_task(self.state_dir, task_id, after)

    def refresh_active(self) -> bool:
        """Rebuild ``active.json`` from the whole board, when it differs (outside writers, such
        as Claude Code itself, start and finish tasks without telling it). True if rewritten."""
        self._ensure_whole()
        wanted = {t.id: entry for t in self.graph.tasks.values() if (entry := entry_for(t.status, t.owner, t.files)) is not None}
        if read_active(self.state_dir) == wanted:
            return False
        with self._write_lock(make_temp=False):
            write_active(self.state_dir, wanted)
        return True

    def _prepare(self, old: Task | None, new: Task, op: str, actor: str | None, extra: dict[str, Any] | None = None) -> PreparedWrite:
        """Work out a write: the validated new version, its bytes and its history line."""
        now = self.clock()
        data = task_to_dict(new)
        data["version"] = self._next_version(old or new)
        data["updatedAt"] = _iso(now)
        if old is None:
            data["createdAt"] = data.get("createdAt") or _iso(now)
        path, file_key = self._file_of(new.id)
        task = task_from_dict(data, file_key)
        task.integer_ids = new.integer_ids  # ids keep the JSON type their file gave them
        before = task_to_dict(old) if old else {}
        changes = {
            key: [before.get(key), value]
            for key, value in task_to_dict(task).items()
            if key not in _UNTRACKED and before.get(key) != value
        }
        encoded = self.layout.encode(task)
        record = self._history_record(task.id, task.version, actor, op, changes, extra, file_crc=_checksum(encoded))
        return PreparedWrite(task, path, encoded, record)

    # -- outside edits ------------------------------------------------------------------------

    def _logged_versions(self) -> dict[str, int]:
        """The highest version history records for each task, from one pass over the log the
        first time it is needed (a fast scan: only the task and version of each line)."""
        if self._max_logged is None:
            versions: dict[str, int] = {}
            crcs = self._logged_crc
            for task_id, version, crc in _LOGGED_VERSION.findall(self._history.read_prefix(self._history_offset)):
                key, number = task_id.decode("utf-8", "replace"), int(version)
                if number >= versions.get(key, -1):
                    versions[key] = number
                    if crc:
                        crcs[key] = crc.decode()
                    else:
                        crcs.pop(key, None)
            self._max_logged = versions
        return self._max_logged

    def _note_logged(self, task: Task, crc: str) -> None:
        self._logged[task.id] = task
        if self._max_logged is not None and task.version >= self._max_logged.get(task.id, -1):
            self._max_logged[task.id] = task.version
            self._logged_crc[task.id] = crc

    def outside_edit(self, task: Task, checksum: str | None = None) -> dict[str, Any] | None:
        """What an outside writer (an editor, a script, Claude Code) changed in ``task`` as read
        from disk (``checksum``: of the file's bytes), that history does not account for; None
        when nothing did.

        Every history line names the checksum of the file it wrote: a file whose bytes are not
        those was written outside the store. The fields it changed are measured against the task
        as this store last saw it logged; a process that never saw that version can only say
        how the version moved.
        """
        logged = self._logged_versions().get(task.id)
        if logged is None:
            return None  # never written through a store: a file made elsewhere, seen for the first time
        expected = self._logged_crc.get(task.id)
        known = self._logged.get(task.id)
        if checksum is not None and expected is not None:
            if checksum == expected:
                return None
        elif known is not None and known.version == logged:
            if task == known:
                return None
        elif task.version == logged:
            return None  # a log written before checksums, and nothing else to go by
        if known is not None and known.version == logged and known != task:
            before, after = task_to_dict(known), task_to_dict(task)
            return {key: [before.get(key), value] for key, value in after.items() if key != "updatedAt" and before.get(key) != value}
        return {"version": [logged, task.version]}

    def _next_version(self, task: Task) -> int:
        """One above both the file's version and the highest history records: an outside
        writer that dropped or lowered the version never makes a version number repeat."""
        return max(task.version, self._logged_versions().get(task.id, 0)) + 1

    def _publish(self, prepared: PreparedWrite, temp: TempFile) -> Task:
        """Under the lock: rename the filled temp file into place, log the change, index it."""
        # Leave word of the line about to be logged, so if this process dies between the rename
        # and the append, the next writer finishes the line (``_finish_interrupted_write``).
        line = json_line(prepared.record)
        self._pending.write(b'{"historySize":%d,"record":%s}' % (self._history.size(), line.rstrip()))
        self._last_rename = NOT_COUNTED  # until counted, this rename is covered by no one's fsync
        try:
            self.layout.confirm_lock()
            self._spares.move(temp, prepared.path)
        except BaseException:
            self._pending.clear()
            raise
        self._unsynced.add(prepared.path.parent)
        self._last_rename = self._directory_sync.note_rename()
        self._append_history(line)
        self._pending.clear()
        self._note_active(self.graph.tasks.get(prepared.task.id), prepared.task)
        self.graph.put(prepared.task)
        self._note_logged(prepared.task, prepared.record["file"])
        self._file_stamps[self._file_of(prepared.task.id)[1]] = temp.stamp
        return prepared.task

    def _history_record(
        self, task_id: str, version: int, actor: str | None, op: str, changes: dict[str, Any], extra: dict[str, Any] | None = None, *, file_crc: str | None = None,
    ) -> dict[str, Any]:
        record: dict[str, Any] = {"ts": _iso(self.clock()), "task": task_id, "version": version}
        if file_crc is not None:
            record["file"] = file_crc  # the checksum of the file written: how outside edits are told apart
        record.update(actor=actor or self.actor, op=op, changes=changes)
        if extra:
            record.update(extra)
        return record

    def _log(self, task_id: str, version: int, actor: str | None, op: str, changes: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        self._append_history(json_line(self._history_record(task_id, version, actor, op, changes, extra)))

    def _append_history(self, line: bytes) -> None:
        end = self._history.append(line)
        if self._history_offset == end.start:
            # We were caught up and hold the lock, so the new line is our own and already applied.
            self._history_offset = end.stop

    @contextmanager
    def _write_lock(self, *, make_temp: bool = True) -> Iterator[None]:
        """The board lock, or a clear error when the board's directory has gone away.

        Two costly steps of a write happen outside the lock, so other writers need not wait
        for them: the temp file is made before it, and renames are made durable (the
        directory fsynced) after it, before the write returns.
        """
        if not self.layout.exists():
            raise BoardError(f"the board at {self.layout.tasks_dir} is gone (deleted or moved); nothing was written")
        outermost = self._lock_depth == 0
        if outermost and make_temp:
            try:
                self._temp = self._spares.take()
            except FileNotFoundError:
                raise BoardError(f"the board at {self.layout.tasks_dir} is gone (deleted or moved); nothing was written") from None
        self._lock_depth += 1
        try:
            with self.layout.lock():
                self._finish_interrupted_write()
                yield
        finally:
            self._lock_depth -= 1
            if outermost:
                temp, self._temp = self._temp, None
                if temp is not None:
                    self._spares.give_back(temp)
                unsynced, self._unsynced = self._unsynced, set()
                for directory in unsynced:
                    self._directory_sync.make_durable(directory, self._last_rename)

    def _finish_interrupted_write(self) -> None:
        """Complete the history of a writer killed between replacing a task file and logging it."""
        raw = self._pending.read()
        if not raw:
            return
        try:
            note = json.loads(raw)
            record, logged_size = note["record"], int(note["historySize"])
            task_id, version = str(record["task"]), int(record["version"])
        except (ValueError, KeyError, TypeError):
            self._pending.clear()  # torn: it died before touching the task file
            return
        if self._history.size() <= logged_size:  # its line never reached the log
            read = self._read_path(self.layout.task_path(task_id), task_id)
            if read is not None and isinstance(read[0], Task) and read[0].version == version:
                self._append_history(json_line({**record, "recovered": True}))
                self._read_into_index(self.layout.task_path(task_id), task_id)
        self._pending.clear()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Hold the board lock across several changes, with the index read fresh under it:
        what is checked inside cannot be changed by another writer before it is written."""
        with self._write_lock():
            self.sync()
            yield

    def mutate(
        self,
        task_id: str,
        change: Callable[[Task], None],
        *,
        op: str,
        actor: str | None = None,
        expected_version: int | Seen | None = None,
        token: int | None = None,
        force: bool = False,
    ) -> Task:
        """Apply ``change`` to a fresh copy of the task under the lock (compare-and-set on
        ``expected_version``: a version number, or what a person saw of the task).

        Fenced for every writer: under a live lease, a change to the status, progress or owner
        needs the lease's token, or ``force`` (a person overriding the holder; history says so).
        """
        with self._write_lock():
            self.sync()
            current = self._fresh(task_id)
            if isinstance(expected_version, Seen):
                moved = expected_version.differs(current)
                if moved is not None:
                    self._log(task_id, current.version, actor, "conflict", {}, {"expected": expected_version.status})
                    raise VersionConflict(f"task {task_id} changed since you pressed the key ({moved}); nothing was done")
            elif expected_version is not None and current.version != expected_version:
                self._log(task_id, current.version, actor, "conflict", {}, {"expected": expected_version})
                raise VersionConflict(
                    f"task {task_id} changed underneath you: you expected version {expected_version}, it is at {current.version}; re-read and try again"
                )
            if token is not None:
                _check_fence(current, token)
            draft = draft_of(current)
            change(draft)
            if draft == current:
                return current
            forced = token is None and self._needs_token(current, draft, force)
            return self._commit(current, draft, op, actor, {"forced": True} if forced else None)

    def lease_is_live(self, task: Task) -> bool:
        """Whether an agent holds ``task`` right now: in progress, under a lease not yet expired."""
        if task.status != Status.IN_PROGRESS or task.lease is None:
            return False  # decided without reading the clock (tests count its readings)
        return live_lease_holder(task, self.clock()) is not None

    def _needs_token(self, current: Task, draft: Task, force: bool) -> bool:
        """Refuse a tokenless change to what the lease holder owns; True when ``force`` let it pass."""
        if not _fenced_change(current, draft) or not self.lease_is_live(current):
            return False
        if force:
            return True
        raise _lease_held(current)

    def create(
        self,
        subject: str,
        *,
        description: str = "",
        active_form: str = "",
        blocked_by: Iterable[str] = (),
        blocks: Iterable[str] = (),
        priority: Priority | str = Priority.MEDIUM,
        parent: str | None = None,
        files: Iterable[str] = (),
        labels: Iterable[str] = (),
        owner: str = "",
        metadata: dict[str, Any] | None = None,
        task_id: str | None = None,
        actor: str | None = None,
    ) -> Task:
        self._ensure_whole()
        blocked_by = [validate_id(b) for b in blocked_by]
        blocks = [validate_id(b) for b in blocks]
        with self._write_lock():
            self.sync()
            for ref in [*blocked_by, *blocks, *([parent] if parent else [])]:
                if ref not in self.graph.tasks:
                    self._fresh(ref)  # raises TaskNotFound naming it
            if task_id is None:
                # File names, not just the index: files written behind the store's back count too.
                on_disk = {tid for tid, _ in self.layout.task_files()}
                task_id = self.layout.next_id(set(self.graph.tasks) | on_disk | self.archived_ids())  # a deleted id is never reused
            elif self.layout.task_path(validate_id(task_id)).exists():
                raise BoardError(f"task {task_id} already exists")
            overlap = set(blocked_by) & set(blocks)
            if overlap:
                raise GraphError(f"a task cannot both block and be blocked by #{sorted_ids(overlap)[0]} (that is a cycle)")
            for dependent in blocks:
                # new -> blocks dependent; blocked_by -> new; a cycle needs dependent to reach a blocker
                for blocker in blocked_by:
                    path = self.graph.path_between(blocker, dependent)
                    if path is not None:
                        cycle = [dependent, task_id, *path]
                        raise GraphError("refused: that would create a dependency cycle " + " -> ".join(f"#{t}" for t in cycle))
            task = task_from_dict(
                {
                    "id": task_id,
                    "subject": subject,
                    "description": description,
                    "activeForm": active_form,
                    "blockedBy": blocked_by,
                    "blocks": blocks,
                    "priority": str(priority),
                    "parent": parent,
                    "files": list(files),
                    "labels": list(labels),
                    "owner": owner,
                    "metadata": metadata or {},
                },
                f"new task '{shortened(str(subject))}'",
            )
            # A board whose files give ids as integers (seed 001's) gets integer ids from board too.
            task.integer_ids = task.id.isdigit() and any(t.integer_ids for t in self.graph.tasks.values())
            created = self._commit(None, task, "create", actor)
            self.layout.note_id_issued(created.id)
            for blocker in blocked_by:
                self._link_side(blocker, "blocks", created.id, actor)
            for dependent in blocks:
                self._link_side(dependent, "blocked_by", created.id, actor)
            return created

    def _link_side(self, task_id: str, side: str, other: str, actor: str | None, *, add: bool = True) -> None:
        current = self._fresh(task_id)
        ids: list[str] = list(getattr(current, side))
        if (other in ids) == add:
            return
        draft = draft_of(current)
        setattr(draft, side, [*ids, other] if add else [i for i in ids if i != other])
        self._commit(current, draft, "link" if add else "unlink", actor)

    def add_dependency(self, task_id: str, blocker_id: str, *, actor: str | None = None) -> Task:
        """Record that ``task_id`` is blocked by ``blocker_id``, on both sides."""
        return self.link([(task_id, blocker_id)], actor=actor)[-1]

    def check_links(self, edges: Iterable[tuple[str, str]]) -> None:
        """Refuse, before anything is written, dependency edges (task, blocker) naming a missing
        task or closing a cycle, each edge judged with the ones before it added."""
        edges = list(edges)
        if edges:
            self._ensure_whole()
        added: list[tuple[str, str]] = []
        for task_id, blocker_id in edges:
            for ref in (task_id, blocker_id):
                if ref not in self.graph.tasks:
                    self._fresh(ref)  # raises TaskNotFound naming it
            cycle = _cycle_through(self.graph, added, task_id, blocker_id)
            if cycle is not None:
                raise GraphError("refused: that would create a dependency cycle " + " -> ".join(f"#{t}" for t in cycle))
            added.append((task_id, blocker_id))

    def link(self, edges: Iterable[tuple[str, str]], *, actor: str | None = None) -> list[Task]:
        """Add dependency edges (task, blocker) on both sides: all of them, or none."""
        self._ensure_whole()
        edges = list(edges)
        with self._write_lock():
            self.sync()
            for task_id, blocker_id in edges:
                self._fresh(task_id)
                self._fresh(blocker_id)
            self.check_links(edges)
            for task_id, blocker_id in edges:
                self._link_side(task_id, "blocked_by", blocker_id, actor)
                self._link_side(blocker_id, "blocks", task_id, actor)
            return [self.graph.tasks[task_id] for task_id, _ in edges]

    def remove_dependency(self, task_id: str, blocker_id: str, *, actor: str | None = None) -> Task:
        self._ensure_whole()
        with self._write_lock():
            self.sync()
            self._link_side(task_id, "blocked_by", blocker_id, actor, add=False)
            if blocker_id in self.graph.tasks:
                self._link_side(blocker_id, "blocks", task_id, actor, add=False)
            return self.graph.tasks[task_id]

    #: Plain fields ``update`` (and a status move, in the same write) may set.
    PLAIN_FIELDS = frozenset({"subject", "description", "active_form", "owner", "priority", "parent", "files", "labels", "progress", "error", "metadata", "question", "answer"})

    def update(self, task_id: str, *, actor: str | None = None, expected_version: int | Seen | None = None, token: int | None = None, force: bool = False, **fields: Any) -> Task:
        """Change plain fields (subject, description, owner, priority, progress, files, metadata...)."""
        fields = self._checked_fields(fields)
        return self.mutate(task_id, lambda task: self._apply_fields(task, fields), op="update", actor=actor, expected_version=expected_version, token=token, force=force)

    def _checked_fields(self, fields: Mapping[str, Any] | None) -> dict[str, Any]:
        fields = dict(fields or {})
        if "parent" in fields:
            self._ensure_whole()  # a new parent is checked against every ancestor
        unknown = set(fields) - self.PLAIN_FIELDS
        if unknown:
            raise BoardError(f"cannot set {', '.join(sorted(unknown))} with update (status and dependencies have their own commands)")
        if "priority" in fields:
            try:
                fields["priority"] = Priority(fields["priority"])
            except ValueError:
                raise BoardError(f"unknown priority '{shortened(str(fields['priority']))}'; use one of {', '.join(p.value for p in Priority)}") from None
        return fields

    def _apply_fields(self, task: Task, fields: Mapping[str, Any]) -> None:
        parent = fields.get("parent")
        if parent is not None:
            if parent == task.id:
                raise GraphError(f"task {task.id} cannot be its own parent")
            if parent not in self.graph.tasks:
                self._fresh(parent)  # raises TaskNotFound naming it
            above, seen = parent, set()
            while above is not None and above not in seen:
                if above == task.id:
                    raise GraphError(f"refused: #{parent} is already below #{task.id}, so it cannot be its parent")
                seen.add(above)
                above = self.graph.tasks[above].parent if above in self.graph.tasks else None
        for name, value in fields.items():
            setattr(task, name, value)

    def set_status(
        self,
        task_id: str,
        status: Status | str,
        *,
        actor: str | None = None,
        expected_version: int | Seen | None = None,
        token: int | None = None,
        error: str | None = None,
        reason: str | None = None,
        force: bool = False,
        owner: str | None = None,
        lease_seconds: float | None = None,
        fields: Mapping[str, Any] | None = None,
    ) -> Task:
        """Move a task along the status machine; illegal moves are refused with the allowed ones.

        ``owner`` and ``lease_seconds`` apply to a move into ``in_progress`` (see ``_apply_status``);
        ``fields`` are plain fields set in the same write.
        """
        self._ensure_whole()
        target = _status(status)
        fields = self._checked_fields(fields)

        def change(task: Task) -> None:
            if target == Status.IN_PROGRESS and task.status == Status.PENDING:
                self._refresh_blockers(task)
            self._apply_fields(task, {k: v for k, v in fields.items() if k != "owner"})
            self._apply_status(task, target, error=error, owner=owner or fields.get("owner"), lease_seconds=lease_seconds)
            if "progress" in fields and target != Status.COMPLETED:
                task.progress = fields["progress"]

        op = f"status:{target}" if reason is None else f"status:{target} ({reason})"
        return self.mutate(task_id, change, op=op, actor=actor, expected_version=expected_version, token=token, force=force)

    def _refresh_blockers(self, task: Task) -> None:
        """Under the lock, before a start: read the blockers from disk, so a person or an agent
        never starts a task on an index that missed an outside writer's change to them."""
        for blocker in task.blocked_by:
            try:
                self._fresh(blocker)
            except TaskNotFound:
                continue
            except BoardError:
                continue  # an unreadable blocker file stays as the index knew it

    def apply_status(self, task: Task, target: Status, *, error: str | None = None) -> None:
        """Apply a status change to a draft inside ``mutate`` (for writes that change more)."""
        self._apply_status(task, target, error=error)

    def _apply_status(self, task: Task, target: Status, *, error: str | None = None, owner: str | None = None, lease_seconds: float | None = None) -> None:
        """Every status change goes through here: the transition table, readiness, an owner for
        work in progress, and each status's side effects, in one place no writer can skip."""
        check_transition(task.status, target)
        self._enter_status(task, target, error=error, owner=owner, lease_seconds=lease_seconds)

    def _enter_status(self, task: Task, target: Status, *, error: str | None = None, owner: str | None = None, lease_seconds: float | None = None) -> None:
        now = self.clock()
        if task.policy is not None and not task.policy.settled:
            task.policy.settled = True  # the status is no longer the policy's doing
        if target == Status.IN_PROGRESS:
            if task.status == Status.PENDING:
                why = self.graph.why_not_ready(task)
                if why:
                    raise NotReady(f"task {task.id} is not ready: {why}")
            owner = owner or task.owner
            if not owner:
                raise BoardError(f"task {task.id} needs an owner to be in progress: say who works on it (--owner NAME)")
            task.owner = owner
            task.started_at = task.started_at or now
            task.error = None
            if lease_seconds is not None:
                task.lease = Lease(owner=owner, token=task.version + 1, expires_at=now + timedelta(seconds=lease_seconds), seconds=lease_seconds)
            else:
                task.lease = None  # a person's work: theirs until they change it
        else:
            task.lease = None
        task.status = target
        if target == Status.COMPLETED:
            task.completed_at = now
            task.progress = 100
            task.error = None
        elif target == Status.PENDING:
            task.owner = ""
            task.error = None
            task.completed_at = None
            task.started_at = None  # the next start is a new one: its age counts from then
        elif target == Status.FAILED:
            task.error = error or task.error or "failed"
        if target == Status.WAITING:
            task.asked_at = now
            task.answer = None  # a new question; the last one's answer is in history

    # -- deleting -----------------------------------------------------------------------------

    @property
    def archive_dir(self) -> Path:
        """Where deleted tasks go, restorable: ``archive/`` in the board's own folder."""
        return self.state_dir / "archive"

    def _archived_path(self, task_id: str) -> Path:
        return self.archive_dir / self.layout.task_path(validate_id(task_id)).name

    def archived_ids(self) -> set[str]:
        try:
            names = os.listdir(self.archive_dir)
        except FileNotFoundError:
            return set()
        return {task_id for name in names if (task_id := self.layout.task_id_for(self.layout.tasks_dir / name)) is not None}

    def delete(self, task_id: str, *, actor: str | None = None, token: int | None = None, force: bool = False, expected_version: int | Seen | None = None) -> Task:
        """Move a task to the archive, from where ``restore`` brings it back. Every other task's
        reference to it goes with it (each unlink in history), so nothing waits on a task that
        is gone; a live lease fences a delete like any change to the task."""
        self._ensure_whole()
        with self._write_lock():
            self.sync()
            current = self._fresh(task_id)
            if isinstance(expected_version, Seen) and expected_version.differs(current):
                raise VersionConflict(f"task {task_id} changed since you pressed the key ({expected_version.differs(current)}); nothing was done")
            if isinstance(expected_version, int) and current.version != expected_version:
                raise VersionConflict(f"task {task_id} changed underneath you: you expected version {expected_version}, it is at {current.version}")
            forced = False
            if token is not None:
                _check_fence(current, token)
            elif self.lease_is_live(current):
                if not force:
                    raise _lease_held(current, "delete it")
                forced = True
            waiting = sorted_ids(self.graph.dependents(task_id) | {d for d in current.blocks if d in self.graph.tasks})
            children = sorted_ids(child.id for child in self.graph.children(task_id))
            if (waiting or children) and not force:
                parts = []
                if waiting:
                    parts.append(f"{', '.join('#' + t for t in waiting)} {'waits' if len(waiting) == 1 else 'wait'} on it")
                if children:
                    parts.append(f"{', '.join('#' + t for t in children)} {'is its sub-task' if len(children) == 1 else 'are its sub-tasks'}")
                raise BoardError(f"task {task_id} is not deleted: {' and '.join(parts)}; --force deletes it and drops those links on both sides")
            for dependent in sorted_ids(self.graph.dependents(task_id) | {d for d in current.blocks if d in self.graph.tasks}):
                self._link_side(dependent, "blocked_by", task_id, actor, add=False)
            for blocker in current.blocked_by:
                if blocker in self.graph.tasks:
                    self._link_side(blocker, "blocks", task_id, actor, add=False)
            for child in self.graph.children(task_id):
                fresh = self._fresh(child.id)
                draft = draft_of(fresh)
                draft.parent = None
                self._commit(fresh, draft, "unlink", actor)
            current = self._fresh(task_id)
            outside = self.outside_edit(current, self._read_crc.get(task_id))
            if outside is not None:
                self._log(task_id, current.version, "outside", "outside edit", outside)
            self.archive_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(self._archived_path(task_id), self.layout.encode(current))
            path, key = self._file_of(task_id)
            os.unlink(path)
            fsync_directory(path.parent)
            self._note_active(current, None)
            self._log(task_id, self._next_version(current), actor, "delete", {"status": [str(current.status), None]}, {"forced": True} if forced else None)
            self.graph.remove(task_id)
            self._file_stamps.pop(key, None)
            return current

    def restore(self, task_id: str, *, actor: str | None = None) -> Task:
        """Bring a deleted task back from the archive, with the dependencies it had on tasks that
        still exist (unless one would now close a cycle). A task deleted while in progress comes
        back to the queue: whoever held it has stopped."""
        self._ensure_whole()
        with self._write_lock():
            self.sync()
            archived = self._archived_path(task_id)
            if self.layout.task_path(task_id).exists():
                raise BoardError(f"task {task_id} is on the board; only a deleted task can be restored")
            try:
                raw = archived.read_bytes()
            except FileNotFoundError:
                raise BoardError(f"no deleted task {task_id} to restore (the archive is {self.archive_dir})") from None
            task = self.layout.decode(raw, archived, task_id)
            draft = draft_of(task)
            if draft.status == Status.IN_PROGRESS:
                self._enter_status(draft, Status.PENDING)
            draft.lease = None
            draft.blocked_by = [b for b in task.blocked_by if b in self.graph.tasks and self.graph.path_between(b, task_id) is None]
            draft.blocks = [
                d for d in task.blocks
                if d in self.graph.tasks and d not in draft.blocked_by and not any(self.graph.path_between(b, d) for b in draft.blocked_by)
            ]
            if draft.parent is not None and draft.parent not in self.graph.tasks:
                draft.parent = None
            restored = self._commit(None, draft, "restore", actor)
            for blocker in restored.blocked_by:
                self._link_side(blocker, "blocks", task_id, actor)
            for dependent in restored.blocks:
                self._link_side(dependent, "blocked_by", task_id, actor)
            archived.unlink()
            return self.graph.tasks[task_id]

    def undo_policy(self, task_id: str, *, actor: str | None = None, lease_seconds: float = DEFAULT_LEASE_SECONDS, expected_version: int | Seen | None = None) -> Task:
        """Take back the status a policy set: the task returns to progress for the agent that
        held it (with a fresh lease, so it comes back to the queue if that agent is gone) and
        the progress it had. The one move allowed out of ``completed``, and only this way."""
        self._ensure_whole()

        def change(task: Task) -> None:
            mark = task.policy
            if mark is None or not by_policy(task):
                raise BoardError(f"task {task_id} is {task.status} by a person or its agent, not by a policy; there is nothing to undo")
            started = sorted_ids(d for d in self.graph.dependents(task_id) if self.graph.tasks[d].status != Status.PENDING)
            if task.status == Status.COMPLETED and started:
                raise BoardError(
                    f"cannot undo the completion of task {task_id}: " + ", ".join(f"#{d}" for d in started) + " already started on it"
                )
            progress = mark.progress
            task.completed_at = None
            self._enter_status(task, Status.IN_PROGRESS, owner=mark.owner or self.actor, lease_seconds=lease_seconds if mark.owner else None)
            task.progress = progress

        return self.mutate(task_id, change, op="undo policy", actor=actor, expected_version=expected_version, force=True)

    # -- claims and leases --------------------------------------------------------------------

    def claim(self, agent: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS, max_held: int | None = 1, actor: str | None = None) -> Task | None:
        """Atomically take the best ready task for ``agent``, or None when nothing is ready.

        Optimistic first: the claim is worked out and its file written and fsynced before the
        lock is taken; under the lock the store only checks that the task's file is still the
        one it read (and the task still ready) and renames. Concurrent claimers reserve their
        candidates (``ClaimIntents``) so they work on different tasks. When the check fails a
        few times, the claim is made wholly under the lock.
        """
        self._ensure_whole()
        _check_agent(agent)
        for _ in range(OPTIMISTIC_CLAIM_ATTEMPTS):
            attempt = self._prepare_claim(agent, lease_seconds, actor)
            if attempt is None:
                break
            later: list[str] = []
            try:
                with self._write_lock(make_temp=False):
                    later = self._catch_up_for_claim(attempt.prepared.task, agent, max_held)
                    self._check_holding(agent, max_held)
                    try:
                        now = read_bytes_retrying(attempt.key)
                    except SpecialFile:
                        now = None
                    if now is not None and now[0] == attempt.raw and self.graph.is_ready(attempt.prepared.task.id):
                        return self._publish(attempt.prepared, attempt.temp)
            finally:
                self._spares.give_back(attempt.temp)
                self._intents.release(attempt.prepared.task.id)
                self._reread_ids(later)
        with self._write_lock():
            self.sync()
            self._check_holding(agent, max_held)
            while True:
                best = self.graph.best_ready()
                if best is None:
                    return None
                fresh = self._fresh(best)
                if not self.graph.is_ready(fresh.id):
                    continue  # changed behind the index's back; pick again
                return self._claim_locked(fresh, agent, lease_seconds, actor)

    def _catch_up_for_claim(self, task: Task, agent: str, max_held: int | None) -> list[str]:
        """Under the lock, re-read only what decides the claim: changes to the task itself, to
        its blockers, and (with a limit on held tasks) to tasks that are or may become the
        agent's. Returns the other changed ids, to re-read once the lock is released: with
        several claimers, most of what they logged is their own claims of other tasks."""
        logged = self._newly_logged()
        if logged is None:
            self._reread_ids(None)
            return []
        deciding = {task.id, *task.blocked_by}
        now: list[str] = []
        later: list[str] = []
        for task_id, records in logged.items():
            if task_id in deciding or (max_held is not None and self._may_be_held_by(agent, task_id, records)):
                now.append(task_id)
            else:
                later.append(task_id)
        self._reread_ids(now)
        return later

    def _may_be_held_by(self, agent: str, task_id: str, records: list[dict[str, Any]]) -> bool:
        known = self.graph.tasks.get(task_id)
        if known is not None and known.owner == agent:
            return True
        for record in records:
            changes = record.get("changes")
            if not isinstance(changes, dict):
                return True  # a record we cannot read: look
            owner = changes.get("owner")
            if owner is not None and (not isinstance(owner, list) or len(owner) != 2 or owner[1] == agent):
                return True  # given to the agent, or an owner change we cannot read: look
        return False

    def _check_holding(self, agent: str, max_held: int | None) -> None:
        if max_held is not None:
            held = self.held_by(agent)
            if len(held) >= max_held:
                raise BoardError(f"agent {agent} already holds {', '.join('#' + t.id for t in held)}; finish or release it first")

    def _prepare_claim(self, agent: str, lease_seconds: float, actor: str | None) -> ClaimAttempt | None:
        """Without the lock: reserve the best ready task no other claimer has reserved, and
        write and fsync its claimed version to a temp file. None when that cannot be done
        (the caller then claims under the lock, which has the last word on what is ready)."""
        if not self.layout.exists():
            return None
        self.sync()
        task_id = self.graph.first_ready(self._intents.reserve)
        if task_id is None:
            return None
        try:
            key = self._file_of(task_id)[1]
            try:
                read = read_bytes_retrying(key)
            except SpecialFile:
                raise _NotClaimable from None
            if read is None:
                raise _NotClaimable
            raw = read[0]
            try:
                task = self.layout.decode(raw, key, task_id)
            except InvalidTaskFile:
                raise _NotClaimable from None
            if self.graph.tasks.get(task_id) != task:
                self.graph.put(task)
            if not self.graph.is_ready(task_id) or self.outside_edit(task, _checksum(raw)) is not None:
                raise _NotClaimable  # an outside edit is logged under the lock first
            prepared = self._prepare(task, self._claimed(task, agent, lease_seconds), "claim", actor or agent)
            temp = self._spares.take()
            temp.fill(prepared.data)
        except (_NotClaimable, FileNotFoundError):  # FileNotFoundError: the board went away
            self._intents.release(task_id)
            return None
        except BaseException:
            self._intents.release(task_id)
            raise
        return ClaimAttempt(prepared, temp, key, raw)

    def claim_task(self, task_id: str, agent: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS, actor: str | None = None) -> Task:
        """Give one specific ready task to ``agent``, with a lease it must renew (assignment)."""
        _check_agent(agent)
        return self.start(task_id, agent, lease_seconds=lease_seconds, actor=actor or agent, op="claim")

    def start(
        self,
        task_id: str,
        owner: str,
        *,
        lease_seconds: float | None = None,
        actor: str | None = None,
        expected_version: int | Seen | None = None,
        op: str = "status:in_progress",
        force: bool = False,
        fields: Mapping[str, Any] | None = None,
    ) -> Task:
        """Put a task in progress for ``owner``: a ready pending task, or resume a paused, blocked
        or waiting one. With ``lease_seconds`` the owner must heartbeat (an agent); without, the
        task stays theirs until they change it (a person)."""
        self._ensure_whole()
        fields = self._checked_fields(fields)

        def change(task: Task) -> None:
            if task.status == Status.PENDING:
                self._refresh_blockers(task)
            self._apply_fields(task, {k: v for k, v in fields.items() if k != "owner"})
            self._apply_status(task, Status.IN_PROGRESS, owner=owner, lease_seconds=lease_seconds)

        return self.mutate(task_id, change, op=op, actor=actor, expected_version=expected_version, force=force)

    def _claim_locked(self, task: Task, agent: str, lease_seconds: float, actor: str | None) -> Task:
        return self._commit(task, self._claimed(task, agent, lease_seconds), "claim", actor or agent)

    def _claimed(self, task: Task, agent: str, lease_seconds: float) -> Task:
        """A draft of ``task`` claimed by ``agent``, with a lease."""
        draft = draft_of(task)
        self._apply_status(draft, Status.IN_PROGRESS, owner=agent, lease_seconds=lease_seconds)
        return draft

    def held_by(self, agent: str) -> list[Task]:
        self._ensure_whole()
        return [t for t in self.graph.tasks.values() if t.status == Status.IN_PROGRESS and t.owner == agent]

    def heartbeat(self, agent: str, *, lease_seconds: float | None = None) -> list[Task]:
        """Renew every lease ``agent`` holds, each by its own length (or by ``lease_seconds``,
        which becomes the lease's new length); returns the renewed tasks."""
        self._ensure_whole()
        _check_agent(agent)
        renewed = []
        with self._write_lock():
            self.sync()
            for task in [t for t in self.graph.tasks.values() if t.lease is not None and t.lease.owner == agent]:
                fresh = self._fresh(task.id)
                if fresh.lease is None or fresh.lease.owner != agent or fresh.status != Status.IN_PROGRESS:
                    continue
                renewed.append(self._commit(fresh, self._renewed(fresh, lease_seconds), "heartbeat", agent))
        return renewed

    def renew_lease(self, task_id: str, token: int, *, actor: str | None = None, unexpired: bool = False, lease_seconds: float | None = None) -> Task:
        """Extend one lease by its own length, fenced on the token: ``StaleLease`` once the
        task moved on to another holder (or out of progress). With ``unexpired``, also once
        the lease ran out, taken back or not: a task about to be started must not run on a
        lease the coordinator may already be reclaiming. ``lease_seconds`` becomes the
        lease's new length."""

        def change(task: Task) -> None:
            assert task.lease is not None  # the fence check ran first
            if unexpired and task.lease.expires_at <= self.clock():
                raise StaleLease(f"the lease on task {task_id} ran out at {_iso(task.lease.expires_at.replace(microsecond=0))}")
            renewed = self._renewed(task, lease_seconds)
            task.lease = renewed.lease

        return self.mutate(task_id, change, op="heartbeat", actor=actor, token=token)

    def _renewed(self, task: Task, lease_seconds: float | None) -> Task:
        draft = draft_of(task)
        assert draft.lease is not None
        seconds = lease_seconds or draft.lease.seconds or DEFAULT_LEASE_SECONDS
        draft.lease.expires_at = self.clock() + timedelta(seconds=seconds)
        draft.lease.seconds = seconds
        return draft

    def release(
        self, task_id: str, *, actor: str | None = None, token: int | None = None, reason: str = "released", force: bool = False,
        fields: Mapping[str, Any] | None = None, expected_version: int | Seen | None = None,
    ) -> Task:
        """Give an in-progress task back to the pool (owner cleared, lease dropped)."""
        fields = self._checked_fields(fields)

        def change(task: Task) -> None:
            if task.status != Status.IN_PROGRESS:
                raise BoardError(f"task {task_id} is {task.status}, not in_progress; only a task being worked on can be released")
            self._apply_fields(task, {k: v for k, v in fields.items() if k != "owner"})
            self._apply_status(task, Status.PENDING)

        return self.mutate(task_id, change, op=f"release ({reason})", actor=actor, token=token, force=force, expected_version=expected_version)

    def reclaim_expired(self, *, actor: str = "coordinator") -> list[Task]:
        """Take back in-progress tasks whose lease ran out; history records who went silent."""
        self._ensure_whole()
        reclaimed = []
        with self._write_lock():
            self.sync()
            now = self.clock()
            for task in list(self.graph.tasks.values()):
                if task.status != Status.IN_PROGRESS or task.lease is None or task.lease.expires_at > now:
                    continue
                fresh = self._fresh(task.id)
                if fresh.status != Status.IN_PROGRESS or fresh.lease is None or fresh.lease.expires_at > now:
                    continue
                draft = draft_of(fresh)
                silent = fresh.lease.owner
                self._apply_status(draft, Status.PENDING)
                reclaimed.append(
                    self._commit(fresh, draft, "reclaim", actor, {"reason": f"lease of {silent} expired at {_iso(fresh.lease.expires_at.replace(microsecond=0))}"})
                )
        return reclaimed

    # -- checks -------------------------------------------------------------------------------

    def check(self) -> list[Problem]:
        """Everything on disk that breaks the file format or the dependency rules."""
        self._ensure_whole()
        self.rescan()
        problems = [Problem("file.invalid", path, reason) for path, reason in sorted(self.invalid.items())]
        for found in [*self.graph.problems(), *cancelled_blockers(self.graph.tasks)]:
            where = str(self.layout.task_path(found.tasks[0]))
            problems.append(Problem(found.kind, where, found.message, found.tasks))
        stray = self.stray_temp_files()
        for path in stray[:STRAY_TEMP_LISTED]:
            problems.append(Problem("file.stray_temp", str(path), "a temp file left by a writer killed mid-write ('board check --fix' removes it)"))
        if len(stray) > STRAY_TEMP_LISTED:
            size = sum(_size_of(p) for p in stray[STRAY_TEMP_LISTED:])
            problems.append(Problem("file.stray_temp", str(self.layout.tasks_dir), f"{len(stray) - STRAY_TEMP_LISTED:,} more temp files ({size / 1024:,.0f} KiB) left by writers killed mid-write ('board check --fix' removes them)"))
        return problems

    def stray_temp_files(self) -> list[Path]:
        """Temp files no live writer can still be using, in every folder board writes.

        A temp file is named after the process that made it (``.write.<pid>-<random>.tmp``):
        once that process is gone, its file is stray at once. A temp file named otherwise
        (another tool's, or an older board's) counts as stray only once it is older than any
        wait for the lock.
        """
        now = time.time()
        stray = []
        for directory in self._written_folders():
            try:
                names = sorted(name for name in os.listdir(directory) if name.startswith(".") and name.endswith(".tmp"))
            except (FileNotFoundError, NotADirectoryError):
                continue
            for name in names:
                path = directory / name
                if name_names_a_process(name):
                    if not made_by_running_process(name):
                        stray.append(path)
                    continue
                try:
                    if now - path.lstat().st_mtime > STRAY_TEMP_AGE_SECONDS:
                        stray.append(path)
                except FileNotFoundError:
                    continue
        return stray

    def _written_folders(self) -> list[Path]:
        """Every folder board writes files into with temp files and renames."""
        folders = dict.fromkeys([self.layout.tasks_dir, self.state_dir])
        for name in ("agents", "reservations", "archive"):
            folders[self.state_dir / name] = None
        try:
            with os.scandir(self.state_dir / "checkpoints") as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        folders[Path(entry.path)] = None
        except FileNotFoundError:
            pass
        return list(folders)

    def remove_stray_temp_files(self) -> list[Path]:
        removed = []
        for path in self.stray_temp_files():
            path.unlink(missing_ok=True)
            removed.append(path)
        return removed

    def repair_symmetry(self, *, actor: str | None = None) -> list[str]:
        """Write the missing side of one-sided edges; returns what was fixed.

        An edge present on either side is kept (it is the safer reading: the dependent waits),
        unless adding it would close a cycle, in which case it is reported, not written.
        """
        self._ensure_whole()
        fixed = []
        with self._write_lock():
            self.sync()
            self.rescan()
            for task in list(self.graph.tasks.values()):
                for blocker in task.blocked_by:
                    if blocker in self.graph.tasks and task.id not in self.graph.tasks[blocker].blocks:
                        self._link_side(blocker, "blocks", task.id, actor)
                        fixed.append(f"#{blocker} now lists #{task.id} in blocks")
                if task.status == Status.COMPLETED:
                    continue  # a completed blocker dropped from blockedBy: seed 001's unblocking, not a broken edge
                for dependent in task.blocks:
                    other = self.graph.tasks.get(dependent)
                    if other is not None and task.id not in other.blocked_by:
                        if self.graph.cycle_if_added(dependent, task.id) is None:
                            self._link_side(dependent, "blocked_by", task.id, actor)
                            fixed.append(f"#{dependent} now lists #{task.id} in blockedBy")
        return fixed

    # -- tool calls ---------------------------------------------------------------------------

    def toolcalls_path(self, task_id: str) -> Path:
        return task_log(self.state_dir, validate_id(task_id))

    def record_toolcall(
        self,
        task_id: str,
        tool: str,
        *,
        ok: bool = True,
        ms: int | None = None,
        files: Iterable[str] = (),
        agent: str | None = None,
        token: int | None = None,
        progress: int | None = None,
    ) -> Task:
        """Count a tool call on the task (and, optionally, set its progress).

        The call is a line appended to the task's log, without the lock: readers count it
        (``_count_logged_calls``). A call made with a lease token is refused once that lease is
        gone, like any fenced write. Progress is a write of the task, which stores the counts.
        """
        if agent is not None:
            _check_agent(agent)
        check_tool_name(tool)
        if progress is not None and not 0 <= progress <= 100:
            raise BoardError(f"progress must be 0-100, not {progress}")
        current = self._fresh(task_id)
        if token is not None:
            _check_fence(current, token)
        record = call_record(ts=_iso(self.clock()), agent=agent or current.owner or self.actor, tool=tool, ok=ok, task=task_id, files=files, ms=ms)
        append_call(self.state_dir, record)
        if progress is not None:
            # A write of the task: it stores the counts, this call's included.
            return self.mutate(task_id, lambda task: setattr(task, "progress", progress), op="toolcall", actor=agent, token=token)
        self._reread_ids([task_id])
        return self.get(task_id)

    def toolcalls(self, task_id: str) -> list[dict[str, Any]]:
        records, _ = read_jsonl(self.toolcalls_path(task_id))
        return records


def _check_fence(task: Task, token: int) -> None:
    """A write made with a lease token is refused once that lease is gone. The message names
    the holder, never the current token: a refusal must not hand out the key."""
    if task.lease is None:
        raise StaleLease(f"your lease token for task {task.id} is stale: the task is {task.status} and leased to no one; stop working on it")
    if task.lease.token != token:
        raise StaleLease(f"your lease token for task {task.id} is stale: {task.lease.owner} holds it under a newer lease; stop working on it")


def _lease_held(task: Task, what: str = "change its status, progress or owner") -> LeaseHeld:
    assert task.lease is not None
    until = task.lease.expires_at.astimezone(UTC).strftime("%H:%M:%S")
    return LeaseHeld(
        f"task {task.id} is held by {task.lease.owner} (lease until {until} UTC): only its holder, "
        f"with its lease token, may {what}; a person can override with --force"
    )


#: What only a lease's holder may change while the lease lives.
def _fenced_change(current: Task, draft: Task) -> bool:
    return current.status != draft.status or current.progress != draft.progress or current.owner != draft.owner


def _checksum(data: bytes) -> str:
    return f"{zlib.crc32(data):08x}"


def _cycle_through(graph: TaskGraph, edges: list[tuple[str, str]], task_id: str, blocker_id: str) -> list[str] | None:
    """The cycle that (task_id blockedBy blocker_id) would close, following the written edges
    and ``edges``, which are about to be written; None if there is none."""
    if task_id == blocker_id:
        return [task_id, task_id]
    new: dict[str, list[str]] = {}
    for task, blocker in edges:
        new.setdefault(task, []).append(blocker)
    path = graph.path_between(blocker_id, task_id, also=new)
    return None if path is None else [task_id, *path]


def _check_agent(agent: str) -> None:
    try:
        validate_id(agent)
    except ValueError:
        raise BoardError(f"'{shortened(str(agent))}' is not a valid agent name (letters, digits, '_' or '-', at most 64)") from None


def _status(value: Status | str) -> Status:
    try:
        return Status(value)
    except ValueError:
        raise BoardError(f"unknown status '{shortened(str(value))}'; use one of {', '.join(s.value for s in Status)}") from None


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@dataclass
class PreparedWrite:
    """A write worked out ahead of publishing it: the new version, its bytes, its history line."""

    task: Task
    path: Path
    data: bytes
    record: dict[str, Any]


@dataclass
class ClaimAttempt:
    """An optimistic claim: the prepared write, its filled temp file, and the bytes it was built from."""

    prepared: PreparedWrite
    temp: TempFile
    key: str
    raw: bytes


class _NotClaimable(Exception):
    """The reserved candidate turned out not to be claimable; claim under the lock instead."""


class ClaimIntents:
    """Which ready tasks other processes are about to claim, so that concurrent claimers work
    on different ones instead of all preparing the best and all but one starting over.

    One byte-range lock per task id on ``.claiming`` in the board's state folder (a file that is
    never deleted); the kernel drops them when a process dies. Only a hint: the claim itself
    is checked under the board lock, so a collision of ids on one byte, or two stores of one
    process (whose record locks never conflict), costs a retry, never a double claim.
    """

    def __init__(self, path: Path) -> None:
        self._file = KeptOpen(path)

    def reserve(self, task_id: str) -> bool:
        try:
            fcntl.lockf(self._file.descriptor(), fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _intent_offset(task_id), os.SEEK_SET)
        except OSError as error:
            if error.errno in (errno.EAGAIN, errno.EACCES):
                return False
            raise
        return True

    def release(self, task_id: str) -> None:
        if self._file.fd is not None:
            fcntl.lockf(self._file.fd, fcntl.LOCK_UN, 1, _intent_offset(task_id), os.SEEK_SET)


def _intent_offset(task_id: str) -> int:
    return zlib.crc32(task_id.encode("utf-8"))


class PendingNote:
    """The history line a writer is about to append, for the next writer should this one die.

    Read and written only under the board lock, through a descriptor kept open: truncating
    and rewriting a file through a fresh ``open`` makes ext4 flush it on close, which cost
    more than the rest of a claim. Not fsynced: it is a note for this machine's other
    processes, and a crash of the machine may lose it.
    """

    def __init__(self, path: Path) -> None:
        self._file = KeptOpen(path, make_parent=True)  # board's own folder in a Claude Code list

    def read(self) -> bytes:
        """The note; called first under each hold of the lock, so it also re-checks the file."""
        fd = self._file.descriptor(recheck=True)
        return os.pread(fd, os.fstat(fd).st_size, 0)

    def write(self, data: bytes) -> None:
        fd = self._file.descriptor()
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))

    def clear(self) -> None:
        os.ftruncate(self._file.descriptor(), 0)


@contextmanager
def _collection_paused() -> Iterator[None]:
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


def _size_of(path: Path) -> int:
    try:
        return path.lstat().st_size
    except FileNotFoundError:
        return 0


def _stamp(path: Path | str) -> Stamp | None:
    try:
        info = os.lstat(path)  # of the entry itself: a link is never followed
    except FileNotFoundError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)
