"""Where board's hook server listens (``board.claude.hooks.server``), what a POST carries, and
how a session's start makes sure a server listens (``ensure_server``): shared by the handler,
the installer and the server, none of which needs the others for it.

Standard library only: ``board hook`` imports it.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

HOST = "127.0.0.1"
PATH = "/board/hook"
#: Headers carrying the hook's environment: ``Board-Env-<NAME>``, one per name in ``CARRIED``.
ENV_HEADER = "Board-Env-"
#: What ``find_board``, ``identify`` and ``task_of`` read from a hook's environment on the
#: events served here (TaskCompleted's ``BOARD_LEASE_TOKEN`` stays with its command hook).
#: Never ``BOARD_DB``: a database URL may hold a password, and whoever holds the port while no
#: server of ours does reads the headers. The tool-call events do not need it (the board's
#: ``[store] url`` says it is a database's; the guard and the counts read the local files).
CARRIED = ("BOARD_AGENT", "BOARD_TASK_ID", "BOARD_WORKSPACE", "CLAUDE_CODE_TASK_LIST_ID", "CLAUDE_CONFIG_DIR", "CLAUDE_PROJECT_DIR", "HOME")
#: The largest event either door takes (``board hook``'s stdin, or a POST's body).
MAX_PAYLOAD_BYTES = 16 * 1024 * 1024
#: How long the session's start waits for a server it started to listen.
START_WAIT_SECONDS = 10.0


def servers_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """Where each running server keeps its pid (``<port>.json``), under the user's cache."""
    cache = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "board" / "hook-servers"


def port_problem(port: int) -> str | None:
    """Why board's hooks on ``port`` cannot reach board: another user's process listens there
    (its owner could read every event and answer in board's place), or the system cannot say
    who connects (no ``/proc/net/tcp``), so the server would answer nobody. None: the port is
    this user's (served, or free for the next session to serve)."""
    from board.claude.hooks import loopback  # sockets: not for the events that start no server

    if not loopback.available():
        return f"this system does not say who holds a connection ({loopback.PROC_NET_TCP} is not readable), so board's server answers nobody; run 'board hooks install --command'"
    holder = loopback.listener_uid(port)
    if holder is not None and holder != os.getuid():
        return f"port {port} of {HOST} is held by another user's process (uid {holder}), not by board's server: calls reach board only at the session's end (from its transcript) and writes are not guarded; run 'board hooks install --port N' with a free port"
    return None


def ensure_server(port: int) -> str | None:
    """Make sure this user's server listens on ``port``: start one, detached, when nothing
    does, and wait until it listens. The problem when it cannot, else None."""
    from board.claude.hooks import loopback

    holder = loopback.listener_uid(port)
    if holder == os.getuid():
        return None
    problem = port_problem(port)
    if problem is not None:
        return problem
    import subprocess  # only here: ``board hook`` loads this module on every call

    # The server serves every session of the user: nothing of this one's identity goes with it.
    environ = {key: value for key, value in os.environ.items() if key not in CARRIED or key == "HOME"}
    subprocess.Popen(
        [sys.executable, "-m", "board.claude.hooks.server", str(port)],
        env=environ, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True, cwd="/",
    )  # fmt: skip
    deadline = time.monotonic() + START_WAIT_SECONDS
    while time.monotonic() < deadline:
        holder = loopback.listener_uid(port)
        if holder is not None:
            return None if holder == os.getuid() else port_problem(port)
        time.sleep(0.02)
    return f"board's server did not listen on {HOST}:{port} within {START_WAIT_SECONDS:.0f} s"
