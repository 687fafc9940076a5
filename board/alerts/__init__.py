"""Drift and conflict alerts (SPEC section 8): detectors, evaluation and ``alerts.json``.

Readers use ``read_alerts(store.alert_board)``; the coordinator calls ``refresh_alerts`` once per tick.

An alert itself (``board.alerts.model``) loads at once; evaluating them (the detectors, git, the
worktrees, budgets) on first use: the dashboard draws its first frame before it judges a thing
(15 ms of imports).
"""

from board.alerts.model import KINDS, Alert, Severity, alerts_by_task

TYPE_CHECKING = False
if TYPE_CHECKING:
    from board.alerts.evaluate import (
        AlertInputs,
        detect_all,
        evaluate_alerts,
        gather_inputs,
        read_alerts,
        refresh_alerts,
        write_alerts,
    )

#: What ``board.alerts.evaluate`` lends this package, loaded when first asked for.
_EVALUATION = frozenset({"AlertInputs", "detect_all", "evaluate_alerts", "gather_inputs", "read_alerts", "refresh_alerts", "write_alerts"})


def __getattr__(name: str) -> object:
    if name in _EVALUATION:
        from board.alerts import evaluate

        return getattr(evaluate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
