"""The dashboard's board session works without Textual: it reads, writes and answers the screens'
questions on its own, so the same board can be driven from a test or a script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from board import actions
from board.status import Status
from board.ui.session import BoardSession, local_user
from tests.ui.conftest import FIXED_NOW


def test_the_session_loads_no_textual() -> None:
    probe = "import sys, json\nimport board.ui.session, board.ui.board_feed\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert [name for name in loaded if name == "textual" or name.startswith("textual.")] == []


def test_a_session_reads_a_board_in_files_a_page_at_a_time_and_says_when_it_is_whole(sample: Path) -> None:
    session = BoardSession(sample, now=lambda: FIXED_NOW)
    pages = [session.read_page(10, first=True)]
    while not pages[-1].loaded:
        pages.append(session.read_page(10))
    read = [task.id for page in pages for task in page.tasks]
    assert [len(page.tasks) for page in pages[:-1]] == [10] * (len(pages) - 1) and 0 < len(pages[-1].tasks) <= 10
    assert len(read) == len(set(read)) == len(session.store.tasks) > 30 and set(read) == set(session.store.tasks)


def test_a_session_reads_the_board_writes_through_the_actions_and_reads_the_history(sample: Path) -> None:
    session = BoardSession(sample, now=lambda: FIXED_NOW)
    first = session.read_page(10_000, first=True)
    assert first.loaded and {task.id for task in first.tasks} == set(session.store.tasks) and "5" in session.store.tasks

    written = session.write(lambda store: actions.cancel(store, "5", actions.Who(local_user())))
    assert [task.status for task in written.tasks] == [Status.CANCELLED]
    assert written.observed > first.observed  # a later read is never taken for an earlier one

    logs = session.task_logs("5", history=40, calls=15)
    last = logs.history[-1]
    assert (last["op"], last["actor"], last["changes"]["status"]) == ("status:cancelled", local_user(), ["pending", "cancelled"])
