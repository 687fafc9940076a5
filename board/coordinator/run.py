"""The supervisor behind ``board run`` and ``board demo``: a coordinator plus N worker processes.

Every child runs in its own session (so a Ctrl-C in the terminal reaches only the supervisor,
which then stops the children in order) and is told by the kernel to exit if the supervisor
dies. On the way out every child is stopped through its ``Popen``: SIGTERM, a grace period,
then SIGKILL to its whole process group. No process id read from the board (an agent record
names another run's worker as readily as this run's) is ever signalled: a worker ends its own
command, a command whose worker was killed dies with it, and what that command started is ended
before its task runs again. A worker that dies is replaced under a new name, and the
replacement is announced; a task the dead worker held comes back when its lease expires.

Several runs may share a board: each runs its own workers under names no other live process
holds, so each does its share of the tasks and all of them end when the board is done.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import board
from board import actions
from board.actions import Who
from board.agent_record import AgentRecord
from board.agents import read_agent
from board.config import LeaseSettings, load_settings
from board.coordinator.presence import coordinator_running_on
from board.coordinator.processes import KILL_GRACE_SECONDS, ctrl_c_held, die_with_parent, end_commands_of, kill_process_group
from board.errors import AgentNameInUse, BoardError, BoardUnavailable, CoordinatorRunning
from board.graph import TaskGraph, is_hidden, sorted_ids
from board.model import utcnow
from board.status import FINISHED, Status
from board.text import printable, shortened
from board.store import Store

#: Statuses that count as "done" for the exit status: nothing left to do.
DONE = frozenset({Status.COMPLETED, Status.CANCELLED})
#: Deaths allowed per worker slot (or for the coordinator) within ``RESTART_WINDOW_SECONDS``
#: before the run gives up on it; older deaths no longer count, so a long run that loses a
#: worker now and then keeps its slots.
MAX_RESTARTS_PER_SLOT = 5
RESTART_WINDOW_SECONDS = 300.0
#: A worker name last heard of on another machine this many leases ago is not given to a new
#: worker though its lock is free: that machine may be cut off with the worker still running.
NAME_REUSE_LEASES = 20
#: While a run waits for a person's answers, it says so again this often.
ANSWER_REMINDER_SECONDS = 300.0


@dataclass(frozen=True)
class Progress:
    """Where a board stands, for the supervisor's loop and its final word."""

    counts: dict[str, int]
    ready: int
    total: int
    #: Tasks that are not done, with why (for the final summary).
    unfinished: dict[str, str] = field(default_factory=dict)

    @property
    def running(self) -> int:
        return self.counts.get(Status.IN_PROGRESS, 0)

    @property
    def settled(self) -> bool:
        """Nothing running and nothing ready: workers cannot move the board any further."""
        return self.running == 0 and self.ready == 0

    @property
    def all_done(self) -> bool:
        return not self.unfinished

    @property
    def waiting_for_people(self) -> list[str]:
        """The tasks that wait for a person's answer: once answered, they run again."""
        return [task_id for task_id, why in self.unfinished.items() if why.startswith(str(Status.WAITING))]

    def line(self) -> str:
        done = self.counts.get(Status.COMPLETED, 0)
        parts = [f"{done}/{self.total} completed", f"{self.running} running", f"{self.ready} ready"]
        for status in (Status.FAILED, Status.BLOCKED, Status.WAITING, Status.PAUSED):
            if self.counts.get(status):
                parts.append(f"{self.counts[status]} {status}")
        return ", ".join(parts)


def board_progress(graph: TaskGraph) -> Progress:
    """A pure summary of a task graph."""
    shown = {task_id: task for task_id, task in graph.tasks.items() if not is_hidden(task)}
    counts = Counter(str(t.status) for t in shown.values())
    unfinished: dict[str, str] = {}
    for task_id in sorted_ids(shown):
        task = shown[task_id]
        if task.status in DONE:
            continue
        if task.status == Status.PENDING:
            why = graph.why_not_ready(task).removeprefix("it ") or "ready"
            cancelled = [b for b in graph.open_blockers(task) if b in graph.tasks and graph.tasks[b].status == Status.CANCELLED]
            if cancelled:
                why += f": it can never start; drop the dependency (board task update {task_id} --remove-blocked-by {' '.join(cancelled)}) or reopen " + ", ".join(f"#{b}" for b in cancelled)
        elif task.status in FINISHED or task.status in (Status.BLOCKED,):
            why = f"{task.status}" + (f": {task.error}" if task.error else "")
        elif task.status == Status.WAITING:
            why = f"{task.status} for a person to answer: {shortened(printable(task.question or '(no question given)'), 100)}"
        else:
            why = f"{task.status}" + (f" by {task.owner}" if task.owner else "")
        unfinished[task_id] = why
    return Progress(dict(counts), len(graph.ready_ids()), len(shown), unfinished)


