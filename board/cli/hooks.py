"""``board hooks install|uninstall`` and ``board hook`` (the command those hooks run)."""

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

    status = add_command(actions, "status", "where board's hooks are installed and whether their command runs (exit 1 when one cannot)")
    status.set_defaults(handler=cmd_status)

    hook = add_command(commands, "hook", "run by Claude Code on each hook event (JSON on stdin); never stands in the agent's way")
    hook.set_defaults(handler=cmd_hook, no_json="it answers Claude Code, which reads its exit status")


def _target(args: argparse.Namespace) -> Path:
    from board.hooks.install import settings_path

    return settings_path(user=args.user, workspace=Path(args.workspace).resolve())


def cmd_install(args: argparse.Namespace) -> int:
    from board.hooks.install import EVENTS, hook_command, install

    path = _target(args)
    changed = install(path)
    # Claude Code reads a project's settings only when it starts in the project's own folder.
    reach = None if args.user else (
        f"Claude Code loads them only for a session started in {path.parent.parent}, not in a sub-folder of it; "
        "for sessions started anywhere, run 'board hooks install --user' (and 'board hooks uninstall' here, so each event runs one hook, not two)"
    )  # fmt: skip
    if args.json:
        print_json({"settings": str(path), "changed": changed, "command": hook_command(), "events": list(EVENTS), "note": reach})
        return 0
    if changed:
        print(f"board's hooks are in {path}: {', '.join(EVENTS)} run '{hook_command()}'")
    else:
        print(f"board's hooks were already in {path}; nothing changed")
    if reach:
        print(reach)
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    from board.hooks.install import uninstall

    path = _target(args)
    changed = uninstall(path)
    if args.json:
        print_json({"settings": str(path), "changed": changed})
    else:
        print(f"board's hooks are out of {path}" if changed else f"no hooks of board's in {path}; nothing changed")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from board.hooks.install import installed_hooks, settings_files

    workspace = Path(args.workspace).resolve()
    found = installed_hooks(workspace)
    if args.json:
        print_json({
            "installed": [{"settings": str(h.settings), "events": list(h.events), "command": h.command, "problem": h.problem} for h in found],
            "looked_in": [str(p) for p in settings_files(workspace)],
        })  # fmt: skip
    elif not found:
        print(f"no hooks of board's in {', '.join(str(p) for p in settings_files(workspace))}; run 'board hooks install'")
    for hooks in found if not args.json else ():
        if hooks.problem is None:
            print(f"ok: {hooks.settings}: {len(hooks.events)} events run '{hooks.command}'")
        else:
            print(f"broken: {hooks.settings}: {len(hooks.events)} events run '{hooks.command}': {hooks.problem}")
    return 1 if any(h.problem for h in found) else 0


def cmd_hook(args: argparse.Namespace) -> int:
    from board.hooks.handler import main

    return main([])
