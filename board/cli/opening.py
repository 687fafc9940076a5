"""The store a command works on, and who works on it: what every command about tasks opens
first. Apart from ``board.cli.tasks``, so that ``heartbeat`` and ``claim`` open the board
without loading the task commands and how they show tasks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from board.identity import acting_user, lease_token

if TYPE_CHECKING:  # handlers load them: building the parser must stay light
    import argparse

    from board import actions
    from board.store import Store


def open_store(args: argparse.Namespace, *, create: bool = False, whole: bool = True) -> Store:
    """The board; with ``whole=False``, read only as far as the command asks (one task's
    file for a command about one task), so it costs the same on a board of any size."""
    from board.store import Store

    return Store.open(Path(args.workspace), actor=acting_user(), create=create, whole=whole)


def who(args: argparse.Namespace, task_id: str) -> actions.Who:
    """Who runs the command, with the lease token it gives (or its worker gave it) for the task."""
    from board import actions

    return actions.Who(
        acting_user(), token=lease_token(getattr(args, "token", None), task_id), force=getattr(args, "force", False),
        expected_version=getattr(args, "expect_version", None),
    )