@dataclass
class Child:
    role: str
    name: str
    argv: list[str]
    process: subprocess.Popen[bytes]
    slot: int = -1
    restarts: int = 0


class Supervisor:
    """Starts and stops the coordinator and the workers of one run."""

    def __init__(
        self,
        workspace: Path | str,
        *,
        workers: int,
        worker_args: Sequence[str],
        name_prefix: str = "worker",
        log: IO[str] | None = None,
        child_output: IO[bytes] | int | None = None,
        with_coordinator: bool = True,
        restart_dead_workers: bool = True,
    ) -> None:
        self.workspace = Path(workspace).resolve()
        self.store = Store.open(self.workspace, actor="board-run")
        self.worker_count = workers
        self.worker_args = list(worker_args)
        self.name_prefix = name_prefix
        self.log = log or sys.stderr
        self.child_output = child_output
        self.with_coordinator = with_coordinator
        self.restart_dead_workers = restart_dead_workers
        #: The board's lease length, read by ``start`` (names of quiet workers are held for a while in it).
        self.lease_seconds = LeaseSettings().seconds
        self.children: list[Child] = []
        #: Every name this run gave a worker, live or dead (but not one another process took first).
        self.worker_names: set[str] = set()
        #: When each worker slot (and the coordinator) died, for the restart budget.
        self._deaths: dict[object, list[float]] = {}
        self.stopped = False

    # -- starting -----------------------------------------------------------------------------

    def _spawn(self, role: str, name: str, args: list[str], slot: int = -1, restarts: int = 0) -> Child:
        argv = [sys.executable, "-m", "board", *args]
        env = dict(os.environ)
        source_root = str(Path(board.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = source_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        with ctrl_c_held():  # a Ctrl-C comes once the child is in ``children``, where ``stop`` finds it
            process = subprocess.Popen(
                argv,
                cwd=self.workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=self.child_output,
                stderr=self.child_output,
                start_new_session=True,
                # SIGTERM, not SIGKILL: an orphaned worker still hands back its task and ends its command.
                preexec_fn=die_with_parent(os.getpid(), signal.SIGTERM),
            )
            child = Child(role, name, argv, process, slot, restarts)
            self.children.append(child)
            if role == "worker":
                self.worker_names.add(name)
        return child

    def start(self) -> None:
        """Validate the board's settings, then start the coordinator (unless one already runs on
        this board: it is used) and the workers."""
        # A broken board.toml is one clear error, before any child starts.
        self.lease_seconds = load_settings(self.store.local_dir).lease.seconds
        if self.with_coordinator:
            if coordinator_running_on(self.store):
                self.say("a coordinator is already running on this board; using it")
            else:
                self._spawn("coordinator", "coordinator", ["coordinator", "-w", str(self.workspace)])
        taken = [slot for slot in range(1, self.worker_count + 1) if not self._free(f"{self.name_prefix}-{slot}")]
        slots = self._free_slots(self.worker_count)
        if taken:
            names = ", ".join(f"{self.name_prefix}-{n}" for n in slots)
            self.say(f"another run's workers are on this board; this run adds its own: {names}")
        for slot in slots:
            self._start_worker(slot, 0)

    def _free(self, name: str) -> bool:
        """A name no worker of this run had and no live process holds on this board."""
        if name in self.worker_names or self.store.agent_records.name_in_use(name):
            return False
        record = read_agent(self.store.agent_records, name)
        return record is None or not self._may_still_run(record)

    def _may_still_run(self, record: AgentRecord) -> bool:
        """Whether the process a record names may still be alive though its name's lock is free:
        a machine cut off from the database long enough has its sessions dropped, locks and all,
        while its workers run on; back, a worker gives up a name it finds taken, but until then
        two processes would share it. So a name is reused only once its process said it stopped,
        is gone from this machine, or was last heard of long ago (``NAME_REUSE_LEASES`` leases)."""
        if record.stopped or not record.pid:
            return False
        if record.host == socket.gethostname():
            try:
                os.kill(record.pid, 0)
            except ProcessLookupError:
                return False
            except PermissionError:
                return True
            return True
        quiet = utcnow() - record.heartbeat_at
        return quiet.total_seconds() < NAME_REUSE_LEASES * self.lease_seconds

    def _worker_name(self, slot: int, restarts: int) -> tuple[str, int]:
        """``worker-3``, its replacements ``worker-3r1``, ``worker-3r2``...: always a name
        nobody holds. Two runs on one board get distinct slots, so each runs its own workers
        and no task runs twice (a worker holds its name for as long as it lives)."""
        base = f"{self.name_prefix}-{slot}"
        for attempt in range(restarts, restarts + 1000):
            name = base if attempt == 0 else f"{base}r{attempt}"
            if self._free(name):
                return name, attempt
        raise BoardError(f"no free worker name for slot {slot} on this board")

    def _free_slots(self, count: int) -> list[int]:
        """The first ``count`` slot numbers whose first name nobody holds (a second run on
        the same board takes the numbers after the first run's)."""
        slots: list[int] = []
        slot = 0
        while len(slots) < count:
            slot += 1
            if slot > 1000:
                raise BoardError("cannot tell which worker names are free on this board (is it out of reach?)")
            if self._free(f"{self.name_prefix}-{slot}"):
                slots.append(slot)
        return slots

    def _start_worker(self, slot: int, restarts: int) -> Child:
        name, restarts = self._worker_name(slot, restarts)
        return self._spawn("worker", name, ["worker", "--name", name, "-w", str(self.workspace), *self.worker_args], slot, restarts)

    def _gives_up(self, key: object, now: float) -> bool:
        """Count a death of slot ``key``; True when too many came too close together."""
        deaths = [t for t in self._deaths.get(key, []) if now - t < RESTART_WINDOW_SECONDS] + [now]
        self._deaths[key] = deaths
        return len(deaths) > MAX_RESTARTS_PER_SLOT

    # -- watching -----------------------------------------------------------------------------

    def check_children(self) -> list[str]:
        """Notice children that died; replace dead workers (loudly). Returns problems that end the run."""
        fatal = []
        for child in list(self.children):
            code = child.process.poll()
            if code is None:
                continue
            self.children.remove(child)
            how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
            if child.role == "worker" and code == AgentNameInUse.exit_code and self.restart_dead_workers:
                # Another process (a run started at the same moment) took this name between our
                # check and the worker's start: not a death. The name, and whatever is leased
                # to it, is that process's; this run carries on in a slot of its own.
                self.worker_names.discard(child.name)
                replacement = self._start_worker(self._free_slots(1)[0], 0)
                self.say(f"another process on this board took the name {child.name} first; this run's worker is {replacement.name} instead")
                continue
            now = time.monotonic()
            if child.role == "coordinator" and code == CoordinatorRunning.exit_code:
                # Another run's coordinator took the board's lock first (two runs restarting
                # theirs at once): not a death. If that one is gone too, one is started below.
                self.say(f"the coordinator (pid {child.process.pid}) found another coordinator on this board; using that one")
                continue
            if child.role == "coordinator":
                running = coordinator_running_on(self.store)
                if running:
                    self.say(f"the coordinator (pid {child.process.pid}) {how}; another coordinator runs this board now")
                elif running is None:
                    # The database is out of reach: whether another machine's coordinator runs
                    # cannot be told, and a new one could not start either. One is started
                    # below once the database answers and none runs; this is not a death.
                    self.say(f"the coordinator (pid {child.process.pid}) {how} while the board is out of reach; waiting for it")
                elif self._gives_up("coordinator", now):
                    fatal.append(f"the coordinator died {MAX_RESTARTS_PER_SLOT + 1} times in {RESTART_WINDOW_SECONDS:g} s (see .tasks/logs/run.log); giving up")
                else:
                    self.say(f"the coordinator (pid {child.process.pid}) {how}; restarting it")
                    self._spawn("coordinator", "coordinator", child.argv[3:], restarts=child.restarts + 1)
                continue
            if not self.restart_dead_workers:
                self.say(f"worker {child.name} (pid {child.process.pid}) {how}")
                continue
            if self._gives_up(child.slot, now):
                fatal.append(f"worker slot {child.slot} died {MAX_RESTARTS_PER_SLOT + 1} times in {RESTART_WINDOW_SECONDS:g} s; giving up on it")
                continue
            replacement = self._start_worker(child.slot, child.restarts + 1)
            self.say(f"worker {child.name} (pid {child.process.pid}) {how}; its task comes back when its lease expires; started {replacement.name} in its place")
        if self.with_coordinator and not any(c.role == "coordinator" for c in self.children) and coordinator_running_on(self.store) is False:
            # The coordinator this run used belonged to another run, which has ended: without
            # one, leases of dead workers would never be taken back. (Unknown, while the
            # database is out of reach, is not "none": nothing is started on a guess.)
            self.say("no coordinator is running on this board any more; starting one")
            self._spawn("coordinator", "coordinator", ["coordinator", "-w", str(self.workspace)])
        if not any(c.role == "worker" for c in self.children) and self.worker_count:
            fatal.append("no worker is left running")
        return fatal

    def progress(self) -> Progress:
        self.store.sync()
        return board_progress(self.store.graph)

    def wait_until_settled(
        self,
        *,
        poll_seconds: float = 0.25,
        report_every: float = 5.0,
        quiet: bool = False,
        events: bool = False,
        answers_until: float | None = None,
    ) -> Progress:
        """Block until nothing is running or ready (or a fatal problem); print progress as it goes,
        and with ``events`` one line per start, completion, failure and reclaim. A board left
        with tasks that wait for a person is not settled until ``answers_until`` (a monotonic
        time; ``math.inf``: for as long as it takes, None: not at all): an answered task runs
        again."""
        last_line = ""
        last_report = 0.0
        reminded_at: float | None = None
        asked: list[str] = []
        history_mark = self.store.history_mark()
        away: str | None = None  # why the board is out of reach (its database server), while it is
        while True:
            problems = self.check_children()
            try:
                progress = self.progress()
                if events:
                    records, history_mark = self.store.history_since(history_mark)
                    for record in records:
                        line = describe_event(record, self.store.graph)
                        if line:
                            self.say(line)
            except BoardUnavailable as error:
                # The coordinator and the workers wait it out too; so does the run.
                if away is None:
                    self.say(f"waiting for the board: {error}")
                away = str(error)
                if problems:
                    for problem in problems:
                        self.say(problem)
                    return board_progress(self.store.graph)
                time.sleep(max(poll_seconds, 1.0))
                continue
            if away is not None:
                away = None
                self.say("the board is back")
            line = progress.line()
            now = time.monotonic()
            if not quiet and line != last_line and (now - last_report >= report_every or progress.settled):
                self.say(line)
                last_line, last_report = line, now
            if progress.settled:
                waiting = progress.waiting_for_people
                if not waiting or answers_until is None or now >= answers_until:
                    return progress
                if waiting != asked or reminded_at is None or now - reminded_at >= ANSWER_REMINDER_SECONDS:
                    self.say(waiting_line(waiting, progress))
                    asked, reminded_at = waiting, now
            else:
                asked, reminded_at = [], None
            if problems:
                for problem in problems:
                    self.say(problem)
                return progress
            time.sleep(poll_seconds)

    # -- stopping -----------------------------------------------------------------------------

    def stop(self, grace: float = KILL_GRACE_SECONDS + 3.0) -> None:
        """Stop every child by pid: the coordinator first (so it assigns nothing more), then the
        workers (they hand back their tasks); then release whatever a worker could not."""
        if self.stopped:
            return
        self.stopped = True
        workers = [c for c in self.children if c.role == "worker"]
        others = [c for c in self.children if c.role != "worker"]
        for group in (others, workers):
            for child in group:
                _signal(child.process, signal.SIGTERM)
            deadline = time.monotonic() + grace
            for child in group:
                left = max(0.0, deadline - time.monotonic())
                try:
                    child.process.wait(timeout=left)
                except subprocess.TimeoutExpired:
                    self.say(f"{child.name} (pid {child.process.pid}) did not stop in {grace:g} s; killing it")
                # The child led its own process group: end anything it left behind.
                kill_process_group(child.process, grace=0.5)
        self.children.clear()
        try:
            self._release_tasks_of_stopped_workers()
        except BoardUnavailable as error:
            self.say(f"the stopped workers' tasks go back to the pool when their leases run out: {error}")

    def _release_tasks_of_stopped_workers(self) -> None:
        """Tasks still leased to workers of this run (killed before they could hand them back)
        go back to pending now, rather than when their leases expire: those workers are gone.

        Each name is held by the run meanwhile: once its worker is gone, another run may
        take the name, and then the name's tasks and commands are that run's to keep."""
        self.store.sync()
        leases: dict[str, list[tuple[str, int]]] = {}  # worker name -> (task, token)
        for task in self.store.tasks.values():
            if task.status == Status.IN_PROGRESS and task.lease is not None and task.lease.owner in self.worker_names:
                leases.setdefault(task.lease.owner, []).append((task.id, task.lease.token))
        for name, held in leases.items():
            name_held = self.store.agent_records.name_lock(name)
            if not name_held.acquire():
                continue  # a live process holds the name now: its tasks are its own
            try:
                for task_id, token in held:
                    try:
                        actions.release(self.store, task_id, Who("board-run", token=token), reason=f"worker {name} was stopped with the run")
                    except BoardError:
                        continue  # it changed meanwhile: someone else owns it now
                    end_commands_of(self.workspace, task_id, up_to_token=token)
            finally:
                name_held.release()

    def pids(self) -> list[int]:
        return [c.process.pid for c in self.children]

    def say(self, message: str) -> None:
        stamp = datetime.now().strftime("%H:%M:%S")
        self.log.write(f"{stamp} board: {message}\n")
        self.log.flush()


def _signal(process: subprocess.Popen[bytes], signum: int) -> None:
    if process.poll() is None:
        try:
            process.send_signal(signum)
        except ProcessLookupError:
            pass


def describe_event(record: dict[str, Any], graph: TaskGraph) -> str | None:
    """One line for a person watching a run, for the history records worth watching."""
    task_id, op, actor = str(record.get("task")), str(record.get("op", "")), record.get("actor", "?")
    task = graph.tasks.get(task_id)
    subject = f" ({task.subject})" if task is not None else ""
    changes = record.get("changes") or {}
    if op == "claim":
        lease = (changes.get("lease") or [None, None])[1] or {}
        holder = lease.get("owner", actor)
        how = "assigned to" if actor == "coordinator" else "claimed by"
        return f"#{task_id} {how} {holder}{subject}"
    if op.startswith("status:completed"):
        return f"#{task_id} completed by {actor}" + (f" [{op.split(' ', 1)[1].strip('()')}]" if " " in op else "")
    if op.startswith("status:failed"):
        error = (changes.get("error") or [None, None])[1]
        return f"#{task_id} failed ({actor}): {error}"
    if op.startswith("status:blocked"):
        return f"#{task_id} blocked" + (f": {op.split(' ', 1)[1].strip('()')}" if " " in op else f" by {actor}")
    if op == "reclaim":
        return f"#{task_id} reclaimed: {record.get('reason', 'lease expired')}"
    if op.startswith("release"):
        return f"#{task_id} back to pending: {op.removeprefix('release').strip(' ()') or 'released'}"
    return None


def waiting_line(waiting: list[str], progress: Progress) -> str:
    """What a run says while only a person's answers can move the board on."""
    first = waiting[0]
    tasks = ", ".join(f"#{task_id}" for task_id in waiting[:5]) + (f" and {len(waiting) - 5} more" if len(waiting) > 5 else "")
    return f"waiting for a person to answer {tasks} (board answer {first} TEXT; Ctrl-C stops the run); {progress.line()}"


def final_summary(progress: Progress, limit: int = 20) -> list[str]:
    """Lines saying how the run ended and, when not everything completed, what is left and why."""
    if progress.all_done:
        if not progress.total:
            return ["done: the board has no tasks"]
        cancelled = progress.counts.get(Status.CANCELLED, 0)
        if cancelled:
            return [f"done: all {progress.total} tasks completed or cancelled ({cancelled} cancelled)"]
        return [f"done: all {progress.total} tasks completed"]
    lines = [f"not done: {len(progress.unfinished)} of {progress.total} tasks did not complete"]
    for task_id, why in list(progress.unfinished.items())[:limit]:
        lines.append(f"  #{task_id}: {why}")
    if len(progress.unfinished) > limit:
        lines.append(f"  ... and {len(progress.unfinished) - limit} more (board task list)")
    return lines
