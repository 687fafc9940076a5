"""``board hooks install|uninstall|status|serve`` and ``board hook`` (the command those hooks run)."""

from __future__ import annotations

import argparse
from pathlib import Path

from board.cli.output import print_json
from board.cli.parser import add_command

#: Position of these commands in --help.
ORDER = 45


def register(commands: argparse._SubParsersAction) -> None:
    hooks = add_command(commands, "hooks", "connect Claude Code to this board: its hooks count and guard every tool call")
    actions = hooks.add_subparsers(dest="hooks_command", metavar="ACTION", required=True, parser_class=type(hooks))
    actions.common = commands.common  # type: ignore[attr-defined]
    for name, text in (
        ("install", "add board's hooks to Claude Code's settings (.claude/settings.json of the workspace), keeping everything else"),
        ("uninstall", "remove board's hooks from Claude Code's settings, and nothing else"),
    ):
        action = add_command(actions, name, text)
        action.add_argument("--user", action="store_true", help="use your own settings (~/.claude/settings.json) instead of the workspace's")
        action.set_defaults(handler=cmd_install if name == "install" else cmd_uninstall)
        if name == "install":
            action.add_argument("--command", action="store_true", help="run 'board hook' on every event, tool calls too, instead of POSTing tool calls to board's server")
            action.add_argument("--port", type=_port, help="the port of 127.0.0.1 board's server listens on for tool calls (default: the one installed already, else a free one)")

    serve = add_command(actions, "serve", "answer board's http hooks on 127.0.0.1 (a session's start runs one when none does); exits after a quiet while")
    serve.add_argument("--port", type=_port, help="the port to serve (default: the one board's hooks in this workspace's settings name)")
    serve.add_argument("--idle", type=float, default=None, metavar="SECONDS", help="exit after this long without a call (default: 30 minutes)")
    serve.set_defaults(handler=cmd_serve, no_json="it serves until it is quiet")

    status = add_command(actions, "status", "where board's hooks are installed and whether their command runs (exit 1 when one cannot)")
    status.set_defaults(handler=cmd_status)

    hook = add_command(commands, "hook", "run by Claude Code on each hook event (JSON on stdin); never stands in the agent's way")
    hook.set_defaults(handler=cmd_hook, no_json="it answers Claude Code, which reads its exit status")


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (1-65535)")
    return int(text)


def _target(args: argparse.Namespace) -> Path:
    from board.claude.hooks.install import settings_path

    return settings_path(user=args.user, workspace=Path(args.workspace).resolve())


def cmd_install(args: argparse.Namespace) -> int:
    from board.claude.hooks.install import EVENTS, HTTP_EVENTS, hook_command, install, installed_port, read_settings

    path = _target(args)
    changed = install(path, http=not args.command, port=args.port)
    port = None if args.command else installed_port(read_settings(path))
    # Claude Code reads a project's settings only when it starts in the project's own folder.
    reach = None if args.user else (
        f"Claude Code loads them only for a session started in {path.parent.parent}, not in a sub-folder of it; "
        "for sessions started anywhere, run 'board hooks install --user' (and 'board hooks uninstall' here, so each event runs one hook, not two)"
    )  # fmt: skip
    if args.json:
        print_json({"settings": str(path), "changed": changed, "command": hook_command(), "events": list(EVENTS), "port": port, "http_events": list(HTTP_EVENTS) if port else [], "note": reach})
        return 0
    if changed and port is not None:
        print(
            f"board's hooks are in {path}: {', '.join(HTTP_EVENTS)} POST to board's server on 127.0.0.1:{port} "
            f"(a session's start runs it); {', '.join(e for e in EVENTS if e not in HTTP_EVENTS)} run '{hook_command()}'"
        )
    elif changed:
        print(f"board's hooks are in {path}: {', '.join(EVENTS)} run '{hook_command()}'")
    else:
        print(f"board's hooks were already in {path}; nothing changed")
    if reach:
        print(reach)
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    from board.claude.hooks.install import uninstall

    path = _target(args)
    changed = uninstall(path)
    if args.json:
        print_json({"settings": str(path), "changed": changed})
    else:
        print(f"board's hooks are out of {path}" if changed else f"no hooks of board's in {path}; nothing changed")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from board.claude.hooks.install import installed_hooks, settings_files

    workspace = Path(args.workspace).resolve()
    found = installed_hooks(workspace)
    if args.json:
        print_json({
            "installed": [{"settings": str(h.settings), "events": list(h.events), "command": h.command, "problem": h.problem, "server": h.state} for h in found],
            "looked_in": [str(p) for p in settings_files(workspace)],
        })  # fmt: skip
    elif not found:
        print(f"no hooks of board's in {', '.join(str(p) for p in settings_files(workspace))}; run 'board hooks install'")
    for hooks in found if not args.json else ():
        runs = f"POST to {hooks.command}" if hooks.state is not None else f"run '{hooks.command}'"
        if hooks.problem is None:
            print(f"ok: {hooks.settings}: {len(hooks.events)} events {runs}" + (f" ({hooks.state})" if hooks.state else ""))
        else:
            print(f"broken: {hooks.settings}: {len(hooks.events)} events {runs}: {hooks.problem}")
    return 1 if any(h.problem for h in found) else 0


def cmd_serve(args: argparse.Namespace) -> int:
    from board.errors import BoardError
    from board.claude.hooks.install import http_ports
    from board.claude.hooks.server import IDLE_SECONDS, serve

    ports = [args.port] if args.port else http_ports(Path(args.workspace).resolve())
    if not ports:
        raise BoardError("no http hooks of board's in this workspace's settings; run 'board hooks install', or name a port with --port")
    return serve(ports[0], idle_seconds=args.idle or IDLE_SECONDS)


def cmd_hook(args: argparse.Namespace) -> int:
    from board.claude.hooks.handler import main

    return main([])
