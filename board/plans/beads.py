"""beads' ``issues.jsonl`` (``bd export`` writes it; ``.beads/issues.jsonl`` in a project) read as
a ``Plan``: one JSON issue a line, with id, title, description, status (open, in_progress,
blocked, deferred, closed, tombstone), priority 0-4, issue_type, assignee, labels, and
dependencies ``{"issue_id", "depends_on_id", "type"}`` whose type is blocks, parent-child,
related, discovered-from (and others)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from board.plans.plan import Plan, PlanError, PlanTask, label_of, read_text_file, subject_of
from board.priority import Priority
from board.status import Status

KIND = "beads"
#: beads' P0-P4 as board's priorities.
PRIORITIES = [Priority.CRITICAL, Priority.HIGH, Priority.MEDIUM, Priority.LOW, Priority.LOW]
#: The fields board reads into its own; every other one is kept in ``metadata.beads``.
_OWN_FIELDS = {"id", "title", "description", "labels", "dependencies", "priority"}


def issues_file(path: Path) -> Path:
    for candidate in (path, path / "issues.jsonl", path / ".beads" / "issues.jsonl"):
        if candidate.is_file():
            return candidate
    raise PlanError(f"{path}: no beads issues here: pass the issues.jsonl 'bd export' wrote, or the project holding .beads/issues.jsonl")


def read_beads(path: Path) -> Plan:
    file = issues_file(path)
    tasks: list[PlanTask] = []
    skipped: list[str] = []
    seen: dict[str, str] = {}
    lines = read_text_file(file).splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{file}:{number}"
        try:
            issue = json.loads(line)
        except json.JSONDecodeError as error:
            raise PlanError(f"{where}: not a JSON issue ({error.msg} at column {error.colno})") from None
        if not isinstance(issue, dict) or not isinstance(issue.get("id"), str) or not isinstance(issue.get("title"), str):
            raise PlanError(f"{where}: an issue is a JSON object with a string id and title")
        if issue.get("status") == "tombstone":
            skipped.append(f"{where} {issue['id']} (deleted in beads)")
            continue
        task = _task(issue, where)
        if task.key in seen:
            raise PlanError(f"{where}: {task.key} is also the issue at {seen[task.key]}")
        seen[task.key] = where
        tasks.append(task)
    if not tasks:
        raise PlanError(f"{file}: no issues in it")
    for task in tasks:
        for need in task.needs:
            if need not in seen:
                raise PlanError(f"{task.where}: {task.key} is blocked by {need}, which is not an issue of {file}")
        if task.parent is not None and task.parent not in seen:
            raise PlanError(f"{task.where}: {task.key}'s parent {task.parent} is not an issue of {file}")
    return Plan(source=KIND, kind=KIND, tasks=tasks, skipped=skipped)


def _task(issue: dict[str, Any], where: str) -> PlanTask:
    subject, whole = subject_of(issue["title"])
    if not subject:
        raise PlanError(f"{where}: {issue['id']} has an empty title")
    extra = {name: value for name, value in issue.items() if name not in _OWN_FIELDS}
    if whole:
        extra["title"] = whole
    priority = issue.get("priority")
    if priority is not None and (type(priority) is not int or not 0 <= priority <= 4):
        raise PlanError(f"{where}: {issue['id']}'s priority is {priority!r}; beads' priorities are 0-4")
    extra["priority"] = priority
    status = {"closed": Status.COMPLETED}.get(str(issue.get("status", "open")), Status.PENDING)
    needs: list[str] = []
    parent = issue.get("parent") if isinstance(issue.get("parent"), str) else None
    links: list[dict[str, str]] = []
    for dependency in issue.get("dependencies") or []:
        if not isinstance(dependency, dict) or not isinstance(dependency.get("depends_on_id"), str):
            raise PlanError(f"{where}: {issue['id']} has a dependency without a depends_on_id")
        other, kind = dependency["depends_on_id"], str(dependency.get("type", "blocks"))
        if kind == "blocks" and not other.startswith("external:"):
            needs.append(other)
        elif kind == "parent-child":
            parent = other
        else:
            links.append({"type": kind, "id": other})
    extra["links"] = links
    labels = issue.get("labels") or []
    if not isinstance(labels, list):
        raise PlanError(f"{where}: {issue['id']}'s labels are not a list")
    description = str(issue.get("description") or "")
    return PlanTask(
        key=issue["id"], subject=subject, description=description, parent=parent, needs=list(dict.fromkeys(needs)),
        labels=list(dict.fromkeys(label_of(str(label)) for label in labels if str(label).strip())),
        priority=PRIORITIES[priority] if priority is not None else None, status=status, where=where,
        foreign_id=issue["id"], extra=extra,
    )
