"""Backlog.md's folder (``backlog/tasks/*.md``: YAML front matter, then markdown sections) read
as a ``Plan``, and board's tasks written back as one.

Its format is what ``backlog`` 1.52.0 writes (``backlog task create``): front matter with id,
title, status, assignee, created_date, labels, dependencies, parent_task_id, priority,
ordinal; the description between ``<!-- SECTION:DESCRIPTION:BEGIN -->`` and ``END`` markers.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from board.plans.frontmatter import dump_document, split_document
from board.plans.plan import Plan, PlanError, PlanTask, label_of, priority_of, read_text_file, subject_of
from board.status import Status

if TYPE_CHECKING:
    from board.model import Task

KIND = "backlog"
#: The fields board reads into its own; every other one is kept in ``metadata.backlog``.
_OWN_FIELDS = {"id", "title", "labels", "dependencies", "parent_task_id", "priority"}
_DESCRIPTION = re.compile(r"<!-- SECTION:DESCRIPTION:BEGIN -->\n?(.*?)\n?<!-- SECTION:DESCRIPTION:END -->", re.DOTALL)
_DESCRIPTION_SECTION = re.compile(r"^## Description\s*\n(.*?)(?=^## |\Z)", re.DOTALL | re.MULTILINE)
#: The folders of a Backlog.md project holding tasks: current work, and what cleanup moved out.
TASK_FOLDERS = ("tasks", "completed")
DONE_WORDS = {"done", "completed", "complete", "closed"}


def backlog_folder(path: Path) -> Path:
    """The ``backlog/`` folder of a project given as itself, its project, or its tasks/."""
    for candidate in (path / "backlog", path, path.parent):
        if (candidate / "tasks").is_dir():
            return candidate
    raise PlanError(f"{path}: no Backlog.md tasks here: pass the project holding backlog/tasks/, or that backlog/ folder")


def read_backlog(path: Path) -> Plan:
    folder = backlog_folder(path)
    files = sorted(file for name in TASK_FOLDERS if (folder / name).is_dir() for file in (folder / name).glob("*.md"))
    tasks: list[PlanTask] = []
    seen: dict[str, str] = {}
    for file in files:
        where = str(file)
        text = read_text_file(file, 4 * 1024 * 1024)
        fields, body = split_document(text, where)
        task = _task(fields, body, where, done=file.parent.name == "completed")
        if task.key in seen:
            raise PlanError(f"{where}: id {task.foreign_id} is also the id of {seen[task.key]}; a Backlog.md id names one task")
        seen[task.key] = where
        tasks.append(task)
    if not tasks:
        raise PlanError(f"{folder}: no task files in tasks/ (backlog task create writes them there)")
    keys = {task.key for task in tasks}
    for task in tasks:
        for need in task.needs:
            if need not in keys:
                raise PlanError(f"{task.where}: depends on {need}, which is not a task of {folder}")
        if task.parent is not None and task.parent not in keys:
            raise PlanError(f"{task.where}: its parent {task.parent} is not a task of {folder}")
    return Plan(source=KIND, kind=KIND, tasks=tasks)


def foreign_key(value: Any) -> str:
    """Backlog.md ids compare without case (older versions wrote ``task-1``)."""
    return str(value).strip().upper()


def _task(fields: dict[str, Any], body: str, where: str, *, done: bool) -> PlanTask:
    if "id" not in fields or "title" not in fields:
        raise PlanError(f"{where}: a task file needs an id and a title in its front matter")
    title = str(fields["title"]).strip()
    if not title:
        raise PlanError(f"{where}: an empty title")
    subject, whole = subject_of(title)
    status_word = str(fields.get("status", ""))
    status = Status.COMPLETED if done or status_word.strip().lower() in DONE_WORDS else Status.PENDING
    described = _DESCRIPTION.search(body) or _DESCRIPTION_SECTION.search(body)
    if described:
        description = described.group(1).strip()
        rest = (body[: described.start()] + body[described.end():]).strip()
    else:
        # No description section: text before the first section is one; the sections are kept.
        first = re.search(r"^## ", body, re.MULTILINE)
        description, rest = (body[: first.start()].strip(), body[first.start():].strip()) if first else (body.strip(), "")
    rest = re.sub(r"^## Description\s*$", "", rest, flags=re.MULTILINE).strip()
    extra = {name: value for name, value in fields.items() if name not in _OWN_FIELDS}
    if rest:
        extra["body"] = rest
    if whole:
        extra["title"] = whole
    priority = priority_of(str(fields["priority"])) if fields.get("priority") else None
    if fields.get("priority") and priority is None:
        extra["priority"] = fields["priority"]
    labels = fields.get("labels") or []
    dependencies = fields.get("dependencies") or []
    if not isinstance(labels, list) or not isinstance(dependencies, list):
        raise PlanError(f"{where}: labels and dependencies are lists")
    parent = fields.get("parent_task_id") or fields.get("parent")
    return PlanTask(
        key=foreign_key(fields["id"]), subject=subject, description=description,
        parent=foreign_key(parent) if parent else None, needs=[foreign_key(d) for d in dependencies],
        labels=list(dict.fromkeys(label_of(str(label)) for label in labels if str(label).strip())),
        priority=priority, status=status, where=where, foreign_id=str(fields["id"]), extra=extra,
    )


# -- writing board's tasks as a Backlog.md folder --------------------------------------------

STATUS_OF = {
    Status.COMPLETED: "Done", Status.IN_PROGRESS: "In Progress", Status.PAUSED: "In Progress",
    Status.BLOCKED: "In Progress", Status.WAITING: "In Progress",
}
CONFIG = (
    'project_name: "{name}"\ndefault_status: "To Do"\nstatuses: ["To Do", "In Progress", "Done"]\nlabels: []\n'
    'date_format: yyyy-mm-dd\nmax_column_width: 20\nauto_open_browser: false\ndefault_port: 6420\nremote_operations: false\n'
    'auto_commit: false\nfilesystem_only: true\nbypass_git_hooks: false\ncheck_active_branches: false\nactive_branch_days: 30\n'
    'task_prefix: "task"\n'
)


def export_ids(tasks: list[Task]) -> dict[str, str]:
    """Each board task's Backlog.md id: the one it came with, else ``TASK-<its number>`` when
    that is free, else the next free number."""
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for task in tasks:
        came = _came_from_backlog(task)
        if came and foreign_key(came) not in taken:
            ids[task.id] = came
            taken.add(foreign_key(came))
    number = 0
    for task in tasks:
        if task.id in ids:
            continue
        wanted = f"TASK-{task.id}" if task.id.isdigit() else None
        if wanted is None or wanted in taken:
            number += 1
            while f"TASK-{number}" in taken:
                number += 1
            wanted = f"TASK-{number}"
        ids[task.id] = wanted
        taken.add(wanted)
    return ids


def _came_from_backlog(task: Task) -> str | None:
    plan = task.metadata.get("plan")
    if isinstance(plan, dict) and plan.get("source") == KIND and isinstance(plan.get("id"), str):
        return plan["id"]
    return None


def task_file(task: Task, ids: dict[str, str], created: str) -> tuple[str, str]:
    """The file name and text of one task as ``backlog task create`` would write it."""
    found = task.metadata.get(KIND)
    kept: dict[str, Any] = found if isinstance(found, dict) else {}
    backlog_id = ids[task.id]
    status = STATUS_OF.get(task.status, "To Do")
    fields: dict[str, Any] = {
        "id": backlog_id, "title": kept.get("title", task.subject), "status": status,
        "assignee": kept.get("assignee", [f"@{task.owner}"] if task.owner else []),
        "created_date": kept.get("created_date", created),
        "labels": list(task.labels), "dependencies": [ids[b] for b in task.blocked_by if b in ids],
    }
    if task.parent is not None and task.parent in ids:
        fields["parent_task_id"] = ids[task.parent]
    fields["priority"] = str(task.priority)
    for name, value in kept.items():
        if name not in fields and name not in ("body", "status") and isinstance(value, (str, int, list)):
            fields[name] = value
    fields["ordinal"] = kept.get("ordinal", 1000 * (list(ids).index(task.id) + 1))
    body = ""
    if task.description.strip():
        body = f"## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\n{task.description.strip()}\n<!-- SECTION:DESCRIPTION:END -->\n"
    if isinstance(kept.get("body"), str):
        body += "\n" + kept["body"] + "\n"
    title = str(fields["title"])
    slug = re.sub(r"[^A-Za-z0-9 _.-]", "", title).strip().replace(" ", "-")[:60] or "task"
    return f"{backlog_id.lower()} - {slug}.md", dump_document(fields, body)
