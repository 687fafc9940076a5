"""Task Master's ``.taskmaster/tasks/tasks.json`` read as a ``Plan``: the tagged file
(``{"master": {"tasks": [...], "metadata": {...}}, "other-tag": ...}``) and the legacy one
(``{"tasks": [...]}``). A task has id, title, description, details, testStrategy, status
(pending, in-progress, done, review, deferred, cancelled, blocked), priority, dependencies and
subtasks, whose ids are numbers local to their parent and whose dependencies are sibling ids
or ``"parent.sub"`` strings (a plain number no sibling has is a top-level task)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from board.plans.plan import Plan, PlanError, PlanTask, priority_of, read_text_file, subject_of
from board.status import Status

KIND = "taskmaster"
STATUSES = {"done": Status.COMPLETED, "completed": Status.COMPLETED, "cancelled": Status.CANCELLED, "canceled": Status.CANCELLED}
_OWN_FIELDS = {"id", "title", "description", "dependencies", "subtasks", "priority"}
DEFAULT_TAG = "master"


def tasks_file(path: Path) -> Path:
    for candidate in (path, path / "tasks.json", path / ".taskmaster" / "tasks" / "tasks.json", path / "tasks" / "tasks.json"):
        if candidate.is_file():
            return candidate
    raise PlanError(f"{path}: no Task Master tasks here: pass its tasks.json, or the project holding .taskmaster/tasks/tasks.json")


def read_taskmaster(path: Path, tag: str | None = None) -> Plan:
    file = tasks_file(path)
    try:
        document = json.loads(read_text_file(file))
    except json.JSONDecodeError as error:
        raise PlanError(f"{file}:{error.lineno}: not valid JSON ({error.msg})") from None
    if not isinstance(document, dict):
        raise PlanError(f"{file}: not a Task Master file: it holds {{\"tasks\": [...]}} or tags of them")
    skipped: list[str] = []
    if isinstance(document.get("tasks"), list):
        if tag not in (None, DEFAULT_TAG):
            raise PlanError(f"{file}: a file without tags has no tag '{tag}'")
        listed, tag = document["tasks"], DEFAULT_TAG
    else:
        tags = {name: value for name, value in document.items() if isinstance(value, dict) and isinstance(value.get("tasks"), list)}
        if not tags:
            raise PlanError(f"{file}: not a Task Master file: it holds {{\"tasks\": [...]}} or tags of them")
        if tag is None:
            tag = DEFAULT_TAG if DEFAULT_TAG in tags else next(iter(tags)) if len(tags) == 1 else None
            if tag is None:
                raise PlanError(f"{file}: it has tags {', '.join(sorted(tags))} and no '{DEFAULT_TAG}'; pass --tag NAME")
        if tag not in tags:
            raise PlanError(f"{file}: no tag '{tag}' (it has {', '.join(sorted(tags))})")
        listed = tags[tag]["tasks"]
        skipped = [f"tag '{name}' ({len(value['tasks'])} tasks; --tag {name} imports it)" for name, value in tags.items() if name != tag]
    tasks: list[PlanTask] = []
    where = f"{file} (tag {tag})"
    top_ids = {str(item.get("id")) for item in listed if isinstance(item, dict)}
    for item in listed:
        tasks += _with_subtasks(item, where, top_ids)
    keys = [task.key for task in tasks]
    if len(set(keys)) != len(keys):
        twice = next(key for key in keys if keys.count(key) > 1)
        raise PlanError(f"{where}: task {twice} is written twice")
    if not tasks:
        raise PlanError(f"{where}: no tasks in it")
    known = set(keys)
    for task in tasks:
        for need in task.needs:
            if need not in known:
                raise PlanError(f"{where}: task {task.key} depends on {need}, which is not a task of the tag")
    return Plan(source=f"{KIND}:{tag}", kind=KIND, tasks=tasks, skipped=skipped)


def _with_subtasks(item: Any, where: str, top_ids: set[str]) -> list[PlanTask]:
    if not isinstance(item, dict) or "id" not in item or not isinstance(item.get("title"), str):
        raise PlanError(f"{where}: a task is an object with an id and a title")
    key = str(item["id"])
    task = _task(item, key, None, where, [str(d) for d in item.get("dependencies") or []])
    found = [task]
    subtasks = item.get("subtasks") or []
    local = {str(sub.get("id")) for sub in subtasks if isinstance(sub, dict)}
    for sub in subtasks:
        if not isinstance(sub, dict) or "id" not in sub or not isinstance(sub.get("title"), str):
            raise PlanError(f"{where}: task {key} has a subtask without an id or a title")
        needs = []
        for dependency in sub.get("dependencies") or []:
            text = str(dependency)
            if "." in text:
                needs.append(text)
            elif text in local:
                needs.append(f"{key}.{text}")
            elif text in top_ids:
                needs.append(text)
            else:
                raise PlanError(f"{where}: subtask {key}.{sub['id']} depends on {text}, which is neither a subtask of {key} nor a task")
        found.append(_task(sub, f"{key}.{sub['id']}", key, where, needs))
    return found


def _task(item: dict[str, Any], key: str, parent: str | None, where: str, needs: list[str]) -> PlanTask:
    subject, whole = subject_of(item["title"])
    if not subject:
        raise PlanError(f"{where}: task {key} has an empty title")
    extra = {name: value for name, value in item.items() if name not in _OWN_FIELDS}
    if whole:
        extra["title"] = whole
    priority = priority_of(str(item["priority"])) if item.get("priority") else None
    if item.get("priority") and priority is None:
        extra["priority"] = item["priority"]
    parts = [str(item.get("description") or "").strip()]
    if item.get("details"):
        parts.append("Details:\n" + str(item["details"]).strip())
    if item.get("testStrategy"):
        parts.append("Test strategy:\n" + str(item["testStrategy"]).strip())
    return PlanTask(
        key=key, subject=subject, description="\n\n".join(part for part in parts if part), parent=parent,
        needs=list(dict.fromkeys(needs)), priority=priority, status=STATUSES.get(str(item.get("status", "pending")), Status.PENDING),
        where=f"{where} task {key}", foreign_id=key, extra=extra,
    )
