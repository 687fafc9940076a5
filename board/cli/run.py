"""``board run``, ``board worker``, ``board coordinator`` and ``board demo``."""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

from board.cli.parser import add_command
from board.cli.arguments import add_budget_options, agent_name, budget_change, number_argument, positive_int
from board.cli.output import print_json
from board.errors import BoardError
from board.text import shortened

TYPE_CHECKING = False
if TYPE_CHECKING:
    from board.coordinator.run import Supervisor
    from board.store import Store

#: Position of these commands in --help.
ORDER = 30


seconds = number_argument(float, "a number of seconds", lambda number: number > 0, "must be more than 0 seconds")
rate = number_argument(float, "a number", lambda number: 0 <= number <= 1, "must be between 0 and 1")


def _worker_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--simulate", action="store_true", help="simulated workers: fake tool calls, seeded random durations and failures")
    parser.add_argument("--seed", type=int, default=0, help="seed for simulated work (default 0)")
    parser.add_argument("--fail-rate", type=rate, default=0.05, metavar="P", help="chance a simulated task fails (default 0.05)")
    parser.add_argument("--toolcall-fail-rate", type=rate, default=0.1, metavar="P", help="chance a simulated tool call fails (default 0.1)")
    parser.add_argument("--task-seconds", type=seconds, nargs=2, default=[1.0, 4.0], metavar=("MIN", "MAX"), help="simulated task length (default 1 4)")
    parser.add_argument("--steps", type=int, nargs=2, default=[2, 5], metavar=("MIN", "MAX"), help="simulated tool calls per task (default 2 5)")
    parser.add_argument("--time-scale", type=float, default=1.0, metavar="F", help="wall seconds per second of a task's metadata.estimate (simulated)")
    parser.add_argument("--timeout", type=seconds, metavar="SEC", help="kill a task's command after SEC seconds and fail the task")
    add_budget_options(parser, "each task it starts (unless the task has a budget of its own)")
    parser.add_argument("--worktrees", action="store_true", help="run each task's command in the task's own git worktree, on branch board/<id>.<slug> ([worktrees] enabled in board.toml does the same)")
    parser.add_argument("--base", metavar="BRANCH", help="with --worktrees: the branch they start from and merge into (default: the one checked out now)")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- ARGV", help="command per task; {id} {subject} {description} {workspace} {worktree} are substituted, no shell")


def _command(args: argparse.Namespace) -> list[str]:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if args.simulate and command:
        raise BoardError("give either --simulate or a command after '--', not both")
    if not args.simulate and not command:
        raise BoardError("nothing to run: give a command after '--' (e.g. board run -- python agent.py {id}) or use --simulate")
    if command and shutil.which(command[0]) is None and not Path(args.workspace, command[0]).exists():
        raise BoardError(f"command not found: '{shortened(str(command[0]))}'")
    return command


def _worker_args(args: argparse.Namespace, command: list[str]) -> list[str]:
    """The options a supervisor passes on to each ``board worker`` it starts."""
    if args.simulate:
        low, high = args.task_seconds
        out = ["--simulate", "--seed", str(args.seed), "--fail-rate", str(args.fail_rate), "--toolcall-fail-rate", str(args.toolcall_fail_rate), "--task-seconds", str(low), str(high), "--time-scale", str(args.time_scale), "--steps", *map(str, args.steps)]
    else:
        out = []
    if args.timeout:
        out += ["--timeout", str(args.timeout)]
    if args.budget_tokens is not None:
        out += ["--budget-tokens", str(args.budget_tokens)]
    if args.budget_usd is not None:
        out += ["--budget-usd", repr(args.budget_usd)]
    if args.worktree_base is not None:
        out += ["--worktrees", "--base", args.worktree_base]
    if command:
        out += ["--", *command]
    return out


def _worktree_base(args: argparse.Namespace) -> str | None:
    """The branch each task's worktree starts from, when tasks run in worktrees (None: they
    run in the workspace), checked once before any worker starts."""
    from board.config import settings_or_defaults
    from board.store import Store
    from board.worktrees import git_work

    settings = settings_or_defaults(Store.open(args.workspace, whole=False).local_dir).worktrees
    if not (args.worktrees or settings.enabled):
        if args.base:
            raise BoardError("--base goes with --worktrees")
        return None
    if args.simulate:
        raise BoardError("--worktrees runs each task's command in its worktree: give a command, not --simulate")
    workspace = Path(args.workspace).resolve()
    git_work.repository(workspace)
    base = args.base or settings.base or git_work.checked_out_branch(workspace)
    from board.worktrees.record import branch_name_problem

    if branch_name_problem(base):
        raise BoardError(str(branch_name_problem(base)))
    if not git_work.branch_exists(workspace, base):
        raise BoardError(f"no branch '{shortened(base)}' in this repository: give --base an existing branch")
    return base


