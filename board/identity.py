"""Who is acting: the name the command line, the MCP server and the dashboard record in history,
and the lease a worker handed the command it runs.

Standard library only, and cheap: every command asks before it does anything else.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping

#: Who a person is when their login name cannot be had, or is not a plain name.
HUMAN_ACTOR = "human"


def local_user() -> str:
    """The person logged in: their login name when it is a plain name (letters, digits, ``-``
    and ``_``, as agent names are), else ``HUMAN_ACTOR``. A name with other characters would
    not do as an owner that commands and filters take back."""
    try:
        name = getpass.getuser()
    except Exception:  # no passwd entry, no LOGNAME: getpass raises whatever it met
        return HUMAN_ACTOR
    return name if name and name.replace("-", "").replace("_", "").isalnum() else HUMAN_ACTOR


def acting_user(environ: Mapping[str, str] = os.environ) -> str:
    """Who runs this command or server: the agent a worker started (``BOARD_AGENT``), else the
    person logged in."""
    return environ.get("BOARD_AGENT") or local_user()


def worker_lease_token(task_id: str, environ: Mapping[str, str] = os.environ) -> int | None:
    """The lease token board's worker gave the command it runs for ``task_id``
    (``BOARD_LEASE_TOKEN`` while ``BOARD_TASK_ID`` names that task), else None."""
    if environ.get("BOARD_TASK_ID") != task_id:
        return None
    try:
        return int(environ.get("BOARD_LEASE_TOKEN", ""))
    except ValueError:
        return None


def lease_token(given: int | None, task_id: str) -> int | None:
    """The token given, else the worker's for this very task."""
    return given if given is not None else worker_lease_token(task_id)
