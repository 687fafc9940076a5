"""The text of one kanban card, built from a task: shared by the columns and the detail view.

Task text is data: it only ever goes into ``rich.text.Text`` as plain strings, never markup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from rich.style import Style
from rich.text import Text

from board.alerts import Alert, Severity
from board.budgets import Spend
from board.graph import TaskGraph, removed_by_claude_code
from board.model import Priority, Task, by_policy
from board.present import format_age, progress_bar
from board.status import Status
from board.text import printable

#: Lines per card, including the spacer line under it.
CARD_HEIGHT = 4

PRIORITY_MARK = {Priority.CRITICAL: "‼", Priority.HIGH: "!", Priority.MEDIUM: "·", Priority.LOW: "↓"}
#: Each display state as a symbol, so a reader without colour can tell them apart (graph view).
STATE_SYMBOLS = {
    "waiting-deps": "◌", "ready": "○", "in_progress": "▶", "waiting": "?", "paused": "‖",
    "blocked": "⊘", "failed": "✗", "completed": "✓", "cancelled": "–",
}
BADGES = {Status.PAUSED: "PAUSED", Status.WAITING: "NEEDS YOU", Status.BLOCKED: "BLOCKED", Status.FAILED: "FAILED", Status.CANCELLED: "CANCELLED"}


def age_anchor(task: Task) -> datetime | None:
    """The moment a card's age counts from: when it entered its current state, as far as we know."""
    if task.status == Status.COMPLETED:
        return task.completed_at or task.updated_at
    if task.status in (Status.IN_PROGRESS, Status.PAUSED, Status.WAITING, Status.BLOCKED):
        return task.started_at or task.updated_at
    if task.status == Status.PENDING:
        return task.created_at or task.updated_at
    return task.updated_at or task.created_at


def task_age(task: Task, now: datetime) -> str:
    anchor = age_anchor(task)
    return format_age((now - anchor).total_seconds()) if anchor else ""


@dataclass
class CardView:
    """What every column needs to draw cards: the board, the selection, the clock, the styles."""

    graph: TaskGraph
    now: Callable[[], datetime]
    selected: str | None = None
    blockers: set[str] = field(default_factory=set)
    dependents: set[str] = field(default_factory=set)
    #: Display state ("ready", "failed"...) for each task, from ``Lanes``.
    states: Mapping[str, str] = field(default_factory=dict)
    #: Each task's alerts, worst first (``alerts_by_task``).
    alerts: Mapping[str, list[Alert]] = field(default_factory=dict)
    #: Unread messages in the inbox of each Claude Code team member, by name.
    unread: Mapping[str, int] = field(default_factory=dict)
    #: What each task spent in tokens and estimated dollars (the tasks that spent any).
    spend: Mapping[str, Spend] = field(default_factory=dict)

    def badge(self, task_id: str, alerts: Mapping[str, list[Alert]] | None = None) -> tuple[Severity, int] | None:
        """The card's alert badge: worst severity and how many alerts name the task."""
        named = (self.alerts if alerts is None else alerts).get(task_id)
        return (named[0].severity, len(named)) if named else None

    def relation(self, task_id: str) -> str:
        if task_id == self.selected:
            return "selected"
        if task_id in self.blockers:
            return "blocker"
        if task_id in self.dependents:
            return "dependent"
        return ""


