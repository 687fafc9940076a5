"""The notifications a board in files has told (``board.notify.NoticeJournal``): one small file
per notice in ``notified/``, made with O_EXCL, so of the processes telling at once one makes it."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from pathlib import Path

from board.disk import confine

FOLDER = "notified"


class FileNoticeJournal:
    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / FOLDER

    def take(self, key: str, now: datetime, again_after: timedelta | None) -> bool:
        import hashlib  # here: every command imports this module, few write a notice

        path = self.folder / hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        confine.make_folders(self.folder)
        if self._make(path, key, now):
            return True
        if again_after is None or not self._told_before(path, now - again_after):
            return False
        # Told long enough ago to tell again: of the processes here at once, the one whose
        # rename of the old record succeeds tells it.
        aside = path.with_name(f"{path.name}.{os.getpid()}.old")
        try:
            confine.rename(path, aside)
        except FileNotFoundError:
            return False
        confine.unlink(aside, missing_ok=True)
        return self._make(path, key, now)

    @staticmethod
    def _make(path: Path, key: str, now: datetime) -> bool:
        try:
            fd = confine.open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            return False
        try:
            os.write(fd, (json.dumps({"key": key, "at": now.isoformat()}, ensure_ascii=False) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
        return True

    @staticmethod
    def _told_before(path: Path, moment: datetime) -> bool:
        """Whether the record at ``path`` says it was told before ``moment`` (an unreadable
        record counts as old: telling once more beats never telling)."""
        try:
            fd = confine.open_file(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:
            return False
        except OSError:
            return True
        try:
            told = datetime.fromisoformat(json.loads(os.read(fd, 4096))["at"])
        except (OSError, ValueError, KeyError, TypeError):
            return True
        finally:
            os.close(fd)
        return told <= moment
