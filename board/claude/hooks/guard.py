"""Stop an agent's write to a file another agent's task holds, before it happens.

Two holds count: a write reservation another task made (``board reserve``), and a file listed
by a task another agent has in progress. ``[hooks]`` in board.toml chooses, for each, ``block``
(the edit does not happen; Claude Code shows the model why), ``warn`` (it happens, and the
touch it records raises the conflict alert) or ``off``.
"""

from __future__ import annotations

from datetime import datetime

from board import json_bounds
from board.active_work import read_active
from board.claude.hooks.where import SETTINGS_MOST, HookBoard
from board.disk import confine
from board.times import parse_time


MODES = ("block", "warn", "off")
#: What each hold does unless board.toml says otherwise: a reservation is an explicit claim on
#: a file; a task's file list is a plan, which two tasks may share.
DEFAULTS = {"reserved": "block", "held": "warn"}


class Blocked(Exception):
    """A write stopped on purpose: its one line goes to Claude Code, which shows it to the model."""


def hook_settings(board: HookBoard) -> dict[str, str]:
    """``[hooks]`` of board.toml; a missing or broken file means the defaults (``board check``
    reports a broken one)."""
    settings = dict(DEFAULTS)
    raw = confine.read_if_regular(board.state_dir / "board.toml", SETTINGS_MOST)  # never a FIFO waited on
    if raw is None:
        return settings
    import tomllib

    try:
        section = tomllib.loads(raw.decode("utf-8")).get("hooks", {})
    except ValueError:  # UnicodeDecodeError and TOMLDecodeError alike
        return settings
    if isinstance(section, dict):
        for key in DEFAULTS:
            if section.get(key) in MODES:
                settings[key] = section[key]
    return settings


def check_write(board: HookBoard, path: str, agent: str, task: str | None, now: datetime) -> str | None:
    """Raise ``Blocked`` if a hold set to ``block`` stops ``agent`` writing ``path``; the
    warning of one set to ``warn``, or None."""
    settings = hook_settings(board)
    warnings = []
    for hold, find in (("reserved", _reserved_by_other), ("held", _held_by_other)):
        if settings[hold] == "off":
            continue
        reason = find(board, path, agent, task, now)
        if reason is None:
            continue
        if settings[hold] == "block":
            raise Blocked(reason)
        warnings.append(reason)
    return "; ".join(warnings) or None


def _reserved_by_other(board: HookBoard, path: str, agent: str, task: str | None, now: datetime) -> str | None:
    import hashlib  # only for file tools, and only here

    digest = hashlib.sha256(path.encode("utf-8")).hexdigest()[:16]
    try:
        with open(board.state_dir / "reservations" / f"{digest}.json", "rb", opener=confine.opener) as handle:
            data = json_bounds.loads(handle.read(1024 * 1024))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("path") != path:
        return None
    listed = data.get("holders")
    holders = listed if isinstance(listed, list) else [data]
    for holder in holders:
        if not isinstance(holder, dict) or holder.get("mode", "write") != "write":
            continue
        owner, held_for = str(holder.get("owner") or ""), str(holder.get("task") or "")
        if owner == agent or (task is not None and held_for == task) or not _unexpired(holder.get("expiresAt"), now):
            continue
        state = board.task_state(held_for)
        if state is None or state[0] in ("completed", "cancelled", "failed"):
            continue  # its task is finished or gone: the reservation no longer holds
        until = str(holder.get("expiresAt", ""))[11:16]
        return (
            f"board: {path} is reserved for writing by {owner} for task #{held_for}"
            + (f" until {until} UTC" if until else "")
            + f"; do not edit it: work on another file, or ask {owner} to release it (board message {owner} \"...\")"
        )
    return None


def _held_by_other(board: HookBoard, path: str, agent: str, task: str | None, now: datetime) -> str | None:
    for task_id, entry in sorted(read_active(board.state_dir).items()):
        owner = str(entry.get("owner") or "")
        files = entry.get("files")
        if task_id == task or owner == agent or not owner or not isinstance(files, list) or path not in files:
            continue
        state = board.task_state(task_id)
        if state is None or state != ("in_progress", owner):
            continue  # the index is behind: the task moved on
        return f"board: {path} belongs to task #{task_id}, in progress with {owner}; leave it to them, or ask {owner} first (board message {owner} \"...\")"
    return None


def _unexpired(value: object, now: datetime) -> bool:
    moment = parse_time(value)
    return moment is not None and moment > now
