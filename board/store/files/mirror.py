"""board's copy of a Claude Code list's tasks, kept for when Claude Code deletes their files.

Claude Code deletes a task's file once the task is done, and its record with it. board keeps
a copy of each finished task in the list's ``.board/removed/`` folder, written the first time a
board process sees the task completed (a read or a write), and a copy of any task whose file
vanishes while a process has it in its index. A task whose file is gone while its copy is here
(and board did not delete it itself: ``archive/`` does not hold it) stays on the board as it
last was, marked removed by Claude Code (``graph.REMOVED_BY``).

A copy is named ``<id>.<version>.json``, so one listing of the folder tells which tasks have a
copy and how recent: a read writes only the copies that are missing or older than the task,
never every task on every read. Copies are written whole or not at all (``write_atomic``), and
only below the list's root, never through a link planted in place of the folder.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from board.disk import confine
from board.disk.confine import LINKED_FOLDER, NOT_A_FOLDER
from board.disk.atomic import SpecialFile, read_regular, write_atomic

#: The folder of copies, in a Claude Code list's ``.board/``.
REMOVED_DIR = "removed"
_COPY = re.compile(r"([A-Za-z0-9][A-Za-z0-9_-]{0,63})\.(\d{1,18})\.json")


class RemovedMirror:
    """The copies in one list's ``.board/removed/``, as this process last listed them."""

    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / REMOVED_DIR
        #: Task id -> the version of its newest copy; None until the folder is first listed.
        self._versions: dict[str, int] | None = None
        self._made = False

    def planted(self) -> dict[str, str]:
        """The folder, when something not a plain folder (a link, a file) is in its place: path
        -> why board will not use it, reported as board's other folders are."""
        try:
            mode = os.lstat(self.folder).st_mode
        except OSError:
            return {}
        if stat.S_ISLNK(mode):
            return {str(self.folder): LINKED_FOLDER}
        if not stat.S_ISDIR(mode):
            return {str(self.folder): NOT_A_FOLDER}
        return {}

    def versions(self, *, relist: bool = False) -> dict[str, int]:
        """Task id -> version of its copy, from one listing of the folder (kept until ``relist``)."""
        if self._versions is None or relist:
            found: dict[str, int] = {}
            for name in self._names():
                match = _COPY.fullmatch(name)
                if match and int(match.group(2)) >= found.get(match.group(1), -1):
                    found[match.group(1)] = int(match.group(2))
            self._versions = found
        return self._versions

    def has(self, task_id: str) -> bool:
        """Whether a copy of the task is kept (listing again if this process has not seen one:
        another process may have written it since)."""
        return task_id in self.versions() or task_id in self.versions(relist=True)

    def due(self, task_id: str, version: int) -> bool:
        """Whether the task at ``version`` needs a copy: none kept, or an older one."""
        return self.versions().get(task_id, -1) < version

    def keep(self, task_id: str, version: int, data: bytes) -> bool:
        """Write the copy of a task at ``version`` (replacing older ones); False when the folder
        cannot be used (a link planted in its place, a full disk): the read goes on without it."""
        versions = self.versions()
        old = versions.get(task_id)
        try:
            if not self._made:
                confine.make_folders(self.folder)
                self._made = True
            write_atomic(self.folder / f"{task_id}.{version}.json", data)
        except OSError:
            return False
        versions[task_id] = version
        if old is not None and old != version:
            self._unlink(task_id, old)
        return True

    def read(self, task_id: str) -> tuple[bytes, Path] | None:
        """The newest copy of a task, as bytes and where it was read; None without one."""
        version = self.versions().get(task_id)
        if version is None and self.has(task_id):
            version = self.versions().get(task_id)
        if version is None:
            return None
        path = self.folder / f"{task_id}.{version}.json"
        try:
            return read_regular(path), path
        except (FileNotFoundError, SpecialFile):
            return None

    def drop(self, task_id: str) -> None:
        """Forget a task's copies (board archived the task: it left the board)."""
        self.versions().pop(task_id, None)
        for name in self._names():  # older copies too, left by a writer that raced this one
            match = _COPY.fullmatch(name)
            if match and match.group(1) == task_id:
                self._unlink(task_id, int(match.group(2)))

    def _names(self) -> list[str]:
        """The folder's entries; none when a link or a file is planted in its place (reads and
        writes below it refuse it as well: ``confine``)."""
        if self.planted():
            return []
        try:
            return os.listdir(self.folder)
        except OSError:
            return []

    def _unlink(self, task_id: str, version: int) -> None:
        try:
            confine.unlink(self.folder / f"{task_id}.{version}.json", missing_ok=True)
        except OSError:
            pass
