"""``board claim``, ``heartbeat``, ``release`` and ``toolcall``: the commands agents run."""


from __future__ import annotations

import argparse

from board.cli.parser import add_command
from board.cli.arguments import add_budget_options, agent_name, budget_change, positive_int, seconds_within, task_id
from board.identity import lease_token
from board.store import DEFAULT_LEASE_SECONDS

NOTHING_READY = 3


#: Position of these commands in --help.
ORDER = 20

lease_seconds = seconds_within(1, 86400, "a lease must be between 1 and 86400 seconds")


def register(commands: argparse._SubParsersAction) -> None:
    claim = add_command(commands, "claim", f"take the best ready task (exit {NOTHING_READY} when nothing is ready)")
    claim.add_argument("--agent", type=agent_name, required=True, help="the agent taking the task")
    claim.add_argument("--lease", type=lease_seconds, default=DEFAULT_LEASE_SECONDS, metavar="SEC", help=f"how long the claim holds without a heartbeat (default {DEFAULT_LEASE_SECONDS:g} s)")
    claim.add_argument("--max", type=positive_int, default=1, metavar="N", help="how many tasks the agent may hold at once (default 1)")
    add_budget_options(claim, "the claimed task")
    claim.set_defaults(handler=cmd_claim)

    heartbeat = add_command(commands, "heartbeat", "renew the leases an agent holds")
    heartbeat.add_argument("--agent", type=agent_name, required=True, help="the agent whose leases to renew")
    heartbeat.add_argument("--lease", type=lease_seconds, metavar="SEC", help="a new length for the leases (default: each keeps its own)")
    heartbeat.set_defaults(handler=cmd_heartbeat)

    release = add_command(commands, "release", "give an in-progress task back to the pool")
    release.add_argument("id", type=task_id, help="the task to give back")
    release.add_argument("--token", type=int, help="your lease token (default: $BOARD_LEASE_TOKEN for $BOARD_TASK_ID)")
    release.add_argument("--force", action="store_true", help="as a person, take the task back from the agent whose live lease holds it")
    release.set_defaults(handler=cmd_release)

    toolcall = add_command(commands, "toolcall", "record a tool call an agent made for a task")
    toolcall.add_argument("id", type=task_id, help="the task the call was made for")
    toolcall.add_argument("tool", help="the tool's name (Edit, Bash, ...)")
    toolcall.add_argument("--failed", action="store_true", help="the call failed (counts toward the failure policy)")
    toolcall.add_argument("--file", dest="files", action="append", default=[], metavar="PATH", help="a file the call touched (repeat for more; conflict alerts watch them)")
    toolcall.add_argument("--ms", type=int, help="how long the call took, in milliseconds")
    toolcall.add_argument("--agent", type=agent_name, help="who made the call (default: the task's owner)")
    toolcall.add_argument("--token", type=int, help="your lease token (default: $BOARD_LEASE_TOKEN for $BOARD_TASK_ID)")
    toolcall.set_defaults(handler=cmd_toolcall)


def cmd_claim(args: argparse.Namespace) -> int:
    # A database board picks the task itself: the claim reads no other task, unless --json
    # asks for what is derived from the whole board (its wave, its dependents).
    from board import actions
    from board.cli.output import print_json, print_task
    from board.cli.opening import open_store

    store = open_store(args, whole=args.json)
    task = actions.claim(store, args.agent, lease_seconds=args.lease, max_held=args.max, budget=budget_change(args))
    from board.agent_heard import note_agent

    note_agent(store.agent_records, args.agent, **({"task": task.id} if task is not None else {}))
    if task is None:
        if args.json:
            print_json(None)
        else:
            print("nothing is ready")
        return NOTHING_READY
    assert task.lease is not None
    print_task(args, store, task, f"{task.id}\t{task.lease.token}\t{task.subject}")
    return 0


def cmd_heartbeat(args: argparse.Namespace) -> int:
    from board.cli.output import print_json
    from board.cli.opening import open_store

    store = open_store(args, whole=False)  # renews what the agent holds, read alone
    renewed = store.heartbeat(args.agent, lease_seconds=args.lease)
    from board.agent_heard import note_agent

    note_agent(store.agent_records, args.agent, task=renewed[0].id if renewed else None)
    if args.json:
        print_json({"renewed": [t.id for t in renewed]})  # as MCP's heartbeat answers
    else:
        print(f"renewed {len(renewed)} lease(s)" + (": " + ", ".join("#" + t.id for t in renewed) if renewed else ""))
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from board import actions
    from board.cli.output import print_task
    from board.cli.opening import open_store, who

    store = open_store(args, whole=args.json)  # JSON shows what is derived from the whole board
    task = actions.release(store, args.id, who(args, args.id))
    print_task(args, store, task, f"#{task.id} {task.status}")
    return 0


def cmd_toolcall(args: argparse.Namespace) -> int:
    from board.cli.toolcall_in_files import record_in_files

    if record_in_files(args):
        return 0
    from board.cli.output import print_task
    from board.cli.opening import open_store

    store = open_store(args, whole=args.json)  # JSON shows what is derived from the whole board
    task = store.record_toolcall(args.id, args.tool, ok=not args.failed, ms=args.ms, files=args.files, agent=args.agent, token=lease_token(args.token, args.id))
    if args.agent and store.agent_records.read(args.agent) is None:
        # Its call log keeps a record it has fresh (``with_logged_calls``): one is written only
        # the first time, and a call costs no more than it did.
        from board.agent_heard import note_agent

        note_agent(store.agent_records, args.agent, task=task.id)
    calls = task.tool_calls
    print_task(args, store, task, f"#{task.id} {calls.total} tool call{'' if calls.total == 1 else 's'} ({calls.failed} failed)")
    return 0
