"""Workers: processes that take tasks from the board and carry them out.

A worker is a registered agent. It waits for a task the coordinator assigned to it (owner is
its name, status ``in_progress``) or claims the best ready one itself, renews its lease and its
agent record at a third of the lease length, and finishes the task with its fencing token, so
a worker that lost its lease (it stalled and the task went to someone else) can never
overwrite the new holder's work.

- ``CommandWorker`` runs an argv template per task, never through a shell.
- ``SimulatedWorker`` (``board.coordinator.simulated``) fakes tool calls with seeded random
  durations and failures.

Workers are single-threaded on purpose: the command is started with ``preexec_fn`` (to die with
its worker), which is only safe in a process without other threads.
"""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import threading
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any, TypeVar

from board import actions
from board.actions import Who
from board.agent_record import AgentRecord
from board.agents import read_agent, register_agent, write_agent
from board.checkpoints import write_checkpoint
from board.config import load_settings
from board.errors import AgentNameInUse, BoardError, BoardUnavailable, StaleLease
from board.model import Task, by_policy, utcnow
from board.status import Status
from board.text import printable, shortened
from board.store import Store
from board.disk import confine
from board.disk.atomic import open_regular
from board.coordinator.processes import die_with_parent, end_commands_of, kill_process_group

#: Placeholders a command template may use; each is replaced inside its own argument only.
PLACEHOLDERS = ("id", "subject", "description", "workspace", "worktree")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")
#: How long output is still read after a command exited (its children may keep the pipes open).
OUTPUT_DRAIN_SECONDS = 0.5
#: How long a worker asked to stop waits for a command that may be finishing, before ending it.
FINISHING_SECONDS = 0.1
#: How much of a command's stderr is kept to find its last line (the task's error).
STDERR_TAIL_BYTES = 4096
#: While the board is out of reach, a worker tries again after 0.25 s, doubling up to this.
MAX_OUTAGE_RETRY_SECONDS = 5.0

T = TypeVar("T")


class LeaseLost(Exception):
    """The task this worker was running is no longer leased to it."""


class Fenced(LeaseLost):
    """The worker could not renew its lease in time (the board out of reach): it stopped the
    task's command before the lease could run out, so the task never runs in two places."""


def substitute(template: Sequence[str], task: Task, workspace: Path, worktree: Path | None = None) -> list[str]:
    """The argv for one task: each placeholder replaced within its own argument, in one pass.

    One pass matters: a subject containing ``{id}`` stays literal text, and text from the task
    never becomes more arguments, because no shell ever sees it.
    """
    values = {"id": task.id, "subject": task.subject, "description": task.description, "workspace": str(workspace), "worktree": str(worktree or workspace)}
    return [_PLACEHOLDER.sub(lambda m: values[m.group(1)], part) for part in template]


def log_path(local_dir: Path, task_id: str) -> Path:
    """Where a command's output for a task goes, in the store's ``local_dir``: it is this machine's."""
    return local_dir / "logs" / f"{task_id}.log"


