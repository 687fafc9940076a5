"""``board mcp`` on the wire: lines written to its stdin by hand, as a faulty client writes them."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.conftest import REPO
from tests.mcp.connect import TOOLS

#: A version of the handshake era, which opens with ``initialize``.
PROTOCOL_VERSION = "2025-06-18"


class Wire:
    """``board mcp`` started as a process, spoken to one JSON-RPC line at a time."""

    def __init__(self, workspace: Path, errors: Path) -> None:
        self.errors = errors
        self.process = subprocess.Popen(
            [sys.executable, "-m", "board", "-w", str(workspace), "mcp"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors.open("wb"),
            env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=workspace,
        )
        self.replies: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.replies.put(line)
        self.replies.put(b"")  # the server closed its stdout

    def send(self, line: str | dict[str, Any]) -> None:
        assert self.process.stdin is not None
        text = line if isinstance(line, str) else json.dumps(line)
        self.process.stdin.write(text.encode() + b"\n")
        self.process.stdin.flush()

    def replies_until(self, request_id: int) -> list[dict[str, Any]]:
        """Every reply up to and including the one to ``request_id`` (a reply to a line sent
        before that request is written before it)."""
        received = []
        while True:
            try:
                line = self.replies.get(timeout=60)
            except queue.Empty:
                raise AssertionError(f"no reply to request {request_id} within 60 s; replies so far: {received}") from None
            assert line, f"the server ended before answering request {request_id}: {self.errors.read_text()}"
            received.append(json.loads(line))
            if received[-1].get("id") == request_id:
                return received

    def close(self) -> int:
        """Close stdin, as a client that is done does; the server's exit status."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=60)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def error_of(reply: dict[str, Any]) -> tuple[Any, int, str]:
    return reply["id"], reply["error"]["code"], reply["error"]["message"]


def test_a_line_that_is_not_a_message_is_answered_and_the_server_serves_on(workspace: Path, tmp_path: Path) -> None:
    wire = Wire(workspace, tmp_path / "server-stderr.txt")
    try:
        wire.send("{not json")
        wire.send({"foo": 1})
        wire.send({"jsonrpc": "2.0", "id": "bad-1", "method": 5})  # its id can be told: the reply carries it
        wire.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "by-hand", "version": "0"},
        }})
        *rejected, initialized = wire.replies_until(1)
        assert [error_of(reply) for reply in rejected] == [(None, -32700, "Parse error"), (None, -32600, "Invalid Request"), ("bad-1", -32600, "Invalid Request")]
        assert all(reply["jsonrpc"] == "2.0" for reply in rejected)
        assert initialized["result"]["serverInfo"]["name"] == "board"

        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        wire.send("[1, 2")  # after the handshake too
        wire.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        *rejected, listed = wire.replies_until(2)
        assert [error_of(reply) for reply in rejected] == [(None, -32700, "Parse error")]
        assert {tool["name"] for tool in listed["result"]["tools"]} == TOOLS
        assert wire.close() == 0
    finally:
        wire.kill()
