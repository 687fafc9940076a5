"""Everything about one task: fields, description, dependencies to jump along, tool calls, history."""

from __future__ import annotations

import json
from datetime import datetime

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.color import Color, ColorParseError
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Markdown, OptionList, Static
from textual.widgets.option_list import Option

from board.budgets import NOTHING, Spend, budget_summary
from board.model import Budget, Task, by_policy
from board.status import Status
from board.present import change_text, expiry_text, moment_text
from board.ui.card import money, progress_bar
from board.ui.lanes import display_state
from board.ui.messages import AgentsShown, AlertsShown, LogsShown, TasksShown
from board.ui.session import BoardSession, TaskLogs
from board.ui.widgets.key_footer import ONE_LANE_BELOW, KeyFooter
from board.ui.widgets.alerts_panel import SEVERITY_MARK
from board.text import printable
from board.identity import local_user
from board.store import Store
from board.worktrees.record import KEY as WORKTREE_KEY, read_record

RECENT_TOOL_CALLS = 15
#: Changed files listed in the fields; the diff (d) has them all.
CHANGED_FILES_SHOWN = 20
HISTORY_LINES = 40


def _when(moment: datetime | None, now: datetime) -> str:
    return moment_text(moment, now)


class DetailScreen(Screen[bool]):
    """| key | action |
    |---|---|
    | escape / q | back to the board |
    | g | back to the board, in the graph view |
    | enter on a dependency | show that task |
    | d | the task's diff against its base (a task with a worktree) |
    | M | merge a completed task's branch into its base, after a confirmation |
    | B | after a merge conflict: a task for an agent to resolve it, after a confirmation |
    | s p r c a | act on this task, as on the board |

    Dismissed with whether the board is to show the graph. The task shown is the board's
    selected task (``TaskShown``), so the board's keys act on it.
    """

    BINDINGS = [
        Binding("escape,q", "back", "Back", id="detail.back"),
        # Overrides the board's g, which would switch the view hidden under this screen.
        Binding("g", "show_in_graph", "Graph", id="detail.graph", tooltip="back to the board, in the graph view, on this task"),
        Binding("tab", "focus_next", "Next pane", show=False, id="detail.next"),
        Binding("d", "show_diff", "Diff", id="detail.diff", tooltip="what this task changed in its worktree"),
        Binding("M", "merge", "Merge", id="detail.merge", tooltip="merge this completed task's branch into its base"),
        Binding("B", "send_back", "Send back", id="detail.send_back", tooltip="a task for an agent to resolve this task's merge conflict"),
    ]
    DEFAULT_CSS = """
    DetailScreen { layout: vertical; }
    #detail-body { height: 1fr; }
    #detail-main { width: 2fr; padding: 0 1; background: $surface; }
    #detail-side { width: 1fr; min-width: 30; }
    #detail-title { margin: 1 0; color: $foreground; }
    #detail-fields { margin-bottom: 1; }
    #detail-alerts { border: round $error 60%; border-title-color: $foreground; border-title-style: bold; padding: 0 1; margin-bottom: 1; height: auto; }
    #detail-description { border: round $panel-lighten-2; padding: 0 1; margin-bottom: 1; height: auto; }
    #detail-history { margin-bottom: 1; }
    #detail-deps { height: auto; max-height: 50%; border: round $panel-lighten-2; border-title-color: $foreground; }
    #detail-deps:focus { border: round $primary; }
    #detail-toolcalls { height: 1fr; border: round $panel-lighten-2; padding: 0 1; overflow-y: auto; }
    #detail-messages { height: 1fr; border: round $panel-lighten-2; border-title-color: $foreground; border-title-style: bold; padding: 0 1; overflow-y: auto; }
    /* A narrow screen (a phone): the side panels go below the fields, each at the full width. */
    DetailScreen.-narrow #detail-body { layout: vertical; }
    DetailScreen.-narrow #detail-main { width: 1fr; height: 2fr; }
    DetailScreen.-narrow #detail-side { width: 1fr; min-width: 0; height: 1fr; }
    """

    class TaskShown(Message):
        """The screen shows another task: the board selects it."""

        def __init__(self, task_id: str) -> None:
            self.task_id = task_id
            super().__init__()

    def __init__(self, task_id: str, session: BoardSession) -> None:
        super().__init__()
        self.task_id = task_id
        self.session = session

    def compose(self) -> ComposeResult:
        with Horizontal(id="detail-body"):
            with VerticalScroll(id="detail-main"):
                yield Static(id="detail-title")
                yield Static(id="detail-alerts")
                yield Static(id="detail-fields")
                yield Markdown(id="detail-description")
                yield Static(id="detail-history")
            with Vertical(id="detail-side"):
                yield OptionList(id="detail-deps")
                yield Static(id="detail-toolcalls")
                yield Static(id="detail-messages")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.set_class(self.app.size.width < ONE_LANE_BELOW, "-narrow")
        self.show_task(self.task_id)
        self.query_one("#detail-deps", OptionList).focus()
        # Text coloured in code (``_theme_colour``) keeps the colour it was built with: build it
        # again in a theme chosen while this view is open (t, or the palette).
        self.app.theme_changed_signal.subscribe(self, self._build_again)

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < ONE_LANE_BELOW, "-narrow")

    # -- content ------------------------------------------------------------------------------

    def show_task(self, task_id: str) -> None:
        self.task_id = task_id
        self.post_message(self.TaskShown(task_id))
        self._render_fields()
        self._load_logs(task_id)

    def _build_again(self, theme: object) -> None:
        self._render_fields()
        self._load_logs(self.task_id)

    def on_tasks_shown(self, message: TasksShown) -> None:
        if self.task_id in message.changed or message.changed & self._neighbours():
            self._render_fields()

    def on_alerts_shown(self, message: AlertsShown) -> None:
        self._render_alerts()

    def on_agents_shown(self, message: AgentsShown) -> None:
        task = self.session.graph.tasks.get(self.task_id)
        if task is not None:
            self._render_messages(task)

    def on_logs_shown(self, message: LogsShown) -> None:
        self._load_logs(self.task_id)

    def _neighbours(self) -> set[str]:
        task = self.session.graph.tasks.get(self.task_id)
        return set(task.blocked_by) | self.session.graph.dependents(self.task_id) if task else set()

    def _render_fields(self) -> None:
        session = self.session
        graph = session.graph
        task = graph.tasks.get(self.task_id)
        title = self.query_one("#detail-title", Static)
        if task is None:
            title.update(Text(f"#{self.task_id} is no longer on the board", style="bold"))
            return
        now = session.now()
        state = display_state(task, graph)
        heading = Text()
        heading.append(f"#{task.id} ", style="bold")
        heading.append(printable(task.subject), style="bold")
        heading.append(f"   {state}", style="italic")
        title.update(heading)

        fields = Table.grid(padding=(0, 2))
        fields.add_column(style="dim", no_wrap=True)
        fields.add_column()
        filled, empty = progress_bar(session.graph.progress(task), 20)
        calls = task.tool_calls
        rows: list[tuple[str, str]] = [
            ("status", str(task.status) if state == str(task.status) else f"{task.status} ({state})"),
            *([("question", printable(task.question, multiline=True) + (f"  (asked {_when(task.asked_at, now)}; w answers)" if task.status == Status.WAITING else ""))] if task.question else []),
            *([("answer", printable(task.answer, multiline=True))] if task.answer else []),
            ("priority", str(task.priority)),
            ("owner", printable(task.owner) or "—"),
            ("active form", printable(task.active_form) or "—"),
            ("progress", f"{filled}{empty} {session.graph.progress(task)}%"),
            ("tool calls", f"{calls.total} total, {calls.ok} ok, {calls.failed} failed ({calls.consecutive_failures} in a row)"
             + (f"; last {calls.last_tool} {_when(calls.last_at, now)}" if calls.last_tool else "")),
            ("tokens", _spend_line(session.view.spend.get(task.id))),
            ("budget", _budget_line(task, session.view.spend.get(task.id), session.settings.budget.for_tasks())),
            ("lease", f"{printable(task.lease.owner)}, token {task.lease.token}, {expiry_text(task.lease.expires_at, now)} ({task.lease.expires_at.isoformat().replace('+00:00', 'Z')})" if task.lease else "—"),
            ("error", printable(task.error or "", multiline=True) or "—"),
            ("policy", _policy_line(task, now)),
            ("parent", f"#{task.parent}" if task.parent else "—"),
            ("children", ", ".join(f"#{c.id}" for c in session.graph.children(task.id)) or "—"),
            ("files", printable(", ".join(task.files)) or "—"),
            *_worktree_rows(task),
            ("labels", printable(", ".join(task.labels)) or "—"),
            ("wave", str(session.lanes.waves.get(task.id, "—"))),
            ("created", _when(task.created_at, now)),
            ("updated", _when(task.updated_at, now)),
            ("started", _when(task.started_at, now)),
            ("completed", _when(task.completed_at, now)),
            ("version", str(task.version)),
            ("metadata", printable(json.dumps({k: v for k, v in task.metadata.items() if k != WORKTREE_KEY}, ensure_ascii=False)) if set(task.metadata) - {WORKTREE_KEY} else "—"),
        ]
        extra = task.model_extra or {}
        rows += [(key, json.dumps(value, ensure_ascii=False)) for key, value in sorted(extra.items())]
        for label, value in rows:
            fields.add_row(Text(label), Text(value))
        self.query_one("#detail-fields", Static).update(fields)
        self._render_alerts()
        self._render_messages(task)
        self.query_one("#detail-description", Markdown).update(printable(task.description, multiline=True) or "*No description.*")
        self._render_dependencies(task)
        self.refresh_bindings()  # d and M follow the task's worktree

    def _render_alerts(self) -> None:
        """The alerts naming this task, worst first: kind, severity, since when, message, what to do."""
        session = self.session
        alerts = session.view.alerts.get(self.task_id, [])
        panel = self.query_one("#detail-alerts", Static)
        panel.display = bool(alerts)
        if not alerts:
            return
        now = session.now()
        panel.border_title = f"Alerts ({len(alerts)})"
        rows = Table.grid(padding=(0, 1))
        rows.add_column(no_wrap=True)
        rows.add_column()
        for alert in alerts:
            colour = self._theme_colour({"error": "error", "warning": "warning"}.get(alert.severity, "primary"))
            head = Text()
            head.append(f"{alert.severity} ", style=colour + Style(bold=True))
            head.append(alert.kind, style=colour)
            head.append(f"  since {_when(alert.since, now)}", style="dim")
            rows.add_row(Text(SEVERITY_MARK[alert.severity], style=colour + Style(bold=True)), head)
            rows.add_row(Text(""), Text(printable(alert.message)))
            rows.add_row(Text(""), Text(f"→ {printable(alert.action)}", style="italic"))
        panel.update(rows)

    def _render_messages(self, task: Task) -> None:
        """The messages to and from the task's owner, when it is a Claude Code team member."""
        from board.claude.teams import conversation
        from board.ui.screens.agent import message_lines

        session = self.session
        panel = self.query_one("#detail-messages", Static)
        entry = session.owner_entry(task.owner) if task.owner else None
        panel.display = entry is not None
        if entry is None:
            return
        messages = conversation(entry.name, [inbox for (team, _), inbox in session.inboxes.items() if team == entry.team])
        unread = sum(1 for m in messages if not m.read and m.recipient == entry.name)
        panel.border_title = f"Messages with {printable(entry.name)}" + (f" ({unread} unread)" if unread else "")
        panel.update(message_lines(messages[-10:], entry.name))

    def _render_dependencies(self, task: Task) -> None:
        graph = self.session.graph
        deps = self.query_one("#detail-deps", OptionList)
        deps.border_title = "Dependencies (enter to open)"
        highlighted = deps.highlighted
        deps.clear_options()
        options: list[Option | None] = []

        def line(prefix: str, other_id: str) -> Option:
            other = graph.tasks.get(other_id)
            label = Text(prefix)
            if other is None:
                label.append(f"#{other_id} (missing)", style=self._theme_colour("error"))
            else:
                label.append(f"#{other_id} ", style="bold")
                label.append(f"[{display_state(other, graph)}] ")
                label.append(printable(other.subject))
            return Option(label, id=f"{prefix.strip()}:{other_id}")

        blockers = task.blocked_by
        dependents = sorted(graph.dependents(task.id), key=lambda t: (len(t), t))
        if blockers:
            options += [line("needs  ", b) for b in blockers]
        if dependents:
            options += [line("unlocks ", d) for d in dependents]
        if task.parent:
            options.append(line("parent ", task.parent))
        if not options:
            options.append(Option(Text("no dependencies", style="dim"), disabled=True))
        deps.add_options(options)
        deps.highlighted = highlighted if highlighted is not None and highlighted < deps.option_count else 0

    def _theme_colour(self, name: str) -> Style:
        """A colour from the current theme, for text built in code rather than CSS."""
        value = self.app.theme_variables.get(name)
        try:
            # Through Textual's colour parser: ANSI themes name colours ("ansi_red") as Rich does not.
            return Style(color=Color.parse(value).rich_color) if value else Style()
        except ColorParseError:
            return Style()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id and ":" in event.option.id:
            self.show_task(event.option.id.split(":", 1)[1])

    # -- logs (read in a worker) --------------------------------------------------------------

    @work(thread=True, exclusive=True, group="detail-logs")
    def _load_logs(self, task_id: str) -> None:
        logs = self.session.task_logs(task_id, history=HISTORY_LINES, calls=RECENT_TOOL_CALLS)
        self.app.call_from_thread(self._show_logs, task_id, logs)

    def _show_logs(self, task_id: str, logs: TaskLogs) -> None:
        if task_id != self.task_id or not self.is_attached:
            return
        history, calls, checkpoints = logs.history, logs.calls, logs.checkpoints
        timeline = Text()
        timeline.append("History\n", style="bold")
        for record in history:
            timeline.append(f"{str(record.get('ts', ''))[:19].replace('T', ' ')}  ", style="dim")
            timeline.append(f"v{record.get('version', '?')} ", style="dim")
            timeline.append(f"{record.get('actor', '?')}: ", style="bold")
            timeline.append(str(record.get("op", "")))
            if record.get("forced"):
                timeline.append(" (overrode the lease)", style="bold")
            changes = record.get("changes")
            if isinstance(changes, dict) and changes and record.get("op") != "create":
                shown = []
                for key, value in list(changes.items())[:4]:
                    if isinstance(value, list) and len(value) == 2:
                        shown.append(change_text(key, value[0], value[1]))
                    else:
                        shown.append(printable(key))
                timeline.append("  " + "; ".join(shown), style="dim")
            timeline.append("\n")
        if not history:
            timeline.append("no history recorded\n", style="dim")
        if checkpoints:
            timeline.append("\nCheckpoints\n", style="bold")
            timeline.append(", ".join(checkpoints) + "\n")
        self.query_one("#detail-history", Static).update(timeline)

        recent = Text()
        recent.append("Recent tool calls\n", style="bold")
        for call in reversed(calls):
            ok = call.get("ok", True)
            recent.append("✓ " if ok else "✗ ", style=self._theme_colour("success" if ok else "error"))
            recent.append(f"{str(call.get('ts', ''))[11:19]} ", style="dim")
            recent.append(printable(f"{call.get('tool', '?')}"), style="bold")
            recent.append(f" {call.get('agent', '')}")
            if call.get("ms") is not None:
                recent.append(f" {call['ms']}ms", style="dim")
            files = call.get("files") or []
            if files:
                recent.append(printable(" " + ", ".join(str(f) for f in files[:2])), style="dim")
            recent.append("\n")
        if not calls:
            recent.append("none recorded\n", style="dim")
        self.query_one("#detail-toolcalls", Static).update(recent)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """d, M and B show for a task with a worktree: M for a completed one not merged, B for
        one whose merge conflicted, on a board that may be written."""
        if action not in ("show_diff", "merge", "send_back"):
            return True
        task = self.session.graph.tasks.get(self.task_id)
        record = read_record(task.metadata, task.id) if task is not None else None
        if record is None:
            return False
        writable = not getattr(self.app, "readonly", True) and not record.merged
        if action == "merge":
            return writable and task is not None and task.status == Status.COMPLETED
        if action == "send_back":
            return writable and record.conflict is not None
        return True

    def action_show_diff(self) -> None:
        from board.ui.screens.diff import DiffScreen

        self.app.push_screen(DiffScreen(self.task_id, self.session))

    def action_merge(self) -> None:
        from board.ui.screens.confirm import ConfirmScreen
        from board.worktrees.on_board import merge_task

        task = self.session.graph.tasks.get(self.task_id)
        record = read_record(task.metadata, task.id) if task is not None else None
        if task is None or record is None or not self.check_action("merge", ()):
            return
        person = local_user()
        task_id = task.id

        def merge(store: Store) -> Task:
            merge_task(store, task_id, actor=person, now=self.session.now())
            return store.get(task_id)

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.app.write(task_id, "merge", merge)  # type: ignore[attr-defined]

        detail = f"{record.changes.summary()} on {record.branch}. Its worktree and branch are removed once merged; on a conflict nothing changes."
        self.app.push_screen(ConfirmScreen(printable(f"Merge #{task_id} into {record.base}?"), printable(detail), confirm_label="Merge"), confirmed)

    def action_send_back(self) -> None:
        from board.ui.screens.confirm import ConfirmScreen
        from board.worktrees.on_board import send_back

        task = self.session.graph.tasks.get(self.task_id)
        record = read_record(task.metadata, task.id) if task is not None else None
        if task is None or record is None or record.conflict is None or not self.check_action("send_back", ()):
            return
        person = local_user()
        task_id = task.id

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.app.write(task_id, "send back", lambda store: send_back(store, task_id, actor=person))  # type: ignore[attr-defined]

        detail = f"A new task, for the next agent, to merge {record.base} into {record.branch} in #{task_id}'s worktree and resolve {', '.join(record.conflict.files)}. Merging it merges #{task_id}."
        self.app.push_screen(ConfirmScreen(printable(f"Send #{task_id}'s conflict back to an agent?"), printable(detail), confirm_label="Send back"), confirmed)

    def action_back(self) -> None:
        self.dismiss(False)

    def action_show_in_graph(self) -> None:
        self.dismiss(True)