class Worker:
    """The loop shared by every kind of worker; subclasses implement ``perform``."""

    kind = "worker"

    def __init__(
        self,
        workspace: Path | str,
        name: str,
        *,
        poll_seconds: float = 0.05,
        self_claim: bool = True,
        log: IO[str] | None = None,
        budget: dict[str, Any] | None = None,
    ) -> None:
        self.workspace = Path(workspace).resolve()
        #: Limits given to the run, for each task it starts that has no budget of its own.
        self.budget = budget
        self.name = name
        self.store = Store.open(self.workspace, actor=name)
        self.settings = load_settings(self.store.local_dir)
        self.lease_seconds = self.settings.lease.seconds
        self.heartbeat_every = self.lease_seconds / 3
        self.poll_seconds = poll_seconds
        self.self_claim = self_claim
        self.stopping = False
        self.log = log or sys.stderr
        self._last_heartbeat = 0.0
        #: When this process started, the lock on its name (held while it runs), and why the
        #: name is no longer this process's.
        self._started_at = utcnow()
        self._name_lock: Any = None
        self._name_lost: str | None = None
        #: Until when (``time.monotonic()``) each lease this worker renewed surely holds: from
        #: before the renewal was sent, whatever the network did to it on the way.
        self._held_until: dict[str, float] = {}
        self._record: AgentRecord | None = None
        #: Tool calls on tasks this worker finished, and the current task's count when taken.
        self._tool_calls_finished = 0
        self._tool_calls_at_start = 0

    # -- lifecycle ----------------------------------------------------------------------------

    def install_signal_handlers(self) -> None:
        """SIGTERM/SIGINT/SIGHUP stop the worker cleanly: its task goes back to the pool."""
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, self._on_stop_signal)

    def _on_stop_signal(self, signum: int, frame: Any) -> None:
        self.stopping = True

    def run(self, *, max_tasks: int | None = None) -> int:
        """Work until stopped (or after ``max_tasks`` tasks). Returns an exit status.

        The agent name is this process's for as long as it runs (``AgentNameInUse`` otherwise):
        a task leased to the name is then this process's to resume, and no one else's.
        """
        name_held = self._name_lock = self.store.agent_records.name_lock(self.name)
        if not name_held.acquire():
            record = read_agent(self.store.agent_records, self.name)
            holder = f" (pid {record.pid} on {record.host})" if record is not None and record.pid else ""
            raise AgentNameInUse(f"agent name {self.name!r} is in use by another live process on this board{holder}; pick another --name")
        self._record = register_agent(self.store.agent_records, self.name, kind=self.kind, now=utcnow())
        try:
            done = 0
            while not self.stopping and (max_tasks is None or done < max_tasks):
                try:
                    picked = self.reachable(self.next_task)
                except BoardUnavailable:
                    break  # asked to stop while the board was out of reach
                except LeaseLost:
                    break  # the name went to another process during an outage (``_check_name``)
                if picked is None:
                    try:
                        self.beat(None)
                    except LeaseLost:
                        break  # as above
                    self.pause(self.poll_seconds)
                    continue
                task, token = picked
                self.work_on(task, token)
                done += 1
        finally:
            if self._name_lost is None:
                try:
                    self._mark_stopped()
                except BoardUnavailable as error:
                    self.say(f"stopping without saying so on the board: {error}")
            name_held.release()
        if self._name_lost is not None:
            raise AgentNameInUse(self._name_lost)
        return 0

    def reachable(self, call: Callable[[], T]) -> T:
        """``call()``, waited out while the board is out of reach (its database server restarting
        or cut off): a worker outlives an outage instead of dying with its task. Raises
        ``BoardUnavailable`` only when asked to stop meanwhile."""
        delay, waited = 0.25, False
        while True:
            try:
                result = call()
            except BoardUnavailable as error:
                if self.stopping:
                    raise
                if not waited:
                    self.say(f"waiting for the board: {error}")
                waited = True
                self.pause(delay)
                delay = min(delay * 2, MAX_OUTAGE_RETRY_SECONDS)
                continue
            if waited:
                self.say("the board is back")
                self._check_name()
            return result

    def _mark_stopped(self) -> None:
        record = read_agent(self.store.agent_records, self.name) or self._record
        if record is not None:
            record.stopped = True
            record.task = None
            record.heartbeat_at = utcnow()
            write_agent(self.store.agent_records, record)

    def pause(self, seconds: float) -> None:
        """Sleep in short slices so a stop signal is honoured quickly."""
        deadline = time.monotonic() + seconds
        while not self.stopping:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.05))

    # -- taking work --------------------------------------------------------------------------

    def next_task(self) -> tuple[Task, int] | None:
        """A task assigned to this worker, or the best ready one claimed for itself."""
        self.store.sync()
        mine = self._assigned()
        if mine is not None:
            return mine
        if not self.self_claim:
            return None
        try:
            task = self.store.claim(self.name, lease_seconds=self.lease_seconds, max_held=self.settings.coordinator.max_tasks_per_agent)
        except BoardError:
            return self._assigned()  # the coordinator assigned one in the meantime
        if task is None or task.lease is None:
            return None
        self._checkpoint(task.id, "claim", f"claimed by {self.name}")
        return task, task.lease.token

    def _assigned(self) -> tuple[Task, int] | None:
        held = sorted(
            (t for t in self.store.held_by(self.name) if t.lease is not None and t.lease.owner == self.name and self._granted_to_me(t)),
            key=lambda t: t.lease.token if t.lease else 0,
        )
        if not held:
            return None
        task = held[0]
        assert task.lease is not None
        return task, task.lease.token

    # -- keeping the lease --------------------------------------------------------------------

    def beat(self, current: tuple[str, int] | None) -> None:
        """Renew this worker's leases and agent record when a third of the lease has passed.

        Raises ``LeaseLost`` when the current task's lease was taken away.
        """
        now = time.monotonic()
        if now - self._last_heartbeat < self.heartbeat_every:
            return
        self._last_heartbeat = now
        try:
            self.store.sync()
            self._check_name()  # one query: a reconnection the store made quietly may hide an outage
            for task in list(self.store.held_by(self.name)):
                if task.lease is None or task.lease.owner != self.name:
                    continue
                sent = time.monotonic()  # the lease runs from no earlier than this
                try:
                    renewed = self.store.renew_lease(task.id, task.lease.token, actor=self.name)
                except BoardUnavailable:
                    raise
                except BoardError:  # StaleLease included: it moved on between sync and renewal
                    continue
                self._held_until[task.id] = sent + (renewed.lease.seconds if renewed.lease and renewed.lease.seconds else self.lease_seconds)
            if current is None:
                self._write_record(None)
                return
            task_id, token = current
            fresh = self.store.tasks.get(task_id)
            if fresh is None or fresh.lease is None or fresh.lease.token != token:
                self._write_record(None)
                raise LeaseLost(f"lease on #{task_id} was taken back")
            self._write_record(task_id)
        except BoardUnavailable:
            # The work goes on (until its lease may have run out: ``fence_due``); the lease is
            # renewed, or found lost, once the board answers.
            self._last_heartbeat = now - self.heartbeat_every + min(self.heartbeat_every, 1.0)

    def _write_record(self, task_id: str | None) -> None:
        record = read_agent(self.store.agent_records, self.name) or self._record
        if record is None:
            return
        record.heartbeat_at = utcnow()
        record.task = task_id
        record.stopped = False
        record.tool_calls = self._tool_calls_finished + (self._tool_calls_on(task_id) if task_id else 0)
        write_agent(self.store.agent_records, record)
        self._record = record

    def _tool_calls_on(self, task_id: str) -> int:
        """Tool calls made on the current task since this worker took it (by it or its command)."""
        task = self.store.tasks.get(task_id)
        return max(0, task.tool_calls.total - self._tool_calls_at_start) if task is not None else 0

    # -- doing the work -----------------------------------------------------------------------

    def work_on(self, task: Task, token: int) -> None:
        """Run one task to completion, failure, release (when stopped) or loss of lease."""
        self.say(f"#{task.id} started (token {token}): {task.subject}")
        self._tool_calls_at_start = task.tool_calls.total
        try:
            # Renewed before anything runs: a lease left by this name's previous process (or an
            # assignment made a while ago) may be about to run out, and the coordinator would
            # hand the task to someone else while this command runs. Then, holding the current
            # lease, whatever still runs the task (a command that outlived its dead worker) is
            # ended: a task runs once at a time.
            sent = time.monotonic()
            self.reachable(lambda: self.store.renew_lease(task.id, token, actor=self.name, unexpired=True, lease_seconds=self.lease_seconds))
            if time.monotonic() - sent < self.lease_seconds:
                self._held_until[task.id] = sent + self.lease_seconds
            else:  # renewed only after an outage longer than a lease: from when it answered
                self._held_until[task.id] = time.monotonic() + self.lease_seconds / 2
            end_commands_of(self.workspace, task.id)
            if self.budget and task.budget is None:
                task = self.reachable(lambda: self.store.update(task.id, budget=self.budget, token=token, actor=self.name))
            self._last_heartbeat = time.monotonic()
            self.reachable(lambda: self._write_record(task.id))
            outcome = self.perform(task, token)
            if outcome is None:  # stopped: say so first (no more assignments), then give it back
                self._mark_stopped()
                actions.release(self.store, task.id, Who(self.name, token=token), reason=f"worker {self.name} stopped")
                self.say(f"#{task.id} released (worker stopping)")
                return
            ok, error = outcome
            asked = self._asked_a_person(task.id)
            if asked is not None:
                self.say(f"#{task.id} waits for a person's answer ({asked}); it runs again once answered")
                return
            try:
                if ok:
                    self._finish(task.id, Status.COMPLETED, lambda: actions.complete(self.store, task.id, Who(self.name, token=token)))
                else:
                    self._finish(task.id, Status.FAILED, lambda: actions.fail(self.store, task.id, Who(self.name, token=token), error=error))
            except StaleLease:
                # Finished while the board was out of reach, after which the lease was taken
                # back: the refused write is in the task's history; the task runs again.
                self.say(f"#{task.id} {'finished' if ok else 'failed'}, but its lease had been taken back meanwhile: the result is in its history as refused, and the task will run again")
                return
            self.say(f"#{task.id} {'completed' if ok else 'failed: ' + (error or '')}")
        except Fenced as fenced:
            self.say(f"#{task.id} stopped: {fenced}")
            self._give_back_if_held(task.id, token)
        except (LeaseLost, StaleLease) as lost:
            self.say(f"#{task.id} abandoned: {self._why_taken(task.id) or lost}")
        except BoardError as error:
            self.say(f"#{task.id} could not be finished: {error}")
        finally:
            self._held_until.pop(task.id, None)
            try:
                self.reachable(self.store.sync)
                self._tool_calls_finished += self._tool_calls_on(task.id)
                self.reachable(lambda: self._write_record(None))
            except BoardUnavailable:
                pass  # stopping while the board is out of reach: the run's end says the rest

    def _asked_a_person(self, task_id: str) -> str | None:
        """The question, when the command left its task waiting for a person: it is neither
        completed nor failed, and runs again once answered."""
        self.reachable(self.store.sync)
        fresh = self.store.tasks.get(task_id)
        if fresh is None or fresh.status != Status.WAITING:
            return None
        return shortened(printable(fresh.question or "no question given"), 100)

    def _granted_to_me(self, task: Task) -> bool:
        """Whether the task's lease was granted or renewed since this process started. One
        older is a previous holder's of this name, which may still run its command on a machine
        cut off from the board (the database dropped its session, and its name with it): that
        lease is left to run out and be taken back, never run a second time here."""
        lease = task.lease
        assert lease is not None
        renewed_at = lease.expires_at - timedelta(seconds=lease.seconds or self.lease_seconds)
        return renewed_at >= self._started_at - timedelta(seconds=self.settings.lease.clock_skew_seconds)

    def _check_name(self) -> None:
        """After an outage: is the name still this process's? A database drops the sessions of
        a machine cut off long enough, and their locks with them, so another process may have
        taken the name meanwhile. Then this one stops (its command first: ``LeaseLost``) and
        its run starts a worker under a name of its own."""
        lock = self._name_lock
        if self._name_lost is not None or lock is None or not hasattr(lock, "still_held") or lock.still_held():
            return
        lock.release()
        if lock.acquire():
            self.say(f"took the name {self.name} again after the outage")
            return
        self._name_lost = f"agent name {self.name!r} was taken by another process while this one was cut off from the board; this one stops"
        self.stopping = True
        raise LeaseLost(self._name_lost)

    def fence_due(self, task_id: str) -> bool:
        """Whether the lease on ``task_id`` may have run out (no renewal got through in time):
        then its command must be stopped now. The coordinator takes a lease back only
        ``reclaim_margin`` after its expiry, which covers this stop (SIGTERM, SIGKILL after
        ``KILL_GRACE_SECONDS``) and the clocks' disagreement."""
        until = self._held_until.get(task_id)
        return until is not None and time.monotonic() >= until

    def _give_back_if_held(self, task_id: str, token: int) -> None:
        """After a fence: once the board answers, a lease still this worker's is given back at
        once (the task waits for no expiry); one taken back meanwhile is left as it is."""
        try:
            self.reachable(lambda: actions.release(self.store, task_id, Who(self.name, token=token), reason=f"worker {self.name} lost the board and stopped its command"))
            self.say(f"#{task_id} given back to the queue")
        except BoardUnavailable:
            pass  # stopping while the board is away: the lease runs out, the coordinator takes it back
        except BoardError:
            pass  # taken back already (StaleLease): someone else may run it now

    def _why_taken(self, task_id: str) -> str | None:
        """What took the task away, when a policy did (a budget spent, say): the log says so."""
        fresh = self.store.tasks.get(task_id)
        if fresh is not None and fresh.policy is not None and by_policy(fresh):
            return f"{fresh.status} by {fresh.policy.reason}; its command was stopped"
        return None

    def _finish(self, task_id: str, status: Status, write: Callable[[], object]) -> None:
        """The task's last write, waited out through an outage. A write whose commit was sent
        just as the connection broke may have landed although the reply never came: if retrying
        it is refused and the board shows this worker's move made, it was."""
        first = True

        def attempt() -> object:
            nonlocal first
            retry, first = not first, False
            try:
                return write()
            except BoardUnavailable:
                raise
            except BoardError:
                if retry and self._made(task_id, status):
                    return None
                raise

        self.reachable(attempt)

    def _made(self, task_id: str, status: Status) -> bool:
        """Whether the board's last word on the task is this worker moving it to ``status``."""
        self.store.sync()
        task = self.store.tasks.get(task_id)
        if task is None or task.status != status:
            return False
        last = self.store.history(task_id)[-1:]
        return bool(last) and last[0].get("actor") == self.name and str(last[0].get("op", "")).startswith(f"status:{status}")

    def perform(self, task: Task, token: int) -> tuple[bool, str | None] | None:
        """Do the task. Returns (ok, error), or None when the worker was asked to stop."""
        raise TypeError(f"{type(self).__name__} does not say how to perform a task")

    def _checkpoint(self, task_id: str, reason: str, note: str) -> None:
        try:
            write_checkpoint(self.store, task_id, reason=reason, note=note, actor=self.name)
        except (BoardError, OSError) as error:
            self.say(f"#{task_id}: checkpoint not written: {error}")

    def say(self, message: str) -> None:
        stamp = datetime.now().strftime("%H:%M:%S")
        self.log.write(f"{stamp} {self.name}: {message}\n")
        self.log.flush()


