"""Fixtures for coordinator tests: a board with a fake clock and helpers to register agents."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from board.agent_record import AgentRecord
from board.agents import register_agent
from board.config import BoardSettings
from board.store import Store

START = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)


class FakeClock:
    """A clock tests move by hand; shared by the store and the tick."""

    def __init__(self, start: datetime = START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def board(workspace: Path, clock: FakeClock) -> Store:
    """The test's board (on PostgreSQL too, in a module marked ``BOTH_BACKENDS``) on the fake clock."""
    return Store.open(workspace, clock=clock, actor="test")


def settings(**sections: dict) -> BoardSettings:
    return BoardSettings.model_validate(sections)


def agent(board: Store, name: str, clock: FakeClock, **fields) -> AgentRecord:
    record = register_agent(board.agent_records, name, kind="test", now=clock())
    return record.model_copy(update=fields)
