"""Machines and the PostgreSQL server they share, for the tests that run board on several.

``machines_with_a_server(count)`` makes ``count`` machines (network namespaces, ``tests/netns.py``)
and a server of their own that listens on each machine's link as well as on its socket here;
everything is stopped and removed when the block ends. ``why_no_machines`` is the reason to skip
(None when machines can be made).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from tests.conftest import REPO
from tests.netns import Machine, Machines, listen_also_on
from tests.pg_cluster import SUPERUSER, ClusterError, PgCluster, find_bindir

why_no_machines = Machines.available() or (None if find_bindir() else "PostgreSQL's programs are not installed")


@contextlib.contextmanager
def machines_with_a_server(count: int) -> Iterator[tuple[list[Machine], PgCluster]]:
    """``count`` machines and a started server each of them reaches over its own link."""
    with Machines(count) as machines:
        cluster = PgCluster.create()
        try:
            octets = machines[0].host_address.split(".")[:2]
            listen_also_on(cluster.data, [m.host_address for m in machines], f"{'.'.join(octets)}.0.0/16")
            try:
                cluster.start()
            except ClusterError as error:
                pytest.fail(str(error))
            yield machines, cluster
        finally:
            cluster.close()


def machine_url(machine: Machine, port: int, database: str) -> str:
    """The database as ``machine`` reaches it: over its link, at ``port`` on this host."""
    return f"postgresql://{SUPERUSER}@{machine.host_address}:{port}/{database}"


def machine_env() -> dict[str, str]:
    """The environment for board on a machine: this checkout's code, and no database of ours."""
    return {k: v for k, v in os.environ.items() if k != "BOARD_DB"} | {"PYTHONPATH": str(REPO)}