def register(commands: argparse._SubParsersAction) -> None:
    run = add_command(commands, "run", "run the coordinator plus N workers until the board is done (exit 0 when every task is completed or cancelled)")
    run.add_argument("--workers", type=positive_int, default=2, metavar="N", help="how many workers (default 2)")
    run.add_argument("--events", action="store_true", help="print a line for every start, completion, failure and reclaim")
    run.add_argument("--verbose", "-v", action="store_true", help="show the coordinator's and workers' log lines (always kept in .tasks/logs/run.log)")
    run.add_argument("--no-wait", action="store_true", help="end when only tasks waiting for a person's answer are left (by default the run waits, and runs each answered task again)")
    run.add_argument("--answer-timeout", type=seconds, metavar="SEC", help="wait at most SEC seconds for answers once nothing else can run")
    _worker_options(run)
    run.set_defaults(handler=cmd_run, no_json="it prints a live log; 'board task list --json' reads the board")

    worker = add_command(commands, "worker", "one worker: take tasks (assigned or claimed) and run them until stopped")
    worker.add_argument("--name", type=agent_name, help="agent name (default worker-<pid>)")
    worker.add_argument("--max-tasks", type=positive_int, metavar="N", help="stop after N tasks")
    worker.add_argument("--no-self-claim", action="store_true", help="only run tasks the coordinator assigns")
    _worker_options(worker)
    worker.set_defaults(handler=cmd_worker, no_json="it prints a live log")

    coordinator = add_command(commands, "coordinator", "the coordinator alone: reclaim expired leases, assign ready tasks, fire policies")
    coordinator.add_argument("--once", action="store_true", help="run one tick, print what it did and exit")
    coordinator.set_defaults(handler=cmd_coordinator)

    demo = add_command(commands, "demo", "copy the sample board to a temp dir, run 4 simulated workers on it and open the dashboard")
    demo.add_argument("--no-ui", action="store_true", help="print progress lines instead of opening the dashboard; exit when the board settles")
    demo.add_argument("--workers", type=positive_int, default=4, metavar="N", help="simulated agents to start (default 4)")
    demo.add_argument("--seed", type=int, default=2, help="seed of the simulated agents' choices (the same seed, the same run)")
    demo.add_argument("--pace", type=seconds, default=1.0, metavar="F", help="scale every simulated task's length (0.2 = five times faster)")
    demo.add_argument("--keep", action="store_true", help="keep the temp workspace afterwards (its path is printed)")
    demo.add_argument("--worktrees", action="store_true", help="a small git repository instead: simulated agents commit real changes, each task in its own worktree, so every card has a diff to read and merge")
    demo.set_defaults(handler=cmd_demo, no_json="it opens the dashboard")


def cmd_worker(args: argparse.Namespace) -> int:
    from board.coordinator.simulated import Simulation, SimulatedWorker
    from board.coordinator.workers import CommandWorker, Worker

    command = _command(args)
    name = args.name or f"worker-{os.getpid()}"
    common = {"self_claim": not args.no_self_claim, "budget": budget_change(args)}
    worker: Worker
    if args.simulate:
        low, high = args.task_seconds
        simulation = Simulation(seed=args.seed, fail_rate=args.fail_rate, toolcall_fail_rate=args.toolcall_fail_rate, min_seconds=low, max_seconds=max(low, high), time_scale=args.time_scale, min_steps=max(0, args.steps[0]), max_steps=max(0, args.steps[1]))
        worker = SimulatedWorker(args.workspace, name, simulation, **common)
    else:
        worker = CommandWorker(args.workspace, name, command, timeout=args.timeout, worktree_base=_worktree_base(args), **common)
    worker.install_signal_handlers()
    return worker.run(max_tasks=args.max_tasks)


def cmd_coordinator(args: argparse.Namespace) -> int:
    from board.coordinator.daemon import Coordinator, stop_on_signals

    if args.json and not args.once:
        raise BoardError("--json prints one tick's report: use it with --once")
    log = (sys.stderr if args.json else sys.stdout) if args.once else None
    coordinator = Coordinator(args.workspace, log=log)
    if args.once:
        report = coordinator.tick_once()
        if report is None:
            return 1
        if args.json:
            print_json(
                {
                    "reclaimed": [
                        {"task": r.task, "previousOwner": r.previous_owner, "reason": r.reason, "expiredAt": r.expired_at.isoformat().replace("+00:00", "Z") if r.expired_at else None}
                        for r in report.reclaimed
                    ],
                    "assigned": [vars(a) for a in report.assigned],
                    "policies": [{"task": p.task, "status": str(p.status), "reason": p.reason} for p in report.policies],
                    "refused": report.refused,
                    "agents": {name: str(state) for name, state in report.agent_states.items()},
                    "alerts": report.alerts,
                }
            )
        elif not report.changed_anything:
            print("nothing to do")
        return 0
    stop = threading.Event()
    stop_on_signals(stop)
    return coordinator.run(stop)


