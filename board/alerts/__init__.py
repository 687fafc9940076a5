"""Drift and conflict alerts (SPEC section 8): detectors, evaluation and ``alerts.json``.

Readers use ``read_alerts(store.alert_board)``; the coordinator calls ``refresh_alerts`` once per tick.
"""

from board.alerts.model import KINDS, Alert, Severity, alerts_by_task
from board.alerts.evaluate import (
    AlertInputs,
    detect_all,
    evaluate_alerts,
    gather_inputs,
    read_alerts,
    refresh_alerts,
    write_alerts,
)

__all__ = [
    "KINDS",
    "Alert",
    "AlertInputs",
    "Severity",
    "alerts_by_task",
    "detect_all",
    "evaluate_alerts",
    "gather_inputs",
    "read_alerts",
    "refresh_alerts",
    "write_alerts",
]
