"""The partition scenarios' harness (``test_partitions_cut.py``, ``test_partitions_links.py``, two
files so that the suite's two workers run them side by side): one board on two machines, and the network between them and the server failing in the ways a
network fails: a link that drops everything for longer than a lease, a route that is gone so
connections fail at once, a link so slow a lease cannot be renewed in time, a link that flaps,
a second ``board run`` started while a machine is cut off, and the coordinator on either side.

Each machine runs ``board run --workers 2 -- python3 job.py {id} {description}``; each job
writes its own start and end (``tests/execution_log.py``), which is what the tests believe
about who ran what when, not the board. Machine 1 is the one cut off, always while its two
workers run a task each. After the disturbance every scenario checks the same things:

- no task's command ran on two processes at the same time (a cut-off worker stops its command
  before its lease can be taken back);
- every task was completed exactly once, and none was lost;
- a job that finished its work had its result kept (completed, or recorded late in history);
- machine 1's run rode the outage out: it was still running at the heal, came back to the
  board, took new work and ended with the board;
- no two live worker processes ever had the same agent name.

The board has a task owned by a person (the "keeper") that the test completes last: runs end
when nothing is left to do, and it keeps them running until the test has handed out the work
that shows machine 1 is back.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from board import actions
from board.coordinator.workers import MAX_OUTAGE_RETRY_SECONDS
from board.actions import Who
from board.agents import list_agents
from board.coordinator.presence import COORDINATOR_LOCK
from board.status import Status
from board.store import Store
from board.store.postgres.connect import connect
from board.store.postgres.locks import held_elsewhere
from board.store.postgres.migrations import migrate
from tests.execution_log import Execution, ExitWatch, overlaps, write_job
from tests.netns import Machine
from tests.pg_cluster import PgCluster
from tests.postgres.machines_server import machine_env, machine_url, machines_with_a_server, why_no_machines

pytestmark = pytest.mark.skipif(why_no_machines is not None, reason=f"several machines on one: {why_no_machines}")

LEASE_SECONDS = 3
#: The first tasks' jobs outlast a lease and its reclaim, so a command left running by a
#: cut-off worker is still running when its task starts again elsewhere.
FIRST_JOB_SECONDS = 5
FIRST_TASKS = 4  # two per machine
#: The jobs added after a heal outlast a worker's longest wait between tries to reach the board
#: (``MAX_OUTAGE_RETRY_SECONDS``): while the other machine's workers hold one each, the machine
#: that came back is sure to find the rest, however long its workers' last wait had grown.
LAST_JOB_SECONDS = MAX_OUTAGE_RETRY_SECONDS + 2
WORKERS_PER_RUN = 2
#: Long enough for the server to notice a dead client (board's keepalives: about 15 s) and for a
#: coordinator to take over; short enough for CI.
TIMEOUT = 60
#: How long after a heal a cut-off machine's workers may take to be back on the board (a worker
#: waiting for the board retries at most every 5 s).
REJOIN_SECONDS = 20
KEEPER = "tester"


def wait_for(condition: Callable[[], object], what: str, timeout: float = TIMEOUT) -> bool:
    """Poll ``condition`` until it holds (True) or ``timeout`` passes (False)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


# -- processes ---------------------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc (all machines share this pid namespace)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    return children


def _descendants(pid: int, children: dict[int, list[int]]) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return [part.decode(errors="replace") for part in handle.read().split(b"\0") if part]
    except OSError:
        return []


def _worker_name(argv: list[str]) -> str | None:
    """The agent name of a ``board worker --name NAME`` process (None for anything else)."""
    if "worker" not in argv[:5] or "--name" not in argv:
        return None
    at = argv.index("--name")
    return argv[at + 1] if at + 1 < len(argv) else None


