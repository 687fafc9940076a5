"""``board mcp``: the board as MCP tools and resources, served on stdio.

Each tool does what its command does, through the same calls (``board.actions``, the store), and
answers with the JSON that command prints with ``--json`` (``board.present``): an agent over
MCP and an agent in a shell meet the same rules and read the same documents. A refusal is a tool
error carrying the command's one line; nothing changes on disk and the server carries on.

The MCP SDK is imported here and in ``served`` and ``follow`` only, so no other command pays for
loading it.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from mcp.types import Tool as MCPTool
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from board import __version__, actions, values
from board.errors import BoardError, TaskNotFound, to_a_tool
from board.graph import by_id
from board.text import shortened
from board.identity import acting_user, lease_token
from board.mcp import tool_listing
from board.mcp.follow import BoardFollower, follow_listen_streams, serve_legacy_subscriptions
from board.messaging import send_message
from board.mcp.served import PROMPT_URI, TASK_URI, ServedBoard, checked
from board.model import Task
from board.present import select_tasks, shown_task, task_json, task_row
from board.priority import Priority
from board.reservations import MODES
from board.status import Status
from board.store import DEFAULT_LEASE_SECONDS, Store

INSTRUCTIONS = """\
A task board shared by a team of agents. Take work with `claim`: the task comes back in progress
under a lease whose token (task.lease.token) you pass to every change you make to it. Report each
tool call you make with `toolcall`, send `heartbeat` every third of the lease (30 s by default)
while you work, and finish with `task_update` status completed (or failed, with `error`). To ask
a person, `task_update` status waiting with a `question`; the person's `answer` sends it back to
you. If claim says you already hold a task (it was assigned to you), `task_list` with your name
as `owner` shows it and its token. `task_list` gives a short row per task, a page at a time
(`nextCursor`; `text` searches, `full` gives whole documents); `task_show` one task in full.
Before editing shared files, `reserve` them and `unreserve` them when done. `checkpoint` records
where a task stands with a note; `resume` shows it and what changed since. `board_prompt` is the
whole board in a few lines. A refused call is a tool error whose text says why and what to do
(naming the tool or argument to use); it changed nothing. A person's overrides (taking a task
from an agent's live lease, deleting a task others wait on, undoing a policy's pause) are no
tool's: a person makes them on the dashboard or the command line."""

# Literal choices come from the enums, so a new status or priority reaches the schema too. A
# type checker cannot read a Literal built at run time: it checks them as the strings they are
# (the store refuses one that is not a status or a priority).
if TYPE_CHECKING:
    StatusName = str
    PriorityName = str
    ModeName = str
else:
    StatusName = Literal[tuple(s.value for s in Status)]
    PriorityName = Literal[tuple(p.value for p in Priority)]
    ModeName = Literal[MODES]
Id = str | int
Ids = Id | list[Id]
Texts = str | list[str]

AGENT = Field(description="who makes the call (default: $BOARD_AGENT of the server); the agent shows on the dashboard, its heartbeat renewed by each call")
TOKEN = Field(description="your lease token from claim (default: $BOARD_LEASE_TOKEN when $BOARD_TASK_ID is this task); refused once it is no longer current")
TASK = Field(description="the task's id")


# What the tools answer (the output schemas): ``board.mcp.shapes``.
from board.mcp.shapes import (  # noqa: E402
    Agents, Alerts, Checkpointed, Claimed, Listing, PlanImported, Renewed, Reservations, Resumed, Sent, ShownTask, TaskDocument, Unreserved,
)
from board.mcp.paging import cursor_after, resumed_at  # noqa: E402

#: The rows a ``task_list`` page holds unless ``limit`` says otherwise: 100 rows of 1,000 tasks
#: answer in about 40 KB (rows about 180 bytes, twice: the structured answer and its text).
PAGE = 100
#: The most rows one page holds.
MOST_ROWS = 1000


def id_list(value: Ids | None, what: str) -> list[str]:
    given = value if isinstance(value, list) else [] if value is None else [value]
    return [checked(values.task_id, v, what) for v in given]


def text_list(value: Texts | None) -> list[str]:
    return value if isinstance(value, list) else [] if value is None else [value]


def label_list(value: Texts | None, what: str = "label") -> list[str]:
    return [checked(values.label, v, what) for v in text_list(value)]


