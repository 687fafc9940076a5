"""Reading the rest of the board once its first chunk is on screen, then following it
(``Store.follow``) until the session stops, Textual-free.

Each runs in one of the app's worker threads and reports through ``FeedEvents``: the app
turns what it hears into messages for its own thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from board.errors import BoardUnavailable
from board.ui.session import BoardRead, BoardSession

#: The agents (their heartbeats age, a silent one turns stale) are read again at least this often.
AGENTS_SECONDS = 2.0


@dataclass(frozen=True)
class FeedEvents:
    """Where a feed reports, called from its worker thread."""

    #: Tasks read (or gone).
    board_read: Callable[[BoardRead], object]
    #: The agents, teams or inboxes may have changed: read them again.
    agents_may_have_changed: Callable[[], None]
    #: A task's history or tool-call log grew.
    logs_changed: Callable[[set[Path]], object]
    #: The database went out of reach (why), or came back (None).
    connection: Callable[[str | None], None]


def read_pages(session: BoardSession, events: FeedEvents, *, chunk: int) -> bool:
    """Read the rest of the board a page at a time; False when it went out of reach first (a
    database: the follower reads it whole once it is back)."""
    try:
        while True:
            page = session.read_page(chunk)
            events.board_read(page)
            if page.loaded:
                return True
    except BoardUnavailable as error:
        events.connection(str(error))
        return False


def follow_board(session: BoardSession, events: FeedEvents, *, every: float | None, read_whole: bool = False) -> None:
    """Follow the board (``Store.follow``, whichever backend keeps it) until the session stops:
    what changed reaches the screen, the alerts and the agents panel; a board out of reach is
    said in the header while it stays on screen. ``read_whole``: the first read was cut off,
    so the whole board is read again first."""
    store, lock = session.store, session.lock
    if read_whole:
        try:
            with lock:
                store.reload()
                read = BoardRead(list(store.tasks.values()), [], loaded=True)
            events.board_read(read)
        except BoardUnavailable:
            pass  # the follower says so, and reads it whole when it is back
    agents_read_at = time.monotonic()
    follow = store.follow(stop=session.stopped, guard=lock) if every is None else store.follow(stop=session.stopped, every=every, guard=lock)
    for news in follow:
        if news.lost is not None:
            events.connection(news.lost)
            continue
        if news.back:
            events.connection(None)
        with lock:
            ids = news.changes.changed | news.changes.removed | news.named
            present = [store.tasks[i] for i in ids if i in store.tasks]
            gone = sorted(i for i in ids if i not in store.tasks)
            read = BoardRead(present, gone, loaded=news.whole)
        if present or gone or news.whole:
            events.board_read(read)
        # An idle board's period finds nothing: then nothing is re-evaluated or redrawn
        # (alerts that clear with time are re-checked every LOCAL_ALERTS_SECONDS anyway).
        if present or gone or news.changes.invalid or news.side or news.paths:
            session.alerts_follower.wake()
        now = time.monotonic()
        if "agents" in news.side or news.back or now - agents_read_at >= AGENTS_SECONDS:
            agents_read_at = now
            events.agents_may_have_changed()
        logs = {p for p in news.paths if p.name == "history.jsonl" or p.parent.name == "toolcalls"}
        if logs:
            events.logs_changed(logs)