@dataclass
class Run:
    """One ``board run`` on one machine."""

    label: str
    machine: Machine
    workspace: Path
    process: subprocess.Popen
    output: Path
    started: float
    exited_at: float | None = None

    def alive(self) -> bool:
        if self.process.poll() is None:
            return True
        self.exited_at = self.exited_at or time.time()
        return False

    def workers(self, children: dict[int, list[int]] | None = None) -> dict[int, str]:
        """pid -> agent name of this run's live workers."""
        children = children if children is not None else _children()
        found = {}
        for pid in children.get(self.process.pid, []):
            name = _worker_name(_cmdline(pid))
            if name is not None:
                found[pid] = name
        return found

    def said(self, lines: int = 25) -> str:
        parts = []
        for path in (self.output, self.workspace / ".tasks" / "logs" / "run.log"):
            with contextlib.suppress(OSError):
                parts.append(f"--- {path.name} of {self.label}:\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(parts)

    def stop(self) -> None:
        """SIGTERM the run (it stops its workers and their commands), then SIGKILL whatever of its
        tree is left, each process named by a pidfd taken while it was still ours."""
        tree = []
        for pid in _descendants(self.process.pid, _children()):
            with contextlib.suppress(OSError):
                tree.append(os.pidfd_open(pid))
        try:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(self.process.pid, signal.SIGKILL)
                    self.process.wait()
            for pidfd in tree:
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        finally:
            for pidfd in tree:
                os.close(pidfd)


@dataclass
class NameWatch:
    """Samples the live workers of every run: two processes with one agent name is a fault."""

    runs: list[Run]
    clashes: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._thread = threading.Thread(target=self._watch, name="name-watch", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            children = _children()
            holders: dict[str, list[str]] = {}
            for run in list(self.runs):
                run.alive()
                for pid, name in run.workers(children).items():
                    holders.setdefault(name, []).append(f"pid {pid} of {run.label}")
            for name, who in holders.items():
                if len(who) > 1 and len(self.clashes) < 20:
                    self.clashes.append(f"{time.time():.1f}: agent name {name} held by {', '.join(who)}")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


# -- the board on two machines -------------------------------------------------------------------

_databases = itertools.count(1)


@pytest.fixture(scope="module")
def machines_and_server() -> Iterator[tuple[list[Machine], PgCluster]]:
    """Two machines and one server for the module; each test has a database of its own."""
    with machines_with_a_server(2) as pair:
        yield pair


class SharedBoard:
    """One board in a fresh database, the job, the runs started on it, and what they did."""

    def __init__(self, machines: list[Machine], cluster: PgCluster, tmp_path: Path) -> None:
        self.machines = machines
        self.cluster = cluster
        self.tmp_path = tmp_path
        self.database = f"partitions_{os.getpid()}_{next(_databases)}"
        self.url = cluster.create_database(self.database)
        with connect(self.url, autocommit=True) as conn:
            migrate(conn)
        self.store = Store.open(tmp_path / "here", db=self.url, actor=KEEPER)
        self.job = write_job(tmp_path, tmp_path / "executions.log")
        self.watch = ExitWatch(tmp_path / "executions.log").start()
        self.runs: list[Run] = []
        self.names = NameWatch(self.runs)
        self.problems: list[str] = []
        self.keeper = ""
        #: What the test did when (time.time(), as the jobs' lines), for a failure's report.
        self.timeline: list[str] = []

    def mark(self, what: str) -> float:
        now = time.time()
        self.timeline.append(f"{now:.2f} {what}")
        return now

    def close(self) -> None:
        for machine in self.machines:
            machine.heal()
        try:
            for run in self.runs:
                run.stop()
        finally:
            self.names.close()
            self.watch.close()
            self.store.close()
            self.cluster.drop_database(self.database)

    # -- setting up -----------------------------------------------------------------------------

    def add_tasks(self, count: int, seconds: float, label: str) -> list[str]:
        return [self.store.create(f"{label} {n}", description=f"{seconds:g}").id for n in range(count)]

    def keep_runs_going(self) -> None:
        """A task a person holds (no lease: nobody takes it back): until it is completed the
        board is not done, so no run ends for lack of work."""
        self.keeper = self.store.create("kept open by the test until every machine is back").id
        self.store.start(self.keeper, KEEPER)

    def let_runs_end(self) -> None:
        actions.complete(self.store, self.keeper, Who(KEEPER))

    def start_run(self, machine: Machine, label: str, *, port: int | None = None) -> Run:
        """``board run`` on ``machine`` in a workspace of its own, reaching the server over its
        link (at ``port`` on this host: the server's, or a proxy's)."""
        workspace = self.tmp_path / label.replace(" ", "-")
        (workspace / ".tasks").mkdir(parents=True)
        url = machine_url(machine, port or self.cluster.port, self.database)
        (workspace / ".tasks" / "board.toml").write_text(
            f'[store]\nurl = "{url}"\n[lease]\nseconds = {LEASE_SECONDS}\n[coordinator]\ntick_seconds = 0.2\n'
        )
        output = self.tmp_path / f"{label.replace(' ', '-')}.out"
        argv = [sys.executable, "-m", "board", "run", "--workers", str(WORKERS_PER_RUN), "--events", "--",
                sys.executable, str(self.job), "{id}", "{description}"]
        process = machine.popen(
            argv, cwd=workspace, env=machine_env() | {"TEST_MACHINE": machine.name},
            stdin=subprocess.DEVNULL, stdout=open(output, "wb"), stderr=subprocess.STDOUT, start_new_session=True,
        )
        run = Run(label, machine, workspace, process, output, self.mark(f"started {label}'s run"))
        self.runs.append(run)
        return run

    def coordinator_running(self) -> bool:
        return held_elsewhere(self.url, COORDINATOR_LOCK)

    # -- what happened --------------------------------------------------------------------------

    def executions(self, machine: Machine | None = None, *, since: float = 0.0) -> list[Execution]:
        return [e for e in self.watch.executions() if (machine is None or e.machine == machine.name) and e.started >= since]

    def taken_back(self, held: list[Execution], machine: Machine, since: float) -> bool:
        """Every task ``held`` (running on ``machine`` at the cut) has started again elsewhere."""
        again = {e.task for e in self.executions(since=since) if e.machine != machine.name}
        return {e.task for e in held} <= again

    def on_board(self, run: Run) -> bool:
        """Every worker of ``run`` has written its agent record: it can be handed a task."""
        pids = set(run.workers())
        with contextlib.suppress(Exception):
            return len(pids) >= WORKERS_PER_RUN and pids <= {r.pid for r in list_agents(self.store.agent_records)}
        return False

    def rejoined(self, run: Run, since: float) -> bool:
        """A worker of ``run`` wrote its agent record after ``since``: it reaches the board again."""
        pids = set(run.workers())
        with contextlib.suppress(Exception):
            return any(r.pid in pids and r.heartbeat_at.timestamp() > since for r in list_agents(self.store.agent_records))
        return False

    def sessions_from(self, machine: Machine) -> int:
        """The server's sessions from ``machine``: a cut-off machine's stay until the server
        notices their clients are gone."""
        with connect(self.url, autocommit=True) as conn:
            return conn.execute("select count(*) from pg_stat_activity where client_addr = %s", (machine.address,)).fetchone()[0]

    def unfinished(self) -> dict[str, str]:
        """Tasks not completed yet (but the keeper), with their status and owner."""
        self.store.sync()
        return {t.id: f"{t.status} {t.owner}".strip() for t in self.store.tasks.values() if t.status != Status.COMPLETED and t.id != self.keeper}

    def must(self, condition: Callable[[], object], what: str, timeout: float = TIMEOUT) -> None:
        """Wait for ``condition``; on a timeout, fail with what the runs said."""
        if not wait_for(condition, what, timeout):
            said = "\n".join(run.said() for run in self.runs)
            executions = "\n".join(map(str, self.executions()))
            timeline = "\n".join(self.timeline)
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}\n\ntimeline:\n{timeline}\n\nexecutions:\n{executions}\n\n{said}")

    # -- the checks every scenario ends with ----------------------------------------------------

    def finish_and_check(self, cut_off: Run, healed_at: float) -> None:
        """After the heal: machine 1 back to work, the board done, then every check at once."""
        problems = self.problems
        self.mark("healed")
        if not cut_off.alive():
            problems.append(f"{cut_off.label}'s board run exited during the outage (status {cut_off.process.returncode})")
        elif not wait_for(lambda: self.rejoined(cut_off, healed_at), f"{cut_off.label} to come back", REJOIN_SECONDS):
            problems.append(f"no worker of {cut_off.label} wrote its own agent record (its pid) within {REJOIN_SECONDS} s of the heal")
        # As many new tasks as there are workers, each worker takes one at most: the machine that
        # came back gets its share while the others are busy.
        workers = sum(len(run.workers()) for run in self.runs if run.alive()) or WORKERS_PER_RUN
        self.add_tasks(workers, LAST_JOB_SECONDS, "after the heal")
        if not wait_for(lambda: not self.unfinished(), "every task to be completed", TIMEOUT * 2):
            problems.append(f"tasks not completed: {self.unfinished()}")
        self.let_runs_end()
        for run in self.runs:
            if not wait_for(lambda: not run.alive(), f"{run.label} to end", 30):
                problems.append(f"{run.label}'s board run did not end when the board was done")
            elif run.process.returncode != 0:
                problems.append(f"{run.label}'s board run ended with status {run.process.returncode}")
        self.names.close()
        self.watch.close()

        executions = self.executions()
        for first, second in overlaps(executions):
            problems.append(f"ran twice at once: {first} | {second}")
        history = self.store.history()
        self.store.sync()
        completions = Counter(r["task"] for r in history if str(r["op"]).startswith("status:completed"))
        twice = {task: n for task, n in completions.items() if n > 1}
        if twice:
            problems.append(f"completed more than once: {twice}")
        lost = sorted(set(self.store.tasks) - set(completions))
        if lost:
            problems.append(f"never completed: {lost}")
        for execution in executions:
            if execution.how == "end" and not any(
                r["task"] == execution.task and r.get("actor") == execution.agent and r["op"] not in ("claim", "reclaim") and _at(r) >= execution.ended - 1
                for r in history
            ):
                problems.append(f"a finished job's result was thrown away (nothing in the task's history from its worker after it ended): {execution}")
        back = [e for e in executions if e.machine == cut_off.machine.name and e.started > healed_at and e.how == "end"]
        if not back:
            problems.append(f"{cut_off.machine.name} finished no job after the heal")
        problems.extend(self.names.clashes[:5])
        if problems:
            said = "\n".join(run.said() for run in self.runs)
            raise AssertionError("\n".join(problems) + "\n\ntimeline:\n" + "\n".join(self.timeline) + "\n\nexecutions:\n" + "\n".join(map(str, executions)) + "\n\n" + said)


def _at(record: dict) -> float:
    from datetime import datetime

    return datetime.fromisoformat(str(record["ts"]).replace("Z", "+00:00")).timestamp()


@pytest.fixture
def board(machines_and_server: tuple[list[Machine], PgCluster], tmp_path: Path) -> Iterator[SharedBoard]:
    machines, cluster = machines_and_server
    shared = SharedBoard(machines, cluster, tmp_path)
    try:
        yield shared
    finally:
        shared.close()


def start_both(board: SharedBoard, *, coordinator_cut_off: bool = False, port_of_machine_1: int | None = None) -> tuple[Run, Run]:
    """The keeper on the board, then machine 0's run and machine 1's (the one with the
    coordinator first, so the other uses it); once all four workers are on the board, the first
    tasks, one for each (a job outlasts any worker's way to its first task), and wait until
    machine 1 runs two jobs."""
    board.keep_runs_going()
    machine_0, machine_1 = board.machines
    first, second = (machine_1, machine_0) if coordinator_cut_off else (machine_0, machine_1)
    runs = {first.name: board.start_run(first, first.name, port=port_of_machine_1 if first is machine_1 else None)}
    board.must(board.coordinator_running, f"{first.name}'s coordinator to start")
    runs[second.name] = board.start_run(second, second.name, port=port_of_machine_1 if second is machine_1 else None)
    board.must(lambda: all(board.on_board(run) for run in runs.values()), "every worker of both runs to be on the board")
    board.add_tasks(FIRST_TASKS, FIRST_JOB_SECONDS, "first")
    board.mark("added the first tasks")
    board.must(lambda: len(board.executions(machine_1)) >= WORKERS_PER_RUN, "machine-1 to run a job on each of its workers")
    return runs[machine_0.name], runs[machine_1.name]


def held_by(board: SharedBoard, machine: Machine) -> list[Execution]:
    return [e for e in board.executions(machine) if e.ended is None]


def outage_over(board: SharedBoard, held: list[Execution], since: float) -> Callable[[], bool]:
    """When an outage that began at ``since`` has done its harm: every task machine 1 held runs
    again elsewhere, and the jobs it held would have finished by now (so a result produced
    during the outage is there to be kept, or a command left running is there to be seen)."""
    machine_1 = board.machines[1]
    finished_by = max(e.started for e in held) + FIRST_JOB_SECONDS + 1

    def over() -> bool:
        return time.time() > finished_by and board.taken_back(held, machine_1, since)

    return over


# -- the scenarios ----------------------------------------------------------------------------------


