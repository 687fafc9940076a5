"""The live dashboard: a kanban (or graph) of the board in ``.tasks/``, updated as files change.

Threads: one worker reads the board (first a full read in chunks, then watcher batches) with its
own ``Store`` and posts ``BoardChanged`` messages; writes run in another worker through the same
store, serialised by a lock. Only the app thread touches the displayed graph and widgets.
"""

from __future__ import annotations

import gc
import getpass
import threading
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from pathlib import Path

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.containers import Horizontal, Vertical
from textual.widgets import ContentSwitcher, Footer

from board.agents import AgentRecord, list_agents
from board.config import BoardSettings, load_settings
from board.errors import BoardError
from board.graph import TaskGraph
from board.model import Task, utcnow
from board.status import Status, check_transition
from board.store import Store, TasksDirLayout
from board.ui.board_alerts import Alert, board_alerts, merge_alerts, parse_coordinator_alerts
from board.ui.card import CardView
from board.ui.lanes import Lane, Lanes, display_state
from board.ui.messages import AgentsChanged, BoardChanged, CoordinatorAlertsChanged, TaskLogChanged
from board.ui.task_filter import TaskQuery
from board.ui.themes import DEFAULT_THEME, load_themes, remember_theme, remembered_theme
from board.ui.widgets.agents_panel import AgentsPanel
from board.ui.widgets.alerts_panel import AlertsPanel
from board.ui.widgets.board_header import BoardHeader
from board.ui.widgets.graph_view import GraphView
from board.ui.widgets.kanban import KanbanBoard
from board.watch import BoardWatcher

#: The first read posts this many tasks first, so a huge board shows something at once, then
#: posts the rest in chunks this size (each chunk re-sorts the lanes, so not too many).
FIRST_CHUNK = 400
LOAD_CHUNK = 4000
HUMAN_ACTOR = "human"
#: Below this width the agents and alerts panels start hidden, so the five columns stay legible.
PANELS_MIN_WIDTH = 130


def local_user() -> str:
    """The owner recorded when a person starts a task from the dashboard."""
    try:
        name = getpass.getuser()
    except Exception:
        return HUMAN_ACTOR
    return name if name and name.replace("-", "").replace("_", "").isalnum() else HUMAN_ACTOR


class TaskCommands(Provider):
    """Command palette: act on the selected task, jump to a task by id or subject."""

    async def search(self, query: str) -> Hits:
        app = self.app
        assert isinstance(app, BoardApp)
        matcher = self.matcher(query)
        for label, action, help_text in app.palette_actions():
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), action, help=help_text)
        if len(query) >= 1:
            shown = 0
            for task in app.graph.tasks.values():
                label = f"#{task.id} {task.subject}"
                score = matcher.match(label)
                if score > 0:
                    yield Hit(score * 0.9, matcher.highlight(label), lambda t=task.id: app.jump_to(t), help="go to task")
                    shown += 1
                    if shown >= 50:
                        break


