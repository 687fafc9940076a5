"""``board check`` on a board's files: broken files, broken rules, stray temp files."""

from __future__ import annotations

import os
import time
from pathlib import Path

from board.graph import cancelled_blockers
from board.disk import confine
from board.disk.atomic import made_by_running_process, name_names_a_process
from board.store.base import Problem
from board.store.file_format import ARCHIVE_DIR
from board.store.files.state import FileBoard

#: A temp file this old cannot belong to a live writer (it would have given up waiting for the
#: lock long before), so it was left by one that was killed.
STRAY_TEMP_AGE_SECONDS = 600.0
#: Stray temp files ``board check`` names one by one; past this, the rest are counted.
STRAY_TEMP_LISTED = 10


def _size_of(path: Path) -> int:
    try:
        return path.lstat().st_size
    except FileNotFoundError:
        return 0


class FileRepair(FileBoard):
    """The checks of ``FileStore``."""

    def check(self) -> list[Problem]:
        """Everything on disk that breaks the file format or the dependency rules."""
        self._ensure_whole()
        self.rescan()
        problems = [Problem("file.invalid", path, reason) for path, reason in sorted(self.invalid.items())]
        for found in [*self.graph.problems(self.unreadable_tasks()), *cancelled_blockers(self.graph.tasks)]:
            where = str(self.layout.task_path(found.tasks[0]))
            problems.append(Problem(found.kind, where, found.message, found.tasks))
        stray = self.stray_temp_files()
        for path in stray[:STRAY_TEMP_LISTED]:
            problems.append(Problem("file.stray_temp", str(path), "a temp file left by a writer killed mid-write ('board check --fix' removes it)"))
        if len(stray) > STRAY_TEMP_LISTED:
            size = sum(_size_of(p) for p in stray[STRAY_TEMP_LISTED:])
            problems.append(Problem("file.stray_temp", str(self.layout.tasks_dir), f"{len(stray) - STRAY_TEMP_LISTED:,} more temp files ({size / 1024:,.0f} KiB) left by writers killed mid-write ('board check --fix' removes them)"))
        return problems

    def stray_temp_files(self) -> list[Path]:
        """Temp files no live writer can still be using, in every folder board writes.

        A temp file is named after the process that made it (``.write.<pid>-<random>.tmp``):
        once that process is gone, its file is stray at once. A temp file named otherwise
        (another tool's, or an older board's) counts as stray only once it is older than any
        wait for the lock.
        """
        now = time.time()
        stray = []
        for directory in self._written_folders():
            try:
                names = sorted(name for name in os.listdir(directory) if name.startswith(".") and name.endswith(".tmp"))
            except (FileNotFoundError, NotADirectoryError):
                continue
            for name in names:
                path = directory / name
                if name_names_a_process(name):
                    if not made_by_running_process(name):
                        stray.append(path)
                    continue
                try:
                    if now - path.lstat().st_mtime > STRAY_TEMP_AGE_SECONDS:
                        stray.append(path)
                except FileNotFoundError:
                    continue
        return stray

    def _written_folders(self) -> list[Path]:
        """Every folder board writes files into with temp files and renames."""
        folders = dict.fromkeys([self.layout.tasks_dir, self.state_dir])
        for name in ("agents", "reservations", ARCHIVE_DIR):
            folders[self.state_dir / name] = None
        try:
            with os.scandir(self.state_dir / "checkpoints") as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        folders[Path(entry.path)] = None
        except FileNotFoundError:
            pass
        return list(folders)

    def remove_stray_temp_files(self) -> list[Path]:
        removed = []
        for path in self.stray_temp_files():
            confine.unlink(path, missing_ok=True)
            removed.append(path)
        return removed
