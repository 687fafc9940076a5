"""Run by test_migrations.py as a process of its own: connect, say "ready", wait for "go" on
stdin, migrate, print the versions applied as JSON. Every migrator is connected before any
starts, so they race for real."""

from __future__ import annotations

import json
import sys

from board.store.postgres.connect import connect
from board.store.postgres.migrations import migrate

conn = connect(sys.argv[1])
print("ready", flush=True)
if sys.stdin.readline().strip() == "go":
    print(json.dumps(migrate(conn)), flush=True)
