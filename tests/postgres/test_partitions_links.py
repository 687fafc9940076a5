"""A machine whose link to the board's database is too slow or flaps, and a second run started on
the other machine while one is cut off (``partitions.py`` says what each checks)."""

# ruff: noqa: F811 - the tests take the fixtures imported here by name
from __future__ import annotations

import time

import pytest

from tests.delay_proxy import DelayingProxy
from tests.conftest import LONG
from tests.postgres.partitions import (  # noqa: F401 - the fixtures are used by name
    WORKERS_PER_RUN, SharedBoard, board, held_by, machines_and_server, outage_over, start_both, why_no_machines,
)

pytestmark = [LONG, pytest.mark.skipif(why_no_machines is not None, reason=f"several machines on one: {why_no_machines}")]


def test_a_link_too_slow_to_renew_a_lease(board: SharedBoard) -> None:
    """Machine 1 reaches the server through a proxy that holds every chunk back 2 s: a renewal
    takes longer than the lease, though nothing ever fails."""
    machine_0, machine_1 = board.machines
    with DelayingProxy((machine_1.host_address, 0), ("127.0.0.1", board.cluster.port)) as proxy:
        _, run_1 = start_both(board, port_of_machine_1=proxy.port)
        held = held_by(board, machine_1)
        slow_at = board.mark("made machine-1's link slow")
        proxy.delay = 2.0
        try:
            board.must(outage_over(board, held, slow_at), "machine-1's tasks to run again on machine-0")
        finally:
            proxy.delay = 0.0
        board.finish_and_check(run_1, time.time())


#: Outages around the lease's length, shorter and longer, with the link up for a moment between:
#: renewals get through now and then, a lease runs out now and then.
DOWNS_SECONDS, UP_SECONDS = (1.0, 2.5, 3.5, 1.5, 3.0), 0.7


def test_a_flapping_link(board: SharedBoard) -> None:
    """Machine 1's link goes down and up again and again, its tasks in hand."""
    _, machine_1 = board.machines
    _, run_1 = start_both(board)
    try:
        for down in DOWNS_SECONDS:
            board.mark(f"cut machine-1 off for {down:g} s")
            machine_1.cut()
            time.sleep(down)
            machine_1.heal()
            time.sleep(UP_SECONDS)
    finally:
        machine_1.heal()
    board.finish_and_check(run_1, time.time())


def test_a_second_run_started_during_a_cut_takes_names_of_its_own(board: SharedBoard) -> None:
    """While machine 1 is cut off, and once the server has dropped its sessions (and with them
    the locks on its workers' names), a second run starts on machine 0: its workers must not
    take the names of machine 1's, which are still alive."""
    machine_0, machine_1 = board.machines
    _, run_1 = start_both(board)
    held = held_by(board, machine_1)
    cut_at = board.mark("cut machine-1 off")
    machine_1.cut()
    try:
        board.must(lambda: board.sessions_from(machine_1) == 0, "the server to drop machine-1's sessions")
        board.mark("the server has dropped machine-1's sessions")
        second = board.start_run(machine_0, "machine-0 second run")
        board.must(lambda: len(second.workers()) == WORKERS_PER_RUN and board.rejoined(second, second.started) or not second.alive(),
             "the second run's workers to be on the board")
        board.must(outage_over(board, held, cut_at), "machine-1's tasks to run again on machine-0")
    finally:
        machine_1.heal()
    board.finish_and_check(run_1, time.time())
