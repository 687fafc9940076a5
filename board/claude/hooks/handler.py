"""``board hook``: one Claude Code hook event, read from stdin, applied to the board.

Never in the agent's way: no board in reach, a broken file, a lock not had within a second,
any exception at all: exit 0, nothing on stdout, one line in the hook log (``logs/hook.log``
under the board, else under the user's cache). Only a deliberate block exits 2, its reason
on stderr, which Claude Code shows the model; the tool call then does not happen.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from board import json_bounds
from board.claude.hooks.agents import Who, adopt_name, agents_of_session, attribute, bind_session, identify, named_in_command, recorded_activity, recorded_todos, task_of, update_agent
from board.claude.hooks.endpoint import MAX_PAYLOAD_BYTES
from board.claude.hooks.guard import Blocked, check_write
from board.claude.hooks.hook_log import note
from board.claude.hooks.where import HookBoard, event_task_list, find_board
from board.toolcall_log import FILE_TOOLS, MAX_TOOL_NAME, append_call, call_record
from board.workspace_files import workspace_file

# Only for annotations, which are never evaluated: ``board hook`` starts faster without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: How long a call waits for a log's lock before it gives up (and is noted in the hook log).
LOCK_WAIT_SECONDS = 1.0

if TYPE_CHECKING:
    Handler = Callable[[HookBoard, Mapping[str, Any], Mapping[str, str], datetime], None]


def main(argv: list[str]) -> int:
    """``board hook``: the event on stdin; exit 2 with the reason on stderr when it is stopped."""
    try:
        payload = json_bounds.loads(sys.stdin.buffer.read(MAX_PAYLOAD_BYTES) or b"null")
    except BaseException as error:  # noqa: BLE001 - whatever it is, the agent goes on
        note(None, f"?: {type(error).__name__}: {error}")
        return 0
    reason = apply_event(payload, os.environ)
    if reason is None:
        return 0
    sys.stderr.write(f"{reason}\n")
    return 2


def apply_event(payload: object, environ: Mapping[str, str]) -> str | None:
    """One hook event applied to its board, however it came (``board hook``'s stdin, or a POST
    to ``board hooks serve``): the reason when the guard stops the call, else None. Never
    raises: whatever goes wrong is one line in the hook log, and the agent goes on."""
    board: HookBoard | None = None
    event = "?"
    try:
        if not isinstance(payload, dict):
            raise ValueError("the event is not a JSON object")
        event = str(payload.get("hook_event_name") or "?")
        board = find_board(payload, environ)
        if event in SERVER_STARTING_EVENTS:
            start_hook_server(board, payload)
        if board is None:
            note(None, f"{event}: no board from {payload.get('cwd') or os.getcwd()} (no .tasks/ there or above, no BOARD_WORKSPACE)")
            return None
        handler = HANDLERS.get(event)
        if handler is not None:
            handler(board, payload, environ, datetime.now(UTC))
        return None
    except Blocked as blocked:
        return str(blocked)
    except BaseException as error:  # noqa: BLE001 - whatever it is, the agent goes on
        note(board, f"{event}: {type(error).__name__}: {error}")
        return None


def start_hook_server(board: HookBoard | None, payload: Mapping[str, Any]) -> None:
    """Make sure board's server listens wherever the session's settings POST its tool calls
    (``board.claude.hooks.server``); a port it cannot have is noted, and ``board hooks status`` says why."""
    from board.claude.hooks.install import http_ports

    cwd = Path(str(payload.get("cwd") or os.getcwd()))
    ports = http_ports(cwd)
    if not ports:
        return
    from board.claude.hooks.endpoint import ensure_server

    for port in ports:
        problem = ensure_server(port)
        if problem is not None:
            note(board, f"{payload.get('hook_event_name')}: board's http hooks: {problem}")


def _iso(now: datetime) -> str:
    return now.isoformat(timespec="microseconds").replace("+00:00", "Z")


# -- tool calls --------------------------------------------------------------------------------


def tool_used(board: HookBoard, payload: Mapping[str, Any], environ: Mapping[str, str], now: datetime) -> None:
    """PostToolUse / PostToolUseFailure: the call counted on the agent's task (or the agent
    alone), a file tool's file recorded as a touch."""
    who = identify(board, payload, environ)
    named = named_in_command(payload)
    if named is not None and named != who.name and who.kind == "session" and not environ.get("BOARD_AGENT"):
        # A session that names itself in a board command (``board claim --agent NAME``) is that
        # agent from this call on: the call that claimed a task is counted on it, under that name.
        adopt_name(board, payload.get("session_id"), named)
        who = Who(named, "session")
    agent, task = who.name, task_of(board, who, environ)
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not tool or "\n" in tool:
        tool = "unknown"
    tool = tool[:MAX_TOOL_NAME]
    files = []
    if tool in FILE_TOOLS:
        tool_input = payload.get("tool_input")
        if isinstance(tool_input, dict):
            touched = workspace_file(board.workspace, tool_input.get("file_path") or tool_input.get("notebook_path"))
            if touched is not None:
                files.append(touched)
    failed = payload.get("hook_event_name") == "PostToolUseFailure"
    record = call_record(ts=_iso(now), agent=agent, tool=tool, ok=not failed, task=task, files=files, ms=_duration_ms(payload), call_id=_call_id(payload))
    append_call(board.state_dir, record, wait=LOCK_WAIT_SECONDS)
    _show_working(board, who, task, payload, now, renamed=named is not None and who.name == named)


