"""Which file of the workspace a path names, the one way reservations, recorded touches, alerts
and the hook's guard all read it: relative to the workspace, with every link resolved.

Standard library only, for the hook.
"""

from __future__ import annotations

import os
from pathlib import Path

from board.worktrees.place import WORKTREES_DIR, inside_worktree


def workspace_file(workspace: Path, raw: object) -> str | None:
    """``src/a.py``, ``/ws/src/a.py``, ``./link-to-src/a.py`` and ``src/../src/a.py`` all become
    ``src/a.py``; None when the file's real path is not inside the workspace's real path.

    A path inside a task's worktree (``.board-worktrees/12.add-login/src/a.py``) is the
    workspace's ``src/a.py``: the task works on that file in its own copy.

    Links are resolved, so a file is one name however it is reached, and a link inside the
    workspace that leads out of it (``etc -> /etc``) does not bring an outside file in.
    """
    if not isinstance(raw, str) or not raw or "\0" in raw:
        return None
    root = os.path.realpath(workspace)
    real = os.path.realpath(os.path.join(root, raw))  # an absolute ``raw`` stands alone
    inside = root.rstrip("/") + "/"
    if not real.startswith(inside):
        return None
    relative = real[len(inside) :]
    if relative.startswith(WORKTREES_DIR + "/"):
        # A task's worktree is another copy of the workspace: its files are the workspace's.
        return inside_worktree(root, relative)
    return relative

