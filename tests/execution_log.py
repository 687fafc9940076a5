"""What a task's command itself says about when it ran: the ground truth for "ran twice at once".

``write_job(folder, log)`` writes ``job.py``, a command for ``board run -- python3 job.py {id}
{description}``: it appends a ``start`` line to ``log``, sleeps the seconds its task's description
gives, appends ``end`` and exits 0; on SIGTERM it appends ``stopped`` and exits 143. Each line is
one JSON object written with a single ``os.write`` on an ``O_APPEND`` descriptor, so lines from
processes on several machines (network namespaces share the file system) never interleave.

A SIGKILL leaves no line: ``ExitWatch`` holds a pidfd on every job as soon as its ``start``
appears and notes when it exits, so an execution is the interval from its ``start`` to its
``end``, ``stopped`` or observed exit, and one still running is open. ``overlaps()`` finds two
executions of one task that ran at the same time.
"""

from __future__ import annotations

import json
import os
import select
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: The command. Its machine is ``TEST_MACHINE`` in its environment (the run's, passed down).
JOB = r'''
import json, os, signal, sys, time

LOG = {log!r}
task, seconds = sys.argv[1], float(sys.argv[2])
with open("/proc/self/stat") as stat:
    # The process's start time (clock ticks since boot) tells it apart from a later one that
    # reuses its pid.
    born = int(stat.read().rpartition(")")[2].split()[19])
fields = dict(task=task, machine=os.environ.get("TEST_MACHINE", "?"), agent=os.environ.get("BOARD_AGENT"),
              token=int(os.environ.get("BOARD_LEASE_TOKEN") or 0), pid=os.getpid(), born=born)

def say(event):
    line = json.dumps(dict(fields, event=event, at=time.time())) + "\n"
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)

def stopped(signum, frame):
    say("stopped")
    os._exit(128 + signum)

signal.signal(signal.SIGTERM, stopped)
say("start")
deadline = time.monotonic() + seconds
while (left := deadline - time.monotonic()) > 0:
    time.sleep(min(left, 0.1))
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # past this point the work is done: say so
say("end")
'''


def write_job(folder: Path, log: Path) -> Path:
    job = folder / "job.py"
    job.write_text(JOB.format(log=str(log)), encoding="utf-8")
    return job


@dataclass
class Execution:
    """One run of a task's command, as its own lines (and its exit) tell it."""

    task: str
    machine: str
    agent: str | None
    token: int
    pid: int
    born: int
    started: float
    #: When it stopped running (``end``, ``stopped`` or its observed exit); None while it runs.
    ended: float | None = None
    #: ``end`` (finished its work), ``stopped`` (SIGTERM), ``gone`` (killed without a word), or None.
    how: str | None = None

    def overlaps(self, other: Execution) -> bool:
        forever = float("inf")
        return self.started < (other.ended or forever) and other.started < (self.ended or forever)

    def __str__(self) -> str:
        until = f"{self.ended:.2f} ({self.how})" if self.ended is not None else "still running"
        return f"#{self.task} on {self.machine} by {self.agent} (token {self.token}, pid {self.pid}) from {self.started:.2f} to {until}"


class ExitWatch:
    """Reads the log as it grows and watches each started job's pid for its exit, so a job
    killed without a word still gets an end. ``executions()`` is the log read so far."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self._offset = 0
        self._pending = b""
        self._executions: dict[tuple[int, int], Execution] = {}
        self._exits: dict[int, tuple[int, int]] = {}  # pidfd -> (pid, born)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="exit-watch", daemon=True)

    def start(self) -> ExitWatch:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        for fd in list(self._exits):
            os.close(fd)
        self._exits.clear()

    def __enter__(self) -> ExitWatch:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def executions(self) -> list[Execution]:
        with self._lock:
            self._read()
            return sorted(self._executions.values(), key=lambda e: e.started)

    def _watch(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                self._read()
                fds = list(self._exits)
            if fds:
                ready, _, _ = select.select(fds, [], [], 0.05)
            else:
                ready = []
                time.sleep(0.05)
            now = time.time()
            with self._lock:
                for fd in ready:
                    self._exited(self._exits.pop(fd), now)
                    os.close(fd)

    def _read(self) -> None:
        try:
            with open(self.log, "rb") as log:
                log.seek(self._offset)
                data = log.read()
        except FileNotFoundError:
            return
        self._offset += len(data)
        lines = (self._pending + data).split(b"\n")
        self._pending = lines.pop()
        for raw in lines:
            if raw.strip():
                self._note(json.loads(raw))

    def _note(self, line: dict) -> None:
        key = (line["pid"], line["born"])
        if line["event"] == "start":
            self._executions[key] = Execution(line["task"], line["machine"], line["agent"], line["token"], line["pid"], line["born"], line["at"])
            self._follow(*key)
            return
        execution = self._executions.get(key)
        if execution is not None and execution.how in (None, "gone"):
            # The job's own word beats the exit seen from outside (which comes a moment later).
            execution.ended, execution.how = line["at"], line["event"]

    def _follow(self, pid: int, born: int) -> None:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            self._exited((pid, born), time.time())
            return
        if _born(pid) != born:  # the pid is already someone else's: ours has exited
            os.close(fd)
            self._exited((pid, born), time.time())
            return
        self._exits[fd] = (pid, born)

    def _exited(self, key: tuple[int, int], when: float) -> None:
        execution = self._executions.get(key)
        if execution is not None and execution.ended is None:
            execution.ended, execution.how = when, "gone"


def _born(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rpartition(")")[2].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def overlaps(executions: Iterable[Execution]) -> list[tuple[Execution, Execution]]:
    """Pairs of executions of one task, by different processes, that ran at the same time."""
    by_task: dict[str, list[Execution]] = {}
    for execution in executions:
        by_task.setdefault(execution.task, []).append(execution)
    found = []
    for runs in by_task.values():
        runs.sort(key=lambda e: e.started)
        for i, first in enumerate(runs):
            for second in runs[i + 1 :]:
                if first.pid != second.pid and first.overlaps(second):
                    found.append((first, second))
    return found