def mover(name: str | None, token: int | None, task_id: str, *, expected_version: int | None = None) -> actions.Who:
    """Who moves the task: the calling agent (else the server's user), with the token it gives,
    or the one its worker gave it for this task."""
    return actions.Who(name or acting_user(), token=lease_token(token, task_id), expected_version=expected_version)


def whole(store: Store, task: Task) -> TaskDocument:
    return task_json(task, store.graph)  # type: ignore[return-value]


class UnreadableLinesAnswered:
    """The messages stdio brings in, each line that is not one answered as JSON-RPC 2.0 says.

    The SDK's stdio transport hands such a line on as the exception reading it raised, and its
    server drops that: the client, waiting for a reply, never gets one. Here it gets -32700
    (not JSON) or -32600 (JSON, but not a message), and the next line is read as usual.
    """

    def __init__(self, messages: Any, replies: Any) -> None:
        self._messages = messages
        self._replies = replies

    @property
    def last_context(self) -> Any:
        # The SDK's dispatcher runs each message's handler in the context its sender had.
        return getattr(self._messages, "last_context", None)

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._messages.receive()
            if not isinstance(item, Exception):
                return item
            try:
                await self._replies.send(SessionMessage(rejection(item)))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass  # the connection is closing: nobody is left to tell

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._messages.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def rejection(error: Exception) -> JSONRPCError:
    """JSON-RPC 2.0's reply to a line that could not be read as a message."""
    problems = error.errors() if isinstance(error, ValidationError) else [{"type": "json_invalid"}]
    if any(problem["type"] == "json_invalid" for problem in problems):
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error"))
    return JSONRPCError(jsonrpc="2.0", id=request_id_of(problems), error=ErrorData(code=INVALID_REQUEST, message="Invalid Request"))


def request_id_of(problems: list[Any]) -> str | int | None:
    """The id of a request that is not valid, when it has a usable one, so the client waiting
    for it hears back; else None, as JSON-RPC 2.0 says. A field found missing is reported with
    the object that lacks it: the message itself."""
    for problem in problems:
        sent = problem.get("input")
        if problem["type"] == "missing" and len(problem["loc"]) == 2 and isinstance(sent, dict):
            ident = sent.get("id")
            usable = isinstance(ident, str | int) and not isinstance(ident, bool)
            return ident if usable and "method" in sent else None
    return None


def _hints(*, reads_only: bool = False, destroys: bool = False, idempotent: bool = False, world: bool = False) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=reads_only, destructive_hint=destroys, idempotent_hint=idempotent, open_world_hint=world)


#: What each tool does to the board, for a client that decides without reading prose: reads only;
#: destroys (takes a task off the board); idempotent (the same call again changes nothing more);
#: reaches outside the board (git, a team's inbox).
TOOL_HINTS = {
    "task_list": _hints(reads_only=True, idempotent=True),
    "task_show": _hints(reads_only=True, idempotent=True),
    "board_prompt": _hints(reads_only=True, idempotent=True),
    "alerts": _hints(idempotent=True, world=True),  # stores what it found; fetch asks git's remote
    "task_create": _hints(),
    "task_update": _hints(),
    "claim": _hints(),
    "heartbeat": _hints(idempotent=True),
    "release": _hints(),
    "toolcall": _hints(),
    "reserve": _hints(idempotent=True),
    "task_delete": _hints(destroys=True),
    "message": _hints(world=True),  # a Claude Code team member's inbox
    "task_restore": _hints(),
    "answer": _hints(),
    "reservations": _hints(reads_only=True, idempotent=True),
    "unreserve": _hints(idempotent=True),
    "checkpoint": _hints(),  # reads git and the task's files
    "resume": _hints(reads_only=True, idempotent=True),
    "agents": _hints(reads_only=True, idempotent=True, world=True),  # Claude Code's team files
    "plan_import": _hints(idempotent=True),  # the same plan again changes nothing more
}


