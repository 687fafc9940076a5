"""``board mcp`` (the board as an MCP server on stdio) and ``board mcp install``."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from board import json_bounds
from board.cli.parser import add_command
from board.cli.output import print_json
from board.errors import BoardError

#: Position of these commands in --help.
ORDER = 40
#: The project file Claude Code reads its MCP servers from, and board's entry in it.
CLAUDE_CODE_FILE = ".mcp.json"
SERVER_NAME = "board"


def register(commands: argparse._SubParsersAction) -> None:
    mcp = add_command(commands, "mcp", "serve the board to agents over MCP on stdio ('board mcp install' adds it to Claude Code)")
    mcp.set_defaults(handler=cmd_serve, no_json="it speaks MCP on stdin and stdout")
    actions = mcp.add_subparsers(dest="mcp_command", metavar="ACTION", parser_class=type(mcp))
    actions.common = commands.common  # type: ignore[attr-defined]
    install = add_command(actions, "install", f"add board to the project's {CLAUDE_CODE_FILE} for Claude Code (keeping what is there) and print the configuration for other clients")
    install.set_defaults(handler=cmd_install, no_json=None)


def cmd_serve(args: argparse.Namespace) -> int:
    from board.mcp.server import serve

    # stdout carries the protocol (JSON-RPC, escaped by JSON itself): the wrapper that escapes
    # text for a person's terminal steps aside while the server runs.
    sys.stdout = sys.__stdout__
    serve(Path(args.workspace))
    return 0


def server_entry(args: argparse.Namespace, *, workspace: Path | None = None) -> dict[str, Any]:
    """How a client starts this board's server: ``board mcp``, on the list ``--claude`` named.

    Claude Code starts it in the project, where board finds the board as git finds a repository;
    a client configured for the whole user account needs the workspace named (``workspace``).
    """
    arguments = ["mcp"]
    if hasattr(args, "claude"):
        arguments += ["--claude", args.claude]
    elif workspace is not None:
        arguments += ["-w", str(workspace)]
    return {"command": board_command(), "args": arguments}


def board_command() -> str:
    """``board`` where the shell finds it; else the script installed beside this Python (a
    virtual environment that is not on PATH), which a client then starts by its full path."""
    if shutil.which("board"):
        return "board"
    beside = Path(sys.executable).parent / "board"
    return str(beside) if beside.exists() else "board"


def cmd_install(args: argparse.Namespace) -> int:
    from board.store import Store

    store = Store.open(Path(args.workspace))  # refuses, in one line, where there is no board
    # A Claude Code list lives outside the project: the project is where the command runs.
    project = Path.cwd() if hasattr(args, "claude") else store.layout.workspace
    path = project / CLAUDE_CODE_FILE
    entry = {"type": "stdio", **server_entry(args)}
    changed = add_server(path, entry)
    user_entry = server_entry(args, workspace=project.resolve())
    if args.json:
        print_json({"file": str(path), "changed": changed, "entry": entry, "other_clients": user_entry})
        return 0
    print(f"{'added board to' if changed else 'board is already in'} {path}" + (" (restart Claude Code to load it)" if changed else ""))
    print()
    print("Codex (~/.codex/config.toml):")
    print()
    print(f"[mcp_servers.{SERVER_NAME}]")
    print(f"command = {json.dumps(user_entry['command'])}")
    print(f"args = {json.dumps(user_entry['args'])}")
    print()
    print("Gemini CLI (~/.gemini/settings.json), Cursor (~/.cursor/mcp.json) and other clients:")
    print()
    print(json.dumps({"mcpServers": {SERVER_NAME: user_entry}}, indent=2))
    return 0


def add_server(path: Path, entry: dict[str, Any]) -> bool:
    """Put board's entry in an ``.mcp.json``, keeping every other server and key; False when it
    was there already (the file is then not rewritten)."""
    from board.disk.atomic import write_atomic

    document: dict[str, Any] = {}
    if path.exists():
        try:
            document = json_bounds.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise BoardError(f"{path} is not valid JSON ({error}); fix it or move it away, nothing was changed") from None
        if not isinstance(document, dict) or not isinstance(document.get("mcpServers", {}), dict):
            raise BoardError(f"{path} does not hold an object with an 'mcpServers' object; fix it or move it away, nothing was changed")
    servers = document.setdefault("mcpServers", {})
    if servers.get(SERVER_NAME) == entry:
        return False
    servers[SERVER_NAME] = entry
    write_atomic(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())
    return True
