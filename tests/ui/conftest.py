"""Dashboard fixtures: a fixed clock, no watchers or timers, a private user config directory."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.pilot import Pilot

from board.model import utcnow
from board.ui.app import BoardApp
from board.ui.lanes import Lane

#: Just after the sample board's last write: alice and bob heartbeat 20 s ago, the rest are stale.
FIXED_NOW = datetime(2026, 11, 20, 23, 35, 20, tzinfo=UTC)


@pytest.fixture(autouse=True)
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep the user's real theme choice out of tests (and tests' choices out of it)."""
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    return config


def make_app(workspace: Path, **options: object) -> BoardApp:
    """The dashboard as snapshot tests need it: fixed clock, no watcher, no timers, no blink."""
    settings: dict[str, object] = {"now": lambda: FIXED_NOW, "watch": False, "live_clock": False}
    settings.update(options)
    return BoardApp(workspace, **settings)  # type: ignore[arg-type]


def live_app(workspace: Path) -> BoardApp:
    """A dashboard on the real clock, following the files as agents write them."""
    return make_app(workspace, now=utcnow, watch=True, reconcile_seconds=30)


async def select_second_ready(app: BoardApp, pilot: Pilot) -> list[str]:
    """Once the board is on screen, select the second ready card; the ready lane's ids."""
    await settled(pilot)
    ready = list(app.lanes.ids[Lane.READY])
    app.select(ready[1])
    await pilot.pause()
    return ready


async def settled(pilot: Pilot, timeout: float = 10.0) -> None:
    """Wait until the first read is applied and the alerts are computed."""
    app = pilot.app
    assert isinstance(app, BoardApp)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not app.loaded or app._alerts_pending:
        if loop.time() > deadline:
            raise AssertionError("the dashboard did not finish loading")
        await pilot.pause(0.01)
    await pilot.pause()


async def settled_quietly(pilot: Pilot) -> None:
    """``settled``, then without the notifications of the first load (they would cover the panels)."""
    await settled(pilot)
    pilot.app.clear_notifications()
    await pilot.pause()


async def writes_done(pilot: Pilot, timeout: float = 30.0) -> None:
    """Wait until what the keys pressed so far set off has run: first what they queued on the app
    (a dialog's answer reaches its callback that way), then every write that any of it started.
    Only then does the absence of a write on disk show that none was made."""
    app = pilot.app
    handled = asyncio.Event()
    app.call_later(handled.set)
    await asyncio.wait_for(handled.wait(), timeout)
    writes = [worker for worker in app.workers if worker.group in ("board-write", "inbox-write")]
    if writes:
        await asyncio.wait_for(app.workers.wait_for_complete(writes), timeout)


async def wait_for(pilot: Pilot, condition, timeout: float = 10.0, message: str = "condition") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {message}")
        await pilot.pause(0.01)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