class CommandWorker(Worker):
    """Runs ``template`` (argv with ``{id}``, ``{subject}``, ``{description}``, ``{workspace}``,
    ``{worktree}``) for each task, without a shell, and judges the task by the exit status.

    With ``worktree_base``, each task's command runs in the task's own git worktree, made from
    that branch (``board.worktrees``): what it changed is measured onto the task as it works,
    and what it left uncommitted when it succeeds is committed on the task's branch.
    """

    kind = "command"

    def __init__(self, workspace: Path | str, name: str, template: Sequence[str], *, timeout: float | None = None, worktree_base: str | None = None, **kwargs: Any) -> None:
        super().__init__(workspace, name, **kwargs)
        if not template:
            raise BoardError("a command worker needs a command: put it after '--', e.g. board run -- python agent.py {id}")
        self.template = list(template)
        self.timeout = timeout
        self.worktree_base = worktree_base
        #: The task whose worktree the running command works in.
        self._in_worktree: str | None = None

    def environment(self, task: Task, token: int) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            BOARD_TASK_ID=task.id,
            BOARD_WORKSPACE=str(self.workspace),
            BOARD_AGENT=self.name,
            BOARD_LEASE_TOKEN=str(token),
        )
        return env

    def perform(self, task: Task, token: int) -> tuple[bool, str | None] | None:
        path = log_path(self.store.local_dir, task.id)
        confine.make_folders(path.parent)
        with os.fdopen(open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab") as log:
            folder, env = self.workspace, self.environment(task, token)
            if self.worktree_base is not None:
                try:
                    folder = self._worktree_for(task)
                except BoardError as error:
                    log.write(f"--- no worktree for #{task.id}: {error}\n".encode())
                    return False, f"no worktree: {error}"
                env["BOARD_WORKTREE"] = str(folder)
            argv = substitute(self.template, task, self.workspace, folder)
            log.write(f"--- {utcnow().isoformat()} {self.name} runs #{task.id} (token {token}) in {folder}: {argv!r}\n".encode())
            log.flush()
            try:
                process = subprocess.Popen(
                    argv,
                    cwd=folder,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    preexec_fn=die_with_parent(os.getpid()),
                )
            except OSError as error:
                log.write(f"--- could not start: {error}\n".encode())
                return False, f"could not start {argv[0]!r}: {error.strerror or error}"
            try:
                outcome = self._supervise(process, task, token, log)
            finally:
                kill_process_group(process)
            if self._in_worktree is not None:
                self._settle_worktree(task, outcome, log)
            return outcome

    def _worktree_for(self, task: Task) -> Path:
        """The task's worktree (made now, or left by its last attempt), and its record on the task."""
        from board.worktrees import git_work, on_board

        fresh = self.reachable(lambda: self.store.get(task.id))
        record = self.reachable(lambda: on_board.open_for(self.store, fresh, self.worktree_base or None, actor=self.name, say=self.say))
        self._in_worktree = task.id
        return git_work.task_folder(self.workspace, record)

    def _settle_worktree(self, task: Task, outcome: tuple[bool, str | None] | None, log: IO[bytes]) -> None:
        """A command that succeeded has what it left uncommitted committed on the task's branch
        (the branch is what gets merged); either way, what it changed goes on the task."""
        from board.worktrees import git_work, on_board

        self._in_worktree = None
        try:
            record = on_board.own_record(self.store, self.reachable(lambda: self.store.get(task.id)))
            if record is None:
                return
            if outcome is not None and outcome[0] and git_work.commit_leftovers(self.workspace, record, f"#{task.id} {task.subject}\n\nLeft uncommitted by its command; committed by board's worker {self.name}."):
                log.write(f"--- committed what #{task.id}'s command left uncommitted on {record.branch}\n".encode())
            self.reachable(lambda: on_board.note_changes(self.store, task.id, actor=self.name))
        except BoardError as error:
            log.write(f"--- #{task.id}'s worktree: {error}\n".encode())

    def beat(self, current: tuple[str, int] | None) -> None:
        due = time.monotonic() - self._last_heartbeat >= self.heartbeat_every
        super().beat(current)
        if due and current is not None and current[0] == self._in_worktree:
            from board.worktrees import on_board

            try:
                on_board.note_changes(self.store, current[0], actor=self.name)
            except BoardError:
                pass  # measured again at the next beat, and when the command ends

    def _supervise(self, process: subprocess.Popen[bytes], task: Task, token: int, log: IO[bytes]) -> tuple[bool, str | None] | None:
        """Copy output to the log, keep the lease, enforce the timeout, read the exit status."""
        fence = self._watch_lease(process, task.id)
        try:
            return self._copy_and_keep(process, task, token, log, fence)
        finally:
            fence.done = True

    def _watch_lease(self, process: subprocess.Popen[bytes], task_id: str) -> _Fence:
        """Stop the command the moment its lease may have run out, from a thread of its own:
        a renewal on a link that drops packets blocks for as long as the connection's timeouts
        (seconds past a short lease), and the command must not outlive the lease meanwhile."""
        fence = _Fence()

        def watch() -> None:
            while not fence.done and process.poll() is None:
                if self.fence_due(task_id):
                    fence.set()  # first: the command's exit, seen at once, is then known for a stop
                    kill_process_group(process)
                    return
                time.sleep(0.05)

        threading.Thread(target=watch, name=f"lease watch #{task_id}", daemon=True).start()
        return fence

    def _copy_and_keep(self, process: subprocess.Popen[bytes], task: Task, token: int, log: IO[bytes], fence: _Fence) -> tuple[bool, str | None] | None:
        started = time.monotonic()
        stderr_tail = b""
        selector = selectors.DefaultSelector()
        assert process.stdout is not None and process.stderr is not None
        selector.register(process.stdout, selectors.EVENT_READ, "out")
        selector.register(process.stderr, selectors.EVENT_READ, "err")
        open_streams = 2
        timed_out = False
        exited_at: float | None = None
        while True:
            if process.poll() is not None:
                exited_at = exited_at or time.monotonic()
                # A background child may hold the pipes open forever; stop reading soon after exit.
                if not open_streams or time.monotonic() - exited_at > OUTPUT_DRAIN_SECONDS:
                    break
            if self.stopping and exited_at is None:
                # A command that is exiting (its output closed a moment before its exit status
                # can be read) is judged by that status: its work is done, and handing the task
                # back would run it again.
                try:
                    process.wait(timeout=FINISHING_SECONDS)
                    continue
                except subprocess.TimeoutExpired:
                    pass
                kill_process_group(process)
                if process.returncode == 0:
                    # It finished its work before the stop reached it (or chose to finish it
                    # first, ignoring SIGTERM): the task is done, not to be run again.
                    break
                log.write(b"--- stopped: the worker was asked to stop\n")
                return None
            if self.timeout is not None and time.monotonic() - started > self.timeout:
                timed_out = True
                kill_process_group(process)
                break
            try:
                self.beat((task.id, token))
            except LeaseLost:
                status = process.poll()
                if status is not None and status >= 0 and not fence.is_set():
                    # It had ended on its own (not killed: by the lease watch, or by whoever took
                    # the task back) by the time the loss was seen, perhaps while a renewal waited
                    # out an outage: its result is still reported, to be refused and kept in the
                    # task's history, not dropped unsaid.
                    break
                kill_process_group(process)
                log.write(b"--- stopped: the lease was taken back\n")
                raise
            if fence.is_set():
                break
            if not open_streams:
                time.sleep(0.05)
                continue
            for key, _ in selector.select(timeout=0.1):
                chunk = os.read(key.fileobj.fileno(), 65536)  # type: ignore[union-attr]
                if not chunk:
                    selector.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                log.write(chunk)
                log.flush()
                if key.data == "err":
                    stderr_tail = (stderr_tail + chunk)[-STDERR_TAIL_BYTES:]
        selector.close()
        status = process.wait()
        elapsed = time.monotonic() - started
        if fence.is_set():  # killed by the lease watch: not the command's failure
            reason = f"the lease could not be renewed for {self.lease_seconds:g} s (the board is out of reach or too slow); its command was stopped before the lease could be taken back, so the task cannot run in two places"
            log.write(f"--- stopped: {reason}\n".encode())
            raise Fenced(reason)
        if timed_out:
            log.write(f"--- timed out after {self.timeout:g} s; the command was killed\n".encode())
            return False, f"timed out after {self.timeout:g} s (the command was killed)"
        log.write(f"--- exit status {status} after {elapsed:.1f} s\n".encode())
        if status == 0:
            return True, None
        if status < 0:
            return False, f"killed by {signal.Signals(-status).name}"
        lines = [line.strip() for line in stderr_tail.decode("utf-8", "replace").splitlines() if line.strip()]
        reason = lines[-1][:500] if lines else ""
        return False, reason or f"exited with status {status}"


class _Fence(threading.Event):
    """Set when the lease watch stopped the command; ``done`` ends the watch."""

    done = False
