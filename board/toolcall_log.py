"""Tool-call logs: one line per call an agent makes, appended without the board lock.

A tool call is the most frequent write on a board (every Edit, Bash and Read of every agent),
so it does not rewrite the task file. It is one line appended to the task's log
``toolcalls/<id>.jsonl`` and to the agent's ``agents/<name>.calls.jsonl``. The task document's
``toolCalls`` counts its log up to ``toolCalls.logged`` (a byte offset); readers add what the
log holds beyond that (``fold``), so the counts shown are exact, and the next write of the task
folds them into the document.

Standard library only: ``board hook`` runs this on every tool call of every agent and must
start fast.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from board import json_bounds
from board.errors import BoardError
from board.disk import confine
from board.disk.flock import flock_within

# Only for annotations, which are never evaluated: ``board hook`` starts faster without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Where a task's calls are logged, under the board's state directory.
TASK_LOGS = "toolcalls"
#: An agent's calls (on any task, or on none) are logged beside its registry record.
AGENT_LOGS = "agents"
AGENT_LOG_SUFFIX = ".calls.jsonl"
#: The tools whose ``file_path`` is a file the call writes: a touch, as ``--file`` records it.
FILE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
MAX_TOOL_NAME = 100


def check_tool_name(tool: str) -> str:
    if not tool or "\n" in tool or len(tool) > MAX_TOOL_NAME:
        raise BoardError(f"a tool name must be one line of 1-{MAX_TOOL_NAME} characters")
    return tool


def task_log(state_dir: Path, task_id: str) -> Path:
    return state_dir / TASK_LOGS / task_log_name(task_id)


def task_log_name(task_id: str) -> str:
    """The file name of a task's log, in ``TASK_LOGS``."""
    return f"{task_id}.jsonl"


def agent_log(state_dir: Path, agent: str) -> Path:
    return state_dir / AGENT_LOGS / f"{agent}{AGENT_LOG_SUFFIX}"


def call_record(
    *, ts: str, agent: str, tool: str, ok: bool, task: str | None, files: Iterable[str] = (), ms: int | None = None,
    call_id: str | None = None, blocked: bool = False,
) -> dict[str, Any]:
    """One call as its log line holds it. ``call_id``: Claude Code's ``tool_use_id``, which
    lets a look at the session's transcript (``board.claude.transcripts``) skip the calls hooks
    logged. A ``blocked`` call (a PreToolUse hook stopped it) is also one that failed."""
    record = {"ts": ts, "agent": agent, "task": task, "tool": tool, "ok": ok and not blocked, "ms": ms, "files": list(files)}
    if call_id is not None:
        record["id"] = call_id
    if blocked:
        record["blocked"] = True
    return record


def append_call(state_dir: Path, record: dict[str, Any], *, wait: float = 5.0) -> None:
    """Log a call on its task (when it has one) and on its agent.

    Each log gets the line in one write() on an O_APPEND descriptor, under a lock on that log
    alone (never the board's): a write a full disk cuts short is taken back before anyone
    appends after it, so no reader ever meets a torn line. Links and special files are refused
    rather than written through.

    A call with Claude Code's id that a log holds already is not logged there again: board's
    hooks in both the project's and the user's settings (two installations, two commands)
    both report every call, at the same moment.
    """
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    call_id = record.get("id")
    seen = f'"id":{json.dumps(call_id, ensure_ascii=False)}'.encode() if isinstance(call_id, str) else None
    if record.get("task") is not None:
        _append(task_log(state_dir, record["task"]), line, wait, unless=seen)
    _append(agent_log(state_dir, record["agent"]), line, wait, unless=seen)


def append_line(path: Path, line: bytes, *, wait: float = 5.0) -> None:
    """Append one whole line to a log, as ``append_call`` does."""
    _append(path, line, wait)


#: Read too: a call is looked for before it is logged (``_append``).
_APPEND_FLAGS = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


#: How far back a log is searched for a call logged already: the same event's other hook ran
#: at the same moment, a few lines back at most.
_RECENT_BYTES = 64 * 1024


def _append(path: Path, line: bytes, wait: float, *, unless: bytes | None = None) -> None:
    """``line`` appended, unless the log's recent lines hold ``unless`` (a call's id, logged)."""
    try:
        fd = confine.open_file(path, _APPEND_FLAGS, 0o644)
    except FileNotFoundError:
        confine.make_folders(path.parent)
        fd = confine.open_file(path, _APPEND_FLAGS, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, f"{path} is not a regular file; the call was not logged there")
        lock_within(fd, wait, f"{path} stayed locked for {wait:g} s; the call was not logged")
        if unless is not None:
            size = os.fstat(fd).st_size
            if unless in os.pread(fd, _RECENT_BYTES, max(0, size - _RECENT_BYTES)):
                return
        written = os.write(fd, line)
        if written != len(line):
            os.ftruncate(fd, os.lseek(fd, 0, os.SEEK_END) - written)
            raise OSError(errno.ENOSPC, f"only {written} of {len(line)} bytes could be written (disk full?); the line was taken back")
    finally:
        os.close(fd)  # closing drops the lock


def lock_within(fd: int, wait: float, refusal: str) -> None:
    """``flock`` the file exclusively, waiting at most ``wait`` seconds; then OSError(EAGAIN,
    ``refusal``)."""
    try:
        flock_within(fd, fcntl.LOCK_EX, wait)
    except TimeoutError:
        raise OSError(errno.EAGAIN, refusal) from None


