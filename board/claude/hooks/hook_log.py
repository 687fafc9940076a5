"""The hook log: one line for whatever went wrong with an event, since the agent must never
notice (``<state>/logs/hook.log``, or the user's cache when no board was found).

Standard library only: ``board hook`` imports it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from board.claude.hooks.where import HookBoard
from board.disk import confine


def note(board: HookBoard | None, line: str) -> None:
    """One line in the hook log; if even that fails, nothing (the agent must not notice)."""
    try:
        if board is not None:
            path = board.state_dir / "logs" / "hook.log"
        else:
            cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
            path = Path(cache) / "board" / "hook.log"
        confine.make_folders(path.parent)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with open(path, "a", encoding="utf-8", opener=confine.opener) as log:
            log.write(f"{stamp} {' '.join(line.split())[:500]}\n")
    except BaseException:  # noqa: BLE001
        pass
