"""Claude Code session transcripts: the tool calls no hook reported, and the tokens each message used.

Claude Code writes each session's conversation to a transcript (``transcript_path`` in every
hook event; JSON lines): every assistant message with its ``usage`` and ``model``, one line per
content block (the same ``message.id`` and ``requestId``, the usage repeated), each ``tool_use``
block, and the ``tool_result`` that answered it (``is_error``). Hooks miss some calls: a call
Claude Code rejects before running it (an Edit whose string is not in the file, a Write to a
file not read yet, an unknown tool, missing parameters) fires no hook at all, and a call a
PreToolUse hook stops fires no PostToolUse. ``read_transcript`` (run by ``board hook`` on
Stop, SubagentStop and SessionEnd) reads what the transcript gained since its last look, from
an offset kept in ``transcripts/<key>.json`` under the board's state directory, and

- logs each call whose ``tool_use_id`` no hook logged (``board.toolcall_log``), as ok, failed
  or blocked, on the agent and task the call was made under;
- appends the tokens of each message (deduplicated by message id and request id, as ccusage
  does) to ``tokens/<task>.jsonl`` and ``agents/<agent>.tokens.jsonl``, one line per agent,
  task and model a look found.

A message is put on the task its agent worked on when it came: the task a hook logged for one
of its calls, else the task of the message before it, else the agent's task when the look runs.

Standard library only: ``board hook`` imports it.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from board import json_bounds
from board.prices import USAGE_FIELDS, cost_text, summary
from board.disk import confine
from board.store.file_format import task_tokens_path
from board.toolcall_log import AGENT_LOGS, MAX_TOOL_NAME, agent_log, append_call, append_line, call_record, lock_within

# Only for annotations, which are never evaluated: ``board hook`` starts faster without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Where each transcript's reading position is kept, under the board's state directory.
STATE_DIR = "transcripts"
#: A task's tokens are under the board's state directory (``task_tokens_path``); an agent's
#: are beside its record.
AGENT_TOKENS_SUFFIX = ".tokens.jsonl"

#: A transcript's state keeps this many message keys (the last ones), enough for a message's
#: lines that straddle two looks.
_KEEP_KEYS = 500
#: Calls seen on one side only (a hook's log or the transcript) are kept this many at most.
_KEEP_PENDING = 2000
#: What Claude Code writes as the result of a call a PreToolUse hook stopped.
_STOPPED_BY_HOOK = re.compile(r"^PreToolUse:\S+ hook error")
#: How much of a transcript one look reads at most; the rest waits for the next.
MAX_READ = 64 * 1024 * 1024
#: How many times one look reads on while the transcript keeps growing under it.
LOOKS_WHILE_GROWING = 5


def state_path(state_dir: Path, transcript: Path) -> Path:
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", transcript.stem)[:64] or "transcript"
    import hashlib  # here: it loads OpenSSL, 2 ms of every ``task show`` that never needs it

    digest = hashlib.sha1(str(transcript).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return state_dir / STATE_DIR / f"{name}-{digest}.json"


def agent_tokens_path(state_dir: Path, agent: str) -> Path:
    return state_dir / AGENT_LOGS / f"{agent}{AGENT_TOKENS_SUFFIX}"


# -- reading a transcript ------------------------------------------------------------------------


def read_transcript(
    state_dir: Path,
    transcript: Path,
    *,
    agent: str,
    task: str | None,
    session: str | None,
    now: str,
    other_agents: Iterable[str] = (),
    final: bool = False,
    wait: float = 1.0,
) -> None:
    """Log the calls and tokens ``transcript`` gained since the last look.

    ``agent`` and ``task`` are who the session is now; ``other_agents`` are names its calls may
    have been logged under earlier (before it named itself). ``final`` (the session ended):
    a call with no result is counted failed, as it will never get one.
    """
    fd = os.open(transcript, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{transcript} is not a regular file")
        path = state_path(state_dir, transcript)
        confine.make_folders(path.parent)
        lock_fd = confine.open_file(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            lock_within(lock_fd, wait, "another look at this transcript held its lock; this one was skipped")
            state = _load_state(path)
            if state.get("inode") != info.st_ino or state.get("offset", 0) > info.st_size:
                state = {"inode": info.st_ino, "offset": 0}
            # Again while the transcript grew during the look: a look that found the lock held
            # meanwhile (two Stops close together, a busy machine) gave up, and no later event
            # may come to read what it was for (a turn's last message, its tokens).
            for _ in range(LOOKS_WHILE_GROWING):
                start, size = state["offset"], os.fstat(fd).st_size
                chunk = confine.read_from(fd, start, min(size - start, MAX_READ))
                end = chunk.rfind(b"\n") + 1
                state["offset"] = start + end
                grown = os.fstat(fd).st_size > state["offset"]
                _Look(state_dir, state, agent, task, session, now, [agent, *other_agents], wait).run(chunk[:end], final and not grown)
                _save_state(path, state)
                if os.fstat(fd).st_size <= state["offset"]:
                    break
        finally:
            os.close(lock_fd)
    finally:
        os.close(fd)


class _Look:
    """One look at a transcript: what it gained, matched with what hooks logged."""

    def __init__(self, state_dir: Path, state: dict[str, Any], agent: str, task: str | None, session: str | None, now: str, agents: list[str], wait: float) -> None:
        self.state_dir = state_dir
        self.wait = wait
        self.state = state
        self.session = session
        self.now = now
        self.agents = list(dict.fromkeys(agents))
        # Who the next message is from, and on which task: where the last look left off.
        self.current: tuple[str, str | None] = (state.get("agent") or agent, state["task"] if "task" in state else task)
        self.fallback = (agent, task)
        #: tool_use_id -> [agent, task] for calls a hook logged, not yet met in the transcript.
        self.hooked: dict[str, list[Any]] = dict(state.get("hooked") or {})
        #: tool_use_id -> [tool, agent, task] for calls the transcript has, with no result yet.
        self.pending: dict[str, list[Any]] = dict(state.get("pending") or {})
        self.keys: list[str] = list(state.get("keys") or [])
        self.tokens: dict[tuple[str, str | None, str], dict[str, int]] = {}

    def run(self, chunk: bytes, final: bool) -> None:
        self._read_hook_logs()
        entries = [entry for entry in map(_parse, chunk.splitlines()) if entry is not None]
        if not self.state.get("seen") and entries:
            self.current = self.fallback  # a transcript's first look: the session as it is now
        by_message = self._attributions(entries)
        for entry in entries:
            message = entry.get("message")
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
            if entry.get("type") == "assistant" or "usage" in message:
                message_id = message.get("id")
                found = by_message.get(message_id) if isinstance(message_id, str) else None
                if found is not None:
                    self.current = found
                self._count_tokens(entry, message)
                for block in blocks:
                    if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                        named = block.get("name")
                        name = named if isinstance(named, str) and named else "unknown"
                        self.pending[block["id"]] = [name.replace("\n", " ")[:MAX_TOOL_NAME], *self.current]
            for block in blocks:
                if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                    self._answered(block, entry)
        if final:
            for call_id in list(self.pending):
                if call_id not in self.hooked:
                    tool, agent, task = self.pending.pop(call_id)
                    self._log_call(call_id, tool, agent, task, ok=False, blocked=False, ts=self.now)
        self.state["seen"] = True
        self.state["agent"], self.state["task"] = self.current
        self.state["hooked"] = _last(self.hooked, _KEEP_PENDING)
        self.state["pending"] = _last(self.pending, _KEEP_PENDING)
        self.state["keys"] = self.keys[-_KEEP_KEYS:]
        self._write_tokens()

    def _read_hook_logs(self) -> None:
        """The calls hooks logged under the session's agents since the last look (their
        ``id``), read from each agent's log from where the last look stopped."""
        offsets = dict(self.state.get("logs") or {})
        for name in self.agents:
            try:
                fd = confine.open_file(agent_log(self.state_dir, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                info = os.fstat(fd)
                start = offsets.get(name, 0)
                if not stat.S_ISREG(info.st_mode):
                    continue
                if start > info.st_size:
                    start = 0
                chunk = confine.read_from(fd, start, info.st_size - start)
            finally:
                os.close(fd)
            end = chunk.rfind(b"\n") + 1
            offsets[name] = start + end
            for line in chunk[:end].splitlines():
                if b'"id":' not in line:
                    continue
                record = _parse(line)
                if record is not None and isinstance(record.get("id"), str):
                    self.hooked[record["id"]] = [record.get("agent") or name, record.get("task")]
        self.state["logs"] = offsets

    def _attributions(self, entries: list[dict[str, Any]]) -> dict[str, tuple[str, str | None]]:
        """message id -> (agent, task) a hook logged for one of its calls."""
        found: dict[str, tuple[str, str | None]] = {}
        for entry in entries:
            message = entry.get("message")
            if not isinstance(message, dict) or not isinstance(message.get("id"), str) or not isinstance(message.get("content"), list):
                continue
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") in self.hooked:
                    agent, task = self.hooked[block["id"]]
                    found.setdefault(message["id"], (agent, task))
        return found

    def _answered(self, block: dict[str, Any], entry: dict[str, Any]) -> None:
        call_id = block["tool_use_id"]
        call = self.pending.pop(call_id, None)
        if self.hooked.pop(call_id, None) is not None:
            return  # a hook counted it
        tool, agent, task = call if call is not None else ("unknown", *self.current)
        failed = block.get("is_error") is True
        blocked = failed and _STOPPED_BY_HOOK.match(_text(block.get("content"))) is not None
        stamp = entry.get("timestamp")
        ts = stamp if isinstance(stamp, str) else self.now
        self._log_call(call_id, tool, agent, task, ok=not failed, blocked=blocked, ts=ts)

    def _log_call(self, call_id: str, tool: str, agent: str, task: str | None, *, ok: bool, blocked: bool, ts: str) -> None:
        record = call_record(ts=ts, agent=agent, tool=tool, ok=ok, task=task, call_id=call_id, blocked=blocked)
        record["from"] = "transcript"
        append_call(self.state_dir, record, wait=self.wait)

    def _count_tokens(self, entry: dict[str, Any], message: dict[str, Any]) -> None:
        """A message's usage, once: ccusage's rule (a line whose message id and request id were
        counted is skipped; one lacking either is always counted)."""
        usage = message.get("usage")
        if not isinstance(usage, dict) or not isinstance(entry.get("timestamp"), str):
            return
        if not all(_count(usage.get(key)) is not None for key in ("input_tokens", "output_tokens")):
            return
        if isinstance(message.get("id"), str) and isinstance(entry.get("requestId"), str):
            key = f"{message['id']}:{entry['requestId']}"
            if key in self.keys:
                return
            self.keys.append(key)
        named = message.get("model")
        model = named if isinstance(named, str) and named else "unknown"
        if usage.get("speed") == "fast":
            model = f"{model}-fast"
        sums = self.tokens.setdefault((self.current[0], self.current[1], model[:200]), dict.fromkeys(("messages", *USAGE_FIELDS), 0))
        sums["messages"] += 1
        for field, key in USAGE_FIELDS.items():
            sums[field] += _count(usage.get(key)) or 0

    def _write_tokens(self) -> None:
        for (agent, task, model), sums in self.tokens.items():
            record = {"ts": self.now, "agent": agent, "task": task, "session": self.session, "model": model, **sums}
            line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
            if task is not None:
                append_line(task_tokens_path(self.state_dir, task), line, wait=self.wait)
            append_line(agent_tokens_path(self.state_dir, agent), line, wait=self.wait)


def _count(value: object) -> int | None:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if type(value) is int and value >= 0 else None


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def _last(mapping: dict[str, Any], keep: int) -> dict[str, Any]:
    return mapping if len(mapping) <= keep else dict(list(mapping.items())[-keep:])


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        value = json_bounds.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _load_state(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb", opener=confine.opener) as handle:
            state = json_bounds.loads(handle.read(16 * 1024 * 1024))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _save_state(path: Path, state: dict[str, Any]) -> None:
    from board.active_work import replace_file

    replace_file(path, json.dumps(state, separators=(",", ":")).encode("utf-8"))


# -- totals and prices ---------------------------------------------------------------------------


def read_tokens(path: Path) -> dict[str, dict[str, int]]:
    """A tokens log summed by model: model -> {messages, input, output, cacheWrite, cacheRead}."""
    try:
        with open(path, "rb", opener=confine.opener) as handle:
            data = handle.read()
    except OSError:
        return {}
    by_model: dict[str, dict[str, int]] = {}
    for record in map(_parse, data.splitlines()):
        if record is None or not isinstance(record.get("model"), str):
            continue
        sums = by_model.setdefault(record["model"], dict.fromkeys(("messages", *USAGE_FIELDS), 0))
        for field in sums:
            sums[field] += _count(record.get(field)) or 0
    return by_model


def agent_costs(state_dir: Path, names: Iterable[str], prices: Mapping[str, tuple[float, float, float, float]]) -> dict[str, str]:
    """The estimated cost of each named agent's tokens (``cost_text``), for the agents that
    spent any (the dashboard's agents panel shows it beside their calls)."""
    costs = {}
    for name in dict.fromkeys(names):
        by_model = read_tokens(agent_tokens_path(state_dir, name))
        if by_model:
            costs[name] = cost_text(summary(by_model, prices))
    return costs
