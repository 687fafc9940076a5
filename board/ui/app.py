"""The live dashboard: a kanban (or graph) of the board in ``.tasks/``, updated as files change.

Threads: one worker reads the board (first a full read in chunks, then watcher batches, see
``board_feed``) through the session's store and posts ``BoardChanged`` messages; writes run in
another worker through the same store, serialised by the session's lock. Only the app thread
touches the displayed graph and widgets; screens get the session, not the app's attributes.

It is long because it is where every message from the readers, the keys and the screens meets
the widgets; what can live elsewhere does (keys: ``task_keys``, ``agent_keys``; the board:
``session``; reading: ``board_feed``).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path

from textual import on, work
from textual.app import App, ComposeResult
from textual.driver import Driver
from textual.binding import Binding
from textual.message import Message
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import ContentSwitcher

from board.claude.teams import Team
from board.model import Task, utcnow
from board.status import Status
from board.store import Store
from board.alerts import Alert, Severity, alerts_by_task
from board.ui.board_alerts import AlertsFollower, StoreSnapshot, severity_counts
from board.errors import BoardError
from board.ui.board_feed import FeedEvents, follow_board, read_pages
from board.ui.lanes import Lane, display_state
from board.ui.agent_keys import AgentKeys
from board.ui.messages import AgentsChanged, AgentsShown, AlertsChanged, AlertsShown, BoardChanged, LogsShown, SpendChanged, TaskLogChanged, TasksShown
from board.ui.palette import TaskCommands
from board.ui.session import BoardSession, unread_by_member
from board.ui.task_filter import TaskQuery
from board.ui.themes import DEFAULT_THEME, load_themes, remember_theme, remembered_theme
from board.ui.widgets.agents_panel import AgentsPanel
from board.ui.widgets.alerts_panel import AlertsPanel
from board.ui.widgets.board_header import BoardHeader
from board.ui.screens.board import BoardScreen
from board.ui.widgets.key_footer import KeyFooter
from board.ui.widgets.kanban import KanbanBoard
from board.text import printable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from board.notify import Notice
    from board.ui.screens.detail import DetailScreen
    from board.ui.widgets.graph_view import GraphView

#: The first read posts this many tasks first, so a huge board shows something at once, then
#: posts the rest in chunks this size (each chunk re-sorts the lanes, so not too many).
FIRST_CHUNK = 200
LOAD_CHUNK = 4000
#: How long after the board is on screen its memory is settled (``_settle_memory``).
SETTLE_SECONDS = 0.5
#: ... and at the latest this long after the dashboard opened, read or not.
SETTLE_DEADLINE_SECONDS = 60.0
#: Below this width the agents and alerts panels start hidden, so the five columns stay legible.
PANELS_MIN_WIDTH = 130
#: How often ages and heartbeats on screen are brought up to date.
CLOCK_SECONDS = 1.0
#: What needs the person is looked for this often (``tell_person``).
NOTICE_SECONDS = 1.0
#: New errors notified one by one, up to this many per update; the rest in one line.
ERROR_NOTIFICATIONS = 3


class BoardApp(AgentKeys, App[None]):
    """board's dashboard.

    | key | action |
    |---|---|
    | arrows / hjkl | move between cards (graph: between waves and nodes) |
    | enter | details of the selected task |
    | s / p / r / c / a | start, pause-resume, retry (back to the queue), cancel, assign |
    | w | answer a task that waits for you (it goes back to its owner) |
    | m | message the task's owner (a Claude Code team member) |
    | u | undo the status a policy set |
    | / | filter | g | kanban / graph | t | next theme | ? | help | q | quit |
    | f | graph: only the selected task's chain (f or escape goes back) |
    | e | into the alerts panel; there enter selects the alert's task, escape goes back |
    | A | into the agents panel; there enter shows an agent, m messages it, escape goes back |
    """

    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "board"
    COMMANDS = App.COMMANDS | {TaskCommands}
    BINDINGS = [
        Binding("enter", "details", "Details", id="task.details"),
        Binding("s", "start", "Start", id="task.start"),
        Binding("p", "pause", "Pause/resume", id="task.pause"),
        Binding("r", "retry", "Retry", id="task.retry", tooltip="back to the queue: failed, cancelled, blocked, paused or in progress"),
        Binding("u", "undo_policy", "Undo policy", show=False, id="task.undo_policy", tooltip="take back a status a policy set"),
        Binding("c", "cancel", "Cancel", id="task.cancel"),
        Binding("a", "assign", "Assign", id="task.assign"),
        # Shown in the footer only while the selected task waits for a person (check_action).
        Binding("w", "answer", "Answer", id="task.answer", tooltip="answer the question of a task that waits for you"),
        # Shown only while the selected task's owner is a Claude Code team member (check_action).
        Binding("m", "message", "Message owner", id="task.message", tooltip="write to the owner's inbox (a nudge, if it sits idle with this task)"),
        Binding("slash", "filter", "Filter", id="view.filter"),
        Binding("g", "toggle_view", "Graph/kanban", id="view.toggle"),
        Binding("e", "alerts", "Alerts", id="view.alerts"),
        Binding("A", "agents", "Agents", show=False, id="view.agents", tooltip="into the agents panel: enter shows an agent, m messages it"),
        Binding("x", "toggle_cancelled", "Show/hide cancelled", show=False, id="view.cancelled"),
        Binding("i", "toggle_panels", "Agents and alerts panels", show=False, id="view.panels"),
        Binding("t", "next_theme", "Theme", id="view.theme"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="view.clear_filter"),
    ]

    def __init__(
        self,
        workspace: Path,
        *,
        readonly: bool = False,
        now: Callable[[], datetime] = utcnow,
        watch: bool = True,
        live_clock: bool = True,
        reconcile_seconds: float | None = None,
        remember_choices: bool = True,
    ) -> None:
        super().__init__()
        self.workspace = Path(workspace).resolve()
        self.readonly = readonly
        self.now = now
        self.watch_files = watch
        self.live_clock = live_clock
        self.reconcile_seconds = reconcile_seconds
        self.session = session = BoardSession(self.workspace, now=now)
        self.settings = session.settings
        #: What is on screen, the session's (the app alone changes them).
        self.board, self.graph, self.lanes, self.view = session.board, session.graph, session.lanes, session.view
        #: Why the board cannot be followed right now (the database is unreachable), or None.
        self._connection_problem: str | None = None
        #: Error alerts already announced, so each is notified once while it lasts.
        self._announced_errors: set[str] = set()
        #: Whether the side panels were shown just to reach the alerts (hidden again after).
        self._panels_shown_for_alerts = False
        #: Messages of changed tasks applied so far, and what ``_needs_you`` last worked out from
        #: which of them and which alerts.
        self._board_changes = 0
        self._needs_you_seen: tuple[int, list[Alert], list[Notice], list[Notice], list[Notice]] | None = None
        self.loaded = False
        self.task_query = TaskQuery("")
        self._all_done_announced = False
        #: True until the first alerts are on screen (tests wait for it).
        self._alerts_pending = True
        self._theme_problems: list[str] = []
        #: Whether the user hid the panels (None until they toggle them; until then the panels
        #: follow the terminal width).
        self._panels_hidden_by_user: bool | None = None
        self._board_themes: list[str] = []
        self._theme_chosen = False
        self.remember_choices = remember_choices
        self._selected_before_filter: str | None = None
        #: The graph's view, once made (``graph_view``).
        self._graph_view: GraphView | None = None
        self._register_themes()

    # -- the session's, for a look from outside (tests, a debugger) ----------------------------

    @property
    def store(self) -> Store:
        return self.session.store

    @property
    def store_lock(self) -> threading.Lock:
        return self.session.lock

    @property
    def alerts_follower(self) -> AlertsFollower:
        return self.session.alerts_follower

    @property
    def teams(self) -> list[Team]:
        return self.session.teams

    @property
    def alerts(self) -> list[Alert]:
        return self.session.alerts

    @property
    def alerts_from_coordinator(self) -> bool:
        return self.session.alerts_from_coordinator

    # -- setup --------------------------------------------------------------------------------

    def _register_themes(self) -> None:
        loaded = load_themes()
        for theme in loaded.themes:
            self.register_theme(theme)
        self._board_themes = [t.name for t in loaded.themes]
        self._theme_problems = loaded.problems
        wanted = self.settings.ui.theme or remembered_theme() or DEFAULT_THEME
        if wanted not in self.available_themes:
            wanted = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self.theme = wanted
        self._theme_chosen = True  # from here on a change of theme is the person's

    def get_driver_class(self) -> type[Driver]:
        """textual's driver, but in a Linux terminal one whose input thread sleeps until a key
        comes (``board.ui.terminal_driver``): an idle dashboard's CPU; served to a browser
        (``board web``), one that also ends with its server (``board.ui.web_driver``)."""
        from textual.drivers.linux_driver import LinuxDriver

        driver = super().get_driver_class()
        if driver is LinuxDriver:
            from board.ui.terminal_driver import QuietLinuxDriver

            return QuietLinuxDriver
        if (driver.__module__, driver.__name__) == ("textual.drivers.web_driver", "WebDriver"):
            from board.ui.web_driver import QuietWebDriver

            return QuietWebDriver
        return driver

    def compose(self) -> ComposeResult:
        yield BoardHeader(id="header")
        with Horizontal(id="main"):
            with ContentSwitcher(initial="kanban", id="views"):
                yield KanbanBoard(self.lanes, self.view, select=self.select, id="kanban")
            with Vertical(id="side"):
                yield AgentsPanel(self.now, id="agents")
                yield AlertsPanel(readonly=self.readonly, id="alerts")
        yield KeyFooter(keys_at_once=True)  # the keys are the app's (the board's own show only on a narrow screen)

    def on_mount(self) -> None:
        self.kanban = self.query_one(KanbanBoard)
        self.header_bar = self.query_one(BoardHeader)
        self.alerts_panel = self.query_one(AlertsPanel)
        self.query_one(AgentsPanel).tasks = self.graph.tasks
        # Focused now, not once the focus message comes round: the first frame then draws the
        # board focused and the footer with the board's keys, where each came a frame later.
        # Marked focused first, so that the focus message finds nothing to restyle: the
        # screen's first restyle of every widget, which comes next, draws the board focused
        # (restyled twice, it was 4 ms of the first frame).
        self.kanban.set_reactive(Widget.has_focus, True)
        self.screen.set_focus(self.kanban)
        self._fit_to_width(self.size.width)
        self._update_header()
        for problem in self._theme_problems:
            self.notify(printable(problem), title="Theme", severity="warning", timeout=8, markup=False)
        if self.session.settings_problem:
            self.notify(printable(self.session.settings_problem), title="Settings", severity="warning", timeout=8, markup=False)
        if self.live_clock:
            self.set_interval(CLOCK_SECONDS, self._tick)
        self._read_first_chunk()
        # The agents too, for the first frame (the feed reads them again, with their costs, and
        # posts only a change).
        self._post_agents(first=True)

    def _read_first_chunk(self) -> None:
        """Read the first few hundred tasks before the first frame (a small board: all of it),
        so the board opens with cards on it; a worker reads the rest."""
        # Everything the first read makes stays alive: the cyclic garbage collector would walk
        # it again and again (a fifth of the read at 10,000 tasks) to find nothing. It pauses
        # until the board is on screen (``_settle_memory``). What start-up made so far is set
        # aside as it is, not collected: a collection now would walk the whole of Textual and
        # board just imported (25 ms before the first frame); ``_settle_memory`` collects it.
        gc.freeze()
        gc.disable()
        # Should the read never end (a database away for long), collect again all the same.
        self.set_timer(SETTLE_DEADLINE_SECONDS, self._settle_memory)
        page = self.session.read_page(FIRST_CHUNK, first=True)
        self.on_board_changed(BoardChanged.of(page))
        # Start reading the rest once the first frame is out: the reader holds the GIL for most
        # of its work and would otherwise delay that frame by a third of a second.
        self.call_after_refresh(self.feed_board, page.loaded)

    def on_unmount(self) -> None:
        gc.enable()  # closed before the board was settled
        self.session.stop()

    def _tick(self) -> None:
        """Ages and heartbeat ages move with the clock, on an idle board too: only what is on
        screen, and of that only what reads differently now."""
        if self.kanban.display:
            self.kanban.refresh_aged_cards()
        side = self.query_one("#side")
        if side.display and not side.has_class("hidden"):
            self.query_one(AgentsPanel).refresh_ages()
            self.alerts_panel.show_alerts(self.session.alerts, self.now(), from_coordinator=self.session.alerts_from_coordinator)

    # -- reading the board (worker thread) ----------------------------------------------------

    def _feed_events(self) -> FeedEvents:
        """Where a feed (in a worker thread) reports: messages and calls to this thread."""
        return FeedEvents(
            board_read=lambda read: self.post_message(BoardChanged.of(read)),
            agents_may_have_changed=self._post_agents,
            logs_changed=lambda logs: self.post_message(TaskLogChanged(logs)),
            connection=lambda problem: self.call_from_thread(self._show_connection, problem),
        )

    @work(thread=True, exclusive=True, group="board-feed")
    def feed_board(self, read: bool = True) -> None:
        """Read the rest of the board (unless it is all ``read``), a page at a time, then follow
        it until unmount."""
        events = self._feed_events()
        whole = read or read_pages(self.session, events, chunk=LOAD_CHUNK)
        self._follow(events, read_whole=not whole)

    def _follow(self, events: FeedEvents, *, read_whole: bool = False) -> None:
        events.agents_may_have_changed()
        self.session.alerts_follower.wake()
        if self.watch_files:
            follow_board(self.session, events, every=self.reconcile_seconds, read_whole=read_whole)

    def _show_connection(self, problem: str | None) -> None:
        """Say in the header that the database is out of reach (None: it is back)."""
        self._connection_problem = problem
        self._update_header()

    @work(thread=True, exclusive=True, group="board-alerts")
    def follow_alerts(self) -> None:
        """Keep the alerts current until unmount (``AlertsFollower``), posting each change."""

        def snapshot() -> StoreSnapshot:
            with self.session.lock:
                return StoreSnapshot.of(self.session.store)

        def show(alerts: list[Alert], from_coordinator: bool) -> None:
            self.post_message(AlertsChanged(alerts, from_coordinator=from_coordinator))

        self.session.alerts_follower.run(snapshot, show, now=self.now, settings=self.settings, once=not self.watch_files)

    # -- applying changes (app thread) --------------------------------------------------------

    def on_board_changed(self, message: BoardChanged) -> None:
        if not self.is_running:
            # Closing: the screens are gone, while a reader's last message may still arrive.
            return
        self._board_changes += 1
        if not self.loaded and not message.loaded and len(self.graph):
            # Middle of the first read of a big board: the first chunk is on screen already;
            # placing every chunk in the lanes would only slow the read down.
            self.board.put_unarranged(message.tasks, message.observed)
            self.session.owned.update(message.tasks)
            self.header_bar.show_counts(self.lanes.counts, f"loading… {len(self.graph):,} tasks read")
        else:
            self.apply_tasks(message.tasks, message.removed, observed=message.observed)
        if message.loaded and not self.loaded:
            self.loaded = True
            # Alerts are judged on the whole board, and an evaluation would slow the read down.
            # Both workers start once the frame this read makes is out: they load and work
            # holding the interpreter's lock, which the first frame of a small board (read
            # whole before it) would otherwise wait on.
            self.call_after_refresh(self.follow_alerts)
            if self.watch_files:
                self.call_after_refresh(lambda: self.tell_person(self._needs_you()))
            # Once the whole board is on screen: collect, then set the board aside.
            self.set_timer(SETTLE_SECONDS, self._settle_memory)
            if self.board.lanes_stale:
                self.board.arrange()
                self.kanban.show_lanes()
            self._update_header()
            if self.view.selected is None:
                self.kanban.select_first()

    def _settle_memory(self) -> None:
        """The board read lives as long as the app: keep the cyclic garbage collector from
        walking it on every full collection (a 200 ms pause at 10,000 tasks). What drawing the
        screen threw away meanwhile is collected first, or it would be kept for good."""
        if gc.isenabled():
            return  # settled already
        gc.unfreeze()  # start-up's too (``_read_first_chunk``)
        gc.collect()
        gc.freeze()
        gc.enable()

    def apply_tasks(self, tasks: Iterable[Task], removed: Iterable[str] = (), *, observed: int | None = None) -> set[str]:
        """Put what was read into the displayed board (``DisplayedBoard.apply`` decides what
        counts); redraw only the cards it touches."""
        selected = self.view.selected
        before = self.lanes.lane_index(selected) if selected else None
        applied = self.board.apply(tasks, removed, observed=observed)
        if not applied.changed:
            return applied.changed
        graph_tasks = self.graph.tasks
        owners_moved = self.session.owned.update([graph_tasks[i] for i in applied.changed if i in graph_tasks], [i for i in applied.changed if i not in graph_tasks])
        # An agent's record names its task: a change to that task may make it no longer the agent's.
        if owners_moved or any(agent.task in applied.changed for agent in self.session.agents):
            self.query_one(AgentsPanel).show_owned(self.session.owned.as_mapping())
        with self.batch_update():
            self.kanban.show_lanes(applied.moved_from)
            if not applied.edges_changed:
                self.kanban.refresh_tasks(applied.affected)
            self._refresh_relations()
            if self._graph_view is not None:
                self._graph_view.board_changed(structure=applied.edges_changed, task_ids=applied.affected)
            self._update_header()
            self._reselect_if_gone(before)
            self._follow_selection(before)
        if selected is not None and self.view.selected != selected:
            # It left the view (filtered out, deleted, cancelled while those are hidden): a
            # neighbour is selected, and the person is told, so no key lands on it unseen.
            self.cursor_moved_by_board(selected)
            self.notify(printable(f"#{selected} left the view; the cursor is on {'#' + self.view.selected if self.view.selected else 'no card'} now"), title="Selection", timeout=4, markup=False)
        if self.loaded:
            self._announce_if_done()
            self._announce_questions(applied.asking)
        if self.view.selected in applied.changed:
            self.refresh_bindings()
        self._tell_screens(lambda: TasksShown(applied.changed))
        return applied.changed

    def _follow_selection(self, before: tuple[Lane, int] | None) -> None:
        """The selected task is the truth: when its card moves (an agent took it up, finished
        it, or cards above it came and went), the cursor goes with it, onto its lane and row,
        scrolled into view, so the next key acts on the card the person sees highlighted."""
        selected = self.view.selected
        if before is None or selected is None:
            return
        after = self.lanes.lane_index(selected)
        if after is not None and after != before:
            self.kanban.reveal_selection()

    def _reselect_if_gone(self, before: tuple[Lane, int] | None = None) -> None:
        """The selected task left the view (filtered, hidden, deleted): select its neighbour."""
        selected = self.view.selected
        if selected is None or self.lanes.lane_index(selected) is not None or not self.loaded:
            return
        if before is not None and self.lanes.ids[before[0]]:
            lane, index = before
            self.select(self.lanes.ids[lane][min(index, len(self.lanes.ids[lane]) - 1)])
        else:
            self.kanban.select_first()

    def _refresh_relations(self) -> None:
        selected = self.view.selected
        task = self.graph.tasks.get(selected) if selected else None
        blockers = set(task.blocked_by) if task else set()
        dependents = self.graph.dependents(selected) if task and selected else set()
        if blockers != self.view.blockers or dependents != self.view.dependents:
            self.view.blockers, self.view.dependents = blockers, dependents
            self.kanban.refresh_all()

    def _update_header(self) -> None:
        loading = "" if self.loaded else f"loading… {len(self.graph):,} tasks read"
        hint = self.session.hint(loaded=self.loaded, connection_problem=self._connection_problem, filtered=bool(self.task_query))
        self.header_bar.show_counts(self.session.counts(), loading, hint)
        view = "graph" if self.query_one(ContentSwitcher).current == "graph" else "kanban"
        parts = [view]
        if self.task_query.text:
            parts.append(f"filter: {self.task_query.text}")
        if self.lanes.show_cancelled:
            parts.append("showing cancelled")
        if self.readonly:
            parts.append("READ-ONLY")
        parts.append(self.session.spent())
        self.header_bar.show_alert_counts(severity_counts(self.session.alerts))
        self.header_bar.title_text = self.session.title()
        self.header_bar.detail_text = " · ".join(filter(None, parts)) + " "

    def _announce_questions(self, asking: list[Task]) -> None:
        """A task started waiting for a person: say what it asks (``tell_person`` rings, if asked to)."""
        for task in asking[:3]:
            asks = printable(" ".join((task.question or "it did not say what it needs").split()))
            self.notify(f"{asks}\nselect it and press w to answer", title=f"#{task.id} needs you", severity="warning", timeout=15, markup=False)

    def _needs_you(self) -> list[Notice]:
        """What needs the person now, looked at every second: the tasks' part worked out again
        only once the tasks changed, the alerts' once the alerts did (on 30,000 tasks, with
        thousands failed or waiting on others, the tasks' part took an idle dashboard a tenth of
        a core; the alerts change on their own, an alert's wording with the hours it speaks of)."""
        with self.session.lock:
            alerts = self.session.alerts
            known = self._needs_you_seen
            if known is not None and known[0] == self._board_changes and known[1] is alerts:
                return known[4]
            from board.notify import alerts_needing_you, tasks_needing_you  # once the board is on screen

            wanted = set(self.settings.notify.on)
            by_tasks = known[2] if known is not None and known[0] == self._board_changes else tasks_needing_you(self.session.store.tasks, wanted)
            by_alerts = known[3] if known is not None and known[1] is alerts else alerts_needing_you(alerts, wanted)
            notices = by_tasks + by_alerts
            self._needs_you_seen = (self._board_changes, alerts, by_tasks, by_alerts, notices)
            return notices

    @work(thread=True, exclusive=True, group="board-notices")
    def tell_person(self, when_opened: list[Notice]) -> None:
        """Until unmount, tell the person what needs them (``board.notify``): on this terminal
        what arises from now on (``when_opened`` was so already), and, while no coordinator
        does, by the board's own routes (a POST, the desktop)."""
        from board.notify import notifier_for, terminal_sequence

        style = self.settings.terminal_notices
        own = [] if style == "off" else [lambda message: self.call_from_thread(self._tell_terminal, terminal_sequence(style, message))]
        notifier = notifier_for(self.session.store, self.settings.notify, own=own, shared=not self.readonly, report=lambda line: None)
        notices = when_opened
        while True:
            try:
                notifier.look(notices, shared=not self.session.alerts_from_coordinator)
                notifier.flush()
            except BoardError:
                pass  # the board out of reach: told once it is back
            if self.session.stopped.wait(NOTICE_SECONDS):
                return
            notices = self._needs_you()

    def _tell_terminal(self, sequence: str) -> None:
        if sequence == "\x07":
            self.bell()
        elif not self.is_headless and self._driver is not None:
            self._driver.write(sequence)

    def _announce_if_done(self) -> None:
        counts = self.lanes.counts
        counted = sum(counts.values()) - counts.get("cancelled", 0)
        all_done = counted > 0 and counts.get("completed", 0) == counted
        if all_done and not self._all_done_announced:
            self.notify(f"Every task is done ({counted:,} completed).", title="Board complete", timeout=10)
        self._all_done_announced = all_done

    def on_alerts_changed(self, message: AlertsChanged) -> None:
        """Show new alerts: panel, header, badges on the cards they name, open detail views;
        notify errors not seen before."""
        if not self.is_running:  # closing: as in on_board_changed
            return
        before = self.view.alerts
        self.session.alerts, self.session.alerts_from_coordinator = message.alerts, message.from_coordinator
        self.view.alerts = after = alerts_by_task(message.alerts)
        badged = {t for t in before.keys() | after.keys() if self.view.badge(t, before) != self.view.badge(t, after)}
        with self.batch_update():
            self.alerts_panel.show_alerts(message.alerts, self.now(), from_coordinator=message.from_coordinator)
            self._update_header()
            if badged:
                self.kanban.refresh_tasks(badged)
                if self._graph_view is not None:
                    self._graph_view.board_changed(structure=False, task_ids=badged)
        self._tell_screens(AlertsShown)
        self._notify_new_errors(message.alerts, first=self._alerts_pending)
        self._alerts_pending = False

    def _notify_new_errors(self, alerts: list[Alert], *, first: bool) -> None:
        """One notification per error condition when it appears; errors already on the board
        when the dashboard opens are announced once, together when there are several."""
        errors = [a for a in alerts if a.severity == Severity.ERROR]
        new = [a for a in errors if a.key not in self._announced_errors]
        self._announced_errors = {a.key for a in errors}
        if not new:
            return
        if first and len(new) > 1:
            self.notify(printable(f"{new[0].message} (and {len(new) - 1:,} more: press e for the alerts)"), title=f"{len(new):,} errors on this board", severity="error", timeout=10, markup=False)
            return
        for alert in new[:ERROR_NOTIFICATIONS]:
            self.notify(printable(alert.message), title=alert.kind, severity="error", timeout=10, markup=False)
        if len(new) > ERROR_NOTIFICATIONS:
            self.notify("press e for the alerts", title=f"{len(new) - ERROR_NOTIFICATIONS} more new errors", severity="error", timeout=10)

    def on_task_log_changed(self, message: TaskLogChanged) -> None:
        self._tell_screens(LogsShown)

    def _tell_screens(self, message: Callable[[], Message]) -> None:
        """Attributes down, messages up, and to the screens opened over the board: a message each."""
        for screen in self.screen_stack[1:]:
            screen.post_message(message())

    def on_spend_changed(self, message: SpendChanged) -> None:
        if not self.is_running:  # closing: as in on_board_changed
            return
        before, self.view.spend = self.view.spend, message.spend
        self.kanban.refresh_tasks({task_id for task_id in before.keys() | message.spend.keys() if before.get(task_id) != message.spend.get(task_id)})
        self._update_header()
        self._tell_screens(lambda: TasksShown(set(message.spend)))

    def on_agents_changed(self, message: AgentsChanged) -> None:
        if not self.is_running:  # closing: as in on_board_changed
            return
        self.session.agents, self.session.teams, self.session.inboxes = message.agents, message.teams, message.inboxes
        self.query_one(AgentsPanel).show_agents(message.agents, self.settings.agent_stale_after, teams=message.teams, inboxes=message.inboxes, costs=message.costs)
        before = self.view.unread
        self.view.unread = after = unread_by_member(message.inboxes)
        owners = {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}
        if owners:
            cards = {task.id for name in owners for task in self.session.owned.of(name)}
            self.kanban.refresh_tasks(cards)
        self.refresh_bindings()  # "m Message owner" shows on a team member's task only
        self._tell_screens(AgentsShown)

    # -- selection ----------------------------------------------------------------------------

    def select(self, task_id: str | None) -> None:
        """Select a task (the cursor keys call this at once, not by message: ``KanbanBoard.select_task``)."""
        if task_id == self.view.selected:
            return
        previous = self.view.selected
        self.view.selected = task_id
        # Put here by the person: their keys act on it. (A move of the board's own says so
        # after this: ``apply_tasks``.)
        self._cursor_moved = None
        with self.batch_update():
            self.kanban.refresh_tasks({t for t in (previous, task_id) if t})
            self._refresh_relations()
            if self._graph_view is not None:
                self._graph_view.selection_changed(previous, task_id)
        self.refresh_bindings()  # "w Answer" shows only on a waiting task

    def jump_to(self, task_id: str) -> None:
        """Select a task wherever it is (clearing a filter or showing cancelled if needed)."""
        task = self.graph.tasks.get(task_id)
        if task is None:
            self.notify(printable(f"no task #{task_id} on this board"), severity="warning", markup=False)
            return
        if self.lanes.lane_index(task_id) is None:
            if task.status == Status.CANCELLED:
                self.lanes.show_cancelled = True
            self.set_filter("")
            self.lanes.rebuild(self.graph)
            self.kanban.show_lanes()
        self.select(task_id)
        self.kanban.reveal_selection()
        if self._graph_view is not None:
            self._graph_view.reveal_selection()

    # -- view actions -------------------------------------------------------------------------

    def action_details(self) -> None:
        from board.ui.screens.detail import DetailScreen

        task = self.selected_task
        if task is None:
            self.notify("select a task first", severity="warning")
            return
        self.push_screen(DetailScreen(task.id, self.session), self._detail_closed)

    def on_detail_screen_task_shown(self, message: DetailScreen.TaskShown) -> None:
        self.select(message.task_id)

    def _detail_closed(self, in_graph: bool | None) -> None:
        """Back from a task's details: to the board, on the task last shown (in the graph, if asked)."""
        if not in_graph:
            self.kanban.reveal_selection()
            return
        if not self.showing_graph:
            self.action_toggle_view()
        self.graph_view.reveal_selection()

    @property
    def graph_view(self) -> GraphView:
        """The dependency graph's view, made the first time it is asked for (``g``): a board
        opened and watched as a kanban neither imports nor styles nor mounts it before its first
        frame. Until then there is nothing of it to keep up to date: a view made later lays out
        the board as it is then."""
        if self._graph_view is None:
            from board.ui.widgets.graph_view import GraphView

            view = GraphView(self.graph, self.view, select=self.select, id="graph")
            view.visible_ids = self.lanes.placed_ids
            view.display = False  # until the switcher shows it
            self.query_one(ContentSwitcher).mount(view)
            self._graph_view = view
        return self._graph_view

    @property
    def showing_graph(self) -> bool:
        return self.query_one(ContentSwitcher).current == "graph"

    def action_toggle_view(self) -> None:
        switcher = self.query_one(ContentSwitcher)
        if switcher.current == "kanban":
            # A board too big to lay out whole shows the selected task's neighbourhood
            # (``graph_view.WHOLE_GRAPH_LIMIT``).
            graph_view = self.graph_view  # made now, the first time
            switcher.current = "graph"
            graph_view.board_changed(structure=True, task_ids=set())
            graph_view.reveal_selection()
            graph_view.focus()
        else:
            switcher.current = "kanban"
            self.kanban.reveal_selection()
            self.graph_view.visible_ids = self.lanes.placed_ids
        self.query_one(AgentsPanel).tasks = self.graph.tasks
        self.kanban.focus()
        self._fit_to_width(self.size.width)
        self._update_header()

    def action_toggle_cancelled(self) -> None:
        self.lanes.show_cancelled = not self.lanes.show_cancelled
        self.lanes.rebuild(self.graph)
        self.kanban.show_lanes()
        if self._graph_view is not None:
            self._graph_view.board_changed(structure=True, task_ids=set())
        self._update_header()
        self._reselect_if_gone()

    def action_toggle_panels(self) -> None:
        self._panels_shown_for_alerts = False
        self._panels_hidden_by_user = not self.query_one("#side").has_class("hidden")
        self.query_one("#side").set_class(self._panels_hidden_by_user, "hidden")
        self._focus_board_if_hidden()

    def focus_board(self) -> None:
        """Focus what the board shows: the graph, or the kanban."""
        (self.graph_view if self.showing_graph else self.kanban).focus()

    def _focus_board_if_hidden(self) -> None:
        """A focused panel hidden (``i``, or a terminal grown narrow) leaves the keys with the
        board, not with nothing: Textual drops the focus of a widget it hides."""
        focused = self.screen.focused
        side = self.query_one("#side")
        if isinstance(self.screen, BoardScreen) and focused is not None and side.has_class("hidden") and side in focused.ancestors:
            self.focus_board()

    def action_alerts(self) -> None:
        """Move the cursor into the alerts panel (showing the side panels for the moment if hidden)."""
        while len(self.screen_stack) > 1:  # the panel is on the board's screen
            self.pop_screen()
        side = self.query_one("#side")
        if side.has_class("hidden"):
            side.remove_class("hidden")
            self._panels_shown_for_alerts = True
        self.alerts_panel.focus_list()

    @on(AlertsPanel.JumpToTask)
    def _jump_to_alert_task(self, message: AlertsPanel.JumpToTask) -> None:
        self._leave_alerts()
        self.jump_to(message.task_id)

    @on(AlertsPanel.Left)
    @on(AgentsPanel.Left)
    def _panel_left(self, message: AlertsPanel.Left | AgentsPanel.Left) -> None:
        self._leave_alerts()

    def _leave_alerts(self) -> None:
        if self._panels_shown_for_alerts:
            self._panels_shown_for_alerts = False
            self.query_one("#side").add_class("hidden")
        if self.query_one(ContentSwitcher).current == "graph":
            self.graph_view.focus()
        else:
            self.kanban.focus()

    def get_default_screen(self) -> BoardScreen:
        # The board's screen fits the widgets to a new size before laying them out for it.
        return BoardScreen(fit=self._fit_to_width, refocus=self.focus_board)

    def _fit_to_width(self, width: int) -> None:
        """Narrow terminals give the columns the room; ``i`` still shows the panels. Called with
        the new width as a resize reaches the board's screen, before its layout at that size."""
        narrow = width < PANELS_MIN_WIDTH
        if self._panels_hidden_by_user is None:
            self.query_one("#side").set_class(narrow, "hidden")
            self._focus_board_if_hidden()
        self.query_one(KeyFooter).fit(width, compact=narrow)
        self.kanban.fit_to_width(width)

    def action_filter(self) -> None:
        from board.ui.screens.filter import FilterScreen

        labels = {name for task in self.graph.tasks.values() for name in task.labels}
        self.push_screen(FilterScreen(self.task_query.text, labels, cursor_blink=self.live_clock), self.set_filter)

    def action_clear_filter(self) -> None:
        if self.task_query.text:
            self.set_filter("")

    def set_filter(self, text: str | None) -> None:
        if text is None:
            return
        if not self.task_query and text.strip():
            self._selected_before_filter = self.view.selected  # what esc, clearing it, goes back to
        self.task_query = TaskQuery(text, state_of=lambda task: display_state(task, self.graph))
        self.lanes.task_filter = self.task_query.matches if self.task_query else None
        self.lanes.rebuild(self.graph)
        self.kanban.show_lanes()
        if self._graph_view is not None:
            self._graph_view.board_changed(structure=True, task_ids=set())
        self._update_header()
        if not self.task_query and self._selected_before_filter is not None:
            before, self._selected_before_filter = self._selected_before_filter, None
            if self.lanes.lane_index(before) is not None:
                self.select(before)
                self.kanban.reveal_selection()
        self._reselect_if_gone()

    def action_next_theme(self) -> None:
        names = self._board_themes or sorted(self.available_themes)
        index = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(index + 1) % len(names)]  # remembered by watch_theme
        self.notify(f"theme: {self.theme}", timeout=2)

    def watch_theme(self, name: str) -> None:
        """A theme the person picks, with t or from the command palette, is the next start's
        theme too, unless this dashboard is a demo's (a demo never writes the user's config)."""
        if self._theme_chosen and self.remember_choices:
            remember_theme(name)

    def action_help(self) -> None:
        from board.ui.screens.help import HelpScreen

        self.push_screen(HelpScreen(read_only_actions=self.WRITE_ACTIONS if self.readonly else frozenset()))
