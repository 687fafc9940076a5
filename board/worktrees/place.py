"""Where a task's worktree lives, what its branch is called, and which workspace file a path
inside one names. Standard library only: ``board hook`` maps every edited path through here.

Worktrees live in ``<workspace>/.board-worktrees/<id>.<slug>/``, a folder whose own
``.gitignore`` ignores everything in it, so the workspace's ``git status`` never lists them and
no file of the project is changed to say so. A worktree checks out the whole repository: when
the workspace is a folder inside the repository, the task's copy of the workspace is that same
folder inside the worktree.
"""

from __future__ import annotations

import os
import re

#: The folder, inside the workspace, that holds every task's worktree.
WORKTREES_DIR = ".board-worktrees"
#: Every branch board makes starts with this.
BRANCH_PREFIX = "board/"
#: What a task's record may name (``record.py``): a folder of WORKTREES_DIR, a board/ branch.
RECORD_PATH = re.escape(WORKTREES_DIR) + r"/([A-Za-z0-9_][A-Za-z0-9_-]{0,63}\.[a-z0-9-]{1,60})"
RECORD_BRANCH = re.escape(BRANCH_PREFIX) + r"([A-Za-z0-9_][A-Za-z0-9_-]{0,63}\.[a-z0-9-]{1,60})"
_SLUG_LENGTH = 40


def slug(subject: str) -> str:
    """``Add the login page!`` -> ``add-the-login-page``: letters and digits, dashes between."""
    words = re.findall(r"[a-z0-9]+", subject.lower())
    text = "-".join(words)[:_SLUG_LENGTH].strip("-")
    return text or "task"


def folder_name(task_id: str, subject: str) -> str:
    """``12.add-the-login-page``: the id, a dot (no id has one, so task ``1`` "A b" and task
    ``1-a`` "B" never meet), and the subject's slug."""
    return f"{task_id}.{slug(subject)}"


def task_of_name(name: str) -> str:
    """The task a folder or branch name (without ``board/``) was made for: ``12.add-login`` -> ``12``."""
    return name.partition(".")[0]


def repository_root(start: str) -> str | None:
    """The nearest folder from ``start`` upward that holds ``.git`` (a folder, or the file of a
    worktree), found without running git."""
    here = os.path.realpath(start)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def prefix_in_repository(root: str) -> str | None:
    """The workspace's folder inside its repository (``""``, or ``sub/``), found without
    running git; None outside a repository. ``root`` is the workspace's real path."""
    repository = repository_root(root)
    if repository is None:
        return None
    inside = os.path.relpath(root, repository)
    return "" if inside == "." else inside + "/"


def inside_worktree(root: str, relative: str) -> str | None:
    """A workspace-relative path that lies inside a task's worktree
    (``.board-worktrees/12.add-login/src/a.py``), as the workspace file it stands for
    (``src/a.py``); None when it is not in a worktree, or is a part of the worktree outside the
    workspace's own folder. ``root`` is the workspace's real path."""
    if not relative.startswith(WORKTREES_DIR + "/"):
        return None
    _, _, rest = relative.partition("/")
    name, _, inner = rest.partition("/")
    if not name or not inner:
        return None
    prefix = prefix_in_repository(root)
    if prefix is None:
        return None
    if not prefix:
        return inner
    return inner[len(prefix) :] if inner.startswith(prefix) and len(inner) > len(prefix) else None
