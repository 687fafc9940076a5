"""Telling a person when the board needs them, wherever they are. Textual-free.

What needs a person is read from the board as it stands (``needs_you``): a task waiting for an
answer, a task that failed, a task left waiting on a cancelled blocker, an error alert. Each is
a ``Notice`` under a key that stays the same while the condition lasts. A journal kept on the
board (``NoticeJournal``: a file per key in files, a row in the database) records the keys told;
a key is taken atomically, so of the board processes looking at once (a coordinator, several
dashboards, on several machines) exactly one tells it, once.

Routes (``[notify]`` in board.toml): an HTTP POST, ntfy-compatible (plain text body, a title
header, a link back to the task), so a phone hears it; a desktop notification (``notify-send``)
where there is a desktop; and the dashboard's own terminal (bell, OSC 9 or OSC 777), which each
dashboard rings for itself. Notices arriving together are sent as one, and a route sends at most
once per ``min_gap_seconds``: never a storm.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from board.config import NOTICE_KINDS, NoticeKind, NotifySettings
from board.status import Status
from board.store.side import NoticeJournal
from board.text import printable

if TYPE_CHECKING:
    from board.alerts import Alert
    from board.store import Store
    from board.model import Task

#: An error alert that cleared and came back is told again only after this long.
ALERT_AGAIN_AFTER = timedelta(hours=1)
#: How long an HTTP POST or ``notify-send`` may take before it is given up.
SEND_TIMEOUT_SECONDS = 10.0
#: Alerts told under a kind of their own already.
_TOLD_OTHERWISE = frozenset({"graph.cancelled_blocker", "human.waiting"})
#: Statuses in which a task needs a person (besides waiting on a cancelled blocker).
_ASKING_OR_FAILED = frozenset({Status.WAITING, Status.FAILED})


@dataclass(frozen=True)
class Notice:
    """One thing a person should hear about."""

    key: str
    kind: NoticeKind
    title: str
    body: str
    task: str | None = None
    #: Told again after this long if the journal's entry is older (None: once, ever).
    again_after: timedelta | None = None


def needs_you(tasks: Mapping[str, Task], alerts: Sequence[Alert] = (), kinds: Iterable[str] = NOTICE_KINDS) -> list[Notice]:
    """What on the board needs a person now, in a stable order (tasks by id, then alerts)."""
    wanted = set(kinds)
    return tasks_needing_you(tasks, wanted) + alerts_needing_you(alerts, wanted)


def tasks_needing_you(tasks: Mapping[str, Task], wanted: Collection[str]) -> list[Notice]:
    """``needs_you``'s part that the tasks alone decide, by id."""
    from board.graph import id_sort_key

    notices: list[Notice] = []
    # Looked at every second on a board of any size: only the few tasks in a status that can
    # need a person are sorted.
    candidates = [task for task in tasks.values() if task.status in _ASKING_OR_FAILED or (task.blocked_by and task.status == Status.PENDING)]
    for task in sorted(candidates, key=lambda task: id_sort_key(task.id)):
        task_id = task.id
        subject = printable(task.subject)
        if task.status == Status.WAITING and "waiting" in wanted:
            asked = task.asked_at.isoformat() if task.asked_at else "-"
            question = printable(task.question or "(no question given)")
            notices.append(Notice(f"waiting:{task_id}:{asked}", "waiting", f"#{task_id} waits for you", f"#{task_id} {subject}: {question}\nanswer: board answer {task_id} TEXT", task_id))
        elif task.status == Status.FAILED and "failed" in wanted:
            began_at = task.started_at or task.created_at
            began = began_at.isoformat() if began_at is not None else "-"
            why = printable(task.error or "failed")
            notices.append(Notice(f"failed:{task_id}:{began}", "failed", f"#{task_id} failed", f"#{task_id} {subject}: {why}\nretry: board task update {task_id} --status pending", task_id))
        elif task.status == Status.PENDING and "cancelled_blocker" in wanted:
            for blocker in task.blocked_by:
                other = tasks.get(blocker)
                if other is not None and other.status == Status.CANCELLED:
                    body = f"#{task_id} {subject} waits on #{blocker}, which was cancelled: it can never start"
                    notices.append(Notice(f"cancelled-blocker:{task_id}:{blocker}", "cancelled_blocker", f"#{task_id} can never start", body, task_id))
    return notices


