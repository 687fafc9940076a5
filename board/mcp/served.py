"""The board ``board mcp`` serves: one store behind one lock, the agents that call through the
server kept in the board's registry, and what each resource address reads.

The tools (``board.mcp.server``) run their calls through ``ServedBoard.call``; the follower
(``board.mcp.follow``) reads the watched addresses again through ``ServedBoard.render``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError

from board import values
from board.agent_record import AgentRecord
from board.agents import read_agent, register_agent, write_agent
from board.errors import BoardError, os_error_line, to_a_tool
from board.graph import by_id, is_hidden
from board.identity import acting_user
from board.model import utcnow
from board.present import prompt, shown_task
from board.store import Store
from board.store.side import AgentRecords

PROMPT_URI = "board://prompt"
TASK_URI = "board://task/{id}"
#: How often an agent's record is rewritten while it keeps calling: the dashboard shows its
#: heartbeat's age in seconds, and a write per call would double the cost of a tool call. What a
#: call changed meanwhile is written by the follower's next look (``flush``), within seconds.
RECORD_EVERY_SECONDS = 1.0

Result = TypeVar("Result")


class AgentActivity:
    """The agents that call through this server, kept in the board's registry like any other
    (``store.agent_records``), so the dashboard shows them: registered when a call first names
    them, their heartbeat renewed by their calls, marked stopped when the server ends."""

    def __init__(self, agent_records: AgentRecords) -> None:
        self.agent_records = agent_records
        self._records: dict[str, AgentRecord] = {}
        self._written: dict[str, float] = {}
        #: Agents whose record changed since it was last written.
        self._unwritten: set[str] = set()

    def called(self, name: str, holding: str | None, *, tool_call: bool = False) -> None:
        now = utcnow()
        record = self._records.get(name)
        if record is None:
            earlier = read_agent(self.agent_records, name)
            record = self._records[name] = register_agent(self.agent_records, name, kind="mcp", now=now)
            record.tool_calls = earlier.tool_calls if earlier is not None and earlier.kind == "mcp" else 0
        moved = record.task != holding or record.stopped
        record.task, record.stopped = holding, False
        record.tool_calls += tool_call
        record.heartbeat_at = now
        self._unwritten.add(name)
        if moved or now.timestamp() - self._written.get(name, 0.0) >= RECORD_EVERY_SECONDS:
            self._write(record)

    def flush(self) -> None:
        """Write the records that calls changed since they were last written."""
        for name in list(self._unwritten):
            self._write(self._records[name])

    def _write(self, record: AgentRecord) -> None:
        write_agent(self.agent_records, record)
        self._written[record.name] = record.heartbeat_at.timestamp()
        self._unwritten.discard(record.name)

    def stop(self) -> None:
        """The server is ending: its agents stop with it (the dashboard shows them stopped, not silent)."""
        for record in self._records.values():
            record.stopped, record.task, record.heartbeat_at = True, None, utcnow()
            record.activity, record.activity_at = "gone", record.heartbeat_at
            try:
                self._write(record)
            except OSError:
                pass


class ServedBoard:
    """One board served to MCP clients: the store, the lock every call takes, the agents."""

    def __init__(self, workspace: Path) -> None:
        # Read on the first call, not before the client's handshake: a start answers at once.
        self.store = Store.open(workspace, actor=acting_user(), whole=False)
        self.agents = AgentActivity(self.store.agent_records)
        #: Tools run in worker threads and the follower in another: the store is one index.
        self.lock = threading.Lock()
        #: Who calls when a call names no agent (the CLI's rule: $BOARD_AGENT).
        self.default_agent = os.environ.get("BOARD_AGENT") or None
        self.touched = False

    @contextmanager
    def fresh(self) -> Iterator[Store]:
        """The store, locked and caught up with every writer that went through a store (its
        history log, read from where it was last read). Files changed behind the store's back
        (an editor, Claude Code itself) reach the index through the follower's file watcher,
        within milliseconds: a stat of every file on every call would cost more than the call
        (10 ms at 2,000 tasks). Writes re-read their task under the lock whatever the index says."""
        with self.lock:
            self.store.sync()
            self.store.sync_tool_calls()  # calls are logged, not written: those on work in progress
            #: Something may have changed that the follower's next look must render.
            self.touched = True
            yield self.store

    def call(self, agent: str | None, work: Callable[[Store, str | None], Result], *, tool_call: bool = False) -> Result:
        """Run one tool: refusals become tool errors carrying the command line's message, with
        the options and commands it names spelled as a tool's arguments and calls (``to_a_tool``),
        and an agent named by the call (or $BOARD_AGENT) is kept in the registry once the call succeeded."""
        try:
            name = checked(values.agent_name, agent or self.default_agent, "agent") if (agent or self.default_agent) else None
            with self.fresh() as store:
                result = work(store, name)
                if name is not None:
                    held = [t.id for t in store.held_by(name) if t.lease is not None and t.lease.owner == name]
                    try:
                        self.agents.called(name, held[0] if held else None, tool_call=tool_call)
                    except OSError:
                        pass  # the call was made: a registry that cannot be written must not report it failed
                return result
        except BoardError as error:
            raise ToolError(error.spoken(to_a_tool)) from None
        except OSError as error:
            raise ToolError(os_error_line(error)) from None

    def render(self, uri: str) -> str | None:
        """What reading ``uri`` gives now (call with the lock held), or None for a task that is not there."""
        if uri == PROMPT_URI:
            return prompt([t for t in by_id(self.store.tasks) if not is_hidden(t)], self.store.graph)
        wanted = task_of_uri(uri)
        task = self.store.tasks.get(wanted)
        if task is None:
            return None
        return json.dumps(shown_task(self.store, task), ensure_ascii=False, indent=2)

    def close(self) -> None:
        self.agents.stop()
        self.store.close()


def task_of_uri(uri: str) -> str:
    """The task id a ``board://task/{id}`` address names, checked as the command line checks it."""
    prefix = TASK_URI.removesuffix("{id}")
    if not uri.startswith(prefix):
        raise BoardError(f"'{uri}' is not a board resource: read {PROMPT_URI} or {TASK_URI}")
    return checked(values.task_id, uri.removeprefix(prefix), "id")


def checked(parse: Callable[[str], str], value: Any, what: str) -> str:
    """A value checked as the command line checks it (``board.values``), refused with its message."""
    try:
        return parse(str(value))
    except ValueError as error:
        raise BoardError(f"{what}: {error}") from None