class BoardServer(MCPServer):
    """The SDK's server, with an argument that does not fit a tool's schema refused in one line
    (``progress: Input should be less than or equal to 100``) like every other refusal, and a
    line on stdio that is not a JSON-RPC message answered (``UnreadableLinesAnswered``)."""

    #: The arguments each tool names, by tool, read from the tools on the first call.
    _arguments: dict[str, set[str]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._arguments = {}
        #: Tools not registered with the SDK yet, by name: registering one builds its argument
        #: and answer models and their JSON schemas (about 5 ms each), so it waits for the
        #: tool's first call, or for a listing the cache does not hold.
        self._unregistered: dict[str, Callable[..., Any]] = {}
        self._listing: list[MCPTool] | None = None

    def add_board_tool(self, function: Callable[..., Any]) -> None:
        self._unregistered[function.__name__] = function

    def _register(self, name: str) -> None:
        function = self._unregistered.pop(name, None)
        if function is not None:
            self.add_tool(function, annotations=TOOL_HINTS[name])

    async def run_stdio_async(self) -> None:
        server = self._lowlevel_server
        async with stdio_server() as (messages, replies):
            await server.run(UnreadableLinesAnswered(messages, replies), replies, server.create_initialization_options())

    async def list_tools(self) -> list[MCPTool]:
        """Every tool's input schema closed: an argument it does not name is an error, not
        silently dropped (``progres: 50`` would otherwise change nothing and succeed). The
        listing comes from ``tool_listing``'s cache when it was made by this very code."""
        if self._listing is None:
            self._listing = await tool_listing.cached(self._build_listing)
        return [tool.model_copy(deep=True) for tool in self._listing]

    async def _build_listing(self) -> list[MCPTool]:
        for name in list(self._unregistered):
            self._register(name)
        tools = await super().list_tools()
        for listed in tools:
            listed.input_schema = {**listed.input_schema, "additionalProperties": False}
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if not self._arguments:
            self._arguments = {tool.name: set(tool.input_schema.get("properties", {})) for tool in await self.list_tools()}
        self._register(name)
        takes = self._arguments.get(name) or set()
        unknown = sorted(set(arguments) - takes) if takes else []
        if unknown:
            raise ToolError(
                f"Error executing tool {name}: unknown argument{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(shortened(u) for u in unknown)}; {name} takes {', '.join(sorted(takes))}"
            )
        try:
            return compact(await super().call_tool(name, arguments, context))
        except ToolError as error:
            cause = error.__cause__
            if not isinstance(cause, ValidationError):
                raise
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in cause.errors())
            raise ToolError(f"Error executing tool {name}: {problems}") from None


def compact(result: Any) -> Any:
    """A tool's answer with its text block, the JSON of its structured content, written without
    indentation: half the bytes of the SDK's indented copy, for the same JSON."""
    import json

    from mcp.types import CallToolResult, TextContent

    if not isinstance(result, CallToolResult) or result.structured_content is None or len(result.content) != 1:
        return result
    [block] = result.content
    if not isinstance(block, TextContent) or result.structured_content == {"result": block.text}:
        return result  # a text answer (board_prompt's), wrapped as {"result": text}
    block.text = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    return result