#: Per task log: (inode, the document's counts it was folded onto, bytes folded up to, the
#: counts with them), so a process that reads a task again (the dashboard, ``board mcp``, a
#: store recording calls) reads only what was appended since, not the whole unfolded tail.
_UNFOLDED: dict[str, tuple[int, dict[str, Any], int, dict[str, Any]]] = {}


def count_unfolded(path: str, logged: int | None, counts_of: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
    """A document's counts (``counts_of()``: its ``toolCalls``, camelCase, asked for only when
    its log has grown past ``logged``) with the calls its log holds beyond them folded in,
    ``logged`` moved past them; None when the log holds none."""
    with _regular_log(path) as log:
        if log is None or log[1].st_size <= (logged or 0):
            return None
        fd, info = log
        counts = counts_of()
        known = _UNFOLDED.get(path)
        if known is not None and known[0] == info.st_ino and known[1] == counts and known[2] <= info.st_size:
            start, folded = known[2], known[3]
            if start == info.st_size:
                return folded
            skip = 0
        else:
            start, folded = logged or 0, counts
            skip = counts.get("total", 0) if logged is None else 0
        chunk = confine.read_from(fd, start, min(info.st_size - start, READ_AT_ONCE_MOST))
    more = fold_tail(folded, start, chunk, skip)
    if more is not None:
        folded = more
        _UNFOLDED[path] = (info.st_ino, counts, more["logged"], more)
    return None if folded is counts else folded  # None: nothing whole past what the document counted


def fold_tail(counts: dict[str, Any], start: int, tail: bytes, skip: int = 0) -> dict[str, Any] | None:
    """``counts`` with the calls of ``tail`` (a log's bytes from offset ``start``) folded in,
    the first ``skip`` of them left out, and ``logged`` moved past them; None when no whole line
    is left to count (a line still being written is left for the next reader)."""
    end = tail.rfind(b"\n") + 1
    lines = tail[:end].splitlines()[skip:]
    if not lines:
        return None
    folded = fold(counts, (record for record in map(_parse, lines) if record is not None))
    folded["logged"] = start + end
    return folded


#: The most of a log's unread tail one count reads: the next count reads on from the last whole
#: line. A real tail is kilobytes (counts are folded into the task at each of its writes); a
#: sparse file of a terabyte planted in a log's place was read whole, and failed every command
#: that read the board with a MemoryError.
READ_AT_ONCE_MOST = 64 * 1024 * 1024


def _parse(line: bytes) -> dict[str, Any] | None:
    """A log line's record; None for a line a full disk cut short (it is skipped, not fatal)."""
    try:
        record = json_bounds.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) and isinstance(record.get("tool"), str) else None


def fold(counts: dict[str, Any], records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """``counts`` (a document's ``toolCalls``, camelCase) with ``records`` counted in."""
    counts = dict(counts)
    for record in records:
        counts["total"] = counts.get("total", 0) + 1
        if record.get("ok", True) is not False:
            counts["ok"] = counts.get("ok", 0) + 1
            counts["consecutiveFailures"] = 0
        else:
            counts["failed"] = counts.get("failed", 0) + 1
            counts["consecutiveFailures"] = counts.get("consecutiveFailures", 0) + 1
        counts["lastTool"] = record["tool"]
        if isinstance(record.get("ts"), str):
            counts["lastAt"] = record["ts"]
    return counts


#: Per agent log: (inode, bytes counted, lines counted, last call's time), so a recount reads
#: only what was appended.
_AGENT_COUNTS: dict[str, tuple[int, int, int, str | None]] = {}


def count_agent_calls(state_dir: Path, agent: str) -> tuple[int, str | None] | None:
    """How many calls an agent's log holds, and the time its last call gives (ISO text); None
    when it has no log. Reads only what was appended since the last count."""
    path = agent_log(state_dir, agent)
    with _regular_log(path) as log:
        if log is None:
            return None
        fd, info = log
        key = str(path)
        # Two threads counting at once only count twice: each stores a whole, correct entry.
        inode, counted, lines, last = _AGENT_COUNTS.get(key, (info.st_ino, 0, 0, None))
        if inode != info.st_ino or info.st_size < counted:
            counted, lines, last = 0, 0, None
        if info.st_size > counted:
            chunk = confine.read_from(fd, counted, min(info.st_size - counted, READ_AT_ONCE_MOST))
            end = chunk.rfind(b"\n") + 1
            if end:
                lines += chunk.count(b"\n", 0, end)
                counted += end
                record = _parse(chunk[chunk.rfind(b"\n", 0, end - 1) + 1 : end])
                if record is not None and isinstance(record.get("ts"), str):
                    last = record["ts"]
        _AGENT_COUNTS[key] = (info.st_ino, counted, lines, last)
        return lines, last


@contextmanager
def _regular_log(path: str | Path) -> Iterator[tuple[int, os.stat_result] | None]:
    """The log at ``path`` open for reading, and what it is; None when there is none or it is
    not a plain file. A link planted in its place is not followed, a FIFO does not block."""
    try:
        # Most tasks have no log: one lookup says so (3 µs), where the walk below, folder by
        # folder from the board's root, took 16 to 22 µs, and a claim reads four tasks. What
        # the lookup finds is opened by the walk, which follows no link.
        os.lstat(path)
    except OSError:
        yield None
        return
    try:
        fd = confine.open_file(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        yield None
        return
    try:
        info = os.fstat(fd)
        yield (fd, info) if stat.S_ISREG(info.st_mode) else None
    finally:
        os.close(fd)
