"""Alerts the dashboard computes from the board itself, merged with the coordinator's ``alerts.json``.

Textual-free. The coordinator raises the same kinds with more context (git, leases); the board's
own file and graph checks still work when no coordinator runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from board.graph import TaskGraph, sorted_ids
from board.status import Status

SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Alert:
    kind: str
    severity: str
    message: str
    tasks: tuple[str, ...] = ()

    @property
    def rank(self) -> tuple[int, str, str]:
        return (SEVERITY_RANK.get(self.severity, 3), self.kind, self.message)


#: Past this many alerts of one kind, the panel shows one summary line for the kind.
GROUP_ABOVE = 5


def board_alerts(graph: TaskGraph, invalid: dict[str, str]) -> list[Alert]:
    found = [Alert("file.invalid", "error", f"{Path(path).name}: {reason}") for path, reason in sorted(invalid.items())]
    for problem in graph.problems():
        found.append(Alert(problem.kind, "error", problem.message, problem.tasks))
    waiting = sorted_ids(t.id for t in graph.tasks.values() if t.status == Status.WAITING)
    for task_id in waiting:
        found.append(Alert("human.waiting", "info", f"#{task_id} is waiting for a person: {graph.tasks[task_id].subject}", (task_id,)))
    return found


def grouped(alerts: list[Alert]) -> list[Alert]:
    """Many alerts of one kind read better as one line: "589 × human.waiting: #12, #40, #41…"."""
    by_kind: dict[str, list[Alert]] = {}
    for alert in alerts:
        by_kind.setdefault(alert.kind, []).append(alert)
    result = []
    for kind, members in by_kind.items():
        if len(members) <= GROUP_ABOVE:
            result.extend(members)
            continue
        tasks = sorted_ids(dict.fromkeys(t for a in members for t in a.tasks))
        named = ", ".join(f"#{t}" for t in tasks[:6]) + ("…" if len(tasks) > 6 else "")
        first = members[0]
        result.append(Alert(kind, first.severity, f"{len(members):,} alerts: {named or first.message}", tuple(tasks)))
    return sorted(result, key=lambda a: a.rank)


def parse_coordinator_alerts(raw: bytes) -> list[Alert]:
    """``alerts.json`` as the coordinator writes it: a list, or ``{"alerts": [...]}``; junk is skipped."""
    try:
        data: Any = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return [Alert("file.invalid", "warning", "alerts.json is not valid JSON")]
    if isinstance(data, dict):
        data = data.get("alerts", [])
    if not isinstance(data, list):
        return []
    alerts = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
            continue
        tasks = item.get("tasks") or ([item["task"]] if item.get("task") is not None else [])
        alerts.append(
            Alert(
                item["kind"],
                str(item.get("severity", "warning")),
                str(item.get("message", item["kind"])),
                tuple(str(t) for t in tasks if isinstance(t, (str, int))),
            )
        )
    return alerts


def merge_alerts(own: list[Alert], coordinator: list[Alert]) -> list[Alert]:
    """Both lists, without duplicates, most severe first."""
    seen: dict[tuple[str, str], Alert] = {}
    for alert in [*coordinator, *own]:
        seen.setdefault((alert.kind, alert.message), alert)
    return sorted(seen.values(), key=lambda a: a.rank)
