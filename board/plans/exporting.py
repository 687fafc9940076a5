"""Board's tasks written out for another tool: a Backlog.md folder, so a team can go back.

Written into a folder of the person's choosing, never over a Backlog.md board already there;
that folder is confined (``board.disk.confine``) before the first write, so a link planted in
it is refused rather than followed elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from board.disk import confine
from board.disk.atomic import write_atomic
from board.graph import by_id, is_hidden
from board.plans import backlog
from board.plans.plan import PlanError
from board.status import Status
from board.store import Store


def export_backlog(store: Store, target: Path) -> dict[str, Any]:
    """Every task of the board (but Claude Code's internal ones) as a Backlog.md task in
    ``target/backlog/``: cancelled ones in its archive, the rest in tasks/."""
    target = Path(os.path.abspath(target))
    folder = target / "backlog"
    if target.exists() and not target.is_dir():
        raise PlanError(f"{target} is not a folder")
    for name in ("tasks", "archive/tasks", "completed"):
        if (folder / name).is_dir() and any((folder / name).glob("*.md")):
            raise PlanError(f"{folder / name} already holds Backlog.md tasks; export to a new folder (nothing was written)")
    tasks = [task for task in by_id(store.tasks) if not is_hidden(task)]
    ids = backlog.export_ids(tasks)
    created = store.clock().strftime("%Y-%m-%d %H:%M")
    files = []
    for task in tasks:
        name, text = backlog.task_file(task, ids, created)
        place = "archive/tasks" if task.status == Status.CANCELLED else "tasks"
        files.append((folder / place / name, text, task.id))
    target.mkdir(parents=True, exist_ok=True)
    confine.confine(target)
    for place in ("tasks", "archive/tasks", "drafts", "docs", "decisions", "completed"):
        confine.make_folders(folder / place)
    config = folder / "config.yml"
    if not config.exists():
        write_atomic(config, backlog.CONFIG.format(name=target.name.replace('"', "")).encode("utf-8"))
    for path, text, _ in files:
        write_atomic(path, text.encode("utf-8"))
    return {
        "folder": str(folder), "exported": len(files),
        "tasks": [{"id": task_id, "backlogId": ids[task_id], "file": str(path)} for path, _, task_id in files],
    }
