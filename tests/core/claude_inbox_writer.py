"""Claude Code appending to a teammate's inbox, for the concurrency tests, written from Claude
Code's convention and not from board's code: ``python tests/core/claude_inbox_writer.py INBOX
SENDER READY GO STOP`` appends ``SENDER 0``, ``SENDER 1``... from when GO appears until STOP
does, and prints how many it sent.

Claude Code's ``writeToMailbox`` (with the npm package proper-lockfile): create the inbox as
``[]`` unless it exists (``wx``); lock by making the directory ``<inbox>.lock`` (a lock not
touched for 10 s is stale: remove it and try again; a held one: retry with backoff); re-read the
array under the lock, append ``{from, text, summary, timestamp, read: false}``, write it back
atomically (temp file and rename, as current versions do), remove the lock directory.

Claude Code gives up after ten retries (and its message is lost); this writer keeps trying, so
that every message it means to send is accounted for.
"""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import UTC, datetime

STALE_SECONDS = 10.0


def lock(lock_dir: str) -> None:
    pause = 0.005
    deadline = time.monotonic() + 120
    while True:
        try:
            os.mkdir(lock_dir)
            os.utime(lock_dir)  # proper-lockfile probes the mtime it will keep refreshing
            return
        except FileExistsError:
            try:
                age = time.time() - os.stat(lock_dir).st_mtime
            except FileNotFoundError:
                continue
            if age > STALE_SECONDS:
                try:
                    os.rmdir(lock_dir)
                except FileNotFoundError:
                    pass
                continue
        if time.monotonic() > deadline:
            raise SystemExit(f"could not lock {lock_dir}")
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def append(inbox: str, sender: str, text: str) -> None:
    try:
        with open(inbox, "x") as handle:
            handle.write("[]")
    except FileExistsError:
        pass
    lock_dir = inbox + ".lock"
    lock(lock_dir)
    try:
        with open(inbox) as handle:
            messages = json.load(handle)
        now = datetime.now(UTC)
        messages.append({
            "from": sender, "text": text, "summary": text[:40],
            "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z", "read": False,
        })
        temp = f"{inbox}.tmp.{os.getpid()}"
        with open(temp, "w") as handle:
            handle.write(json.dumps(messages, indent=2))
        os.replace(temp, inbox)
    finally:
        os.rmdir(lock_dir)


def main() -> None:
    inbox, sender, ready, go, stop = sys.argv[1:]
    open(ready, "w").close()
    deadline = time.monotonic() + 120
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            raise SystemExit("no starting signal")
        time.sleep(0.001)
    sent = 0
    while not os.path.exists(stop) and time.monotonic() < deadline:
        append(inbox, sender, f"{sender} {sent}")
        sent += 1
        time.sleep(0.002)  # a busy team, not a flood: the inbox stays a readable size
    print(sent)


if __name__ == "__main__":
    main()
