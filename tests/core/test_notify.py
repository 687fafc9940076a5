"""Telling a person when the board needs them: what counts, told once across every process
that looks (the board's journal), coalesced and spaced out, and the ntfy-compatible POST."""

from __future__ import annotations

import http.server
import multiprocessing
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from board import actions
from board.actions import Who
from board.alerts import Alert, Severity
from board.config import NotifySettings
from board.notify import Message, Notice, Notifier, http_route, needs_you, terminal_sequence
from board.store import Store
from tests.conftest import BOTH_BACKENDS

pytestmark = BOTH_BACKENDS

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def person() -> Who:
    return Who("ann")


def board_needing_you(store: Store) -> None:
    """#1 waits for an answer, #2 failed, #4 waits on #3, which was cancelled; #5 is fine."""
    for subject in ("schema", "models", "views"):
        store.create(subject)
    store.create("templates", blocked_by=["3"])
    store.create("docs")
    actions.start(store, "1", person())
    actions.start(store, "2", person())
    actions.wait(store, "1", person(), question="Postgres or SQLite?")
    actions.fail(store, "2", person(), error="tests failed")
    actions.cancel(store, "3", person())


def test_what_needs_a_person_is_each_waiting_failed_and_stuck_task_and_each_error_alert(store: Store) -> None:
    board_needing_you(store)
    alerts = [
        Alert("drift.force_push:origin/main:abc", "drift.force_push", Severity.ERROR, "origin/main was force-pushed", "reset or rebase", ("5",)),
        Alert("lease.expired:5", "lease.expired", Severity.WARNING, "a warning is not told", "-"),
    ]
    notices = needs_you(store.tasks, alerts)
    assert [(n.kind, n.task) for n in notices] == [("waiting", "1"), ("failed", "2"), ("cancelled_blocker", "4"), ("error", "5")]
    waiting = notices[0]
    assert waiting.title == "#1 waits for you" and "Postgres or SQLite?" in waiting.body and "board answer 1" in waiting.body
    assert "tests failed" in notices[1].body
    assert needs_you(store.tasks, alerts) == notices, "the keys change only when the board does"
    assert [n.kind for n in needs_you(store.tasks, alerts, kinds=["failed"])] == ["failed"]
    # Answered and asked again: a new question is a new notice.
    actions.answer(store, "1", "Postgres", person())
    actions.wait(store, "1", person(), question="Which version?")
    [asked_again] = [n for n in needs_you(store.tasks) if n.kind == "waiting"]
    assert asked_again.key != waiting.key


def test_the_journal_tells_a_notice_once_and_an_alert_again_only_after_a_while(store: Store) -> None:
    journal = store.notice_journal
    assert journal.take("waiting:1:x", NOW, None)
    assert not journal.take("waiting:1:x", NOW + timedelta(days=30), None)
    assert journal.take("alert:k", NOW, timedelta(hours=1))
    assert not journal.take("alert:k", NOW + timedelta(minutes=59), timedelta(hours=1))
    assert journal.take("alert:k", NOW + timedelta(minutes=61), timedelta(hours=1))
    assert not journal.take("alert:k", NOW + timedelta(minutes=62), timedelta(hours=1))


def _take_in_a_process(workspace: str, key: str, start: object, results: object) -> None:
    store = Store.open(Path(workspace))
    start.wait()  # type: ignore[attr-defined]
    results.put(store.notice_journal.take(key, NOW, None))  # type: ignore[attr-defined]


def test_of_processes_telling_at_once_exactly_one_tells(workspace: Path) -> None:
    context = multiprocessing.get_context("spawn")
    start, results = context.Event(), context.Queue()
    processes = [context.Process(target=_take_in_a_process, args=(str(workspace), "failed:7:t", start, results)) for _ in range(6)]
    for process in processes:
        process.start()
    try:
        start.set()
        taken = [results.get(timeout=120) for _ in processes]
    finally:
        for process in processes:
            process.join(timeout=60)
            if process.is_alive():
                process.kill()
    assert sorted(taken) == [False] * 5 + [True]


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def notice(n: int, kind: str = "failed") -> Notice:
    return Notice(f"{kind}:{n}", kind, f"#{n} {kind}", f"#{n} line one\nline two", str(n))  # type: ignore[arg-type]


def test_notices_together_go_as_one_and_a_route_sends_at_most_once_per_gap(store: Store) -> None:
    ticks = Ticks()
    sent: list[Message] = []
    notifier = Notifier(NotifySettings(coalesce_seconds=2, min_gap_seconds=30), store.notice_journal, shared=[sent.append], clock=ticks, now=lambda: NOW, background=False)
    notifier.look([notice(1), notice(2)])
    assert notifier.flush() == 0  # still gathering
    ticks.now = 1.0
    notifier.look([notice(1), notice(3, "waiting")])  # #1 again: already on its way
    ticks.now = 2.5
    assert notifier.flush() == 1
    [message] = sent
    assert message.title == "3 things need you on the board" and message.body.splitlines() == ["#1 line one", "#2 line one", "#3 line one"]
    assert message.kinds == ("failed", "waiting")
    ticks.now = 10.0
    notifier.look([notice(4)])
    ticks.now = 20.0
    assert notifier.flush() == 0  # within the gap after the last send
    ticks.now = 33.0
    assert notifier.flush() == 1 and sent[-1].title == "#4 failed" and sent[-1].body == "#4 line one\nline two"
    notifier.look([notice(1), notice(2), notice(3, "waiting"), notice(4)])
    ticks.now = 100.0
    assert notifier.flush() == 0, "told already"


