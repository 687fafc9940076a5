"""``board hooks serve``: board's hooks answered over HTTP by one long-lived process.

Claude Code starts a process for every command hook; for the events of every tool call
(``HTTP_EVENTS`` in ``install``) it POSTs the event to this server instead, which applies it
with the very code ``board hook`` runs (``handler.apply_event``): the same files change, the
same way. What the hook would read from its environment (``BOARD_AGENT``, ``BOARD_TASK_ID``...)
comes in headers Claude Code fills from its own (``ENV_HEADER``).

Who may write through it: the server listens on 127.0.0.1 only, and answers only connections
the kernel says its own user holds (``loopback.peer_uid``); any other is refused before its
body is read. A stop by the guard is answered as Claude Code's PreToolUse ``deny`` with the
guard's reason, which Claude Code hands the model as it is.

The session's start (and each prompt) makes sure a server listens (``endpoint.ensure_server``): one is
started, detached, when none does; it exits on its own after ``IDLE_SECONDS`` without a call.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Mapping
from email.message import Message
from http.server import BaseHTTPRequestHandler, HTTPServer
from socketserver import TCPServer, ThreadingMixIn

from board.claude.hooks import loopback
from board.claude.hooks.endpoint import CARRIED, ENV_HEADER, HOST, MAX_PAYLOAD_BYTES, PATH, port_problem, servers_dir
from board.claude.hooks.handler import apply_event
from board.claude.hooks.hook_log import note
from board.disk.atomic import read_regular, write_atomic

#: A quiet server exits after this long; the next session's start (or prompt) starts another.
IDLE_SECONDS = 30 * 60
class HookServer(ThreadingMixIn, HTTPServer):
    daemon_threads = True
    allow_reuse_address = True  # a port left in TIME_WAIT by the last server; never a live listener

    def __init__(self, port: int) -> None:
        super().__init__((HOST, port), HookRequest)
        self.last_call = time.monotonic()

    def server_bind(self) -> None:
        # HTTPServer's own looks up the host's full name, which can take seconds; it is not used.
        TCPServer.server_bind(self)
        self.server_name, self.server_port = HOST, self.socket.getsockname()[1]


class HookRequest(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # Claude Code keeps its connection open between calls
    server: HookServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass

    def setup(self) -> None:
        super().setup()
        # Once per connection: every request on it comes from the same socket, the same user.
        client_host, client_port = self.client_address[:2]
        self.own_user = loopback.peer_uid((str(client_host), client_port), (HOST, self.server.server_port)) == os.getuid()

    def do_POST(self) -> None:
        self.server.last_call = time.monotonic()
        if not self.own_user:
            return self._answer(403, b"")
        if self.path != PATH:
            return self._answer(404, b"")
        try:
            length = int(self.headers.get("Content-Length") or "")
        except ValueError:
            return self._answer(411, b"")
        if not 0 <= length <= MAX_PAYLOAD_BYTES:
            return self._answer(413, b"")
        from board import json_bounds

        try:
            payload = json_bounds.loads(self.rfile.read(length) or b"null")
        except (ValueError, json_bounds.TooDeep) as error:
            note(None, f"?: {type(error).__name__}: {error}")
            return self._answer(200, b"")
        reason = apply_event(payload, hook_environment(self.headers))
        self.server.last_call = time.monotonic()
        if reason is None:
            return self._answer(200, b"")
        denial = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}}
        self._answer(200, json.dumps(denial, ensure_ascii=False).encode("utf-8"))

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if status != 200:
            self.close_connection = True
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)


def hook_environment(headers: Mapping[str, str] | Message) -> dict[str, str]:
    """The hook's environment as its headers carry it. Claude Code fills an unset variable with
    "", which every reader takes for unset, so it is left out."""
    environ = {}
    for name in CARRIED:
        value = headers.get(f"{ENV_HEADER}{name}")
        if value:
            # http.server reads header bytes as Latin-1; Claude Code sends UTF-8.
            try:
                environ[name] = value.encode("latin-1").decode("utf-8")
            except (UnicodeEncodeError, UnicodeDecodeError):
                environ[name] = value
    return environ


def serve(port: int, *, idle_seconds: float = IDLE_SECONDS) -> int:
    """Serve until ``idle_seconds`` pass without a call. 0 when it served, or when another of
    this user's servers holds the port already; 1 when another user's process does."""
    try:
        server = HookServer(port)
    except OSError as error:
        holder = loopback.listener_uid(port)
        if holder == os.getuid():
            return 0
        note(None, f"board hooks serve: cannot listen on {HOST}:{port}: {error}" + (f" (held by uid {holder})" if holder is not None else ""))
        sys.stderr.write(f"board: cannot listen on {HOST}:{port}: {port_problem(port) or error}\n")
        return 1
    record = servers_dir() / f"{port}.json"
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(record, (json.dumps({"pid": os.getpid(), "port": port}) + "\n").encode(), lasting=False)
    except OSError:
        pass  # only a convenience for whoever wants to stop it

    def stop_when_quiet() -> None:
        while time.monotonic() - server.last_call < idle_seconds:
            time.sleep(min(5.0, idle_seconds / 4))
        server.shutdown()

    threading.Thread(target=stop_when_quiet, name="idle", daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()
        try:
            if json.loads(read_regular(record)).get("pid") == os.getpid():
                record.unlink()
        except (OSError, ValueError):
            pass
    return 0


if __name__ == "__main__":  # started by ensure_server: the port, and nothing else
    sys.exit(serve(int(sys.argv[1])))