def alerts_needing_you(alerts: Sequence[Alert], wanted: Collection[str]) -> list[Notice]:
    """``needs_you``'s part that the alerts alone decide: each error not told otherwise."""
    notices: list[Notice] = []
    if "error" in wanted:
        for alert in alerts:
            if str(alert.severity) == "error" and alert.kind not in _TOLD_OTHERWISE:
                first = alert.tasks[0] if alert.tasks else None
                notices.append(Notice(f"alert:{alert.key}", "error", alert.kind, f"{printable(alert.message)}\n{printable(alert.action)}", first, ALERT_AGAIN_AFTER))
    return notices


@dataclass(frozen=True)
class Message:
    """What one send carries: one notice, or several that arrived together."""

    title: str
    body: str
    task: str | None
    kinds: tuple[NoticeKind, ...]

    @classmethod
    def of(cls, notices: Sequence[Notice]) -> Message:
        if len(notices) == 1:
            (notice,) = notices
            return cls(notice.title, notice.body, notice.task, (notice.kind,))
        title = f"{len(notices):,} things need you on the board"
        body = "\n".join(notice.body.splitlines()[0] for notice in notices)
        return cls(title, body, notices[0].task, tuple(dict.fromkeys(n.kind for n in notices)))


Route = Callable[[Message], None]


def http_route(url: str, link: str = "") -> Route:
    """POST ``message`` to ``url`` as ntfy takes it: the body in plain text, ``Title``,
    ``Priority`` (high for an answer awaited or an error) and ``Tags``, and ``Click`` (``link``
    with ``{id}`` replaced by the task's id) when a link is set."""

    def send(message: Message) -> None:
        headers = {"Title": _header(message.title), "Tags": ",".join(message.kinds), "Content-Type": "text/plain; charset=utf-8"}
        if {"waiting", "error"} & set(message.kinds):
            headers["Priority"] = "high"
        if link and message.task:
            headers["Click"] = _header(link.replace("{id}", message.task))
        # Here, not at the top: it brings http.client and email (35 ms), and the dashboard
        # imports this module before its first frame.
        import urllib.request

        request = urllib.request.Request(url, data=message.body.encode("utf-8"), headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=SEND_TIMEOUT_SECONDS) as response:
            response.read()

    return send


def desktop_route() -> Route | None:
    """A desktop notification through ``notify-send``; None where there is none."""
    command = shutil.which("notify-send")
    if command is None:
        return None

    def send(message: Message) -> None:
        subprocess.run([command, "--app-name=board", message.title, message.body], timeout=SEND_TIMEOUT_SECONDS, check=True, stdin=subprocess.DEVNULL, capture_output=True)

    return send


def terminal_sequence(style: str, message: Message) -> str:
    """What a dashboard writes to its terminal: a bell, or an OSC 9 / OSC 777 notification
    (which terminals without support ignore)."""
    title, body = _osc_text(message.title), _osc_text(message.body.replace("\n", " · "))
    if style == "osc9":
        return f"\x1b]9;{title}: {body}\x07"
    if style == "osc777":
        return f"\x1b]777;notify;{title};{body}\x07"
    return "\x07"


def _header(text: str) -> str:
    """HTTP headers are latin-1 on the wire: what does not fit is replaced."""
    return printable(text).encode("latin-1", "replace").decode("latin-1")[:200]


def _osc_text(text: str) -> str:
    return "".join(ch for ch in printable(text) if ch not in "\x07\x1b;")[:200]


@dataclass
class _Pending:
    notices: list[Notice] = field(default_factory=list)
    first_at: float = 0.0


