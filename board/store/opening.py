"""Opening a workspace's board where it is kept: the one module that knows every backend, so
that neither the rules (``board.store.base``) nor a backend imports another."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from board.store.base import Store, database_url, use_opener

__all__ = ["Store", "open_store", "open_unread"]


def open_store(location: Path | str, *, db: str | None = None, create: bool = False, whole: bool = True, **kwargs: Any) -> Store:
    """The board of the workspace at ``location``: in the PostgreSQL database ``db`` (default:
    ``$BOARD_DB``, then ``[store] url`` in its settings), else in files: ``.tasks/``, or a
    Claude Code task list (see ``FileStore.open`` for ``whole``)."""
    url = db or database_url(Path(location))
    if url:
        from board.store.postgres.store import PostgresStore  # psycopg only for a database board

        return PostgresStore.open(location, url=url, create=create, whole=whole, **kwargs)
    from board.store.files import FileStore

    return FileStore.open(location, create=create, whole=whole, **kwargs)


def open_unread(workspace: Path, **kwargs: Any) -> Store:
    """The workspace's board, wherever it is kept, not read yet: for a reader that reads it a page
    at a time (``start_reading``, ``read_more``) and shows it meanwhile (the dashboard)."""
    url = database_url(workspace)
    if url:
        from board.store.postgres.store import PostgresStore

        return PostgresStore(url, workspace, **kwargs)
    from board.store.files import FileStore
    from board.store.layout import detect_layout

    return FileStore(detect_layout(workspace), **kwargs)


use_opener(open_store)
