"""One alert: a condition on the board that a person should know about, and what to do about it.

An alert is identified by its ``key``: the same condition (same kind, same tasks or files)
gets the same key on every evaluation, so it stays one alert whose ``since`` is when it was
first seen, and it disappears when the condition ends.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from board.times import iso, parse_time


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        """Higher is worse; alerts are listed worst first."""
        return _RANK[self]


_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}

#: Every kind of SPEC section 8, with its usual severity (``drift.upstream`` may also be an error).
KINDS: dict[str, Severity] = {
    "conflict.files": Severity.WARNING,
    "conflict.reservation": Severity.ERROR,
    "conflict.write": Severity.INFO,
    "merge.conflict": Severity.WARNING,
    "drift.upstream": Severity.WARNING,
    "drift.force_push": Severity.ERROR,
    "drift.dirty": Severity.WARNING,
    "drift.external_change": Severity.WARNING,
    "lease.expired": Severity.WARNING,
    "graph.cycle": Severity.ERROR,
    "graph.dangling": Severity.ERROR,
    "graph.asymmetric": Severity.ERROR,
    "file.invalid": Severity.ERROR,
    "hooks.broken": Severity.ERROR,
    "agent.failing": Severity.WARNING,
    "agent.idle_with_task": Severity.WARNING,
    "agent.unreachable": Severity.WARNING,
    "human.waiting": Severity.INFO,
    "budget.near": Severity.WARNING,
    "budget.over": Severity.ERROR,
}


@dataclass(frozen=True)
class Alert:
    key: str
    kind: str
    severity: Severity
    message: str
    action: str
    tasks: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    #: When the condition was first seen; kept while it holds. Set by ``evaluate_alerts``.
    since: datetime | None = field(default=None, compare=False)

    def age(self, now: datetime) -> timedelta:
        """How long the condition has held (zero when ``since`` is unknown)."""
        return max(timedelta(0), now - self.since) if self.since else timedelta(0)

    def with_since(self, since: datetime) -> Alert:
        return dataclasses.replace(self, since=since)

    def sort_key(self) -> tuple[int, str, str]:
        return (-self.severity.rank, self.kind, self.key)

    def to_dict(self) -> dict[str, Any]:
        """The ``alerts.json`` shape (camelCase like every other board file)."""
        return {
            "key": self.key,
            "kind": self.kind,
            "severity": str(self.severity),
            "tasks": list(self.tasks),
            "agents": list(self.agents),
            "files": list(self.files),
            "message": self.message,
            "action": self.action,
            "since": iso(self.since) if self.since else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Alert:
        since = data.get("since")
        return cls(
            key=str(data["key"]),
            kind=str(data["kind"]),
            severity=Severity(data["severity"]),
            message=str(data.get("message", "")),
            action=str(data.get("action", "")),
            tasks=tuple(str(t) for t in data.get("tasks") or ()),
            agents=tuple(str(a) for a in data.get("agents") or ()),
            files=tuple(str(f) for f in data.get("files") or ()),
            since=parse_time(since) if isinstance(since, str) else None,
        )


def alerts_by_task(alerts: list[Alert]) -> dict[str, list[Alert]]:
    """task id -> its alerts, worst first: for badges on cards and a task's detail view."""
    grouped: dict[str, list[Alert]] = {}
    for alert in sorted(alerts, key=Alert.sort_key):
        for task_id in alert.tasks:
            grouped.setdefault(task_id, []).append(alert)
    return grouped


def one_line(text: str, limit: int = 200) -> str:
    """Messages are one line: text from task files may hold newlines; it is data, never layout."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def list_files(files: list[str] | tuple[str, ...], shown: int = 3) -> str:
    """``a.py, b.py and 4 more``: file lists in messages stay short."""
    files = list(files)
    if len(files) <= shown:
        return ", ".join(files)
    return ", ".join(files[:shown]) + f" and {len(files) - shown} more"