def _show_working(board: HookBoard, who: Who, task: str | None, payload: Mapping[str, Any], now: datetime, *, renamed: bool = False) -> None:
    """A tool call means its agent works, whatever its record said last (idle after the turn
    before, or no record yet). Written only when it said something else (or the agent just
    took its name, and maybe a task): calls are many."""
    if renamed or recorded_activity(board, who.name) != "working":
        update_agent(board, who.name, _iso(now), activity="working", activityAt=_iso(now), task=task, **who.fields(payload))


def _duration_ms(payload: Mapping[str, Any]) -> int | None:
    """How long the tool ran, as Claude Code measured it (``duration_ms``); None when absent or
    not a plausible number of milliseconds (a day at most)."""
    value = payload.get("duration_ms")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if type(value) is int and 0 <= value <= 86_400_000 else None


def tool_wanted(board: HookBoard, payload: Mapping[str, Any], environ: Mapping[str, str], now: datetime) -> None:
    """PreToolUse: a file tool's write stopped (``Blocked``) when another agent's task holds the file."""
    if payload.get("tool_name") not in FILE_TOOLS:
        return
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return
    path = workspace_file(board.workspace, tool_input.get("file_path") or tool_input.get("notebook_path"))
    if path is None:
        return
    who = identify(board, payload, environ)
    task = task_of(board, who, environ)
    _show_working(board, who, task, payload, now)
    try:
        warning = check_write(board, path, who.name, task, now)
    except Blocked:
        _count_blocked(board, payload, who.name, task, now)
        raise
    if warning is not None:
        note(board, f"PreToolUse: let {who.name} write: {warning}")


def _call_id(payload: Mapping[str, Any]) -> str | None:
    """Claude Code's id for the call (``tool_use_id``), as its transcript names it."""
    value = payload.get("tool_use_id")
    return value if isinstance(value, str) and value and len(value) <= 200 and "\n" not in value else None


def _count_blocked(board: HookBoard, payload: Mapping[str, Any], agent: str, task: str | None, now: datetime) -> None:
    """A call the guard stops never reaches PostToolUse: it is counted here, as blocked."""
    tool = str(payload.get("tool_name"))[:MAX_TOOL_NAME]
    record = call_record(ts=_iso(now), agent=agent, tool=tool, ok=False, task=task, call_id=_call_id(payload), blocked=True)
    try:
        append_call(board.state_dir, record, wait=LOCK_WAIT_SECONDS)
    except OSError as error:  # the block stands whether or not it was counted
        note(board, f"PreToolUse: {type(error).__name__}: {error}")


# -- transcripts -------------------------------------------------------------------------------


def _with_transcript(handle: Handler, *, final: bool) -> Handler:
    """``handle``, then a look at the session's transcript (``board.claude.transcripts``): the calls no
    hook reported, and the tokens of its messages. ``final``: the session (or sub-agent) ended."""

    def both(board: HookBoard, payload: Mapping[str, Any], environ: Mapping[str, str], now: datetime) -> None:
        handle(board, payload, environ, now)
        read_session_transcript(board, payload, environ, now, final=final)

    return both


