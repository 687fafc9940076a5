"""Following the board once its first chunk is on screen, Textual-free: read the rest, then follow
the files (``BoardWatcher``) or the database (``DatabaseFollower``) until the session stops.

Each loop runs in one of the app's worker threads and reports through ``FeedEvents``: the app
turns what it hears into messages for its own thread.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from collections.abc import Callable
from pathlib import Path

from board.store.atomic import stat_stamp
from board.ui.session import BoardRead, BoardSession
from board.watch import BoardWatcher

#: A database board is followed by what its server announces; this catch-up is for a lost note.
DATABASE_RECONCILE_SECONDS = 30.0
#: Every reconcile stats each task file at least this often, even when the folder looks unchanged.
FULL_RESCAN_SECONDS = 60.0


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


def feed_files(session: BoardSession, files: list[tuple[str, str]], events: FeedEvents, *, chunk: int, watch: bool, reconcile_seconds: float) -> None:
    """Read ``files`` (the rest of the first read), then follow the watcher until it stops."""
    layout = session.files
    if layout is None:
        return  # a database board: ``follow_database`` follows it
    bounds = [0, *range(chunk, len(files), chunk), len(files)]
    for start, end in zip(bounds, bounds[1:]):
        events.board_read(session.read_files(files[start:end], loaded=end == len(files)))
    events.agents_may_have_changed()
    session.alerts_follower.wake()
    if not watch:
        return
    store, lock = session.store, session.lock
    with lock:
        # Catch the history offset up now, so the first write does not re-read the log.
        store.sync()
    session.watcher = watcher = BoardWatcher(
        layout.tasks_dir,
        is_task_file=lambda path: layout.task_id_for(path) is not None,
        state_dir=layout.state_dir,
        reconcile_seconds=reconcile_seconds,
    )
    directory_seen: tuple[int, int, int] | None = None
    full_rescan_at = time.monotonic()
    heard = False  # events arrived since the last reconcile
    for batch in watcher.batches():
        changes = None
        heard = heard or bool(batch.task_paths or batch.side_paths)
        if batch.reconcile:
            # The reconcile is for events the OS lost. A rename, create or delete moves the
            # folder's mtime, and edits in place reach us as events: so a folder that did
            # not change, or changed while events kept arriving, needs no stat of every file
            # (at 30,000 tasks that stat is most of an idle dashboard's cost, and a stall
            # for an edit that lands during it), except every FULL_RESCAN_SECONDS.
            directory_now = stat_stamp(layout.tasks_dir)
            unheard_change = directory_now != directory_seen and not heard
            replaced = directory_now is None or directory_seen is None or directory_now[2] != directory_seen[2]  # inode
            if unheard_change or replaced or time.monotonic() - full_rescan_at >= FULL_RESCAN_SECONDS:
                full_rescan_at = time.monotonic()
                with lock:
                    changes = store.rescan()
            directory_seen, heard = directory_now, False
        # A tool call is a line in its task's log, not a write of the task file: re-read the
        # task, whose counts include its log.
        with lock:
            more = store.reread(batch.task_paths | store.logged_task_paths(batch.side_paths))  # type: ignore[attr-defined]
            ids = set(more.changed) | {i for p in batch.task_paths if (i := layout.task_id_for(p))}
            removed = set(more.removed)
            if changes is not None:
                ids |= changes.changed
                removed |= changes.removed
            present = [store.tasks[i] for i in ids if i in store.tasks]
            gone = [i for i in ids | removed if i not in store.tasks]
            invalid_changed = bool(more.invalid or (changes and changes.invalid))
            read = BoardRead(present, gone)
        if present or gone:
            events.board_read(read)
        # An idle board's reconcile finds nothing: then nothing is re-evaluated or redrawn
        # (alerts that clear with time are re-checked every LOCAL_ALERTS_SECONDS anyway).
        if present or gone or invalid_changed or batch.side_paths:
            session.alerts_follower.wake()
        if batch.reconcile or any(p.parent.name == "agents" for p in batch.side_paths):
            events.agents_may_have_changed()
        logs = {p for p in batch.side_paths if p.name == "history.jsonl" or p.parent.name == "toolcalls"}
        if logs:
            events.logs_changed(logs)


def follow_database(session: BoardSession, read: bool, events: FeedEvents, *, chunk: int, watch: bool) -> None:
    """Read the rest of a database board a page at a time (unless ``read``), then follow it
    by what its server announces (``DatabaseFollower``): re-read the tasks named, everything
    after a reconnect, and catch up through history now and then. While the server is out
    of reach the header says so; the board stays on screen."""
    from board.store.postgres.connect import DatabaseUnavailable
    from board.store.postgres.follow import DatabaseFollower

    store, lock = session.store, session.lock
    reread_all = False  # the first read was cut off: read the board again once reconnected
    try:
        while not read:
            page = session.read_database_page(chunk)
            read = page.loaded
            events.board_read(page)
    except DatabaseUnavailable as error:
        events.connection(str(error))
        reread_all = True

    events.agents_may_have_changed()
    session.alerts_follower.wake()
    if not watch:
        return
    session.follower = follower = DatabaseFollower(store.url, reconcile_seconds=DATABASE_RECONCILE_SECONDS)  # type: ignore[attr-defined]
    for heard in follower.batches():
        if heard.lost is not None:
            events.connection(heard.lost)
            continue
        try:
            with lock:
                whole = heard.back or heard.everything or reread_all
                if whole:
                    # The tasks that did not change stay the objects on screen: the board
                    # is not held twice, and only what changed is applied.
                    changes = store.reload()  # type: ignore[attr-defined]
                else:
                    changes = store.reread_tasks(heard.task_ids)  # type: ignore[attr-defined]
                    if heard.reconcile:
                        changes.merge(store.sync())
                ids = changes.changed | changes.removed
                present = [store.tasks[i] for i in ids if i in store.tasks]
                gone = sorted(i for i in ids if i not in store.tasks)
                message = BoardRead(present, gone, loaded=whole)
        except DatabaseUnavailable as error:
            events.connection(str(error))
            continue
        if heard.back or reread_all:
            reread_all = False
            events.connection(None)
        if present or gone or whole:
            events.board_read(message)
        if present or gone or heard.side:
            session.alerts_follower.wake()
        if "agents" in heard.side or heard.back:
            events.agents_may_have_changed()
