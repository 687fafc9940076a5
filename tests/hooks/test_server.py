"""``board hooks serve`` answers its own user only, and a port it cannot have is reported."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from board.claude.hooks.install import hook_url, installed_port, read_settings
from board.store import Store
from tests.hooks.delivery import post, start_server, stop, wait_until
from tests.hooks.test_hook_events import calls, payload

OTHER_UID = 65534  # nobody
#: A Python the other user can run (this one may live under root's own home).
SYSTEM_PYTHON = "/usr/bin/python3"


def other_user_can_run() -> bool:
    return os.getuid() == 0 and os.access(SYSTEM_PYTHON, os.X_OK)


@pytest.fixture
def served(workspace: Path) -> Iterator[tuple[Path, int]]:
    from board.cli import main

    assert main(["-w", str(workspace), "hooks", "install"]) == 0
    port = installed_port(read_settings(workspace / ".claude" / "settings.json"))
    assert port is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOARD_", "CLAUDE_"))}
    server = start_server(port, {**env, "XDG_CACHE_HOME": str(workspace / ".cache")})
    try:
        yield workspace, port
    finally:
        stop(server)


def raw_post(port: int, body: bytes, *, path: str = "/board/hook", headers: dict[str, str] | None = None, user: int | None = None) -> int:
    """The status a POST gets, sent from a process of ``user`` (this one's when None)."""
    script = (
        "import http.client, json, sys\n"
        "args = json.loads(sys.argv[1])\n"
        "c = http.client.HTTPConnection('127.0.0.1', args['port'], timeout=30)\n"
        "c.request('POST', args['path'], body=args['body'].encode(), headers=args['headers'])\n"
        "print(c.getresponse().status)\n"
    )
    args = json.dumps({"port": port, "path": path, "body": body.decode(), "headers": headers or {}})
    done = subprocess.run([SYSTEM_PYTHON if user is not None else sys.executable, "-c", script, args], capture_output=True, text=True, timeout=60, user=user, cwd="/")
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def test_a_call_posted_by_the_user_is_counted_with_the_environment_its_headers_carry(served: tuple[Path, int]) -> None:
    workspace, port = served
    store = Store.open(workspace)
    task = store.claim_task(store.create("models").id, "alice")
    entry = read_settings(workspace / ".claude" / "settings.json")["hooks"]["PostToolUse"][0]["hooks"][0]
    done = post(entry, json.dumps(payload("PostToolUse", workspace)), {"BOARD_AGENT": "alice", "BOARD_TASK_ID": task.id, "HOME": str(workspace)})
    assert (done.returncode, done.stderr) == (0, "")
    assert [(c["agent"], c["tool"]) for c in calls(workspace, task.id)] == [("alice", "Write")]


@pytest.mark.skipif(not other_user_can_run(), reason="needs root to send a request as another user")
def test_another_users_request_gets_nothing_written_whatever_it_carries(served: tuple[Path, int]) -> None:
    workspace, port = served
    store = Store.open(workspace)
    task = store.claim_task(store.create("models").id, "alice")
    body = json.dumps(payload("PostToolUse", workspace)).encode()
    headers = {"Board-Env-BOARD_AGENT": "alice", "Board-Env-BOARD_TASK_ID": task.id, "Content-Type": "application/json"}
    assert raw_post(port, body, headers=headers, user=OTHER_UID) == 403
    assert raw_post(port, body, headers=headers) == 200  # the same request, from the user: counted
    assert [c["agent"] for c in calls(workspace, task.id)] == ["alice"]
    assert not (workspace / ".tasks" / "agents" / "alice.json").exists() or json.loads((workspace / ".tasks" / "agents" / "alice.json").read_text())["activity"] == "working"
    # A request from the user that is not a hook event writes nothing either.
    assert raw_post(port, body, path="/other", headers=headers) == 404
    assert len(calls(workspace, task.id)) == 1


@pytest.mark.skipif(not other_user_can_run(), reason="needs root to listen as another user")
def test_a_port_another_user_holds_is_reported_by_status_check_and_the_session_start(served: tuple[Path, int], tmp_path: Path) -> None:
    workspace, _ = served
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        squatted = probe.getsockname()[1]
    squatter = subprocess.Popen(
        [SYSTEM_PYTHON, "-c", f"import socket, time\ns = socket.socket(); s.bind(('127.0.0.1', {squatted})); s.listen(); time.sleep(600)"],
        user=OTHER_UID, cwd="/", stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        from board.claude.hooks.loopback import listener_uid

        wait_until(lambda: listener_uid(squatted) == OTHER_UID or squatter.poll() is not None, what="the other user's listener")
        from board.cli import main

        assert main(["-w", str(workspace), "hooks", "install", "--port", str(squatted)]) == 0
        env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / ".cache")}
        status = subprocess.run([sys.executable, "-m", "board", "-w", str(workspace), "hooks", "status"], capture_output=True, text=True, env=env, timeout=60)
        assert status.returncode == 1 and f"broken: {workspace / '.claude' / 'settings.json'}: 3 events POST to {hook_url(squatted)}" in status.stdout, status
        assert f"held by another user's process (uid {OTHER_UID})" in status.stdout
        check = subprocess.run([sys.executable, "-m", "board", "-w", str(workspace), "check"], capture_output=True, text=True, env=env, timeout=60)
        assert check.returncode == 1 and "board's http hooks on 3 events do not reach board" in check.stdout, check
        # A session's start cannot serve the port: it says so in the hook log, and starts nothing.
        start = payload("SessionStart", workspace)
        session = subprocess.run([sys.executable, "-m", "board", "hook"], input=json.dumps(start), capture_output=True, text=True, env=env, cwd=workspace, timeout=60)
        assert (session.returncode, session.stderr) == (0, "")
        log = (workspace / ".tasks" / "logs" / "hook.log").read_text()
        assert f"port {squatted} of 127.0.0.1 is held by another user's process" in log, log
        assert not (tmp_path / ".cache" / "board" / "hook-servers" / f"{squatted}.json").exists()
    finally:
        squatter.kill()
        squatter.wait(timeout=30)


def test_the_servers_pid_record_is_written_through_no_link_planted_in_its_place(workspace: Path, tmp_path: Path) -> None:
    """The record's name is the port the settings file names: a link planted there by whoever
    can write the cache folder leaves the file it points at as it was."""
    from board.claude.hooks.install import free_port

    port = free_port()
    cache = tmp_path / "cache"
    records = cache / "board" / "hook-servers"
    records.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own\n")
    (records / f"{port}.json").symlink_to(victim)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOARD_", "CLAUDE_"))}
    server = start_server(port, {**env, "XDG_CACHE_HOME": str(cache)})
    try:
        record = records / f"{port}.json"
        wait_until(lambda: not record.is_symlink() and record.is_file(), what="the server's record")
        assert json.loads(record.read_text()) == {"pid": server.pid, "port": port}
        assert victim.read_text() == "the user's own\n"
    finally:
        stop(server)