def read_session_transcript(board: HookBoard, payload: Mapping[str, Any], environ: Mapping[str, str], now: datetime, *, final: bool, again: bool = False) -> None:
    """Read what is new in the transcript of the session (or sub-agent) the event is about.
    A turn's end is looked at twice: now, and ``again`` a little later (``second_look``)."""
    key = "agent_transcript_path" if payload.get("hook_event_name") == "SubagentStop" else "transcript_path"
    transcript = payload.get(key)
    if not isinstance(transcript, str) or not transcript:
        return
    from board.claude.hooks.agents import agent_name
    from board.claude.transcripts import read_transcript

    ends_a_turn = payload.get("hook_event_name") in ("Stop", "SubagentStop")
    if ends_a_turn and not again:
        _wait_for_last_message(Path(transcript), payload.get("last_assistant_message"))
    agent, task = attribute(board, payload, environ)
    session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    # Calls a session made before it named itself were logged under the name made from it.
    earlier = [agent_name(f"claude-{session[:8]}")] if session else []
    read_transcript(board.state_dir, Path(transcript), agent=agent, task=task, session=session, now=_iso(now), other_agents=earlier, final=final, wait=LOCK_WAIT_SECONDS)
    _note_model_spent(board, agent, now)
    if ends_a_turn and not again:
        from board.claude.hooks.second_look import start_second_look

        start_second_look(payload, environ, Path(transcript))


def _note_model_spent(board: HookBoard, agent: str, now: datetime) -> None:
    """A session started with ``-p`` names no model at its start: its agent's model is then the
    one most of its messages came from, as its transcript says."""
    from board.claude.hooks.agents import names_no_model
    from board.claude.transcripts import agent_tokens_path, read_tokens

    if not names_no_model(board, agent):
        return
    spent = {model: sums for model, sums in read_tokens(agent_tokens_path(board.state_dir, agent)).items() if model != "unknown"}
    if spent:
        update_agent(board, agent, _iso(now), model=max(spent, key=lambda model: spent[model]["messages"]))


#: How long a Stop or SubagentStop waits for the turn's last message to reach the transcript.
LAST_MESSAGE_WAIT_SECONDS = 2.0


def _wait_for_last_message(transcript: Path, last: object) -> None:
    """Claude Code may fire Stop / SubagentStop a moment before the turn's last message is in the
    transcript (a teammate's, most often), and no later event may come to read it: its tokens
    would be lost. The event says what that message is (``last_assistant_message``); wait, a
    little, until the transcript's end holds it: after the turn's prompt, since an earlier turn
    may have ended with the very same words."""
    if not isinstance(last, str) or not last.strip():
        return
    deadline = time.monotonic() + LAST_MESSAGE_WAIT_SECONDS
    while True:
        try:
            if transcript_ends_with(transcript, last):
                return
        except OSError:
            return
        if time.monotonic() >= deadline:
            return
        time.sleep(0.02)