def _run_log(local_dir: Path):
    """The run's log, in the store's ``local_dir``: it is this machine's."""
    from board.disk.atomic import open_regular

    directory = local_dir / "logs"
    directory.mkdir(parents=True, exist_ok=True)
    return os.fdopen(open_regular(directory / "run.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab")


def stop_on_ctrl_c() -> None:
    """Ctrl-C (SIGINT) ends a run even when the shell that started it ignored SIGINT, as shells
    do for background jobs: the run's children are in their own sessions, so the signal is
    always meant for the run itself."""
    signal.signal(signal.SIGINT, signal.default_int_handler)


def cmd_run(args: argparse.Namespace) -> int:
    from board.coordinator.run import Supervisor, final_summary
    from board.store import Store

    stop_on_ctrl_c()
    command = _command(args)
    if args.no_wait and args.answer_timeout:
        raise BoardError("give either --no-wait or --answer-timeout, not both")
    workspace = Path(args.workspace).resolve()
    store = Store.open(workspace)  # no board there is one clear error, and nothing gets created
    args.worktree_base = _worktree_base(args)
    output = None if args.verbose else _run_log(store.local_dir)
    supervisor = Supervisor(workspace, workers=args.workers, worker_args=_worker_args(args, command), child_output=output)
    try:
        supervisor.say(f"running {args.workers} {'simulated ' if args.simulate else ''}worker(s) on {workspace} (Ctrl-C stops; logs in .tasks/logs/)")
        if args.worktree_base is not None:
            supervisor.say(f"each task runs in its own worktree under .board-worktrees/, on a branch from {args.worktree_base}")
        supervisor.start()
        answers_until = None if args.no_wait else time.monotonic() + args.answer_timeout if args.answer_timeout else math.inf
        progress = supervisor.wait_until_settled(events=args.events, answers_until=answers_until)
    except KeyboardInterrupt:
        supervisor.say("interrupted: stopping workers (their tasks go back to pending)")
        supervisor.stop()
        progress = supervisor.progress()
        for line in final_summary(progress):
            print(line)
        return 130
    finally:
        supervisor.stop()
        if output is not None:
            output.close()
    if args.worktree_base is not None:
        _merge_what_is_left(store, supervisor)
    for line in final_summary(supervisor.progress()):
        print(line)
    return 0 if progress.all_done else 1


def _merge_what_is_left(store: Store, supervisor: Supervisor) -> None:
    """With ``[worktrees] merge = "auto"``, what completed after the coordinator's last tick is
    merged before the run ends."""
    from board.config import settings_or_defaults
    from board.model import utcnow
    from board.worktrees.on_board import merge_completed

    if settings_or_defaults(store.local_dir).worktrees.merge != "auto":
        return
    store.sync()
    merged: list[str] = []
    refused: list[str] = []
    from board.coordinator.processes import command_running

    merge_completed(store, utcnow(), actor="board run", merged=merged, refused=refused, running=command_running(store.layout.workspace))
    for line in merged + refused:
        supervisor.say(line)


def cmd_demo(args: argparse.Namespace) -> int:
    from board.coordinator.demo import prepare_demo_workspace
    from board.coordinator.run import Supervisor, final_summary
    from board.store import Store

    stop_on_ctrl_c()
    run_dashboard = None if args.no_ui else _dashboard()
    if run_dashboard is None and not args.no_ui:
        print("the dashboard is not part of this build: showing the run as text instead (board demo --no-ui)")
    elif run_dashboard is not None and (problem := _no_terminal()) is not None:
        print(f"{problem}: showing the run as text instead (board demo --no-ui)")
        run_dashboard = None
    if args.worktrees:
        from board.coordinator.worktree_demo import agent_command, prepare_worktree_demo

        workspace = prepare_worktree_demo()
        os.environ["BOARD_DEMO_PACE"] = str(args.pace)  # the simulated agents' pace, for the workers' commands
        worker_args = ["--worktrees", "--base", "main", "--", *agent_command()]
    else:
        workspace = prepare_demo_workspace()
        # A pace a person can follow: a task takes 5-14 s, the board settles in a minute or two.
        worker_args = ["--simulate", "--seed", str(args.seed), "--fail-rate", "0.08", "--toolcall-fail-rate", "0.1", "--task-seconds", str(5 * args.pace), str(14 * args.pace)]
    output = _run_log(Store.open(workspace, whole=False).local_dir)
    supervisor = Supervisor(workspace, workers=args.workers, worker_args=worker_args, name_prefix="sim", child_output=output)
    print(f"demo board: {workspace}", flush=True)
    status = 0
    try:
        supervisor.start()
        if run_dashboard is None:
            supervisor.wait_until_settled(report_every=10.0, events=True)
            for line in final_summary(supervisor.progress()):
                print(line)
        else:
            # The dashboard runs in this process; quitting it ends the demo and every child.
            status = run_dashboard(workspace, readonly=False, remember_choices=False)
    except KeyboardInterrupt:
        supervisor.say("interrupted: stopping every worker and the coordinator")
        status = 130
    finally:
        supervisor.stop()
        output.close()
        if args.keep:
            print(f"kept the demo board in {workspace}")
        else:
            shutil.rmtree(workspace.parent, ignore_errors=True)
    return status


def _no_terminal() -> str | None:
    from board.ui import no_terminal

    return no_terminal()


def _dashboard():
    """The dashboard's entry point, or None when this build has no dashboard."""
    try:
        from board.ui import run_dashboard  # type: ignore[attr-defined]
    except ImportError:
        return None
    return run_dashboard
