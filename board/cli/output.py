"""Ways to print tasks: JSON, a table for people, a compact prompt for agents."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from board.status import Status
from board.text import shortened

if TYPE_CHECKING:  # handlers load them: building the parser must stay light
    from board.graph import TaskGraph
    from board.model import Task

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


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


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


def display_status(task: Task, graph: TaskGraph) -> str:
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


def prompt(tasks: list[Task], graph: TaskGraph) -> str:
    """Seed 002's compact list an agent keeps in its context."""
    lines = []
    for task in tasks:
        line = f"{PROMPT_MARKERS[task.status]} #{task.id} {task.subject}"
        notes = []
        if task.status == Status.PENDING:
            open_ids = graph.open_blockers(task)
            if open_ids:
                notes.append("blocked by " + ", ".join(f"#{b}" for b in open_ids))
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
