"""``board alerts``, ``board reserve`` and ``board unreserve``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from board.cli.arguments import agent_name, seconds_within, task_id
from board.cli.parser import add_command
from board.cli.output import print_json
from board.cli.opening import open_store
from board.reservations import MODES
from board.times import iso

if TYPE_CHECKING:  # loaded by the handlers that need them: the parser must stay light
    from board.alerts import Alert

#: Position of these commands in --help.
ORDER = 30


ttl_seconds = seconds_within(1, 86400, "a reservation lasts between 1 and 86400 seconds")


def register(commands: argparse._SubParsersAction) -> None:
    alerts = add_command(commands, "alerts", "evaluate drift and conflict alerts now and list them (worst first)")
    alerts.add_argument("--fetch", action="store_true", help="run 'git fetch' first (never done unless asked)")
    alerts.set_defaults(handler=cmd_alerts)

    reserve_cmd = add_command(commands, "reserve", "reserve files for a task (one writer or many readers per file)")
    reserve_cmd.add_argument("id", type=task_id, help="the task the reservation is for")
    reserve_cmd.add_argument("paths", nargs="+", metavar="PATH", help="files to reserve, relative to the workspace")
    reserve_cmd.add_argument("--agent", type=agent_name, help="who reserves (default: the task's owner)")
    reserve_cmd.add_argument("--mode", choices=MODES, default="write", help="write: one writer and no readers (default); read: any number of readers")
    reserve_cmd.add_argument("--ttl", type=ttl_seconds, metavar="SEC", help="how long it lasts (default: alerts.reservation_ttl_seconds, 300)")
    reserve_cmd.set_defaults(handler=cmd_reserve)

    listing = add_command(commands, "reservations", "list the file reservations that hold now")
    listing.set_defaults(handler=cmd_reservations)

    unreserve_cmd = add_command(commands, "unreserve", "drop a task's reservations (all of them when no PATH is given)")
    unreserve_cmd.add_argument("id", type=task_id, help="the task whose reservations go")
    unreserve_cmd.add_argument("paths", nargs="*", metavar="PATH", help="only these files (default: all of the task's)")
    unreserve_cmd.add_argument("--agent", type=agent_name, help="only this agent's holdings")
    unreserve_cmd.set_defaults(handler=cmd_unreserve)


def cmd_alerts(args: argparse.Namespace) -> int:
    from board.alerts import refresh_alerts
    from board.config import load_settings

    store = open_store(args)
    settings = load_settings(store.local_dir)
    alerts = refresh_alerts(store, now=store.clock(), settings=settings, fetch=True if args.fetch else None)
    if args.json:
        print_json([a.to_dict() for a in alerts])
    else:
        print(alert_table(alerts) if alerts else "no alerts")
    return 0


def alert_table(alerts: list[Alert]) -> str:
    """One line per alert, then its suggested action indented below it."""
    kind_width = max(len(a.kind) for a in alerts)
    lines = []
    for alert in alerts:
        tasks = " [" + " ".join("#" + t for t in alert.tasks) + "]" if alert.tasks else ""
        lines.append(f"{alert.severity.upper():<7}  {alert.kind:<{kind_width}}  {alert.message}{tasks}")
        lines.append(f"{'':<7}  {'':<{kind_width}}  -> {alert.action}")
    return "\n".join(lines)


def cmd_reserve(args: argparse.Namespace) -> int:
    from board.config import load_settings
    from board.reservations import reserve

    store = open_store(args)
    ttl = args.ttl if args.ttl is not None else load_settings(store.local_dir).alerts.reservation_ttl_seconds
    made = reserve(store, args.id, args.paths, agent=args.agent, mode=args.mode, ttl_seconds=ttl)
    if args.json:
        print_json([{"path": r.path, **r.to_dict()} for r in made])
    else:
        for r in made:
            print(f"#{r.task} {r.owner} reserved {r.path} for {r.mode} until {iso(r.expires_at.replace(microsecond=0))}")
    return 0


def cmd_reservations(args: argparse.Namespace) -> int:
    from board.reservations import active_reservations

    store = open_store(args)
    held = active_reservations(store.reservation_book, store.clock(), store.tasks)
    if args.json:
        print_json([{"path": r.path, **r.to_dict()} for r in held])
    elif not held:
        print("no reservations")
    else:
        width = max(len(r.path) for r in held)
        for r in held:
            print(f"{r.path:<{width}}  {r.mode:<5}  {r.owner}  #{r.task}  until {iso(r.expires_at.replace(microsecond=0))}")
    return 0


def cmd_unreserve(args: argparse.Namespace) -> int:
    from board.reservations import unreserve

    store = open_store(args)
    released = unreserve(store, args.id, args.paths, agent=args.agent)
    if args.json:
        print_json(released)
    else:
        print(f"#{args.id} released " + (", ".join(released) if released else "nothing (it held no reservations)"))
    return 0