class Notifier:
    """Tells what ``look`` is shown and nobody told yet, on each route: notices that arrive
    within ``coalesce_seconds`` of each other go as one message, and a route sends at most once
    per ``min_gap_seconds`` (what arrives meanwhile waits and goes as one). ``shared`` routes
    (HTTP, desktop) take each notice's key in the board's journal first, so one process tells
    it; ``own`` routes (this dashboard's terminal) tell each notice once per process.
    Sends run on a thread of their own: a slow server never holds up a tick or a screen."""

    def __init__(
        self,
        settings: NotifySettings,
        journal: NoticeJournal | None,
        *,
        shared: Sequence[Route] = (),
        own: Sequence[Route] = (),
        clock: Callable[[], float],
        now: Callable[[], datetime],
        report: Callable[[str], None] = lambda line: None,
        background: bool = True,
        own_from_now: bool = True,
    ) -> None:
        self.settings = settings
        self.journal = journal
        self.routes = [(route, True) for route in shared if journal is not None] + [(route, False) for route in own]
        self.clock = clock
        self.now = now
        self.report = report
        self.background = background
        self._pending = [_Pending() for _ in self.routes]
        self._last_sent = [float("-inf") for _ in self.routes]
        self._told_here: set[str] = set()
        self._lock = threading.Lock()
        #: Own routes (a terminal) hear only of what arises after the first look: a dashboard
        #: that opens does not ring for every old failure. The board's routes hear of those once.
        self._own_from_now = own_from_now
        self._looked = False
        #: The list of notices looked at last, held so that its identity means the same list: a
        #: dashboard hands the same one each second until the board changes, every notice in it
        #: told already (thousands on a large board with many failures: each looked up again).
        self._last_looked: object = None

    def look(self, notices: Iterable[Notice], *, shared: bool = True) -> None:
        """Queue what nobody told yet; ``flush`` sends it when due. Without ``shared``, only
        this process's own routes hear of it (another process tells the board: a coordinator)."""
        if notices is self._last_looked:
            return
        fresh = [n for n in notices if n.key not in self._told_here]
        self._last_looked = notices
        if not fresh or not self.routes:
            return
        taken: list[Notice] = []
        if shared and any(is_shared for _, is_shared in self.routes):
            assert self.journal is not None
            moment = self.now()
            for notice in fresh:
                try:
                    if self.journal.take(notice.key, moment, notice.again_after):
                        taken.append(notice)
                except Exception as error:  # the board out of reach: told by whoever looks next
                    self.report(f"could not record a notification: {error}")
                    break
        self._told_here.update(n.key for n in fresh)
        first, self._looked = not self._looked, True
        at = self.clock()
        with self._lock:
            for index, (_, is_shared) in enumerate(self.routes):
                batch = taken if is_shared else [] if first and self._own_from_now else fresh
                if batch:
                    pending = self._pending[index]
                    if not pending.notices:
                        pending.first_at = at
                    pending.notices.extend(batch)

    def flush(self) -> int:
        """Send every route's waiting notices whose time has come; the number of messages sent."""
        at = self.clock()
        due: list[tuple[Route, Message]] = []
        with self._lock:
            for index, (route, _) in enumerate(self.routes):
                pending = self._pending[index]
                if not pending.notices:
                    continue
                if at - pending.first_at < self.settings.coalesce_seconds or at - self._last_sent[index] < self.settings.min_gap_seconds:
                    continue
                due.append((route, Message.of(pending.notices)))
                self._pending[index] = _Pending()
                self._last_sent[index] = at
        for route, message in due:
            if self.background:
                threading.Thread(target=self._send, args=(route, message), name="board notification", daemon=True).start()
            else:
                self._send(route, message)
        return len(due)

    def _send(self, route: Route, message: Message) -> None:
        try:
            route(message)
        # urllib's URLError is an OSError; ImportError: urllib is imported on the first send,
        # which may come as the interpreter shuts down.
        except (OSError, subprocess.SubprocessError, ValueError, ImportError) as error:
            self.report(f"could not send a notification ({message.title}): {error}")


def shared_routes(settings: NotifySettings) -> list[Route]:
    """The routes one process tells for the whole board: HTTP, desktop."""
    routes: list[Route] = []
    if settings.url:
        routes.append(http_route(settings.url, settings.link))
    if settings.desktop:
        desktop = desktop_route()
        if desktop is not None:
            routes.append(desktop)
    return routes


def notifier_for(
    store: Store,
    settings: NotifySettings,
    *,
    own: Sequence[Route] = (),
    shared: bool = True,
    report: Callable[[str], None] = lambda line: None,
) -> Notifier:
    """A notifier on ``store``'s board: its journal for the routes it tells for the whole board
    (``shared``: the coordinator, or a dashboard while none runs), and ``own`` routes (a
    dashboard's terminal)."""
    return Notifier(
        settings, store.notice_journal, shared=shared_routes(settings) if shared else (), own=own,
        clock=time.monotonic, now=store.clock, report=report,
    )
