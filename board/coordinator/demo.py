"""``board demo``'s workspace: a private copy of the sample board, moved to the present.

The sample was recorded on one day; copied as is, every card would be days old. Every
timestamp in the copy is shifted by the same amount so the latest one lands a minute ago:
ages and durations look as they did when it was recorded, and the leases of the sample's
in-progress tasks (held by agents that are not running here) are already expired, so the
coordinator reclaims them at start and says why in the history.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import board
from board.errors import BoardError
from board.model import utcnow

_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)")
#: How long before "now" the sample's latest moment is placed.
LATEST_AGO = timedelta(minutes=1)


def sample_workspace() -> Path:
    """The sample shipped inside the package, or the repository's copy in a source checkout."""
    package = Path(board.__file__).resolve().parent
    for candidate in (package / "sample_workspace", package.parent / "sample_workspace"):
        if (candidate / ".tasks").is_dir():
            return candidate
    raise BoardError("the sample workspace is missing from this installation; reinstall board")


def prepare_demo_workspace(target: Path | None = None, *, now: datetime | None = None) -> Path:
    """Copy the sample to ``target`` (default: a new temp directory) and shift it to ``now``."""
    source = sample_workspace()
    if target is None:
        target = Path(tempfile.mkdtemp(prefix="board-demo-")) / "workspace"
    shutil.copytree(source, target)
    shift_timestamps(target / ".tasks", now or utcnow())
    return target


def shift_timestamps(state_dir: Path, now: datetime) -> timedelta:
    """Move every timestamp in a board's files by one offset so the latest is ``LATEST_AGO`` ago."""
    files = _board_files(state_dir)
    latest = max((stamp for path in files for stamp in _stamps_in(path.read_text("utf-8"))), default=None)
    if latest is None:
        return timedelta(0)
    offset = (now - LATEST_AGO) - latest
    for path in files:
        text = path.read_text("utf-8")
        if path.suffix == ".jsonl":
            lines = [json.dumps(_shift(json.loads(line), offset), ensure_ascii=False, separators=(",", ":")) for line in text.splitlines() if line.strip()]
            path.write_text("\n".join(lines) + "\n", "utf-8")
        else:
            path.write_text(json.dumps(_shift(json.loads(text), offset), ensure_ascii=False, indent=2) + "\n", "utf-8")
    return offset


def _board_files(state_dir: Path) -> list[Path]:
    return sorted(
        [*state_dir.glob("task_*.json"), *state_dir.glob("agents/*.json"), *state_dir.glob("toolcalls/*.jsonl"), *state_dir.glob("history.jsonl")]
    )


def _parse(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _format(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _stamps_in(text: str) -> list[datetime]:
    return [_parse(m.group(0)) for m in _TIMESTAMP.finditer(text)]


def _shift(value: Any, offset: timedelta) -> Any:
    return _walk(value, lambda s: _format(_parse(s) + offset) if _TIMESTAMP.fullmatch(s) else s)


def _walk(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_walk(v, change) for v in value]
    if isinstance(value, dict):
        return {k: _walk(v, change) for k, v in value.items()}
    return value
