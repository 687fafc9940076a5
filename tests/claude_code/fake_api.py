"""A stand-in for the Anthropic Messages API on 127.0.0.1, answering Claude Code from a script.

Each request of the model's main loop (one that offers tools) gets the next scripted turn: tool
calls, streamed as Claude Code reads them (``message_start``, a ``tool_use`` block per call with
its input as ``input_json_delta``, ``message_delta`` with ``stop_reason: tool_use``,
``message_stop``), or, once the script is spent, a plain ``end_turn`` text. Whatever else the
client asks (a request without tools, ``count_tokens``, any other path) gets a short sensible
answer, so nothing ever waits on this server.

Several agents of one client (a lead and its teammates) ask at once, each in its own
conversation: ``FakeAnthropic(lead_turns, agents={"MARK": turns})`` serves a conversation whose
first user message contains ``MARK`` from that agent's own script, every other one from the
first.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "claude-sonnet-4-5-20250929"
FINAL_TEXT = "All steps done."
#: A message's usage when its turn names none.
DEFAULT_USAGE = {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: dict[str, Any]


@dataclass
class Turn:
    """One answer of the model: tool calls (run by Claude Code, which then asks again), or text."""

    calls: Sequence[ToolCall] = ()
    text: str = ""
    #: The message's ``usage`` (input_tokens, output_tokens, cache_creation_input_tokens,
    #: cache_read_input_tokens) when the script says; else a small fixed one.
    usage: Mapping[str, int] | None = None


def usage_of(turn: Turn) -> dict[str, int]:
    """The usage the server sends with a turn's message."""
    return {**DEFAULT_USAGE, **turn.usage} if turn.usage is not None else dict(DEFAULT_USAGE)


def tool(name: str, /, **arguments: Any) -> Turn:
    """A turn of one tool call (positional ``name``: the Agent tool takes a ``name`` too)."""
    return Turn(calls=[ToolCall(name, arguments)])


#: The script of the conversations no agent's mark names (the session's own).
MAIN = ""


@dataclass
class Exchange:
    """What the server saw: every request body by path, and the main-loop requests in order."""

    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: Main-loop requests answered from the main script (or past its end).
    turns_served: int = 0
    #: Every main-loop answer, scripted or past the script's end, by the script it came from
    #: (``MAIN`` or an agent's mark), in order.
    served: dict[str, list[Turn]] = field(default_factory=dict)
    #: When each main-loop request arrived (time.monotonic()): between two of them, Claude Code
    #: ran the tool calls of the turn before, with their hooks.
    turn_times: list[float] = field(default_factory=list)

    def main_loop(self) -> list[dict[str, Any]]:
        return [body for path, body in self.requests if path.startswith("/v1/messages") and "count_tokens" not in path and body.get("tools")]

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool_result block Claude Code sent back, in order."""
        seen: dict[str, dict[str, Any]] = {}
        for body in self.main_loop():
            for message in body.get("messages", []):
                content = message.get("content")
                if isinstance(content, list):
                    for block in content:
                        if isinstance(block, dict) and block.get("type") == "tool_result":
                            seen.setdefault(block["tool_use_id"], block)
        return list(seen.values())


class FakeAnthropic:
    """``with FakeAnthropic([turns...]) as api: api.url``; turns are served in order (each
    agent's of ``agents``, by its mark, in its own order)."""

    def __init__(self, turns: Iterable[Turn], *, agents: Mapping[str, Iterable[Turn]] | None = None) -> None:
        if MAIN in (agents or {}):
            raise ValueError("an agent's mark must not be empty: it would name every conversation")
        self.turns = list(turns)
        self.scripts: dict[str, list[Turn]] = {MAIN: self.turns, **{mark: list(script) for mark, script in (agents or {}).items()}}
        self.exchange = Exchange()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # the test's output stays readable
                pass

            def do_GET(self) -> None:
                fake._record(self.path, {})
                self._json(200, {"data": [], "has_more": False})

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                fake._record(self.path, body)
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    self._json(200, {"input_tokens": 100})
                elif path.endswith("/v1/messages"):
                    turn = fake._next_turn(fake._script_of(body)) if body.get("tools") else Turn(text="ok")
                    if body.get("stream"):
                        self._stream(fake._events(turn, body))
                    else:
                        self._json(200, fake._message(turn, body))
                else:
                    self._json(200, {})

            def _json(self, status: int, data: object) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("request-id", f"req_fake_{next(fake._ids)}")
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, events: list[tuple[str, dict[str, Any]]]) -> None:
                payload = b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("request-id", f"req_fake_{next(fake._ids)}")
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-anthropic", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    @property
    def script_spent(self) -> bool:
        """Every script was served to its end."""
        return all(len(self.exchange.served.get(mark, ())) >= len(script) for mark, script in self.scripts.items())

    def served(self, mark: str = MAIN) -> list[Turn]:
        """The answers one script's conversations got so far (past its end too)."""
        with self._lock:
            return list(self.exchange.served.get(mark, ()))

    def _script_of(self, body: Mapping[str, Any]) -> str:
        """The mark of the agent whose conversation this is: the first user message names it."""
        first = next((m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"), None)
        content = first.get("content") if first is not None else None
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict) and isinstance(part.get("text"), str))
        text = content if isinstance(content, str) else ""
        return next((mark for mark in self.scripts if mark and mark in text), MAIN)

    def _record(self, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.exchange.requests.append((path, body))

    def _next_turn(self, mark: str = MAIN) -> Turn:
        with self._lock:
            self.exchange.turn_times.append(time.monotonic())
            served = self.exchange.served.setdefault(mark, [])
            script = self.scripts[mark]
            turn = script[len(served)] if len(served) < len(script) else Turn(text=FINAL_TEXT)
            served.append(turn)
            if mark == MAIN:
                self.exchange.turns_served += 1
        return turn

    def _blocks(self, turn: Turn) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if turn.text or not turn.calls:
            blocks.append({"type": "text", "text": turn.text or FINAL_TEXT})
        for call in turn.calls:
            blocks.append({"type": "tool_use", "id": f"toolu_fake{next(self._ids):012d}", "name": call.name, "input": call.input})
        return blocks

    def _message(self, turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": f"msg_fake{next(self._ids):012d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or MODEL,
            "content": self._blocks(turn),
            "stop_reason": "tool_use" if turn.calls else "end_turn",
            "stop_sequence": None,
            "usage": usage_of(turn),
        }

    def _events(self, turn: Turn, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        message = self._message(turn, body)
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}})
        ]
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": block["text"]}}))
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}, "usage": {"output_tokens": message["usage"]["output_tokens"]}}))
        events.append(("message_stop", {"type": "message_stop"}))
        return events
