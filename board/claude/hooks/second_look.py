"""A second look at a session's transcript, a little after its turn's Stop.

Claude Code can write a turn's entries (a teammate's message and the answer to it, most often)
only after that turn's Stop hook has run; when the session then idles, no later event comes to
read them, and their tokens are never counted. The Stop's own look cannot tell: the transcript
may end with an earlier turn that said the very same words. So every Stop (and SubagentStop)
starts this, detached: it waits until the transcript has grown and again ends with the turn's
last message, or ``SECOND_LOOK_SECONDS`` pass, reads it once more from where the last read
stopped (reads are incremental and locked, so a look that finds nothing new changes nothing),
and exits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The longest a second look waits for its turn's entries before it reads what is there.
SECOND_LOOK_SECONDS = 10.0
_POLL_SECONDS = 0.1


def start_second_look(payload: Mapping[str, Any], environ: Mapping[str, str], transcript: Path) -> None:
    """Start the second look at ``transcript``, detached, and return at once."""
    try:
        size = transcript.stat().st_size
    except OSError:
        return
    look = subprocess.Popen(
        [sys.executable, "-m", "board.claude.hooks.second_look", str(transcript), str(size)],
        env={**os.environ, **environ}, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
    )  # fmt: skip
    assert look.stdin is not None
    with look.stdin:
        look.stdin.write(json.dumps(dict(payload), ensure_ascii=False).encode("utf-8"))


def wait_for_more(transcript: Path, size_at_stop: int, last: object, *, seconds: float = SECOND_LOOK_SECONDS) -> None:
    """Until the transcript has grown past ``size_at_stop`` and its last turn holds ``last``
    again (the turn's own entries are in), or ``seconds`` pass."""
    from board.claude.hooks.handler import transcript_ends_with

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if isinstance(last, str) and last.strip() and transcript_ends_with(transcript, last, past=size_at_stop):
                return
        except OSError:
            return
        time.sleep(_POLL_SECONDS)


def main(argv: list[str]) -> int:
    from board import json_bounds
    from board.claude.hooks.endpoint import MAX_PAYLOAD_BYTES
    from board.claude.hooks.handler import read_session_transcript
    from board.claude.hooks.hook_log import note
    from board.claude.hooks.where import find_board

    board = None
    try:
        transcript, size_at_stop = Path(argv[0]), int(argv[1])
        payload = json_bounds.loads(sys.stdin.buffer.read(MAX_PAYLOAD_BYTES) or b"null")
        if not isinstance(payload, dict):
            return 0
        wait_for_more(transcript, size_at_stop, payload.get("last_assistant_message"))
        board = find_board(payload, os.environ)
        if board is not None:
            read_session_transcript(board, payload, os.environ, datetime.now(UTC), final=payload.get("hook_event_name") == "SubagentStop", again=True)
    except BaseException as error:  # noqa: BLE001 - detached: the hook log is the only place to say it
        note(board, f"second look: {type(error).__name__}: {error}")
    return 0


if __name__ == "__main__":  # started by start_second_look: the transcript, its size at the Stop; the event on stdin
    sys.exit(main(sys.argv[1:]))
