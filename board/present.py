"""How tasks, tokens and ages are shown, the same way by every front end: the task document
with what is derived from the board (``--json`` and the MCP tools), the task table, the
compact prompt an agent keeps in its context, and the short texts for ages and costs.

Light to import (the command line loads it before every task command): the store, the model
and the graph are read from what is passed in, never imported here at run time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from board.errors import BoardError
from board.priority import PRIORITY_RANK
from board.status import Status
from board.text import shortened
from board.times import iso

if TYPE_CHECKING:
    from board.config import BoardSettings
    from board.graph import TaskGraph
    from board.model import Task
    from board.store import Store

PROMPT_MARKERS = {
    Status.PENDING: "[ ]",
    Status.IN_PROGRESS: "[>]",
    Status.COMPLETED: "[x]",
    Status.BLOCKED: "[!]",
    Status.FAILED: "[!]",
    Status.PAUSED: "[=]",
    Status.WAITING: "[?]",
    Status.CANCELLED: "[-]",
}


def task_json(task: Task, graph: TaskGraph) -> dict[str, Any]:
    """The task document plus what is derived from the board (never stored)."""
    from board.model import task_to_dict

    data = task_to_dict(task)
    data["derived"] = {
        "ready": graph.is_ready(task.id),
        "progress": graph.progress(task),
        "openBlockers": graph.open_blockers(task),
        "wave": graph.waves().get(task.id),
        "dependents": sorted(graph.dependents(task.id)),
    }
    return data


#: The fields of a task's row (``task_row``): what an agent choosing or tracking work acts on.
ROW_FIELDS = ("id", "subject", "status", "priority", "owner", "progress", "ready", "blockedBy", "labels", "lease", "version")


def task_row(task: Task, graph: TaskGraph) -> dict[str, Any]:
    """A task in one short row (MCP's ``task_list``): ``ROW_FIELDS``, progress as the board
    derives it (a parent's from its sub-tasks), ``ready`` when it can start now, and the lease
    (holder, token, expiry) of a task in progress; ``task_show`` has the rest."""
    lease = task.lease
    return {
        "id": task.id,
        "subject": task.subject,
        "status": str(task.status),
        "priority": str(task.priority),
        "owner": task.owner,
        "progress": graph.progress(task),
        "ready": graph.is_ready(task.id),
        "blockedBy": list(task.blocked_by),
        "labels": list(task.labels),
        "lease": None if lease is None else {"owner": lease.owner, "token": lease.token, "expiresAt": iso(lease.expires_at)},
        "version": task.version,
    }


def display_status(task: Task, graph: TaskGraph) -> str:
    from board.graph import removed_by_claude_code

    if removed_by_claude_code(task):
        return f"{task.status} (removed)"  # by Claude Code; 'board task show' says how to bring it back
    if task.status == Status.PENDING:
        return "ready" if graph.is_ready(task.id) else "waiting-deps"
    return str(task.status)


def table(tasks: Iterable[Task], graph: TaskGraph, unreadable: Mapping[str, str] | None = None) -> str:
    """The task list as columns; ``unreadable`` (id -> why) adds a row for each task whose file
    board cannot read, so that no task is ever silently missing from the list."""
    tasks = list(tasks)
    labelled = any(task.labels for task in tasks)  # the column shows only where labels are used
    rows = [("ID", "STATUS", "PRI", "OWNER", "PROG", "CALLS", "BLOCKED BY", *(("LABELS",) if labelled else ()), "SUBJECT")]
    for task in tasks:
        calls = str(task.tool_calls.total) + (f" ({task.tool_calls.failed} failed)" if task.tool_calls.failed else "")
        open_ids = graph.open_blockers(task) if task.status == Status.PENDING else []
        rows.append(
            (
                task.id,
                display_status(task, graph),
                str(task.priority),
                task.owner or "-",
                f"{graph.progress(task)}%",
                calls,
                ",".join(open_ids) or "-",
                *((",".join(task.labels) or "-",) if labelled else ()),
                task.subject,
            )
        )
    for task_id, reason in sorted((unreadable or {}).items()):
        rows.append((task_id, "unreadable", "-", "-", "-", "-", "-", *(("-",) if labelled else ()), f"(its file cannot be read: {reason})"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1] for row in rows]
    return "\n".join(line.rstrip() for line in lines)


def blocker_list(graph: TaskGraph, ids: list[str]) -> str:
    """Blockers by number, each that can no longer finish marked so: "#3 (cancelled), #4"."""
    marks = []
    for blocker_id in ids:
        blocker = graph.tasks.get(blocker_id)
        stuck = blocker is not None and blocker.status in (Status.CANCELLED, Status.FAILED)
        marks.append(f"#{blocker_id} ({blocker.status})" if stuck and blocker is not None else f"#{blocker_id}")
    return ", ".join(marks)


def prompt(tasks: list[Task], graph: TaskGraph) -> str:
    """Seed 002's compact list an agent keeps in its context."""
    lines = []
    for task in tasks:
        line = f"{PROMPT_MARKERS[task.status]} #{task.id} {task.subject}"
        notes = []
        if task.status == Status.PENDING:
            open_ids = graph.open_blockers(task)
            if open_ids:
                notes.append("blocked by " + blocker_list(graph, open_ids))
        elif task.status not in (Status.COMPLETED,):
            notes.append(str(task.status))
        if task.owner and task.status != Status.COMPLETED:
            notes.append(f"@{task.owner}")
        progress = graph.progress(task)
        if task.status not in (Status.COMPLETED, Status.CANCELLED) and progress:
            notes.append(f"{progress}%")
        if task.tool_calls.total:
            notes.append(f"{task.tool_calls.total} tool call{'' if task.tool_calls.total == 1 else 's'}")
        if notes:
            line += " (" + ", ".join(notes) + ")"
        lines.append(line)
        if task.status == Status.WAITING and task.question:
            lines.append(f"    asks: {shortened(' '.join(task.question.split()), 200)}")
        elif task.answer and task.status == Status.IN_PROGRESS:
            lines.append(f"    answered: {shortened(' '.join(task.answer.split()), 200)}")
    lines.append(progress_line(tasks, graph))
    return "\n".join(lines)


def progress_line(tasks: list[Task], graph: TaskGraph) -> str:
    total = len(tasks)
    done = sum(1 for t in tasks if t.status == Status.COMPLETED)
    active = sum(1 for t in tasks if t.status == Status.IN_PROGRESS)
    ready = sum(1 for t in tasks if graph.is_ready(t.id))
    percent = round(100 * done / total) if total else 0
    return f"Progress: {done}/{total} completed ({percent}%), {active} in progress, {ready} ready"


#: ``--sort`` orders: most urgent first, by id, most recently changed first.
SORTS = ("priority", "id", "updated")


def select_tasks(
    store: Store, tasks: list[Task], *, status: str | None = None, owner: str | None = None, labels: Sequence[str] = (),
    ready: bool = False, sort: str = "id", include_hidden: bool = False, words: Sequence[str] = (),
) -> list[Task]:
    """The tasks ``task list`` shows for these filters, in this order (``SORTS``); with
    ``words``, only those whose subject or description holds every one (``task search``)."""
    from board.graph import is_hidden

    if not include_hidden:
        tasks = [t for t in tasks if not is_hidden(t)]
    if words:
        folded = [word.casefold() for word in words]
        tasks = [t for t in tasks if all(word in f"{t.subject}\n{t.description}".casefold() for word in folded)]
    if status:
        tasks = [t for t in tasks if t.status == status]
    if owner:
        tasks = [t for t in tasks if t.owner == owner]
    if labels:
        in_use = sorted({name for t in store.tasks.values() for name in t.labels})
        unknown = [name for name in labels if name not in in_use]
        if unknown:
            raise BoardError(f"no task on this board has the label {unknown[0]!r} (labels in use: {', '.join(in_use) or 'none'})")
    for wanted in labels:
        tasks = [t for t in tasks if wanted in t.labels]
    if ready:
        tasks = [t for t in tasks if store.graph.is_ready(t.id)]
    if sort == "priority":
        tasks = sorted(tasks, key=lambda t: PRIORITY_RANK[t.priority])  # stable: by id within a priority
    elif sort == "updated":
        tasks = sorted(tasks, key=lambda t: t.updated_at or t.created_at or datetime.min.replace(tzinfo=UTC), reverse=True)
    return tasks


def board_settings(store: Store) -> BoardSettings | None:
    """The board's settings, or None when it has no ``board.toml`` and every default holds: a
    command about one task then does without importing the settings' models (pydantic's, which
    cost it more than the rest of its work)."""
    import os

    from board.store.file_format import SETTINGS_FILE

    if not os.path.lexists(store.local_dir / SETTINGS_FILE):
        return None
    from board.config import settings_or_defaults

    return settings_or_defaults(store.local_dir)


def task_tokens(store: Store, task_id: str) -> dict[str, Any]:
    """The tokens of the messages agents sent while on the task, priced (``board.prices.summary``)."""
    import os

    from board.prices import merged_prices, summary
    from board.store.file_format import task_tokens_path

    settings = board_settings(store)
    prices = settings.model_prices() if settings is not None else merged_prices({})
    path = task_tokens_path(store.state_dir, task_id)
    if not os.path.lexists(path):
        return summary({}, prices)  # most tasks never had a message counted: no reader loaded for them
    from board.claude.transcripts import read_tokens

    return summary(read_tokens(path), prices)


def shown_task(store: Store, task: Task) -> dict[str, Any]:
    """One task as ``task show --json`` and MCP's ``task_show`` give it: ``task_json`` and its
    priced ``tokens``."""
    return {**task_json(task, store.graph), "tokens": task_tokens(store, task.id)}


def tokens_text(tokens: Mapping[str, Any]) -> str:
    """``1.2k tokens $0.03`` (``-`` for none): input, output and cache tokens together."""
    if not tokens["total"]:
        return "-"
    total = tokens["total"]
    amount = f"{total / 1_000_000:.1f}M" if total >= 1_000_000 else f"{total / 1000:.1f}k" if total >= 1000 else str(total)
    from board.prices import cost_text

    return f"{amount} {cost_text(tokens)}"


def format_age(seconds: float) -> str:
    """Compact age: 45s, 12m, 5h, 3d."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 48 * 3600:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def age_reads_the_same_for(seconds: float) -> float:
    """How many seconds more ``format_age`` goes on reading as it does at ``seconds``: a view
    that shows many ages redraws them when the first of them moves, not every second."""
    seconds = max(0.0, seconds)
    step = 1 if seconds < 60 else 60 if seconds < 3600 else 3600 if seconds < 48 * 3600 else 86400
    return (int(seconds) // step + 1) * step - seconds


def relative_time(moment: datetime, now: datetime) -> str:
    """How far ``moment`` is from ``now``, either way: "25s ago", or "in 25s" for one ahead
    (a lease's expiry, a clock a little ahead of this one)."""
    seconds = (now - moment).total_seconds()
    return f"{format_age(seconds)} ago" if seconds >= 0 else f"in {format_age(-seconds)}"


def moment_text(moment: datetime | None, now: datetime) -> str:
    """A time in full, then how far it is from now: ``2026-11-20T23:35:00Z (20s ago)``."""
    if moment is None:
        return "—"
    return f"{moment.isoformat().replace('+00:00', 'Z')} ({relative_time(moment, now)})"


def expiry_text(moment: datetime, now: datetime) -> str:
    """A lease's end, said as what it is: "expires in 25s" or "expired 25s ago"."""
    seconds = (moment - now).total_seconds()
    return f"expires in {format_age(seconds)}" if seconds > 0 else f"expired {format_age(-seconds)} ago"


#: The longest a value of a history change is shown (the detail view's timeline is one line each).
CHANGE_VALUE_CHARS = 40


def change_value_text(field_name: str, value: Any) -> str:
    """One side of a field's change in a task's history, as a person reads it: a lease as its
    owner and token, a policy mark as what it set, tool calls as counts, never a raw dict."""
    if value is None or value == "":
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        text = _structured_text(field_name, value)
    elif isinstance(value, list):
        text = ", ".join(change_value_text(field_name, item) for item in value) or "none"
    else:
        text = str(value)
    return shortened(" ".join(text.split()), CHANGE_VALUE_CHARS)


def change_text(field_name: str, before: Any, after: Any) -> str:
    """A field's change in a task's history: ``lease carol (token 3) → none``."""
    return f"{field_name} {change_value_text(field_name, before)} → {change_value_text(field_name, after)}"


def _structured_text(field_name: str, value: Mapping[str, Any]) -> str:
    if not value:
        return "none"
    if field_name == "lease" and "owner" in value:
        token = value.get("token")
        return f"{value['owner']} (token {token})" if token is not None else str(value["owner"])
    if field_name == "policy" and "name" in value:
        settled = "; settled" if value.get("settled") else ""
        return f"{value['name']} set {value.get('status', '?')}{settled}"
    if field_name == "toolCalls" and "total" in value:
        failed = value.get("failed") or 0
        return f"{value['total']} calls" + (f", {failed} failed" if failed else "")
    return ", ".join(f"{key} {change_value_text(key, item)}" for key, item in value.items() if item not in (None, "", [], {}))


def progress_bar(percent: int, width: int) -> tuple[str, str]:
    """The filled and empty parts of a bar ``width`` cells wide (eighths for the edge)."""
    width = max(0, width)
    eighths = round(percent / 100 * width * 8)
    full, part = divmod(eighths, 8)
    filled = "█" * full + ("" if part == 0 or full >= width else " ▏▎▍▌▋▊▉"[part])
    return filled, "░" * (width - len(filled))