def transcript_ends_with(transcript: Path, text: str, *, past: int = 0) -> bool:
    """Whether the transcript is longer than ``past`` bytes and its last turn (read from its
    last 256 KiB, never from before ``past``) holds an assistant message with ``text``."""
    # Never waited on, should a FIFO stand where the transcript is said to be.
    fd = os.open(transcript, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        size = info.st_size
        if not stat.S_ISREG(info.st_mode) or size <= past:
            return False
        handle.seek(max(past, size - 256 * 1024))
        return ends_with_message(handle.read(), text)


def ends_with_message(tail: bytes, text: str) -> bool:
    """Does the transcript's last turn (what follows its last user entry: a prompt, a tool's
    result, a teammate's message) hold an assistant message with ``text``? ``tail`` is the
    transcript's end; a first line cut in half is skipped."""
    import json

    wanted = text.strip()[:100]
    for line in reversed(tail.splitlines()):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        if entry.get("type") == "user":
            return False
        message = entry.get("message")
        if entry.get("type") != "assistant" or not isinstance(message, dict):
            continue
        content = message.get("content")
        texts = [content] if isinstance(content, str) else [b.get("text") for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if any(isinstance(t, str) and wanted in t for t in texts):
            return True
    return False


# -- agents ------------------------------------------------------------------------------------


def _activity(activity: str) -> Handler:
    def handle(board: HookBoard, payload: Mapping[str, Any], environ: Mapping[str, str], now: datetime) -> None:
        who = identify(board, payload, environ)
        if activity == "working" and who.kind == "session":
            bind_session(board, payload.get("session_id"), who.name)
        # A teammate's turn ends with SubagentStop: it idles, a member still; a sub-agent is gone.
        now_doing = "idle" if activity == "gone" and who.kind == "teammate" else activity
        update_agent(board, who.name, _iso(now), activity=now_doing, activityAt=_iso(now), task=task_of(board, who, environ), **who.fields(payload))
        if payload.get("hook_event_name") == "SessionEnd":
            _end_with_session(board, payload, who.name, now)

    return handle


def _end_with_session(board: HookBoard, payload: Mapping[str, Any], own: str, now: datetime) -> None:
    """The session ended: so did every agent that ran in it (in-process teammates, sub-agents
    that never said they stopped), whatever their records said last."""
    for name in agents_of_session(board, payload.get("session_id")):
        if name != own and recorded_activity(board, name) != "gone":
            update_agent(board, name, _iso(now), activity="gone", activityAt=_iso(now))


def task_completed(board: HookBoard, payload: Mapping[str, Any], environ: Mapping[str, str], now: datetime) -> None:
    """TaskCompleted: a board task Claude Code completed, completed on the board too if board
    missed it (the store's rules apply: a task that may not complete stays as it is).

    Only when the board is the Claude Code task list the event is about: the list the session
    shares (``CLAUDE_CODE_TASK_LIST_ID``) or its team's. With neither, the item is one of the
    session's own todo list, whose ids (1, 2, ...) say nothing about any board's tasks."""
    if not board.claude or board.tasks_dir.name != event_task_list(payload, environ):
        if event_task_list(payload, environ) is None:
            todo_changed(board, payload, environ, now)
        return
    task_id = payload.get("task_id")
    if not isinstance(task_id, str) or not board.has_task(task_id):
        return
    state = board.task_state(task_id)
    if state is None or state[0] == "completed":
        return
    agent, _ = attribute(board, payload, environ)
    from board.actions import Who, complete  # a rare event: the whole rule book is worth loading
    from board.store import Store

    token = environ.get("BOARD_LEASE_TOKEN") if environ.get("BOARD_TASK_ID") == task_id else None
    # Without its token, the agent completes its own task over its own lease; anyone else's
    # live lease refuses the move (and the refusal is noted in the hook log).
    who = Who(agent, token=int(token)) if token and token.isdigit() else Who(agent, force=state[1] == agent)
    store = Store.open(board.tasks_dir if board.claude else board.workspace, whole=False)
    complete(store, task_id, who)


#: Command hooks that start board's server for the http hooks when none listens: a session's
#: start, and each prompt (a server that went quiet between two turns has exited).
SERVER_STARTING_EVENTS = ("SessionStart", "UserPromptSubmit")

#: An agent's todo list is kept to its last items, so its record stays small.
MAX_TODOS = 200


def todo_changed(board: HookBoard, payload: Mapping[str, Any], environ: Mapping[str, str], now: datetime) -> None:
    """TaskCreated / TaskCompleted on the session's own todo list (no shared list): the item,
    open or done, in its agent's record (``todos``: id to done), which board shows as "2/5 todos"."""
    if event_task_list(payload, environ) is not None:
        return  # a shared list: its items are tasks of a board, shown as such
    todo = payload.get("task_id")
    if not isinstance(todo, str) or not todo or len(todo) > 64:
        return
    who = identify(board, payload, environ)
    todos = recorded_todos(board, who.name)
    todos[todo] = payload.get("hook_event_name") == "TaskCompleted" or todos.get(todo, False)
    update_agent(board, who.name, _iso(now), todos=dict(list(todos.items())[-MAX_TODOS:]), **who.fields(payload))


HANDLERS: dict[str, Handler] = {
    "PostToolUse": tool_used,
    "PostToolUseFailure": tool_used,
    "PreToolUse": tool_wanted,
    "SessionStart": _activity("working"),
    "SubagentStart": _activity("working"),
    "UserPromptSubmit": _activity("working"),
    "Stop": _with_transcript(_activity("idle"), final=False),
    "TeammateIdle": _activity("idle"),
    "SubagentStop": _with_transcript(_activity("gone"), final=True),
    "SessionEnd": _with_transcript(_activity("gone"), final=True),
    "TaskCreated": todo_changed,
    "TaskCompleted": task_completed,
}
