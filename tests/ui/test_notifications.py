"""A person hears what needs them from the board, once: two dashboards open in real terminals
(and, in one case, a coordinator beside them) on one board, and a local ntfy-like endpoint that
must receive exactly one POST per event."""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from board import actions
from board.actions import Who
from board.store import Store
from tests.claude_code.client import Unavailable, board_script
from tests.claude_code.tui import Tmux, wait_until
from tests.conftest import REPO


class Endpoint(http.server.BaseHTTPRequestHandler):
    """Records each POST: its Title header and body."""

    posts: list[tuple[str, str]]

    def do_POST(self) -> None:  # noqa: N802 - the standard library's name
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode("utf-8")
        self.server.posts.append((self.headers.get("Title", ""), body))  # type: ignore[attr-defined]
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[http.server.ThreadingHTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    server.posts = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    try:
        with Tmux(tmp_path / "tmux", columns=140, lines=40) as terminals:
            yield terminals
    except Unavailable as reason:
        pytest.skip(str(reason))


@pytest.mark.parametrize("coordinator", [False, True], ids=["dashboards alone", "with a coordinator"])
def test_two_dashboards_tell_each_event_once(workspace: Path, endpoint: http.server.ThreadingHTTPServer, tmux: Tmux, coordinator: bool) -> None:
    (workspace / ".tasks" / "board.toml").write_text(
        f'[notify]\nurl = "http://127.0.0.1:{endpoint.server_port}/board"\ncoalesce_seconds = 0\nmin_gap_seconds = 0\n[coordinator]\ntick_seconds = 0.2\n'
    )
    store = Store.open(workspace)
    for subject in ("pick a database", "write the models", "write the views"):
        store.create(subject)
    store.create("write the templates", blocked_by=["3"])
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color"}
    posts: list[tuple[str, str]] = endpoint.posts  # type: ignore[attr-defined]
    daemon = None
    if coordinator:
        daemon = subprocess.Popen([sys.executable, "-m", "board", "coordinator"], cwd=workspace, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for name in ("left", "right"):
            tmux.start(name, [board_script(), "ui"], cwd=workspace, env=env)
        for name in ("left", "right"):
            wait_until(lambda: "0/4 done" in tmux.screen(name), f"the {name} dashboard showing the board", explain=lambda: tmux.screen(name))
        person = Who("ann")
        titles = lambda: sorted(title for title, _ in posts)  # noqa: E731

        actions.start(store, "1", person)
        actions.wait(store, "1", person, question="Postgres or SQLite?")
        wait_until(lambda: "#1 waits for you" in titles(), "the question's POST", explain=lambda: str(posts))
        actions.start(store, "2", person)
        actions.fail(store, "2", person, error="the tests failed")
        wait_until(lambda: "#2 failed" in titles(), "the failure's POST", explain=lambda: str(posts))
        # A third event, told after the first two by whoever tells it: a dashboard that would
        # tell the first two again has had its chance by then.
        actions.cancel(store, "3", person)
        wait_until(lambda: "#4 can never start" in titles(), "the stuck task's POST", explain=lambda: str(posts))
        assert titles() == ["#1 waits for you", "#2 failed", "#4 can never start"], posts
        body = dict(posts)["#1 waits for you"]
        assert "Postgres or SQLite?" in body and "board answer 1" in body
    finally:
        if daemon is not None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
