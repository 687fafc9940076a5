"""The write protocol of a board's files.

Writes take the board lock, bring the index up to date, re-read the target file, compare and
set on ``version``, write atomically and append one line to ``history.jsonl``; a writer killed
between the rename and the history line is finished by the next one. Outside edits (files whose
bytes no history line accounts for) are logged before board builds on them.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from functools import cache
from pathlib import Path
from typing import Any

from board.active_work import PARENTS, READY, entry_for, forget_index, note_task, read_active, index_written, read_parents, read_ready, write_active, write_parents, write_ready, held_files
from board.errors import BoardError, Command, InvalidTaskFile, TaskNotFound
from board.model import PRIORITY_RANK, Task, check_readable_back, task_from_dict, task_to_dict, validate_id
from board.disk import confine
from board.disk.atomic import TempFile, fsync_directory, json_line, read_regular, write_atomic
from board.graph import MAX_PARENT_DEPTH, id_sort_key, removed_by_claude_code, unit_weight
from board.names import ID_PATTERN
from board.status import Status
from board.store.base import _iso
from board.store.file_format import ARCHIVE_DIR, pending_note, read_pending_note
from board.store.files.state import FileBoard, PreparedWrite, keep_logged

#: A rename not (yet) counted by ``SharedDirectorySync``: the writer fsyncs the directory itself.
NOT_COUNTED = 1 << 62
#: What follows a history line's task, as ``json_line`` writes it: its version and the checksum
#: of the file it wrote, if any. A version of more than 18 digits is no store's (nor a number
#: ``int`` would take past 4,300).
_AFTER_TASK = b'","version":'
_VERSION_AND_FILE = rb'(\d{1,18})(?![0-9])(?:,"file":"([0-9a-f]+)")?'


@cache
def _logged_versions() -> re.Pattern[bytes]:
    """The task, version and file checksum of each history line. Compiled when first asked
    (most commands never read the whole log), as ``_version_and_file``."""
    return re.compile(rb'"task":"((?:[^"\\]|\\.)*)' + _AFTER_TASK + _VERSION_AND_FILE)


@cache
def _version_and_file() -> re.Pattern[bytes]:
    """What follows ``_AFTER_TASK`` in a history line, for a lookup of one task's lines."""
    return re.compile(_VERSION_AND_FILE)


#: Fields that change on every write and would only clutter the history's change lists.
_UNTRACKED = frozenset({"version", "updatedAt"})
#: Past this many tasks read at once, the tool-call logs are listed once rather than looked for
#: task by task (most tasks have none).
MANY_TASKS = 64


def removed_refusal(task_id: str) -> BoardError:
    """Why a write to a task Claude Code deleted is refused, and what brings it back."""
    return BoardError(f"task {task_id} was removed from the list by Claude Code; nothing was changed: ", Command("task restore", (("id", task_id),)), " brings it back")


def _checksum(data: bytes) -> str:
    return f"{zlib.crc32(data):08x}"


