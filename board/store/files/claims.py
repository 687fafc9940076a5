"""Claims on a board's files: optimistic, with the lock held only to check and rename."""

from __future__ import annotations

import heapq
from typing import Any

from board.records import NamedTuple
from board.active_work import READY, claim_order_key, index_written, note_task, read_parents, read_ready, read_ready_head
from board.errors import BoardError, InvalidTaskFile
from board.graph import removed_by_claude_code
from board.model import Task
from board.status import Status
from board.store.leases import DEFAULT_LEASE_SECONDS
from board.disk.atomic import SpecialFile, TempFile, read_bytes_retrying
from board.store.base import _check_agent, _refuse_if_holding
from board.store.files.writes import _checksum
from board.store.files.state import FileBoard, PreparedWrite


#: Optimistic claims tried before one is made wholly under the lock (see ``Store.claim``).
OPTIMISTIC_CLAIM_ATTEMPTS = 3
#: How many of the index's best ready tasks a claim checks before it reads the whole board.
INDEX_CANDIDATES = 16


class ClaimAttempt(NamedTuple):
    """An optimistic claim: the prepared write, its filled temp file, and the bytes it was built from."""

    prepared: PreparedWrite
    temp: TempFile
    key: str
    raw: bytes


class _NotClaimable(Exception):
    """The reserved candidate turned out not to be claimable; claim under the lock instead."""


class FileClaims(FileBoard):
    """The claim side of ``FileStore``."""

    def claim(self, agent: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS, max_held: int | None = 1, actor: str | None = None) -> Task | None:
        """Atomically take the best ready task for ``agent``, or None when nothing is ready.

        Optimistic first: the claim is worked out and its file written and fsynced before the
        lock is taken; under the lock the store only checks that the task's file is still the
        one it read (and the task still ready) and renames. Concurrent claimers reserve their
        candidates (``ClaimIntents``) so they work on different tasks. When the check fails a
        few times, the claim is made wholly under the lock.
        """
        _check_agent(agent)
        from_index = self._partial and self._mirror is None
        if from_index:
            taken = self._claim_from_index(agent, lease_seconds, max_held, actor)
            if taken is not None:
                return taken
        self._ensure_whole()
        taken = self._claim_whole(agent, lease_seconds, max_held, actor)
        if self._mirror is None and (from_index or not self._keeps_ready_index()):
            # The index could not say (never written, or what it named was taken or stale):
            # the whole board, read now, puts it right for the claims that come after this one,
            # and writes the index of parents they check their candidates' sub-tasks by.
            try:
                self.refresh_ready()
                if read_parents(self.state_dir) is None:
                    self.refresh_parents()
            except OSError:
                pass  # an index it cannot write (a link planted there): the claim stands all the same
        return taken

    def _claim_whole(self, agent: str, lease_seconds: float, max_held: int | None, actor: str | None) -> Task | None:
        """The claim by a store that read the whole board."""
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

    def _claim_from_index(self, agent: str, lease_seconds: float, max_held: int | None, actor: str | None) -> Task | None:
        """A claim by a store that read nothing yet: the best ready task as the board's index of
        ready tasks orders them, checked against its file, its blockers' and its sub-tasks'
        under the lock before it is taken. None when the index cannot say (never written, or
        none of its first candidates is ready now): the whole board decides, so "nothing is
        ready" is never said on the index's word."""
        # Whether the agent holds enough already is asked once, under the lock: the head of the
        # index read first is as long on a board of any size.
        best = read_ready_head(self.state_dir, INDEX_CANDIDATES)
        if best is not None:
            order = [task_id for task_id, _ in best]
        else:  # the head of the index cannot say: the whole index
            entries = read_ready(self.state_dir)
            ready = entries if entries and index_written(self.state_dir) else {}
            order = heapq.nsmallest(INDEX_CANDIDATES, ready, key=lambda task_id: claim_order_key(task_id, ready[task_id]))
        if not order:
            # The whole board decides next: an agent that holds enough is refused before it is read.
            self._check_holding_from_index(agent, max_held)
            return None
        with self._write_lock():
            self.sync()
            self._check_holding_from_index(agent, max_held)
            for task_id in order:
                try:
                    fresh = self._fresh(task_id)
                except BoardError:
                    fresh = None
                if fresh is not None:
                    self.read_around(task_id)
                    if self.graph.is_ready(task_id):
                        return self._claim_locked(fresh, agent, lease_seconds, actor)
                # Not ready after all (an outside writer, a write the index missed): out of it.
                note_task(self.state_dir, task_id, None, files=READY)
        return None

    def _check_holding_from_index(self, agent: str, max_held: int | None) -> None:
        """``_check_holding`` on what the index of work in progress names, each task read fresh."""
        if max_held is None:
            return
        named = self._held_by(agent) or []
        if len(named) < max_held:
            return  # read fresh, the tasks named can only be fewer: no refusal either way
        held = []
        for task_id in named:
            try:
                task = self._fresh(task_id)
            except BoardError:
                continue
            if task.status == Status.IN_PROGRESS and task.owner == agent and not removed_by_claude_code(task):
                held.append(task)
        _refuse_if_holding(agent, held, max_held)

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
