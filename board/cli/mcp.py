"""``board mcp`` (the board as an MCP server on stdio) and ``board mcp install``."""

from __future__ import annotations

import argparse
import json
import os
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
#: Where Claude Code keeps a person's own approval of a project's servers.
APPROVAL_FILE = ".claude/settings.local.json"


def register(commands: argparse._SubParsersAction) -> None:
    mcp = add_command(commands, "mcp", "serve the board to agents over MCP on stdio ('board mcp install' adds it to Claude Code)")
    mcp.set_defaults(handler=cmd_serve, no_json="it speaks MCP on stdin and stdout")
    actions = mcp.add_subparsers(dest="mcp_command", metavar="ACTION", parser_class=type(mcp))
    actions.common = commands.common  # type: ignore[attr-defined]
    install = add_command(actions, "install", f"add board to the project's {CLAUDE_CODE_FILE} for Claude Code (keeping what is there) and print the configuration for other clients")
    install.add_argument("--approve", action="store_true", help=f"also approve the server for Claude Code in this project (in {APPROVAL_FILE}, your own settings rather than the project's shared ones), instead of answering Claude Code's question")
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
    command, *arguments = board_command()
    arguments.append("mcp")
    if hasattr(args, "claude"):
        arguments += ["--claude", args.claude]
    elif workspace is not None:
        arguments += ["-w", str(workspace)]
    return {"command": command, "args": arguments}


def board_command() -> list[str]:
    """This installation's ``board`` by its full path: a client starts servers with its own PATH,
    which need not hold the virtual environment board was installed in (a bare ``board`` then
    fails to start). Else the ``board`` the shell finds, else this Python running board."""
    beside = Path(sys.executable).parent / "board"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside.absolute())]
    found = shutil.which("board")
    return [str(Path(found).absolute())] if found else [sys.executable, "-m", "board"]


def cmd_install(args: argparse.Namespace) -> int:
    from board.store import Store

    store = Store.open(Path(args.workspace))  # refuses, in one line, where there is no board
    # A Claude Code list lives outside the project: the project is where the command runs.
    project = Path.cwd() if hasattr(args, "claude") else store.layout.workspace
    path = project / CLAUDE_CODE_FILE
    entry = {"type": "stdio", **server_entry(args)}
    changed = add_server(path, entry)
    approval = project / APPROVAL_FILE
    approved = approve_server(approval) if args.approve else None
    user_entry = server_entry(args, workspace=project.resolve())
    if args.json:
        print_json({"file": str(path), "changed": changed, "entry": entry, "approved": approved is not None, "other_clients": user_entry})
        return 0
    print(f"{'added board to' if changed else 'board is already in'} {path}" + (" (restart Claude Code to load it)" if changed else ""))
    if approved is None:
        print(f"Claude Code starts a project's server only once a person approves it: answer its question when 'claude' starts here, or run 'board mcp install --approve' (it writes {approval})")
    else:
        print(f"{'approved' if approved else 'already approved'} for Claude Code in {approval}")
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


def approve_server(path: Path) -> bool:
    """Name board in ``enabledMcpjsonServers`` of a person's own Claude Code settings for the
    project, keeping every other key; False when it was named already (the file is not rewritten)."""
    from board.disk.atomic import write_atomic

    document = _json_object(path, "a JSON object")
    enabled = document.setdefault("enabledMcpjsonServers", [])
    if not isinstance(enabled, list):
        raise BoardError(f"{path}: 'enabledMcpjsonServers' is not a list; fix it or move it away, nothing was changed")
    if SERVER_NAME in enabled:
        return False
    enabled.append(SERVER_NAME)
    path.parent.mkdir(exist_ok=True)
    write_atomic(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())
    return True


def _json_object(path: Path, what: str) -> dict[str, Any]:
    """A JSON file's object ({} when there is no file), refused in one line when it is not one."""
    from board.disk.atomic import SMALL_FILE_LIMIT, read_regular

    try:
        # A link is followed (the user's own file); a FIFO or a device is refused, not waited on.
        raw = read_regular(path, 16 * SMALL_FILE_LIMIT, follow=True)
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise BoardError(f"cannot read {path}: {error}; nothing was changed") from None
    try:
        document = json_bounds.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise BoardError(f"{path} is not valid JSON ({error}); fix it or move it away, nothing was changed") from None
    if not isinstance(document, dict):
        raise BoardError(f"{path} does not hold {what}; fix it or move it away, nothing was changed")
    return document


def add_server(path: Path, entry: dict[str, Any]) -> bool:
    """Put board's entry in an ``.mcp.json``, keeping every other server and key; False when it
    was there already (the file is then not rewritten)."""
    from board.disk.atomic import write_atomic

    what = "an object with an 'mcpServers' object"
    document = _json_object(path, what)
    if not isinstance(document.get("mcpServers", {}), dict):
        raise BoardError(f"{path} does not hold {what}; fix it or move it away, nothing was changed")
    servers = document.setdefault("mcpServers", {})
    if servers.get(SERVER_NAME) == entry:
        return False
    servers[SERVER_NAME] = entry
    write_atomic(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())
    return True