def test_two_dashboards_on_one_board_tell_the_board_once_and_each_its_own_terminal(workspace: Path) -> None:
    ticks = Ticks()
    posted: list[Message] = []
    rung: list[list[Message]] = [[], []]
    notifiers = [
        Notifier(NotifySettings(coalesce_seconds=0, min_gap_seconds=0), Store.open(workspace).notice_journal, shared=[posted.append], own=[rung[i].append], clock=ticks, now=lambda: NOW, background=False, own_from_now=False)
        for i in range(2)
    ]
    for notifier in notifiers:
        notifier.look([notice(1, "waiting")])
    assert sum(notifier.flush() for notifier in notifiers) == 3
    assert [m.title for m in posted] == ["#1 waiting"] and [len(r) for r in rung] == [1, 1]


class Receiver(http.server.BaseHTTPRequestHandler):
    got: list[tuple[dict[str, str], str]] = []

    def do_POST(self) -> None:  # noqa: N802 - the standard library's name
        length = int(self.headers.get("Content-Length", 0))
        self.got.append((dict(self.headers.items()), self.rfile.read(length).decode("utf-8")))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_the_http_route_posts_as_ntfy_takes_it(backend: str) -> None:
    if backend != "files":
        pytest.skip("about the POST, not the board")
    Receiver.got = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        route = http_route(f"http://127.0.0.1:{server.server_port}/board-topic", link="http://board.example/task/{id}")
        route(Message("#1 waits for you", "#1 schema: Postgres or SQLite?\nanswer: board answer 1 TEXT", "1", ("waiting",)))
    finally:
        server.shutdown()
        server.server_close()
    [(headers, body)] = Receiver.got
    assert body == "#1 schema: Postgres or SQLite?\nanswer: board answer 1 TEXT"
    assert (headers["Title"], headers["Priority"], headers["Tags"], headers["Click"]) == ("#1 waits for you", "high", "waiting", "http://board.example/task/1")


def test_a_terminal_is_told_by_bell_or_osc_without_escapes_of_the_tasks_own(backend: str) -> None:
    if backend != "files":
        pytest.skip("about the terminal, not the board")
    message = Message("#1 waits\x1b]0;evil\x07", "a; b\nc", "1", ("waiting",))
    assert terminal_sequence("bell", message) == "\x07"
    osc9 = terminal_sequence("osc9", message)
    assert osc9.startswith("\x1b]9;") and osc9.endswith("\x07") and osc9.count("\x07") == 1 and osc9.count("\x1b") == 1
    osc777 = terminal_sequence("osc777", message)
    assert osc777.startswith("\x1b]777;notify;#1 waits") and osc777.count(";") == 3


def test_a_terminal_hears_only_what_arises_after_its_dashboard_opened(store: Store) -> None:
    ticks = Ticks()
    posted: list[Message] = []
    rung: list[Message] = []
    notifier = Notifier(NotifySettings(coalesce_seconds=0, min_gap_seconds=0), store.notice_journal, shared=[posted.append], own=[rung.append], clock=ticks, now=lambda: NOW, background=False)
    notifier.look([notice(1)])  # already so when the dashboard opened
    notifier.flush()
    notifier.look([notice(1), notice(2, "waiting")])
    notifier.flush()
    assert [m.title for m in rung] == ["#2 waiting"]
    assert [m.title for m in posted] == ["#1 failed", "#2 waiting"], "the board's routes tell what was already so, once"


def test_the_same_list_of_notices_handed_again_is_not_looked_through_again(store: Store) -> None:
    """A dashboard hands its notifier the same list each second until the board changes: on a
    large board thousands of notices, each told already."""
    ticks = Ticks()
    rung: list[Message] = []

    class Counted(list):
        looked = 0

        def __iter__(self):
            Counted.looked += 1
            return super().__iter__()

    notifier = Notifier(NotifySettings(coalesce_seconds=0, min_gap_seconds=0), store.notice_journal, own=[rung.append], clock=ticks, now=lambda: NOW, background=False, own_from_now=False)
    told = [notice(n) for n in range(1, 2001)]
    notices = Counted(told)
    for _ in range(5):
        notifier.look(notices)
    notifier.flush()
    assert Counted.looked == 1
    assert [m.title for m in rung] == ["2,000 things need you on the board"]
    notifier.look(Counted([*told, notice(2001)]))  # the board changed: a new list, looked at
    notifier.flush()
    assert Counted.looked == 2 and rung[-1].title == "#2001 failed"
