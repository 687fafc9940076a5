"""Printing a command's ``--json`` answer; how tasks are shown is ``board.present``'s."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # handlers load them: building the parser must stay light
    import argparse

    from board.model import Task
    from board.store import Store


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def print_task(args: argparse.Namespace, store: Store, task: Task, line: str) -> None:
    """A command's answer about the task it changed: the task as JSON (``task_json``) with
    ``--json``, else ``line``."""
    if args.json:
        from board.present import task_json  # here: a command that prints a line runs without it

        print_json(task_json(task, store.graph))
    else:
        print(line)
