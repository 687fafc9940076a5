"""The files a task holds for the guard's index of work in progress: those it declared, then
those its worktree changed. Standard library only: ``board.active_work.held_files`` imports it
for a task that has a worktree record, on the way of a claim, a heartbeat or a tool call."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from board.worktrees.place import RECORD_BRANCH, RECORD_PATH, task_of_name

#: As ``record.LISTED_FILES``: at most this many changed files are on a record.
_LISTED = 500


def worked_files(task_id: str, files: list[str], metadata: Mapping[str, Any]) -> list[str]:
    """``files``, then the paths the task's worktree record (``record.py`` reads it whole)
    lists as changed and not yet merged."""
    value = metadata.get("worktree") if metadata else None
    if not isinstance(value, Mapping) or value.get("merged"):
        return files
    branch, path, changes = value.get("branch"), value.get("path"), value.get("changes")
    named = re.fullmatch(RECORD_PATH, path) if isinstance(path, str) else None
    if named is None or not isinstance(branch, str) or re.fullmatch(RECORD_BRANCH, branch) is None or task_of_name(named.group(1)) not in (task_id, metadata.get("resolvesMergeOf")):
        return files  # not a record board wrote for this task
    listed = changes.get("list") if isinstance(changes, Mapping) else None
    if not isinstance(listed, list) or not listed:
        return files
    declared = set(files)
    changed = [entry[0] for entry in listed[:_LISTED] if isinstance(entry, list) and entry and isinstance(entry[0], str) and entry[0] and len(entry[0]) <= 4096]
    return files + [p for p in dict.fromkeys(changed) if p not in declared]