class BoardApp(App[None]):
    """board's dashboard.

    | key | action |
    |---|---|
    | arrows / hjkl | move between cards (graph: between waves and nodes) |
    | enter | details of the selected task |
    | s / p / r / c / a | start, pause-resume, retry, cancel, assign |
    | / | filter | g | kanban / graph | t | next theme | ? | help | q | quit |
    """

    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "board"
    COMMANDS = App.COMMANDS | {TaskCommands}
    BINDINGS = [
        Binding("enter", "details", "Details", id="task.details"),
        Binding("s", "start", "Start", id="task.start"),
        Binding("p", "pause", "Pause/resume", id="task.pause"),
        Binding("r", "retry", "Retry", id="task.retry"),
        Binding("c", "cancel", "Cancel", id="task.cancel"),
        Binding("a", "assign", "Assign", id="task.assign"),
        Binding("slash", "filter", "Filter", id="view.filter"),
        Binding("g", "toggle_view", "Graph/kanban", id="view.toggle"),
        Binding("x", "toggle_cancelled", "Show/hide cancelled", show=False, id="view.cancelled"),
        Binding("i", "toggle_panels", "Agents and alerts panels", show=False, id="view.panels"),
        Binding("t", "next_theme", "Theme", id="view.theme"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="view.clear_filter"),
    ]
    #: Actions that write to the board, disabled with --readonly.
    WRITE_ACTIONS = frozenset({"start", "pause", "retry", "cancel", "assign"})

    def __init__(
        self,
        workspace: Path,
        *,
        readonly: bool = False,
        now: Callable[[], datetime] = utcnow,
        watch: bool = True,
        live_clock: bool = True,
        reconcile_seconds: float = 2.0,
    ) -> None:
        super().__init__()
        self.workspace = Path(workspace).resolve()
        self.readonly = readonly
        self.now = now
        self.watch_files = watch
        self.live_clock = live_clock
        self.reconcile_seconds = reconcile_seconds
        self.layout_ = TasksDirLayout(self.workspace)
        self.store = Store(self.layout_, actor=HUMAN_ACTOR)
        self.store_lock = threading.Lock()
        self._settings_problem: str | None = None
        self.settings = self._load_settings()
        self.graph = TaskGraph()
        self.lanes = Lanes()
        self.subtasks: dict[str, set[str]] = {}
        self.view = CardView(self.graph, now, states=self.lanes.states, children=self.subtasks)
        self.invalid: dict[str, str] = {}
        self.agents: list[AgentRecord] = []
        self.coordinator_alerts: list[Alert] = []
        self.alerts: list[Alert] = []
        self.loaded = False
        self.task_query = TaskQuery("")
        self._all_done_announced = False
        self._layout_stale = False
        self._alerts_pending = False
        self._watcher: BoardWatcher | None = None
        self._theme_problems: list[str] = []
        #: Whether the user hid the panels (None until they toggle them; until then the panels
        #: follow the terminal width).
        self._panels_hidden_by_user: bool | None = None
        self._board_themes: list[str] = []
        self._register_themes()

    # -- setup --------------------------------------------------------------------------------

    def _load_settings(self) -> BoardSettings:
        try:
            return load_settings(self.layout_.state_dir)
        except BoardError as error:
            self._settings_problem = str(error)
            return BoardSettings()

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

    def compose(self) -> ComposeResult:
        yield BoardHeader(id="header")
        with Horizontal(id="main"):
            with ContentSwitcher(initial="kanban", id="views"):
                yield KanbanBoard(self.lanes, self.view, id="kanban")
                yield GraphView(self.graph, self.view, id="graph")
            with Vertical(id="side"):
                yield AgentsPanel(self.now, id="agents")
                yield AlertsPanel(id="alerts")
        yield Footer()

    def on_mount(self) -> None:
        self.kanban = self.query_one(KanbanBoard)
        self.graph_view = self.query_one(GraphView)
        self.header_bar = self.query_one(BoardHeader)
        self.graph_view.visible_ids = self.lanes.placed_ids
        self.kanban.focus()
        self.on_resize()
        self._update_header()
        for problem in self._theme_problems:
            self.notify(problem, title="Theme", severity="warning", timeout=8)
        if self._settings_problem:
            self.notify(self._settings_problem, title="Settings", severity="warning", timeout=8)
        if self.live_clock:
            self.set_interval(15, self._tick)
        self.feed_board()

    def on_unmount(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()

    def _tick(self) -> None:
        """Ages and heartbeat ages move with the clock."""
        self.kanban.refresh_all()
        self.query_one(AgentsPanel).refresh()

    # -- reading the board (worker thread) ----------------------------------------------------

    @work(thread=True, exclusive=True, group="board-feed")
    def feed_board(self) -> None:
        paths = list(self.layout_.task_paths())
        if not paths:
            self.post_message(BoardChanged(invalid={}, loaded=True))
        bounds = [0, *range(FIRST_CHUNK, len(paths), LOAD_CHUNK), len(paths)]
        for start, end in zip(bounds, bounds[1:]):
            with self.store_lock:
                changes = self.store.reread(paths[start:end])
                tasks = [self.store.tasks[i] for i in changes.changed if i in self.store.tasks]
                invalid = dict(self.store.invalid)
            self.post_message(BoardChanged(tasks=tasks, invalid=invalid, loaded=end == len(paths)))
        self._post_side_files(agents=True, alerts=True)
        if not self.watch_files:
            return
        with self.store_lock:
            # Catch the history offset up now, so the first write does not re-read the log.
            self.store.sync()
        self._watcher = watcher = BoardWatcher(self.layout_.tasks_dir, reconcile_seconds=self.reconcile_seconds)
        for batch in watcher.batches():
            with self.store_lock:
                changes = self.store.rescan() if batch.reconcile else None
                more = self.store.reread(batch.task_paths)
                ids = set(more.changed) | {i for p in batch.task_paths if (i := self.layout_.task_id_for(p))}
                removed = set(more.removed)
                if changes is not None:
                    ids |= changes.changed
                    removed |= changes.removed
                present = [self.store.tasks[i] for i in ids if i in self.store.tasks]
                gone = [i for i in ids | removed if i not in self.store.tasks]
                invalid_changed = bool(more.invalid or (changes and changes.invalid))
                invalid = dict(self.store.invalid) if invalid_changed else None
            if present or gone or invalid is not None:
                self.post_message(BoardChanged(tasks=present, removed=gone, invalid=invalid))
            names = {p.name for p in batch.side_paths}
            agents = batch.reconcile or any(p.parent.name == "agents" for p in batch.side_paths)
            self._post_side_files(agents=agents, alerts=batch.reconcile or "alerts.json" in names)
            logs = {p for p in batch.side_paths if p.name == "history.jsonl" or p.parent.name == "toolcalls"}
            if logs:
                self.post_message(TaskLogChanged(logs))

    def _post_side_files(self, *, agents: bool, alerts: bool) -> None:
        if agents:
            self.post_message(AgentsChanged(list_agents(self.layout_.state_dir)))
        if alerts:
            try:
                raw = (self.layout_.state_dir / "alerts.json").read_bytes()
            except OSError:
                self.post_message(CoordinatorAlertsChanged(None))
            else:
                self.post_message(CoordinatorAlertsChanged([a.__dict__ for a in parse_coordinator_alerts(raw)]))

    # -- applying changes (app thread) --------------------------------------------------------

    def on_board_changed(self, message: BoardChanged) -> None:
        if not self.loaded and not message.loaded and len(self.graph):
            # Middle of the first read of a big board: the first chunk is on screen already;
            # placing every chunk in the lanes would only slow the read down.
            self._put_without_layout(message.tasks)
        else:
            self.apply_tasks(message.tasks, message.removed)
        if message.invalid is not None and message.invalid != self.invalid:
            appeared = sorted(set(message.invalid) - set(self.invalid))
            self.invalid = message.invalid
            self._schedule_alerts()
            if appeared and self.loaded:
                names = ", ".join(Path(p).name for p in appeared[:3]) + ("…" if len(appeared) > 3 else "")
                self.notify(f"cannot read {names}; the last good copy stays on the board (see alerts, i)", title="Task file", severity="warning", timeout=6)
        if message.loaded and not self.loaded:
            self.loaded = True
            # The board read so far lives as long as the app: keep the cyclic garbage collector
            # from walking it on every full collection (a 200 ms pause at 10,000 tasks).
            gc.collect()
            gc.freeze()
            if self._layout_stale:
                self._layout_stale = False
                self.lanes.rebuild(self.graph)
                self.kanban.show_lanes()
            self._update_header()
            if self.invalid:
                self.notify(f"{len(self.invalid)} task file(s) could not be read: see the alerts panel (i)", title="Task files", severity="warning", timeout=6)
            if self.view.selected is None:
                self.kanban.select_first()
            self._schedule_alerts()

    def _put_without_layout(self, tasks: Iterable[Task]) -> None:
        for task in tasks:
            if task.parent:
                self.subtasks.setdefault(task.parent, set()).add(task.id)
            self.graph.put(task)
        self._layout_stale = True
        self.header_bar.show_counts(self.lanes.counts, f"loading… {len(self.graph):,} tasks read")

    def apply_tasks(self, tasks: Iterable[Task], removed: Iterable[str] = ()) -> set[str]:
        """Put newer task versions into the displayed board; redraw only the cards they touch."""
        changed: set[str] = set()
        edges_changed = False
        for task in tasks:
            current = self.graph.tasks.get(task.id)
            if current is not None and (task.version < current.version or task == current):
                continue  # a stale read never replaces a newer version
            if current is None or current.blocked_by != task.blocked_by:
                edges_changed = True
            if current is not None and current.parent != task.parent and current.parent:
                self.subtasks.get(current.parent, set()).discard(task.id)
            if task.parent:
                self.subtasks.setdefault(task.parent, set()).add(task.id)
            self.graph.put(task)
            changed.add(task.id)
        for task_id in removed:
            current = self.graph.tasks.get(task_id)
            if current is None:
                continue
            if current.parent:
                self.subtasks.get(current.parent, set()).discard(task_id)
            self.graph.remove(task_id)
            changed.add(task_id)
            edges_changed = True
        if not changed:
            return changed
        before = self.lanes.lane_index(self.view.selected) if self.view.selected else None
        affected = set(changed)
        for task_id in changed:
            affected |= self.graph.dependents(task_id)
            task = self.graph.tasks.get(task_id)
            if task is not None and task.parent:
                affected.add(task.parent)
        with self.batch_update():
            if edges_changed:
                self.lanes.rebuild(self.graph)
                self.kanban.show_lanes()
            else:
                touched = self.lanes.update(self.graph, affected)
                self.kanban.show_lanes(touched)
                self.kanban.refresh_tasks(affected)
            self._refresh_relations()
            self.graph_view.board_changed(structure=edges_changed, task_ids=affected)
            self._update_header()
            self._reselect_if_gone(before)
        if self.loaded:
            self._schedule_alerts(structure=edges_changed or any(self.graph.tasks.get(t) is None or self.graph.tasks[t].status == Status.WAITING for t in changed))
            self._announce_if_done()
        for screen in self.screen_stack:
            refresh = getattr(screen, "board_changed", None)
            if refresh is not None:
                refresh(changed)
        return changed

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
        hint = ""
        if self.loaded and not self.graph:
            hint = 'no tasks yet: add one with  board task create "Subject"'
        elif self.loaded and self.task_query and not len(self.lanes):
            hint = "no task matches the filter (escape clears it)"
        self.header_bar.show_counts(self.lanes.counts, loading, hint)
        view = "graph" if self.query_one(ContentSwitcher).current == "graph" else "kanban"
        parts = [view]
        if self.task_query.text:
            parts.append(f"filter: {self.task_query.text}")
        if self.lanes.show_cancelled:
            parts.append("showing cancelled")
        if self.readonly:
            parts.append("READ-ONLY")
        serious = sum(1 for a in self.alerts if a.severity in ("error", "warning"))
        if serious:
            parts.insert(0, f"⚠ {serious} alert{'s' if serious != 1 else ''}")
        self.header_bar.title_text = self.workspace.name or str(self.workspace)
        self.header_bar.detail_text = " · ".join(parts) + " "

    def _announce_if_done(self) -> None:
        counts = self.lanes.counts
        counted = len(self.graph) - counts.get("cancelled", 0)
        all_done = counted > 0 and counts.get("completed", 0) == counted
        if all_done and not self._all_done_announced:
            self.notify(f"Every task is done ({counted:,} completed).", title="Board complete", timeout=10)
        self._all_done_announced = all_done

    def _schedule_alerts(self, structure: bool = True) -> None:
        """Recompute the alerts panel soon; batches arriving meanwhile share one recomputation."""
        if not structure or self._alerts_pending:
            return
        self._alerts_pending = True
        self.call_later(self._recompute_alerts)

    def _recompute_alerts(self) -> None:
        self._alerts_pending = False
        self.alerts = merge_alerts(board_alerts(self.graph, self.invalid), self.coordinator_alerts)
        self.query_one(AlertsPanel).show_alerts(self.alerts)
        self._update_header()

    def on_task_log_changed(self, message: TaskLogChanged) -> None:
        for screen in self.screen_stack:
            refresh = getattr(screen, "logs_changed", None)
            if refresh is not None:
                refresh()

    def on_agents_changed(self, message: AgentsChanged) -> None:
        self.agents = message.agents
        stale = timedelta(seconds=self.settings.lease.seconds * self.settings.coordinator.stale_after_leases)
        self.query_one(AgentsPanel).show_agents(message.agents, stale)

    def on_coordinator_alerts_changed(self, message: CoordinatorAlertsChanged) -> None:
        self.coordinator_alerts = [Alert(**a) for a in message.alerts or []]
        self._alerts_pending = False
        self._schedule_alerts()

    # -- selection ----------------------------------------------------------------------------

    @on(KanbanBoard.SelectionChanged)
    @on(GraphView.SelectionChanged)
    def _selection_changed(self, message: KanbanBoard.SelectionChanged | GraphView.SelectionChanged) -> None:
        self.select(message.task_id)

    def select(self, task_id: str | None) -> None:
        if task_id == self.view.selected:
            return
        previous = self.view.selected
        self.view.selected = task_id
        with self.batch_update():
            self.kanban.refresh_tasks({t for t in (previous, task_id) if t})
            self._refresh_relations()
            self.graph_view.selection_changed(previous, task_id)

    def jump_to(self, task_id: str) -> None:
        """Select a task wherever it is (clearing a filter or showing cancelled if needed)."""
        task = self.graph.tasks.get(task_id)
        if task is None:
            self.notify(f"no task #{task_id} on this board", severity="warning")
            return
        if self.lanes.lane_index(task_id) is None:
            if task.status == Status.CANCELLED:
                self.lanes.show_cancelled = True
            self.set_filter("")
            self.lanes.rebuild(self.graph)
            self.kanban.show_lanes()
        self.select(task_id)
        self.kanban.reveal_selection()
        self.graph_view.reveal_selection()

    @property
    def selected_task(self) -> Task | None:
        return self.graph.tasks.get(self.view.selected) if self.view.selected else None

    # -- view actions -------------------------------------------------------------------------

    def action_details(self) -> None:
        from board.ui.screens.detail import DetailScreen

        task = self.selected_task
        if task is None:
            self.notify("select a task first", severity="warning")
            return
        self.push_screen(DetailScreen(task.id))

    def action_toggle_view(self) -> None:
        switcher = self.query_one(ContentSwitcher)
        if switcher.current == "kanban":
            switcher.current = "graph"
            self.graph_view.board_changed(structure=True, task_ids=set())
            self.graph_view.reveal_selection()
            self.graph_view.focus()
        else:
            switcher.current = "kanban"
            self.kanban.reveal_selection()
            self.graph_view.visible_ids = self.lanes.placed_ids
        self.kanban.focus()
        self.on_resize()
        self._update_header()

    def action_toggle_cancelled(self) -> None:
        self.lanes.show_cancelled = not self.lanes.show_cancelled
        self.lanes.rebuild(self.graph)
        self.kanban.show_lanes()
        self._update_header()
        self._reselect_if_gone()

    def action_toggle_panels(self) -> None:
        self._panels_hidden_by_user = not self.query_one("#side").has_class("hidden")
        self.query_one("#side").set_class(self._panels_hidden_by_user, "hidden")

    def on_resize(self) -> None:
        """Narrow terminals give the columns the room; ``i`` still shows the panels."""
        narrow = self.size.width < PANELS_MIN_WIDTH
        if self._panels_hidden_by_user is None:
            self.query_one("#side").set_class(narrow, "hidden")
        self.query_one(Footer).compact = narrow

    def action_filter(self) -> None:
        from board.ui.screens.filter import FilterScreen

        self.push_screen(FilterScreen(self.task_query.text), self.set_filter)

    def action_clear_filter(self) -> None:
        if self.task_query.text:
            self.set_filter("")

    def set_filter(self, text: str | None) -> None:
        if text is None:
            return
        self.task_query = TaskQuery(text, state_of=lambda task: display_state(task, self.graph))
        self.lanes.task_filter = self.task_query.matches if self.task_query else None
        self.lanes.rebuild(self.graph)
        self.kanban.show_lanes()
        self.graph_view.board_changed(structure=True, task_ids=set())
        self._update_header()
        self._reselect_if_gone()

    def action_next_theme(self) -> None:
        names = self._board_themes or sorted(self.available_themes)
        index = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(index + 1) % len(names)]
        remember_theme(self.theme)
        self.notify(f"theme: {self.theme}", timeout=2)

    def action_help(self) -> None:
        from board.ui.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.readonly and action in self.WRITE_ACTIONS:
            return False
        return True

    def palette_actions(self) -> list[tuple[str, Callable[[], object], str]]:
        actions: list[tuple[str, Callable[[], object], str]] = [
            ("Toggle kanban / graph view", self.action_toggle_view, "g"),
            ("Filter tasks", self.action_filter, "/"),
            ("Show or hide cancelled tasks", self.action_toggle_cancelled, "x"),
            ("Show or hide the agents and alerts panels", self.action_toggle_panels, "i"),
            ("Next theme", self.action_next_theme, "t"),
            ("Keys and help", self.action_help, "?"),
        ]
        if not self.readonly:
            actions += [
                ("Start or resume the selected task", self.action_start, "s"),
                ("Pause or resume the selected task", self.action_pause, "p"),
                ("Retry or reopen the selected task", self.action_retry, "r"),
                ("Cancel the selected task", self.action_cancel, "c"),
                ("Assign the selected task to an agent", self.action_assign, "a"),
            ]
        return actions

    # -- task actions (every write goes through the store) ------------------------------------

    def _target(self) -> Task | None:
        task = self.selected_task
        if task is None:
            self.notify("select a task first", severity="warning")
        return task

    def _refuse(self, message: str) -> None:
        self.notify(message, title="Not changed", severity="error", timeout=6)

    def action_start(self) -> None:
        task = self._target()
        if task is None:
            return
        if task.status == Status.IN_PROGRESS:
            self._refuse(f"#{task.id} is already in progress")
            return
        if task.status == Status.PENDING:
            open_ids = self.graph.open_blockers(task)
            if open_ids:
                self._refuse(f"#{task.id} is not ready: it waits on " + ", ".join(f"#{b}" for b in open_ids))
                return
            self.write(task.id, "start", lambda store: start_task(store, task.id, local_user(), task.version))
            return
        self.write(task.id, "resume", lambda store: store.set_status(task.id, Status.IN_PROGRESS, actor=HUMAN_ACTOR, expected_version=task.version))

    def action_pause(self) -> None:
        task = self._target()
        if task is None:
            return
        target = Status.PAUSED if task.status == Status.IN_PROGRESS else Status.IN_PROGRESS
        if task.status not in (Status.IN_PROGRESS, Status.PAUSED):
            self._refuse(f"only a task in progress can be paused; #{task.id} is {task.status}")
            return
        self.write(task.id, "pause" if target == Status.PAUSED else "resume", lambda store: store.set_status(task.id, target, actor=HUMAN_ACTOR, expected_version=task.version))

    def action_retry(self) -> None:
        task = self._target()
        if task is None:
            return
        if task.status not in (Status.FAILED, Status.CANCELLED):
            self._refuse(f"only a failed or cancelled task can be retried; #{task.id} is {task.status}")
            return
        self.write(task.id, "retry", lambda store: store.set_status(task.id, Status.PENDING, actor=HUMAN_ACTOR, expected_version=task.version, reason="retry"))

    def action_cancel(self) -> None:
        from board.ui.screens.confirm import ConfirmScreen

        task = self._target()
        if task is None:
            return
        try:
            check_transition(task.status, Status.CANCELLED)
        except BoardError as error:
            hint = " (pause it first with p, then cancel)" if task.status == Status.IN_PROGRESS else ""
            self._refuse(f"#{task.id}: {error}{hint}")
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.write(task.id, "cancel", lambda store: store.set_status(task.id, Status.CANCELLED, actor=HUMAN_ACTOR, expected_version=task.version))

        self.push_screen(ConfirmScreen(f"Cancel #{task.id}?", task.subject, confirm_label="Cancel task"), confirmed)

    def action_assign(self) -> None:
        from board.ui.screens.assign import AssignScreen

        task = self._target()
        if task is None:
            return
        if task.status != Status.PENDING or not self.graph.is_ready(task.id):
            state = self.lanes.states.get(task.id, task.status)
            self._refuse(f"only a ready task can be assigned; #{task.id} is {state}")
            return
        if not self.agents:
            self._refuse("no agents are registered in .tasks/agents/")
            return

        def chosen(agent: str | None) -> None:
            if agent:
                seconds = self.settings.lease.seconds
                self.write(task.id, f"assign to {agent}", lambda store: store.claim_task(task.id, agent, lease_seconds=seconds, actor=HUMAN_ACTOR))

        self.push_screen(AssignScreen(task.id, self.agents, self.now()), chosen)

    @work(thread=True, group="board-write")
    def write(self, task_id: str, what: str, operation: Callable[[Store], Task]) -> None:
        """Run one store write off the app thread; success shows at once, refusal as a notification."""
        try:
            with self.store_lock:
                task = operation(self.store)
        except BoardError as error:
            self.call_from_thread(self._refuse, f"{what} #{task_id}: {error}")
            return
        self.post_message(BoardChanged(tasks=[task]))


def start_task(store: Store, task_id: str, owner: str, expected_version: int) -> Task:
    """A person starts a ready task: in progress, owned by them, with no lease to expire."""

    def change(task: Task) -> None:
        check_transition(task.status, Status.IN_PROGRESS)
        open_ids = store.graph.open_blockers(task)
        if open_ids:
            raise BoardError(f"task {task_id} is not ready: it waits on " + ", ".join(f"#{b}" for b in open_ids))
        task.status = Status.IN_PROGRESS
        task.owner = owner
        task.lease = None
        task.error = None
        task.started_at = task.started_at or store.clock()

    return store.mutate(task_id, change, op="status:in_progress", actor=HUMAN_ACTOR, expected_version=expected_version)
