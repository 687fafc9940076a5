"""The processes that run a board's tasks: started in a group of their own that dies with its
worker, stopped by group (SIGTERM, then SIGKILL), and found again by the ``BOARD_*`` variables
in their environment, so whatever still runs a task can be ended before it runs again."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from board.config import COMMAND_STOP_SECONDS
from board.model import Task
from board.status import FINISHED, Status

#: How long a stopped or timed-out command gets after SIGTERM before SIGKILL (the coordinator's
#: reclaim margin counts on it: ``LeaseSettings.reclaim_margin``).
KILL_GRACE_SECONDS = COMMAND_STOP_SECONDS


def kill_process_group(process: subprocess.Popen[Any], *, grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the process group ``process`` leads (it was started in a session of its own),
    wait up to ``grace`` for it, then SIGKILL the group.

    Only ever a group this process started, named by its own ``Popen``: a process id read from
    anywhere else (an agent record, a file) may name another run's command, or by now another
    program altogether.
    """
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        process.poll()
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    try:
        os.killpg(process.pid, signal.SIGKILL)  # the leader may be gone while its children linger
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def board_commands(workspace: Path) -> list[tuple[int, str, int | None]]:
    """(pid, task id, lease token) of every process running a task of this workspace's board:
    every command a worker starts, and everything it starts in turn, carries
    ``BOARD_TASK_ID``, ``BOARD_WORKSPACE`` and ``BOARD_LEASE_TOKEN`` in its environment.
    Processes of other users are not visible (Linux)."""
    workspace_variable = b"BOARD_WORKSPACE=" + os.fsencode(str(workspace))
    me = os.getpid()
    found: list[tuple[int, str, int | None]] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environment = handle.read()
        except OSError:
            continue  # gone, or not ours to read
        if workspace_variable not in environment:
            continue
        variables = dict(v.partition(b"=")[::2] for v in environment.split(b"\0") if v.startswith(b"BOARD_"))
        task_id, token = variables.get(b"BOARD_TASK_ID"), variables.get(b"BOARD_LEASE_TOKEN", b"")
        if variables.get(b"BOARD_WORKSPACE") == workspace_variable.partition(b"=")[2] and task_id:
            found.append((int(entry), task_id.decode(errors="replace"), int(token) if token.isdigit() else None))
    return found


def commands_of(workspace: Path, task_id: str, *, up_to_token: int | None = None) -> list[int]:
    """The pids of processes running ``task_id`` of this workspace's board; with
    ``up_to_token``, only those started under that lease or an older one."""
    return [
        pid
        for pid, task, token in board_commands(workspace)
        if task == task_id and (up_to_token is None or (token is not None and token <= up_to_token))
    ]


def command_running(workspace: Path) -> Callable[[str], bool]:
    """Whether a task of this workspace's board still has a command running (``commands_of``):
    what a merge of completed tasks' worktrees waits for."""
    workspace = workspace.resolve()
    return lambda task_id: bool(commands_of(workspace, task_id))


def stale_commands(workspace: Path, tasks: Mapping[str, Task]) -> list[int]:
    """Processes still running a task that finished, or under a lease older than the task's
    current one: left behind by a worker that died with its run."""
    stale = []
    for pid, task_id, token in board_commands(workspace):
        task = tasks.get(task_id)
        if task is None or token is None:
            continue  # a task this process cannot see: leave it to the task's next start
        if task.status in FINISHED or (task.status == Status.IN_PROGRESS and task.lease is not None and task.lease.token > token):
            stale.append(pid)
    return stale


def _kill(pids: Iterable[int]) -> list[int]:
    ended = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
        ended.append(pid)
    return ended


def end_commands_of(workspace: Path, task_id: str, *, up_to_token: int | None = None) -> list[int]:
    """SIGKILL whatever still runs ``task_id`` of this board: a command whose worker died (its
    group leader dies with the worker, the leader's children do not) must not run beside the
    next execution of the task. Called by whoever is about to let the task run again."""
    ended: list[int] = []
    for _ in range(5):  # a dying parent may still fork: look again until nothing is left
        pids = [pid for pid in commands_of(workspace, task_id, up_to_token=up_to_token) if pid not in ended]
        if not pids:
            break
        ended += _kill(pids)
    return ended


def end_stale_commands(workspace: Path, tasks: Mapping[str, Task]) -> list[int]:
    """SIGKILL the ``stale_commands`` of this board."""
    return _kill(stale_commands(workspace, tasks))


@contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) that arrives inside the block and act on it at the end. A
    KeyboardInterrupt raised inside ``Popen`` after the fork loses the ``Popen``, and with it
    the only handle by which the child would be stopped. (Signal handlers belong to the main
    thread; elsewhere there is no Ctrl-C to hold.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[Any] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held and callable(previous):
            previous(signal.SIGINT, held[0])
        elif held and previous == signal.SIG_DFL:
            os.kill(os.getpid(), signal.SIGINT)


def die_with_parent(parent_pid: int, signum: int = signal.SIGKILL) -> Any:
    """A ``preexec_fn`` that makes the kernel send ``signum`` to the child when its parent dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1

    def preexec() -> None:
        libc.prctl(pr_set_pdeathsig, int(signum))
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)

    return preexec