class FileWrites(FileBoard):
    """The write side of ``FileStore``."""

    def _fresh(self, task_id: str) -> Task:
        """The task as it is on disk now (called under the lock)."""
        path = self.layout.task_path(task_id)
        read = self._read_path(path, task_id)
        if read is None:
            if self._removed_by_claude_code(task_id, self.graph.tasks.get(task_id)) is not None:
                raise removed_refusal(task_id)
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
        """Keep ``active.json`` (who works on what, for ``board hook``) and the index of
        sub-tasks' parents in step with a write."""
        task_id = new.id if new is not None else old.id  # type: ignore[union-attr]
        before = entry_for(old.status, old.owner, held_files(old.id, old.files, old.metadata)) if old is not None else None
        after = entry_for(new.status, new.owner, held_files(new.id, new.files, new.metadata)) if new is not None else None
        if before != after:  # a heartbeat or a progress report changes nothing here
            note_task(self.state_dir, task_id, after)
        parent_before = old.parent if old is not None else None
        parent_after = new.parent if new is not None else None
        if parent_before != parent_after:
            note_task(self.state_dir, task_id, {"parent": parent_after} if parent_after else None, files=PARENTS)

    def _keeps_ready_index(self) -> bool:
        """Whether claims here go by the index of ready tasks: on board's own folder, once a
        reader of the whole board wrote it. Not on a Claude Code list, whose tasks Claude Code
        itself starts and finishes without a word to it. Once seen, the index is kept for good
        (a note to one deleted since is dropped by ``note_task``), so a write asks the disk only
        until then."""
        if self._mirror is not None:
            return False
        if not self._ready_index_seen:
            self._ready_index_seen = index_written(self.state_dir, READY)
        return self._ready_index_seen

    def _note_ready(self, old: Task | None, new: Task | None, moves: set[str], version_before: int) -> None:
        """Tell the board's index of ready tasks what a write changed there (under the lock).

        A store that read the whole board knows which tasks the write made ready or not
        (``moves``), and each one's remaining path. One that read only the task judges the task
        alone, once it has read its blockers and sub-tasks: its writes (a claim, a release, a
        field) move no other task. What neither knows (the remaining path of a task a release
        made ready again) is left for the coordinator's rebuild to put right."""
        if not self._keeps_ready_index():
            return
        if self._partial:
            if new is None or (old is not None and (old.status, old.priority, old.blocked_by, old.parent) == (new.status, new.priority, new.blocked_by, new.parent)):
                return
            # Only a pending task can be ready: a claim's own note reads nothing more.
            if new.status == Status.PENDING:
                self.read_around(new.id)
            entry = {"rank": PRIORITY_RANK[new.priority], "remaining": None} if self.graph.is_ready(new.id) else None
            note_task(self.state_dir, new.id, entry, files=READY)
            return
        # Besides the tasks that became ready or stopped being so: the task written, when its
        # place in the order may have moved, and when the graph's shape changed (a new task, a
        # link, a task finished), the ready tasks upstream of it, whose remaining paths run
        # through it.
        renoted = set(moves)
        if new is not None and self.graph.is_ready(new.id) and (old is None or (old.priority, old.metadata.get("estimate")) != (new.priority, new.metadata.get("estimate"))):
            renoted.add(new.id)
        if new is not None and self.graph.structure_version() != version_before:
            renoted.update(task_id for task_id in self.graph.ancestors(new.id) if self.graph.is_ready(task_id))
        for task_id in sorted(renoted, key=id_sort_key):
            note_task(self.state_dir, task_id, self._ready_entry(task_id) if self.graph.is_ready(task_id) else None, files=READY)

    def _ready_entry(self, task_id: str) -> dict[str, Any]:
        """A ready task's place in the claim order, as the index of ready tasks keeps it."""
        task = self.graph.tasks[task_id]
        # A task nothing waits on (a new one, most often) has its own weight as its remaining
        # path; only one with dependents needs the whole board's paths.
        remaining = self.graph.remaining_path().get(task_id, 0.0) if self.graph.dependents(task_id) else unit_weight(task)
        return {"rank": PRIORITY_RANK[task.priority], "remaining": remaining}

    def refresh_ready(self) -> bool:
        """Rebuild the index of ready tasks from the whole board when it differs (outside
        writers, a remaining path that moved); True if rewritten. Under the board's lock, so
        that no write's note is lost to it."""
        if self._mirror is not None:
            return False
        self._ensure_whole()
        with self._write_lock(make_temp=False):
            self.sync()
            wanted = {task_id: self._ready_entry(task_id) for task_id in self.graph.ready_ids()}
            if read_ready(self.state_dir) == wanted:
                return False
            write_ready(self.state_dir, wanted)
            self._ready_index_seen = True
        return True

    def read_around(self, *task_ids: str) -> None:
        # Sub-tasks from the index of parents (written whole by a reader of the whole board the
        # first time it is missing); each read fresh, and one whose file names another parent
        # now is no sub-task (and the index learns its new one). A sub-task an outside writer
        # made otherwise reaches the index when the coordinator next puts it right. Everything
        # is read in one pass: a listing of thousands of ready tasks reads the index once.
        if not self._partial:
            return
        parents = read_parents(self.state_dir)
        if parents is None:
            self._ensure_whole()
            try:
                self.refresh_parents()
            except OSError:
                pass  # an index it cannot write (a link planted there): the whole board answers
            return
        named = [task_id for task_id in dict.fromkeys(task_ids) if task_id not in self.graph.tasks and ID_PATTERN.fullmatch(task_id)]
        with self._logs_listed_once() if len(named) > MANY_TASKS else nullcontext():
            self._read_around(named, task_ids, parents)

    def _read_around(self, named: list[str], task_ids: tuple[str, ...], parents: dict[str, str]) -> None:
        key = self.layout.task_key
        self.read_files([(task_id, key(task_id)) for task_id in named])
        found = [task_id for task_id in task_ids if task_id in self.graph.tasks]
        children: dict[str, list[str]] = {}
        for child, parent in parents.items():
            children.setdefault(parent, []).append(child)
        wanted: set[str] = set()
        for task_id in found:
            wanted.update(self.graph.tasks[task_id].blocked_by)
        level = found
        for _ in range(MAX_PARENT_DEPTH):
            level = [kid for node in level for kid in children.get(node, ()) if kid not in wanted]
            if not level:
                break
            wanted.update(level)
        wanted.difference_update(found)
        wanted = {task_id for task_id in wanted if ID_PATTERN.fullmatch(task_id)}  # the index is a file anyone here may write
        self.read_files([(other, key(other)) for other in sorted(wanted, key=id_sort_key)])
        for other in wanted:
            moved = self.graph.tasks.get(other)
            if moved is not None and other in parents and moved.parent != parents[other]:
                # An outside writer gave it another parent: the index learns it now.
                note_task(self.state_dir, other, {"parent": moved.parent} if moved.parent else None, files=PARENTS)

    def read_ready(self) -> list[str] | None:
        # What a reader of the whole board wrote and every write since noted (``_note_ready``);
        # what an outside writer made ready reaches it when the coordinator next puts it right.
        if not self._keeps_ready_index():
            return None
        entries = read_ready(self.state_dir)
        if entries is None:
            return None
        candidates = [task_id for task_id in entries if ID_PATTERN.fullmatch(task_id)]
        self.read_around(*candidates)
        return candidates

    def refresh_parents(self) -> bool:
        """Rebuild the index of sub-tasks' parents from the whole board when it differs; True
        if rewritten. Under the board's lock, so that no write's note is lost to it."""
        self._ensure_whole()
        with self._write_lock(make_temp=False):
            self.sync()
            wanted = {t.id: t.parent for t in self.graph.tasks.values() if t.parent}
            if read_parents(self.state_dir) == wanted:
                return False
            write_parents(self.state_dir, wanted)
        return True

    def _held_by(self, agent: str) -> list[str] | None:
        # ``active.json`` holds every task in progress with its owner, the one a claim gives the
        # lease; what outside writers change there, the coordinator's rebuild puts right. When
        # it names none for the agent (none held, or the index lost), the whole board is read:
        # a lease not renewed would be taken back while its holder works.
        held = [task_id for task_id, entry in read_active(self.state_dir).items() if entry.get("owner") == agent]
        return sorted(held, key=id_sort_key) or None

    def refresh_active(self) -> bool:
        """Rebuild ``active.json`` (and the indexes of parents and ready tasks) from the whole
        board, when it differs (outside writers, such as Claude Code itself, start and finish
        tasks without telling it). True if rewritten. An index it cannot write (a link planted
        in place of one of its files) is dropped, not trusted; the coordinator goes on."""
        self._ensure_whole()
        wanted = {
            t.id: entry for t in self.graph.tasks.values()
            if (entry := entry_for(t.status, t.owner, held_files(t.id, t.files, t.metadata))) is not None and not removed_by_claude_code(t)  # nobody works on a deleted one
        }
        others_rewritten = False
        for refresh, files in ((self.refresh_parents, PARENTS), (self.refresh_ready, READY)):
            try:
                others_rewritten |= refresh()
            except OSError:
                forget_index(self.state_dir, files)
        if read_active(self.state_dir) == wanted:
            return others_rewritten
        with self._write_lock(make_temp=False):
            try:
                write_active(self.state_dir, wanted)
            except OSError:
                forget_index(self.state_dir)
                return others_rewritten
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
        check_readable_back(task, encoded)
        record = self._history_record(task.id, task.version, actor, op, changes, extra, file_crc=_checksum(encoded))
        return PreparedWrite(task, path, encoded, record)

    # -- outside edits ------------------------------------------------------------------------

    def _logged_version(self, task_id: str) -> int | None:
        """The highest version history records for ``task_id`` (the checksum of the file that
        version wrote is then in ``_logged_crc``); None when history never names it.

        A store that read the whole board makes one pass over the log the first time this is
        asked (a fast scan: only the task and version of each line). One that read only some
        tasks looks each up from the log's end: a command about one task reads the last lines,
        not a log that grows by a line with every heartbeat of every agent.
        """
        if self._max_logged is None:
            if self._partial:
                self._max_logged, self._logged_scope = {}, set()
            else:
                self._max_logged = self._every_logged_version()
        if self._logged_scope is not None and task_id not in self._logged_scope:
            self._look_up_logged(task_id)
        return self._max_logged.get(task_id)

    def _every_logged_version(self) -> dict[str, int]:
        versions: dict[str, int] = {}
        for chunk in self._history.chunks_forward(self._history_offset):
            for task_id, version, crc in _logged_versions().findall(chunk):
                keep_logged(versions, self._logged_crc, task_id.decode("utf-8", "replace"), int(version), crc.decode() if crc else None)
        return versions

    def _look_up_logged(self, task_id: str) -> None:
        """``_every_logged_version``'s answer for one task, read from the log's end back to the
        task's latest line written by a store (one with its file's checksum): that version was
        one above every version logged before it (``_next_version``, under the lock), so only
        the lines after it (outside edits noted) can say more."""
        assert self._max_logged is not None and self._logged_scope is not None
        best: tuple[int, bytes] | None = None
        for digits, crc in self._lines_back(task_id):
            version = int(digits)
            if best is None or version > best[0]:
                best = (version, crc)  # on a tie the later line counts, as in one pass
            if crc:
                break
        if self._history.size() < self._history_offset:
            return  # the log was cut short meanwhile: asked again, it is read again
        self._logged_scope.add(task_id)
        # Lines this store appended or read on since count too: the latest of the two wins a tie.
        if best is not None and best[0] > self._max_logged.get(task_id, -1):
            self._max_logged[task_id] = best[0]
            if best[1]:
                self._logged_crc[task_id] = best[1].decode()
            else:
                self._logged_crc.pop(task_id, None)

    def _lines_back(self, task_id: str) -> Iterator[tuple[bytes, bytes]]:
        """The version and file checksum (b"" without one) of each of the task's history lines,
        latest first. Its lines are found by their start with ``rfind``, not by a pattern made
        for the task: compiling one cost more than the rest of the lookup."""
        start, tail = b'"task":"' + task_id.encode() + _AFTER_TASK, _version_and_file()
        for chunk in self._history.chunks_back(self._history_offset):
            end = len(chunk)
            while (found := chunk.rfind(start, 0, end)) >= 0:
                end = found
                match = tail.match(chunk, found + len(start))
                if match is not None:
                    yield match.group(1), match.group(2) or b""

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
        logged = self._logged_version(task.id)
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
        logged = self._logged_version(task.id)
        return max(task.version, 0 if logged is None else logged) + 1

    def _publish(self, prepared: PreparedWrite, temp: TempFile) -> Task:
        """Under the lock: rename the filled temp file into place, log the change, index it."""
        # Leave word of the line about to be logged, so if this process dies between the rename
        # and the append, the next writer finishes the line (``_finish_interrupted_write``).
        line = json_line(prepared.record)
        self._pending.write(pending_note(self._history.size(), line))
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
        old = self.graph.tasks.get(prepared.task.id)
        self._note_active(old, prepared.task)
        version_before = self.graph.structure_version()
        with self.graph.recording_ready_moves() as moves:
            self.graph.put(prepared.task)
        self._note_ready(old, prepared.task, moves, version_before)
        if prepared.task.status == Status.COMPLETED:
            self._mirror_completed(prepared.task, prepared.data)
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
        note = read_pending_note(raw)
        if note is not None and self._history.size() <= note.history_size:  # its line never reached the log
            path = self.layout.task_path(note.task_id)
            read = self._read_path(path, note.task_id)
            if read is not None and isinstance(read[0], Task) and read[0].version == note.version:
                self._append_history(json_line({**note.record, "recovered": True}))
                self._read_into_index(path, note.task_id)
        self._pending.clear()  # done, or torn: its writer died before touching the task file

    # -- deleting -----------------------------------------------------------------------------

    @property
    def archive_dir(self) -> Path:
        """Where deleted tasks go, restorable: ``archive/`` in the board's own folder."""
        return self.state_dir / ARCHIVE_DIR

    def _archived_path(self, task_id: str) -> Path:
        return self.archive_dir / self.layout.task_path(validate_id(task_id)).name

    def archived_ids(self) -> set[str]:
        try:
            names = os.listdir(self.archive_dir)
        except FileNotFoundError:
            return set()
        return {task_id for name in names if (task_id := self.layout.task_id_for(self.layout.tasks_dir / name)) is not None}

    def _archive(self, current: Task, actor: str | None, forced: bool) -> None:
        """Move the task's file to the archive and log its deletion (under the lock)."""
        task_id = current.id
        removed = removed_by_claude_code(current)
        copy = self._mirror.read(task_id) if removed and self._mirror is not None else None
        if not removed:
            outside = self.outside_edit(current, self._read_crc.get(task_id))
            if outside is not None:
                self._log(task_id, current.version, "outside", "outside edit", outside)
        confine.make_folders(self.archive_dir)
        # A task Claude Code deleted is archived as board kept it (its file is gone already).
        write_atomic(self._archived_path(task_id), copy[0] if copy is not None else self.layout.encode(current))
        path, key = self._file_of(task_id)
        if not removed:
            confine.unlink(path)
        fsync_directory(path.parent)
        if self._mirror is not None:
            self._mirror.drop(task_id)  # it left the board: no longer kept for Claude Code's deletes
        self._note_active(current, None)
        self._log(task_id, self._next_version(current), actor, "delete", {"status": [str(current.status), None]}, {"forced": True} if forced else None)
        upstream = self.graph.ancestors(task_id) if self._keeps_ready_index() and not self._partial else set()
        with self.graph.recording_ready_moves() as moves:
            self.graph.remove(task_id)
        # The ready tasks upstream of it lose it from their remaining paths.
        self._note_ready(current, None, moves | {t for t in upstream if self.graph.is_ready(t)}, self.graph.structure_version())
        self._file_stamps.pop(key, None)

    def _read_archived(self, task_id: str) -> Task:
        archived = self._archived_path(task_id)
        try:
            raw = read_regular(archived)
        except FileNotFoundError:
            copy = self._mirror.read(task_id) if self._mirror is not None and self._removed_by_claude_code(task_id, self.graph.tasks.get(task_id)) else None
            if copy is not None:
                # Claude Code deleted its file: it comes back as board last saw it.
                return self.layout.decode(copy[0], copy[1], task_id)
            raise BoardError(f"no deleted task {task_id} to restore (the archive is {self.archive_dir})") from None
        return self.layout.decode(raw, archived, task_id)

    def _drop_archived(self, task_id: str) -> None:
        confine.unlink(self._archived_path(task_id), missing_ok=True)
        restored = self.graph.tasks.get(task_id)
        if self._mirror is not None and restored is not None and restored.status != Status.COMPLETED:
            self._mirror.drop(task_id)  # back in the list; copied again once it is completed

    def _on_board(self, task_id: str) -> bool:
        """Whether a task with this id is on the board (its file exists, valid or not)."""
        return self.layout.task_path(task_id).exists()

    def _new_task_id(self) -> str:
        """The id for a new task: never one in use, nor one a deleted task had."""
        # File names, not just the index: files written behind the store's back count too.
        on_disk = {tid for tid, _ in self.layout.task_files()}
        return self.layout.next_id(set(self.graph.tasks) | on_disk | self.archived_ids())

    def _note_id_issued(self, task_id: str) -> None:
        self.layout.note_id_issued(task_id)
