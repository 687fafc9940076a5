"""Claude Code agent teams on disk, as Claude Code writes them, for tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Claude Code writes config times as epoch milliseconds: 2026-11-20 23:00:00 UTC.
JOINED_MS = 1795215600000


def member(name: str, team: str, *, agent_type: str = "general-purpose", model: str = "claude-sonnet-4-5", cwd: str = "", **extra: Any) -> dict[str, Any]:
    return {
        "agentId": f"{name}@{team}", "name": name, "agentType": agent_type, "model": model, "color": "blue",
        "joinedAt": JOINED_MS, "tmuxPaneId": "in-process", "cwd": cwd, "subscriptions": [], "backendType": "in-process",
        **extra,
    }


def write_team(claude_home: Path, team: str, members: list[dict[str, Any]], *, lead: str = "team-lead") -> Path:
    """``teams/<team>/config.json`` as Claude Code's TeamCreate writes it; returns the team folder."""
    folder = claude_home / "teams" / team
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "name": team, "description": f"the {team} team", "createdAt": JOINED_MS,
        "leadAgentId": f"{lead}@{team}", "leadSessionId": "a2485d01-5a05-4089-9dd4-32a061a1a1c8", "members": members,
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    return folder


def write_inbox(folder: Path, name: str, messages: list[dict[str, Any]]) -> Path:
    inboxes = folder / "inboxes"
    inboxes.mkdir(exist_ok=True)
    path = inboxes / f"{name}.json"
    path.write_text(json.dumps(messages, indent=2))
    return path


def inbox_message(sender: str, text: str, timestamp: str, *, read: bool = False, summary: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"from": sender, "text": text, "timestamp": timestamp, "read": read}
    if summary is not None:
        message["summary"] = summary
    return message
