"""What a task's ``metadata.worktree`` says: its branch, its base, where its worktree is, what it
changed, and whether it was merged or conflicted.

The record is kept on the task, so every reader of the board (the dashboard, another machine of
a database board, an alert detector) sees a task's changes without running git. Agents can
write metadata too: a record is read defensively, and a malformed one reads as no record.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from board.worktrees.place import BRANCH_PREFIX, RECORD_BRANCH, RECORD_PATH, task_of_name

#: The key of the record in a task's metadata.
KEY = "worktree"
#: Metadata of a task made to settle another's merge conflict: the other task's id. It works
#: in that task's worktree, so the worktree is its own too.
RESOLVES = "resolvesMergeOf"
#: At most this many changed files are listed on a task (the counts stay whole).
LISTED_FILES = 500


@dataclass(frozen=True)
class FileChange:
    path: str
    added: int
    removed: int
    #: A binary file: git counts no lines.
    binary: bool = False


@dataclass(frozen=True)
class Changes:
    files: int = 0
    added: int = 0
    removed: int = 0
    listed: tuple[FileChange, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(change.path for change in self.listed)

    def summary(self) -> str:
        """``3 files +40 −2``, or ``no changes``."""
        if not self.files:
            return "no changes"
        return f"{self.files} file{'s' if self.files != 1 else ''} +{self.added} −{self.removed}"


@dataclass(frozen=True)
class Conflict:
    files: tuple[str, ...]
    #: Other tasks that changed those files.
    tasks: tuple[str, ...] = ()
    at: str = ""


@dataclass(frozen=True)
class WorktreeRecord:
    branch: str
    base: str
    #: The workspace's path of the worktree (``.board-worktrees/12.add-login``).
    path: str
    #: The commit of the base the branch was made from.
    made_from: str = ""
    changes: Changes = field(default_factory=Changes)
    #: The commit the branch was merged as, once merged.
    merged: str | None = None
    conflict: Conflict | None = None

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"branch": self.branch, "base": self.base, "path": self.path, "from": self.made_from}
        value["changes"] = {
            "files": self.changes.files,
            "added": self.changes.added,
            "removed": self.changes.removed,
            "list": [[c.path, c.added, c.removed] if not c.binary else [c.path, None, None] for c in self.changes.listed],
        }
        if self.merged:
            value["merged"] = self.merged
        if self.conflict is not None:
            value["conflict"] = {"files": list(self.conflict.files), "tasks": list(self.conflict.tasks), "at": self.conflict.at}
        return value


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value and len(value) <= 4096 and "\0" not in value else None


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53 else 0


def _changes(value: object) -> Changes:
    if not isinstance(value, Mapping):
        return Changes()
    listed = []
    raw = value.get("list")
    for entry in raw[:LISTED_FILES] if isinstance(raw, list) else ():
        if isinstance(entry, list) and len(entry) == 3 and _text(entry[0]):
            binary = entry[1] is None
            listed.append(FileChange(entry[0], _count(entry[1]), _count(entry[2]), binary))
    return Changes(_count(value.get("files")), _count(value.get("added")), _count(value.get("removed")), tuple(listed))


def _conflict(value: object) -> Conflict | None:
    if not isinstance(value, Mapping):
        return None
    files = tuple(f for f in value.get("files") or () if _text(f)) if isinstance(value.get("files"), list) else ()
    tasks = tuple(t for t in value.get("tasks") or () if _text(t)) if isinstance(value.get("tasks"), list) else ()
    return Conflict(files, tasks, _text(value.get("at")) or "") if files else None


#: What board ever writes there: anything else is not a record of board's (an agent may write
#: metadata), and would send git to another folder, branch or option.
_PATH = re.compile(RECORD_PATH)
_BRANCH = re.compile(RECORD_BRANCH)
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def branch_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a base branch (an option, a range, a control character), or None."""
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_./+-]{0,200}", name) or ".." in name or name.endswith((".", "/", ".lock")) or "//" in name:
        return f"'{name[:60]}' is not a branch name board uses (letters, digits, '_', '.', '/', '+', '-'; not starting with '-')"
    return None


def read_record(metadata: Mapping[str, Any], task_id: str) -> WorktreeRecord | None:
    """Task ``task_id``'s worktree record, or None when it has none, or one board did not write
    for it: an agent can write any metadata, and a record naming another task's folder or
    branch would have board merge, commit in or remove that task's work."""
    value = metadata.get(KEY) if isinstance(metadata, Mapping) else None
    if not isinstance(value, Mapping):
        return None
    branch, base, path = _text(value.get("branch")), _text(value.get("base")), _text(value.get("path"))
    if branch is None or base is None or path is None:
        return None
    named_path, named_branch = _PATH.fullmatch(path), _BRANCH.fullmatch(branch)
    if named_path is None or named_branch is None or named_path.group(1) != named_branch.group(1):
        return None
    owners = {task_id} | ({metadata[RESOLVES]} if isinstance(metadata.get(RESOLVES), str) else set())
    if task_of_name(named_path.group(1)) not in owners:
        return None
    if branch_name_problem(base) or base.startswith(BRANCH_PREFIX) or base == branch:
        return None
    made_from, merged = _text(value.get("from")) or "", _text(value.get("merged"))
    if (made_from and not _COMMIT.fullmatch(made_from)) or (merged is not None and not _COMMIT.fullmatch(merged)):
        return None
    return WorktreeRecord(
        branch=branch,
        base=base,
        path=path,
        made_from=made_from,
        changes=_changes(value.get("changes")),
        merged=merged,
        conflict=_conflict(value.get("conflict")),
    )