def card_lines(task: Task, view: CardView, width: int, styles: Mapping[str, Style]) -> list[Text]:
    """Three lines of card text ``width`` cells wide (without the gutter)."""
    state = view.states.get(task.id, str(task.status))
    status_style = styles.get(state, Style())
    relation = view.relation(task.id)

    head = Text(no_wrap=True, overflow="ellipsis")
    head.append(f"#{task.id}", styles["id"])
    head.append(f" {PRIORITY_MARK[task.priority]}", styles.get(f"priority-{task.priority}", Style()))
    alert_badge = view.badge(task.id)
    if alert_badge:
        severity, count = alert_badge
        head.append(f" ⚠{count if count > 1 else ''}", styles[f"alert-{severity}"])
    unread = view.unread.get(task.owner, 0) if task.owner and task.status == Status.IN_PROGRESS else 0
    if unread:
        head.append(f" ✉{unread}", styles["alert-info"])  # its owner has not read what was sent to it
    badge = BADGES.get(task.status)
    if badge:
        if task.status == Status.WAITING and not alert_badge:
            badge = "⚠ " + badge  # the alert badge, when shown, already flags it
        head.append(f" {badge}", status_style + Style(bold=True))
    if by_policy(task):
        head.append("⚙", status_style + Style(bold=True))  # a policy chose this status (u undoes it)
    if removed_by_claude_code(task):
        head.append(" removed", styles["muted"])  # Claude Code deleted its file; 'board task restore' brings it back
    if relation == "blocker":
        head.append(" ▲needed", styles["blocker"])
    elif relation == "dependent":
        head.append(" ▼waits", styles["dependent"])
    right = Text(no_wrap=True)
    if task.owner:
        right.append(printable(task.owner), styles["owner"])
    age = task_age(task, view.now())
    if age:
        right.append((" " if right else "") + age, styles["muted"])
    if head.cell_len + 1 + right.cell_len > width and task.owner:
        right = Text(age, styles["muted"])
    if head.cell_len + 1 + right.cell_len <= width:
        head.append(" " * (width - head.cell_len - right.cell_len))
        head.append_text(right)
    head.truncate(width, overflow="ellipsis", pad=True)

    subject = Text(printable(task.subject), styles["subject"], no_wrap=True, overflow="ellipsis")
    if task.labels:
        # Labels follow a subject short enough to leave them room; the detail view lists them all.
        tags = Text(" " + " ".join(f"#{printable(name)}" for name in task.labels), styles["muted"])
        if subject.cell_len + tags.cell_len <= width:
            subject.append_text(tags)
    subject.truncate(width, overflow="ellipsis", pad=True)

    if task.status == Status.WAITING:
        # What the person is asked matters more here than the progress bar.
        foot = Text("? " + printable(" ".join((task.question or "needs you").split())), styles["waiting"], no_wrap=True, overflow="ellipsis")
        foot.truncate(width, overflow="ellipsis", pad=True)
        return [head, subject, foot]

    foot = Text(no_wrap=True)
    progress = view.graph.progress(task)
    calls = task.tool_calls
    tail = Text(no_wrap=True)
    tail.append(f" {progress:>3}%", styles["muted"])
    if calls.total:
        tail.append(f" ⚒{calls.total}", styles["muted"])
        if calls.failed:
            tail.append(f" ✗{calls.failed}", styles["failures"])
    spent = view.spend.get(task.id)
    if spent is not None:
        tail.append(f" {money(spent.usd) if spent.usd else tokens_short(spent.tokens)}", styles["muted"])
    worked = None
    if task.metadata:  # a worktree's record lives there (loaded for a board that has one)
        from board.worktrees.record import read_record

        worked = read_record(task.metadata, task.id)
    if worked is not None:
        # What its worktree changed; merged, or in conflict with its base.
        if worked.merged:
            tail.append(" ⎇✓", styles["muted"])
        elif worked.conflict is not None:
            tail.append(f" ⎇✗{len(worked.conflict.files)}", styles["failures"])
        elif worked.changes.files:
            tail.append(f" ⎇{worked.changes.files} +{worked.changes.added}−{worked.changes.removed}", styles["muted"])
    open_deps = len(view.graph.open_blockers(task)) if task.status == Status.PENDING else 0
    if open_deps:
        tail.append(f" ⧗{open_deps}", styles["waiting-deps"])
    bar_width = min(12, width - tail.cell_len)
    if bar_width < 2:  # a narrow card keeps the figures and drops the bar
        bar_width = 0
    filled, empty = progress_bar(progress, bar_width)
    foot.append(filled, status_style)
    foot.append(empty, styles["bar-empty"])
    foot.append_text(tail)
    foot.truncate(width, overflow="crop", pad=True)
    return [head, subject, foot]


def money(usd: float) -> str:
    """``$0.08``, ``$12.40``, ``$1.2k``: dollars in at most six cells."""
    if usd >= 1000:
        return f"${usd / 1000:.1f}k"
    return f"${usd:.2f}" if usd >= 0.005 else "<$0.01"


def tokens_short(tokens: int) -> str:
    """``870 tok``, ``12k tok``, ``3.4M tok``: for a model board has no price for."""
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M tok"
    return f"{tokens / 1000:.0f}k tok" if tokens >= 1000 else f"{tokens} tok"


#: Style names a card uses; widgets map each to a component class ``<widget>--<name>``.
STYLE_NAMES = (
    "id", "subject", "owner", "muted", "failures", "bar-empty", "blocker", "dependent",
    "selected", "related", "priority-critical", "priority-high", "priority-medium", "priority-low",
    "waiting-deps", "ready", "in_progress", "waiting", "paused", "blocked", "failed", "completed", "cancelled",
    "critical-path", "edge", "alert-error", "alert-warning", "alert-info",
)


def component_class(prefix: str, name: str) -> str:
    return f"{prefix}--{name.replace('_', '-')}"
