"""Agents that use only the command line are on the board like any other: a claim, a heartbeat
or a recorded call registers them, and a lease that ran out is an alert whether or not a
coordinator runs."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from board import actions
from board.model import utcnow
from board.store import Store
from tests.conftest import BOTH_BACKENDS
from tests.core.test_cli import board

pytestmark = BOTH_BACKENDS


def roster(workspace: Path) -> dict[str, dict]:
    listed = board(workspace, "agents", "--json")
    assert listed.returncode == 0, listed.stderr
    return {entry["name"]: entry for entry in json.loads(listed.stdout)["agents"]}


def test_claim_heartbeat_and_toolcall_from_the_command_line_put_the_agent_on_the_board(workspace: Path) -> None:
    store = Store.open(workspace)
    first, second = store.create("first").id, store.create("second").id
    assert roster(workspace) == {}

    claimed = board(workspace, "claim", "--agent", "alice")
    assert claimed.returncode == 0, claimed.stderr
    assert board(workspace, "heartbeat", "--agent", "bob").returncode == 0
    held = actions.claim(Store.open(workspace), "carol", lease_seconds=60)  # not through the CLI
    assert held is not None and held.lease is not None and held.id == second
    called = board(workspace, "toolcall", second, "Edit", "--agent", "carol", "--token", str(held.lease.token))
    assert called.returncode == 0, called.stderr

    agents = roster(workspace)
    assert set(agents) == {"alice", "bob", "carol"}
    assert (agents["alice"]["task"], agents["alice"]["state"]) == (first, "working")
    assert (agents["bob"]["task"], agents["bob"]["state"]) == (None, "idle")
    assert agents["carol"]["task"] == second and agents["carol"]["toolCalls"] == 1


def test_a_heartbeat_keeps_the_agent_fresh_and_says_what_it_holds(workspace: Path) -> None:
    store = Store.open(workspace)
    task = store.create("work").id
    assert board(workspace, "heartbeat", "--agent", "alice").returncode == 0
    before = roster(workspace)["alice"]["heartbeatAt"]
    assert board(workspace, "claim", "--agent", "alice").returncode == 0
    assert board(workspace, "heartbeat", "--agent", "alice").returncode == 0
    after = roster(workspace)["alice"]
    assert after["task"] == task and after["heartbeatAt"] >= before


def test_a_lease_that_ran_out_is_an_alert_without_a_coordinator(workspace: Path) -> None:
    earlier = utcnow() - timedelta(minutes=10)
    store = Store.open(workspace, clock=lambda: earlier)
    task = store.create("left behind").id
    claimed = actions.claim(store, "alice", lease_seconds=60)  # ran out nine minutes ago
    assert claimed is not None and claimed.id == task
    listed = board(workspace, "alerts", "--json")
    assert listed.returncode == 0, listed.stderr
    alerts = json.loads(listed.stdout)
    alerts = alerts["alerts"] if isinstance(alerts, dict) else alerts
    about = [a for a in alerts if task in a.get("tasks", [])]
    assert about, alerts
    assert any("alice" in a["message"] and "coordinator" in a["action"] for a in about), about
    assert Store.open(workspace).get(task).owner == "alice"  # nothing was changed by looking
