"""An event delivered to board's hook as Claude Code delivers it, whichever way it is installed.

A command entry: its command through a shell, the event on stdin, in the hook's environment.
An http entry: a POST of the event to its URL, each header's ``$NAME`` filled from the hook's
environment when ``allowedEnvVars`` lists it (else "", as Claude Code 2.1.197 does); a
``deny`` answer becomes what the command hook's exit 2 is: its reason, on stderr.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from board.claude.hooks import loopback

_VARIABLE = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}|\$([A-Z_][A-Z0-9_]*)")


def entry_for(workspace: Path, event: str) -> dict:
    settings = json.loads((workspace / ".claude" / "settings.json").read_text())
    entries = [h for group in settings["hooks"][event] for h in group["hooks"]]
    assert len(entries) == 1
    return entries[0]


def deliver(workspace: Path, event: str, body: str, *, env: Mapping[str, str], cwd: Path) -> subprocess.CompletedProcess:
    entry = entry_for(workspace, event)
    if entry["type"] == "command":
        return subprocess.run(["sh", "-c", entry["command"]], input=body, capture_output=True, text=True, cwd=cwd, env=dict(env), timeout=60)
    return post(entry, body, env)


def post(entry: Mapping, body: str, env: Mapping[str, str]) -> subprocess.CompletedProcess:
    allowed = set(entry.get("allowedEnvVars") or ())
    headers = {"Content-Type": "application/json"}
    for name, value in (entry.get("headers") or {}).items():
        headers[name] = _VARIABLE.sub(lambda m: env.get(m.group(1) or m.group(2), "") if (m.group(1) or m.group(2)) in allowed else "", value)
    request = urllib.request.Request(entry["url"], data=body.encode(), headers={k: v.encode().decode("latin-1") for k, v in headers.items()}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=entry.get("timeout", 60)) as answer:
            status, text = answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, ""
    if status != 200:
        return subprocess.CompletedProcess(entry["url"], 1, "", f"HTTP {status}")
    decision = json.loads(text).get("hookSpecificOutput", {}) if text.strip() else {}
    if decision.get("permissionDecision") == "deny":
        return subprocess.CompletedProcess(entry["url"], 2, "", decision["permissionDecisionReason"] + "\n")
    return subprocess.CompletedProcess(entry["url"], 0, text, "")


def start_server(port: int, env: Mapping[str, str], *, idle: float | None = None) -> subprocess.Popen:
    """``board hooks serve`` on ``port``, listening when this returns (the caller stops it with ``stop``)."""
    args = [sys.executable, "-m", "board", "hooks", "serve", "--port", str(port)] + (["--idle", str(idle)] if idle else [])
    server = subprocess.Popen(args, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    wait_until(lambda: loopback.listener_uid(port) is not None or server.poll() is not None, what=f"board's server listening on {port}")
    assert server.poll() is None, server.stderr.read() if server.stderr else ""
    return server


def stop(process: subprocess.Popen) -> None:
    try:
        os.kill(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=30)
    if process.stderr is not None:
        process.stderr.close()


def wait_until(condition, *, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout:.0f} s for {what}"
        time.sleep(0.02)


def kill_started_servers(cache: Path) -> None:
    """Kill every server a session's start left running (each wrote ``<port>.json`` with its pid
    under the cache it was given)."""
    for record in (cache / "board" / "hook-servers").glob("*.json"):
        try:
            pid = json.loads(record.read_text())["pid"]
            os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError, KeyError):
            continue
