"""Times as board files write them: ISO-8601 UTC with a ``Z``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 time from a board file, or None when it is missing or malformed."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
