"""Tokens while a Claude Code session works, not only when its turn ends.

``board hook`` reads a session's transcript on Stop, SubagentStop and SessionEnd: a
``claude -p`` run under ``board run`` is one turn, so its tokens would arrive only when it is
over, too late for a budget to stop it. The coordinator reads the transcript of each working
session on its tick instead (the path its hooks recorded on the agent's record), through the
same reader and reading position as the hook's, so nothing is counted twice: the hook's look
at the end finds only what came after.

Only a regular file of this user's, named like a transcript, is read: an agent record is
anyone's to write, the transcript it names is not.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from board.agent_record import AgentRecord
from board.claude.hooks.agents import agent_name
from board.times import iso
from board.claude.transcripts import read_transcript

#: A look waits this long for a transcript's lock (the hook may be reading it): then it is
#: skipped until the next tick.
LOCK_WAIT_SECONDS = 0.2


class LiveTranscripts:
    """Reads working sessions' transcripts, each again only once it grew."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self._seen: dict[str, tuple[int, int, int]] = {}

    def read(self, agents: Iterable[AgentRecord], now: datetime) -> int:
        """Look at the transcript of every working session that has one; how many were read."""
        read = 0
        for record in agents:
            if record.activity != "working" or not record.transcript or record.parent:
                continue
            transcript = Path(record.transcript)
            try:
                info = os.stat(transcript)
            except (OSError, ValueError):
                continue
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or transcript.suffix != ".jsonl":
                continue
            key = (info.st_ino, info.st_size, info.st_mtime_ns)
            if self._seen.get(record.transcript) == key:
                continue
            session = record.session_id
            earlier = [agent_name(f"claude-{session[:8]}")] if session else []
            try:
                read_transcript(
                    self.state_dir, transcript, agent=record.name, task=record.task, session=session,
                    now=iso(now), other_agents=earlier, wait=LOCK_WAIT_SECONDS,
                )
            except OSError:
                continue  # held by the hook's look, or gone: the next tick tries again
            self._seen[record.transcript] = key
            read += 1
        return read
