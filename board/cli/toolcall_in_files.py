"""``board toolcall`` on a board kept in files, made as ``board hook`` makes a call: the task's
file read as JSON, the call appended to its log, the counts read back, without the store,
pydantic or a parse of the task (a script may call this after every step of an agent).

Whatever this way does not settle goes the store's way, which words every refusal: a task file
that is missing or not board's, a lease token that does not match, an agent seen for the first
time (the store makes its record), ``--json``, or a board in a database or a Claude Code list.
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from pathlib import Path

from board.claude.hooks.agents import agent_file
from board.claude.hooks.where import files_board_at
from board.identity import acting_user, lease_token
from board.status import Status
from board.store.file_format import read_task_document, status_and_owner
from board.times import iso
from board.toolcall_log import append_call, call_record, check_tool_name, count_unfolded, task_log

_STATUSES = frozenset(str(status) for status in Status)


def record_in_files(args: argparse.Namespace) -> bool:
    """Record the call and print what the store's way prints; False (nothing done) when the
    store must decide."""
    if args.json or getattr(args, "db", None) or getattr(args, "claude", None) or os.environ.get("BOARD_DB"):
        return False
    board = files_board_at(Path(args.workspace), os.environ)
    if board is None:
        return False
    data = read_task_document(board.task_path(args.id))
    if data is None or str(data.get("id")) != args.id or not isinstance(data.get("subject"), str):
        return False
    status, owner = status_and_owner(data, claude=False)
    counts = data.get("toolCalls") or {}
    if status not in _STATUSES or not isinstance(counts, dict):
        return False
    token = lease_token(args.token, args.id)
    if token is not None:
        lease = data.get("lease")
        if not isinstance(lease, dict) or lease.get("token") != token or isinstance(lease.get("token"), bool):
            return False  # stale: the store refuses it, naming who holds the task now
    if args.agent is not None and not agent_file(board, args.agent).is_file():
        return False  # first heard of: the store makes its record
    check_tool_name(args.tool)
    record = call_record(ts=iso(datetime.now(UTC)), agent=args.agent or owner or acting_user(), tool=args.tool, ok=not args.failed, task=args.id, files=args.files, ms=args.ms)
    append_call(board.state_dir, record)
    logged = counts.get("logged")
    folded = count_unfolded(str(task_log(board.state_dir, args.id)), logged if isinstance(logged, int) else None, lambda: dict(counts)) or counts
    total, failed = folded.get("total", 0), folded.get("failed", 0)
    print(f"#{args.id} {total} tool call{'' if total == 1 else 's'} ({failed} failed)")
    return True
