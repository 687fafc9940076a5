"""A machine cut off from the board's database: the link dropped for longer than a lease, with the
coordinator on either side, and refused connections (``partitions.py`` says what each checks)."""

# ruff: noqa: F811 - the tests take the fixtures imported here by name
from __future__ import annotations

import time

import pytest

from tests.conftest import LONG
from tests.postgres.partitions import (  # noqa: F401 - the fixtures are used by name
    SharedBoard, board, held_by, machines_and_server, outage_over, start_both, why_no_machines,
)

pytestmark = [LONG, pytest.mark.skipif(why_no_machines is not None, reason=f"several machines on one: {why_no_machines}")]


@pytest.mark.parametrize("coordinator", ["on the machine that stays", "on the machine cut off"])
def test_a_cut_longer_than_the_lease(board: SharedBoard, coordinator: str) -> None:
    """The link drops everything while machine 1 runs two tasks, until both have started again
    on machine 0 (with the coordinator cut off, only once the server has let go of its lock)."""
    machine_0, machine_1 = board.machines
    _, run_1 = start_both(board, coordinator_cut_off=coordinator.endswith("cut off"))
    held = held_by(board, machine_1)
    cut_at = board.mark("cut machine-1 off")
    machine_1.cut()
    try:
        board.must(outage_over(board, held, cut_at), "machine-1's tasks to run again on machine-0")
    finally:
        machine_1.heal()
    board.finish_and_check(run_1, time.time())


def test_refused_connections(board: SharedBoard) -> None:
    """Machine 1 loses its route: every connection it tries fails at once, as while a server
    is down, until its tasks run again elsewhere."""
    _, machine_1 = board.machines
    _, run_1 = start_both(board)
    held = held_by(board, machine_1)
    cut_at = board.mark("took machine-1's route away")
    machine_1.refuse()
    try:
        board.must(outage_over(board, held, cut_at), "machine-1's tasks to run again on machine-0")
    finally:
        machine_1.heal()
    board.finish_and_check(run_1, time.time())