def build_server(board: ServedBoard, follower: BoardFollower) -> BoardServer:
    server = BoardServer(
        "board", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING",
        subscriptions=follower.bus, middleware=[follow_listen_streams(follower)],
    )
    serve_legacy_subscriptions(server, follower)

    def tool() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """``server.tool`` with the tool's hints (``TOOL_HINTS``, by its function's name), once
        it is first called or listed (``BoardServer.add_board_tool``)."""

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            if function.__name__ not in TOOL_HINTS:
                raise KeyError(f"tool {function.__name__} has no hints in TOOL_HINTS")
            server.add_board_tool(function)
            return function

        return register

    @tool()
    def task_create(
        subject: Annotated[str, Field(description="one line saying what is to be done")],
        description: Annotated[str, Field(description="the details (any length, several lines)")] = "",
        active_form: Annotated[str, Field(description="what an agent shows while doing it ('Writing the parser')")] = "",
        blocked_by: Annotated[Ids | None, Field(description="tasks that must be completed first")] = None,
        blocks: Annotated[Ids | None, Field(description="tasks that wait on this one")] = None,
        priority: Annotated[PriorityName, Field(description="claim order comes first from this")] = "medium",
        parent: Annotated[Id | None, Field(description="make it a sub-task of this task")] = None,
        files: Annotated[Texts | None, Field(description="files the task will change, relative to the workspace (conflict alerts watch them)")] = None,
        label: Annotated[Texts | None, Field(description="a label, or several")] = None,
        id: Annotated[Id | None, Field(description="use this id instead of the next number")] = None,
        agent: Annotated[str | None, AGENT] = None,
    ) -> TaskDocument:
        """Create a task (board task create). Returns it as task_show does."""

        def create(store: Store, name: str | None) -> TaskDocument:
            task = store.create(
                subject, description=description, active_form=active_form, blocked_by=id_list(blocked_by, "blocked_by"),
                blocks=id_list(blocks, "blocks"), priority=priority, parent=checked(values.task_id, parent, "parent") if parent is not None else None,
                files=text_list(files), labels=label_list(label), task_id=checked(values.task_id, id, "id") if id is not None else None,
                actor=name or acting_user(),
            )
            return whole(store, task)

        return board.call(agent, create)

    @tool()
    def task_list(
        ready: Annotated[bool, Field(description="only tasks that can start now")] = False,
        status: Annotated[StatusName | None, Field(description="only tasks in this status")] = None,
        owner: Annotated[str | None, Field(description="only tasks this agent or person owns")] = None,
        label: Annotated[Texts | None, Field(description="only tasks with this label (several: all of them)")] = None,
        text: Annotated[str | None, Field(description="only tasks whose subject or description holds every word of this, in any case (board task search)")] = None,
        sort: Annotated[Literal["priority", "id", "updated"], Field(description="priority (most urgent first), id, or updated (latest first)")] = "id",
        all: Annotated[bool, Field(description="include tasks Claude Code keeps internal (metadata._internal)")] = False,
        full: Annotated[bool, Field(description="each task's whole document plus `derived`, as task_show gives it less tokens, instead of its row")] = False,
        limit: Annotated[int, Field(ge=1, le=MOST_ROWS, description=f"tasks on this page (default {PAGE})")] = PAGE,
        cursor: Annotated[str | None, Field(description="the nextCursor of the page before, for the page after it (with the same filters)")] = None,
    ) -> Listing:
        """List tasks (board task list), a page at a time: each task in one row (id, subject,
        status, priority, owner, progress, ready, blockedBy, labels, lease, version), or its
        whole document with `full`. `total` and `counts` (by status) cover every page;
        `nextCursor` fetches the next one (null on the last). `unreadable`, on the first page,
        names tasks whose file cannot be read, and why."""

        def listing(store: Store, name: str | None) -> Listing:
            chosen = select_tasks(
                store, by_id(store.tasks), status=status, owner=owner, labels=label_list(label), ready=ready, sort=sort, include_hidden=all,
                words=(text or "").split(),
            )
            asked = [ready, status, owner, label_list(label), text, sort, all, full]
            start = 0 if cursor is None else resumed_at(cursor, asked, chosen, in_id_order=sort == "id")
            page = chosen[start : start + limit]
            unreadable = [] if cursor is not None else [
                {"id": task_id, "path": str(store.layout.task_path(task_id)), "reason": reason} for task_id, reason in sorted(store.unreadable_tasks().items())
            ]
            counts: dict[str, int] = {}
            for task in chosen:
                counts[str(task.status)] = counts.get(str(task.status), 0) + 1
            more = start + limit < len(chosen)
            return {
                "tasks": [whole(store, t) if full else task_row(t, store.graph) for t in page],  # type: ignore[misc]
                "unreadable": unreadable,  # type: ignore[typeddict-item]
                "total": len(chosen),
                "counts": counts,
                "nextCursor": cursor_after(page[-1].id, start + limit, asked) if more else None,
            }

        return board.call(None, listing)

    @tool()
    def task_show(id: Annotated[Id, TASK]) -> ShownTask:
        """One task (board task show --json): its whole document plus `derived`, and the tokens
        of the messages agents sent while on it, priced (`tokens`)."""
        def show(store: Store, name: str | None) -> ShownTask:
            return shown_task(store, store.get(checked(values.task_id, id, "id")))  # type: ignore[return-value]

        return board.call(None, show)

    @tool()
    def task_update(
        id: Annotated[Id, Field(description="the task to change")],
        status: Annotated[StatusName | None, Field(description="move it: completed or failed when done, waiting (with question) to ask a person, paused, blocked, pending to give it back")] = None,
        progress: Annotated[int | None, Field(ge=0, le=100, description="0-100")] = None,
        owner: Annotated[str | None, Field(description="who works on it")] = None,
        priority: Annotated[PriorityName | None, Field(description="a new priority")] = None,
        subject: Annotated[str | None, Field(description="a new subject")] = None,
        description: Annotated[str | None, Field(description="a new description")] = None,
        active_form: Annotated[str | None, Field(description="what an agent shows while doing it")] = None,
        error: Annotated[str | None, Field(description="why it failed (with status failed)")] = None,
        question: Annotated[str | None, Field(description="what a person must decide or do (with status waiting)")] = None,
        files: Annotated[Texts | None, Field(description="replace the files it will change")] = None,
        label: Annotated[Texts | None, Field(description="labels to add")] = None,
        remove_label: Annotated[Texts | None, Field(description="labels to remove")] = None,
        add_blocked_by: Annotated[Ids | None, Field(description="add dependencies: these must be completed first")] = None,
        add_blocks: Annotated[Ids | None, Field(description="make these tasks wait on this one")] = None,
        remove_blocked_by: Annotated[Ids | None, Field(description="drop these dependencies (both sides)")] = None,
        remove_blocks: Annotated[Ids | None, Field(description="stop blocking these tasks (both sides)")] = None,
        expect_version: Annotated[int | None, Field(description="refuse the change unless the task is at this version")] = None,
        token: Annotated[int | None, TOKEN] = None,
        agent: Annotated[str | None, AGENT] = None,
    ) -> TaskDocument:
        """Change a task (board task update): its status, progress, owner, priority,
        dependencies, labels, text, or the question it waits on. Returns it as task_show does.
        A task another agent holds is changed only with its token: overriding a live lease is a
        person's, on the dashboard or the command line."""

        def update(store: Store, name: str | None) -> TaskDocument:
            wanted = checked(values.task_id, id, "id")
            change = actions.TaskChange(
                status=status, owner=owner, progress=progress, subject=subject, description=description, active_form=active_form,
                priority=priority, error=error, question=question, files=text_list(files) if files is not None else None,
                add_labels=label_list(label), remove_labels=label_list(remove_label, "remove_label"),
                add_blocked_by=id_list(add_blocked_by, "add_blocked_by"), add_blocks=id_list(add_blocks, "add_blocks"),
                remove_blocked_by=id_list(remove_blocked_by, "remove_blocked_by"), remove_blocks=id_list(remove_blocks, "remove_blocks"),
            )
            return whole(store, actions.update_task(store, wanted, change, mover(name, token, wanted, expected_version=expect_version)))

        return board.call(agent, update)

    @tool()
    def claim(
        agent: Annotated[str | None, Field(description="the agent taking the task (default: $BOARD_AGENT of the server)")] = None,
        lease: Annotated[float, Field(ge=1, le=86400, description="seconds the claim holds without a heartbeat")] = DEFAULT_LEASE_SECONDS,
        max: Annotated[int, Field(ge=1, description="how many tasks the agent may hold at once")] = 1,
    ) -> Claimed:
        """Take the best ready task (board claim --json): it is yours, in progress, under a lease
        whose `token` (in task.lease) you pass to every change. `task` is null when nothing is ready."""

        def take(store: Store, name: str | None) -> Claimed:
            taken = actions.claim(store, needed(name), lease_seconds=lease, max_held=max)
            return {"task": None if taken is None else whole(store, taken)}

        return board.call(agent, take)

    @tool()
    def heartbeat(
        agent: Annotated[str | None, Field(description="the agent whose leases to renew (default: $BOARD_AGENT of the server)")] = None,
        lease: Annotated[float | None, Field(ge=1, le=86400, description="a new length for the leases (default: each keeps its own)")] = None,
    ) -> Renewed:
        """Renew every lease the agent holds (board heartbeat --json); send it every third of the lease."""

        def renew(store: Store, name: str | None) -> Renewed:
            return {"renewed": [t.id for t in store.heartbeat(needed(name), lease_seconds=lease)]}

        return board.call(agent, renew)

    @tool()
    def release(
        id: Annotated[Id, Field(description="the task to give back")],
        token: Annotated[int | None, TOKEN] = None,
        agent: Annotated[str | None, AGENT] = None,
    ) -> TaskDocument:
        """Give a task in progress back to the queue (board release --json)."""

        def give_back(store: Store, name: str | None) -> TaskDocument:
            wanted = checked(values.task_id, id, "id")
            return whole(store, actions.release(store, wanted, mover(name, token, wanted)))

        return board.call(agent, give_back)

    @tool()
    def toolcall(
        id: Annotated[Id, Field(description="the task the call was made for")],
        tool: Annotated[str, Field(description="the tool's name (Edit, Bash, ...)")],
        failed: Annotated[bool, Field(description="the call failed (counts toward the failure policy)")] = False,
        file: Annotated[Texts | None, Field(description="files the call touched (conflict alerts watch them)")] = None,
        ms: Annotated[int | None, Field(ge=0, description="how long the call took, in milliseconds")] = None,
        agent: Annotated[str | None, Field(description="who made the call (default: $BOARD_AGENT of the server, else the task's owner)")] = None,
        token: Annotated[int | None, TOKEN] = None,
    ) -> TaskDocument:
        """Record a tool call an agent made for a task (board toolcall --json)."""

        def record(store: Store, name: str | None) -> TaskDocument:
            wanted = checked(values.task_id, id, "id")
            task = store.record_toolcall(wanted, tool, ok=not failed, ms=ms, files=text_list(file), agent=name, token=lease_token(token, wanted))
            return whole(store, task)

        return board.call(agent, record, tool_call=True)

    @tool()
    def reserve(
        id: Annotated[Id, Field(description="the task the reservation is for")],
        path: Annotated[Texts, Field(description="files to reserve, relative to the workspace")],
        mode: Annotated[ModeName, Field(description="write: one writer and no readers; read: any number of readers")] = "write",
        ttl: Annotated[float | None, Field(ge=1, le=86400, description="seconds it lasts (default: alerts.reservation_ttl_seconds, 300)")] = None,
        agent: Annotated[str | None, Field(description="who reserves (default: $BOARD_AGENT of the server, else the task's owner)")] = None,
    ) -> Reservations:
        """Reserve files for a task, a soft lock between agents (board reserve --json); unreserve
        gives them up. A file another agent holds is refused, naming the holder."""
        from board.config import load_settings
        from board.reservations import reserve as reserve_files

        def hold(store: Store, name: str | None) -> Reservations:
            seconds = ttl if ttl is not None else load_settings(store.local_dir).alerts.reservation_ttl_seconds
            made = reserve_files(store, checked(values.task_id, id, "id"), text_list(path), agent=name, mode=mode, ttl_seconds=seconds)
            return {"reservations": [{"path": r.path, **r.to_dict()} for r in made]}  # type: ignore[typeddict-item]

        return board.call(agent, hold)

    @tool()
    def alerts(fetch: Annotated[bool, Field(description="run 'git fetch' first (never done unless asked)")] = False) -> Alerts:
        """Evaluate drift and conflict alerts now, worst first (board alerts --json)."""
        from board.alerts import refresh_alerts
        from board.config import load_settings

        def evaluate(store: Store, name: str | None) -> Alerts:
            found = refresh_alerts(store, now=store.clock(), settings=load_settings(store.local_dir), fetch=True if fetch else None, rescan=False)
            return {"alerts": [a.to_dict() for a in found]}  # type: ignore[misc]

        return board.call(None, evaluate)

    @tool()
    def board_prompt() -> str:
        """The board in a few lines for an agent's context (board task list --format prompt):
        [ ] pending, [>] in progress, [!] blocked or failed, [=] paused, [?] waiting, [-] cancelled, [x] completed."""
        return board.call(None, lambda store, name: board.render(PROMPT_URI) or "")

    @tool()
    def task_delete(
        id: Annotated[Id, Field(description="the task to archive")],
        token: Annotated[int | None, Field(description="your lease token, if you hold the task")] = None,
        agent: Annotated[str | None, AGENT] = None,
    ) -> TaskDocument:
        """Move a task to the archive (board task delete --json); refused while other tasks depend
        on it (deleting it anyway is a person's, on the dashboard or the command line).
        task_restore brings it back."""

        def delete(store: Store, name: str | None) -> TaskDocument:
            wanted = checked(values.task_id, id, "id")
            return whole(store, actions.delete(store, wanted, mover(name, token, wanted)))

        return board.call(agent, delete)

    @tool()
    def message(
        to: Annotated[str, Field(description="the Claude Code team member to write to (board agents lists them)")],
        text: Annotated[str, Field(description="the message, as the member will read it")],
        summary: Annotated[str | None, Field(description="a few words shown in the member's inbox list")] = None,
        team: Annotated[str | None, Field(description="the team, when the name is in several")] = None,
        agent: Annotated[str | None, AGENT] = None,
    ) -> Sent:
        """Append a message to a team member's inbox (board message --json), in Claude Code's own
        format and under its lock."""

        def send(store: Store, name: str | None) -> Sent:
            return send_message(store, to, name or acting_user(), text, summary=summary, team=team)  # type: ignore[return-value]

        return board.call(agent, send)

    @tool()
    def task_restore(
        id: Annotated[Id, Field(description="the deleted task to bring back")],
        agent: Annotated[str | None, AGENT] = None,
    ) -> TaskDocument:
        """Bring a deleted task back from the archive (board task restore --json), or one Claude
        Code removed from its list. Returns it as task_show does."""

        def restore(store: Store, name: str | None) -> TaskDocument:
            wanted = checked(values.task_id, id, "id")
            return whole(store, actions.restore(store, wanted, mover(name, None, wanted)))

        return board.call(agent, restore)

    @tool()
    def answer(
        id: Annotated[Id, Field(description="the task that waits (status waiting) on a question")],
        text: Annotated[str, Field(description="the answer, as the agent will read it (the task's `answer`)")],
        requeue: Annotated[bool, Field(description="put it back in the queue for any agent instead of its owner")] = False,
        agent: Annotated[str | None, Field(description="who answers (default: $BOARD_AGENT of the server, else the server's user)")] = None,
    ) -> TaskDocument:
        """Answer the question a waiting task asks (board answer --json): a person's answer,
        relayed by whoever they told it to. The task goes back to its owner, in progress, or
        to the queue with `requeue` (or when its owner is gone). Returns it as task_show does."""

        def reply(store: Store, name: str | None) -> TaskDocument:
            wanted = checked(values.task_id, id, "id")
            return whole(store, actions.answer(store, wanted, text, mover(name, None, wanted), requeue=requeue))

        return board.call(agent, reply)

    @tool()
    def reservations() -> Reservations:
        """The file reservations that hold now, by path (board reservations --json): who holds
        each file, for which task, to read or to write, and until when."""
        from board.reservations import active_reservations

        def held(store: Store, name: str | None) -> Reservations:
            found = active_reservations(store.reservation_book, store.clock(), store.tasks)
            return {"reservations": [{"path": r.path, **r.to_dict()} for r in found]}  # type: ignore[typeddict-item]

        return board.call(None, held)

    @tool()
    def unreserve(
        id: Annotated[Id, Field(description="the task whose reservations go")],
        path: Annotated[Texts | None, Field(description="only these files (default: all of the task's)")] = None,
        agent: Annotated[str | None, Field(description="only this agent's holdings (default: every holder's, for the task)")] = None,
    ) -> Unreserved:
        """Give up a task's file reservations (board unreserve --json), all of them or the files
        named, so another agent can reserve them; `released` lists the paths."""
        from board.reservations import unreserve as unreserve_files

        def release_files(store: Store, name: str | None) -> Unreserved:
            holder = checked(values.agent_name, agent, "agent") if agent is not None else None
            return {"released": unreserve_files(store, checked(values.task_id, id, "id"), text_list(path), agent=holder)}

        return board.call(None, release_files)

    @tool()
    def checkpoint(
        id: Annotated[Id, Field(description="the task to checkpoint")],
        note: Annotated[str, Field(description="what to do next, for whoever resumes the task")] = "",
        list: Annotated[bool, Field(description="list the task's checkpoints instead, saying which are corrupt")] = False,
        agent: Annotated[str | None, AGENT] = None,
    ) -> Checkpointed:
        """Record where a task stands (board checkpoint --json): its document, git HEAD, the
        hashes of its files and a note, so work can resume from it (resume). With `list`, the
        task's checkpoints instead."""
        from board.checkpoints import checkpoint_json, checkpoint_rows, write_checkpoint

        def record(store: Store, name: str | None) -> Checkpointed:
            wanted = checked(values.task_id, id, "id")
            store.get(wanted)
            if list:
                return {"checkpoint": None, "checkpoints": checkpoint_rows(store.checkpoint_book, wanted)}  # type: ignore[typeddict-item]
            written = write_checkpoint(store, wanted, reason="request", note=note, actor=name or acting_user())
            return {"checkpoint": checkpoint_json(written), "checkpoints": None}  # type: ignore[typeddict-item]

        return board.call(agent, record)

    @tool()
    def resume(
        id: Annotated[Id, Field(description="the task to resume")],
        seq: Annotated[int | None, Field(ge=1, description="resume from this checkpoint instead of the newest")] = None,
    ) -> Resumed:
        """Where a task was left and what changed since (board resume --json): its newest
        checkpoint (with the note), the files changed since, git HEAD then and now, and the task
        fields that changed. Refused when it has no checkpoint, or the checkpoint is corrupt."""
        from board.checkpoints import resume_from

        def since(store: Store, name: str | None) -> Resumed:
            return resume_from(store, checked(values.task_id, id, "id"), seq).to_dict()  # type: ignore[return-value]

        return board.call(None, since)

    @tool()
    def agents() -> Agents:
        """The board's agents (board agents --json): registered ones (command line, MCP, workers)
        and the members of the Claude Code teams working on the board, each with its state
        (working, idle, gone, stale), task, tool calls, tokens, and whether `message` reaches it."""
        from board.messaging import agents_json, board_roster

        def roster(store: Store, name: str | None) -> Agents:
            return agents_json(*board_roster(store, store.clock()))  # type: ignore[return-value]

        return board.call(None, roster)

    @tool()
    def plan_import(
        text: Annotated[str, Field(description="the plan in markdown: headings or list items are tasks, nested items their sub-tasks; lines like 'after: 2', 'needs: \"Set up the database\"', 'labels: api, db', 'priority: high' give dependencies and fields")],
        source: Annotated[str, Field(description="the plan's name on the board: importing the same name again updates the tasks it made instead of making new ones")] = "plan.md",
        dry_run: Annotated[bool, Field(description="only show what it would create and update, the waves and the critical path; change nothing")] = False,
        prune: Annotated[bool, Field(description="cancel the tasks this plan made earlier that it no longer has (else they are only reported)")] = False,
        agent: Annotated[str | None, AGENT] = None,
    ) -> PlanImported:
        """Put a markdown plan on the board as tasks, in one call (board plan import): call it
        with dry_run first to see the tasks, waves and critical path, then without. A refused
        plan (a cycle, a reference to no task, a title written twice) is an error naming its
        line, and nothing is written."""
        from board.plans.importing import import_plan
        from board.plans.markdown import parse_markdown

        def put(store: Store, name: str | None) -> PlanImported:
            if not source.strip() or "\n" in source:
                raise BoardError("source is one line naming the plan, e.g. plan.md")
            plan = parse_markdown(text, source.strip())
            report = import_plan(store, plan, actor=name or acting_user(), dry_run=dry_run, prune=prune)
            return report.as_json()  # type: ignore[return-value]

        return board.call(agent, put)

    @server.resource(PROMPT_URI, name="prompt", title="The board, for an agent's context", mime_type="text/plain")
    def prompt_resource() -> str:
        """The board in a few lines (board task list --format prompt), updated as the board changes."""
        with board.fresh():
            return board.render(PROMPT_URI) or ""

    @server.resource(TASK_URI, name="task", title="One task", mime_type="application/json")
    def task_resource(id: str) -> str:
        """One task as task_show gives it, updated as the board changes."""
        try:
            with board.fresh():
                text = board.render(TASK_URI.replace("{id}", id))
        except BoardError as error:
            raise ResourceError(error.spoken(to_a_tool)) from None
        if text is None:
            raise ResourceNotFoundError(str(TaskNotFound(id)))
        return text

    return server


def needed(name: str | None) -> str:
    if name is None:
        raise BoardError("name the agent: pass agent, or start the server with BOARD_AGENT set")
    return name


def serve(workspace: Path) -> None:
    """Serve the board on stdin and stdout until the client closes them."""
    board = ServedBoard(workspace)
    follower = BoardFollower(board)
    server = build_server(board, follower)

    async def ended_by_signal() -> None:
        # A client that stops waiting for the server to exit sends SIGTERM (the SDK's does after
        # two seconds): end as on a closed stdin, so its agents are marked stopped. Not by
        # cancelling the server: its stdin is read in a thread, which waits for the next line.
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
            async for _ in signals:
                follower.stop()
                board.close()
                os._exit(0)

    async def run() -> None:
        async with anyio.create_task_group() as tasks:
            follower.start_in(tasks)
            tasks.start_soon(ended_by_signal)
            try:
                await server.run_stdio_async()
            finally:
                follower.stop()
                tasks.cancel_scope.cancel()

    try:
        anyio.run(run)
    finally:
        board.close()