def _worktree_rows(task: Task) -> list[tuple[str, str]]:
    """The task's worktree, and the files it changed with lines added and removed."""
    record = read_record(task.metadata, task.id)
    if record is None:
        return []
    if record.merged:
        state = f"merged into {record.base} as {record.merged[:12]}"
    elif record.conflict is not None:
        state = f"conflicts with {record.base} in {', '.join(record.conflict.files)}"
    else:
        state = f"{record.path}, from {record.base}"
    rows = [("worktree", printable(f"{record.branch}: {state}; d shows the diff")), ("changed", record.changes.summary())]
    for change in record.changes.listed[:CHANGED_FILES_SHOWN]:
        rows.append(("", printable(f"{'binary' if change.binary else f'+{change.added} −{change.removed}':>12}  {change.path}")))
    if record.changes.files > CHANGED_FILES_SHOWN:
        rows.append(("", f"… and {record.changes.files - CHANGED_FILES_SHOWN} more (d)"))
    return rows


def _spend_line(spent: Spend | None) -> str:
    """``93,160 tokens, $0.08 (estimated)``, or ``—`` when its agents spent none on it."""
    if spent is None:
        return "—"
    return f"{spent.tokens:,} tokens" + (f", {money(spent.usd)} (estimated at board's prices)" if spent.usd else " (no price known for its model)")


def _budget_line(task: Task, spent: Spend | None, default: Budget | None) -> str:
    """The budget the task is held to and how much of it is spent; ``—`` without one."""
    summary = budget_summary(task, spent or NOTHING, default)
    return "—" if summary is None else f"{summary[0]}: {summary[1]:.0%} spent"


def _policy_line(task: Task, now: datetime) -> str:
    """Which policy set the status and why, and how to take it back; or when it was undone."""
    mark = task.policy
    if mark is None:
        return "—"
    if not by_policy(task):
        return f"{mark.name} set {mark.status} {_when(mark.fired_at, now)}; no longer in force"
    return printable(f"{mark.name} set {mark.status} {_when(mark.fired_at, now)}: {mark.reason} (u undoes it)")
