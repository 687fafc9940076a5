"""Terminal boards side by side: ``board ui`` beside kanban-tui and Backlog.md on the same boards, in tmux.

Run: python tests/bench/bench_peers.py [--tasks 100 1000 10000] [--rounds 3] [--idle 10] [--out FILE] [--dir DIR]

The peers are installed once, pinned, into ``~/.cache/board-tests/`` (``tests/bench/peers.py``):
Backlog.md 1.52.0 from npm (its terminal board, ``backlog board``, a full-screen TUI) and
kanban-tui 0.21.2 from PyPI in its own venv (``ktui``, pointed by ``KANBAN_TUI_CONFIG_FILE``,
``KANBAN_TUI_DATABASE_FILE`` and the XDG folders at a board in the run's temporary folder,
never the user's). A peer that cannot be installed is named with the reason, and the others
are measured. For each --tasks size the same tasks are written in each one's own format: board's
task files (``dump_task``, as the store writes them), Backlog.md's ``backlog/tasks/*.md`` after
``backlog init``, and rows of kanban-tui's SQLite database after ``ktui board create``. Subjects
are "Task 00001: write the parser for module" (39 characters, the number first so a narrow card
still shows it); of every ten tasks five are to do (board: pending; Backlog.md: To Do;
kanban-tui: Ready), two in progress (in_progress, In Progress, Doing), three done (completed,
Done, Done).

Each round starts every tool once, in turn, the order rotating from round to round, in a
detached tmux session of 160x45 (``tmux new -d -s NAME -x 160 -y 45 CMD``), and polls
``tmux capture-pane -p`` every 20 ms:

- shown: the first frame with a generated subject on it (``Task NNNNN: write``); before any
  timing each tool's first start must reach it, or the tool is dropped as not showing the board.
- settled: the time of the last change of the screen after it is shown, once the screen has
  stayed the same for 500 ms (board also needs its header's "loading" gone: it reads a large
  board in the background and can pause between batches). Polls go on up to 120 s.
- memory: the RSS of the pane's process and all its descendants (/proc/PID/status VmRSS),
  read once settled.
- idle CPU: the utime + stime of that process tree (/proc/PID/stat) over --idle seconds after
  settling, as a share of one core.

Beside them runs "Textual min" (``textual_floor.py``), not a peer: the least Textual app that shows
the same subjects, a header and a footer. What it takes is Textual's own share of board's start.

The figures are the medians of the rounds. Times are compared only as ratios within the run
(board / peer; below 1 board is faster); memory and CPU are printed absolute as well. The load
average is printed at the start and end. Each run's figures are stored as JSON (--out, default
``tests/bench/results/peers-<UTC time>.json``) and compared with the newest earlier file in that
folder with any of the same sizes and peers: each ratio's change is printed, with a warning where board's standing fell below 80 %
of before. Fails on nothing; every tmux session and process started is ended.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from board.model import Task, dump_task  # noqa: E402
from board.status import Status  # noqa: E402
from board.store import Store  # noqa: E402
from tests.bench.peers import (  # noqa: E402
    BACKLOG_VERSION,
    KANBAN_TUI_VERSION,
    backlog_program,
    kanban_tui_env,
    kanban_tui_program,
    make_backlog,
    make_kanban_tui,
)

SUBJECT = "Task {:05d}: write the parser for module"
#: The least Textual app that shows the same subjects (``textual_floor.py``): what of board's
#: start is Textual's own; a time below it is out of reach of any Textual dashboard.
FLOOR = "Textual min"
SHOWN = re.compile(r"Task \d{5}: write")
POLL = 0.02
QUIET = 0.5
LIMIT = 120.0
TICKS = os.sysconf("SC_CLK_TCK")
RESULTS = ROOT / "tests" / "bench" / "results"
#: A task's place by its number: 0 to do, 1 in progress, 2 done (five, two and three of ten).
PLACE = [0, 0, 0, 0, 0, 1, 1, 2, 2, 2]
START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def place(n: int) -> int:
    return PLACE[n % 10]


def make_board(workspace: Path, tasks: int) -> Path:
    Store.open(workspace, create=True).close()
    statuses = [Status.PENDING, Status.IN_PROGRESS, Status.COMPLETED]
    folder = workspace / ".tasks"
    for n in range(1, tasks + 1):
        status = statuses[place(n)]
        task = Task(
            id=str(n), subject=SUBJECT.format(n), status=status,
            owner="agent-1" if status != Status.PENDING else "",
            progress=100 if status == Status.COMPLETED else 0,
            created_at=START, updated_at=START + timedelta(seconds=n), version=1,
        )  # fmt: skip
        (folder / f"task_{n}.json").write_bytes(dump_task(task))
    return workspace


@dataclass
class Tool:
    name: str
    #: The shell command for tmux, with its environment.
    command: str
    #: Settled only once this is off the screen too (board's header while it reads).
    busy: str | None = None


def screen(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout


def children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree.setdefault(parent, []).append(int(entry))
    return tree


def process_tree(pid: int) -> list[int]:
    tree, found, todo = children(), [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(tree.get(current, []))
    return found


def rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def run_once(tool: Tool, idle: float, tag: str) -> dict[str, float] | str:
    """One start of ``tool``: its figures, or why it never showed the board."""
    session = f"bench-peers-{os.getpid()}-{tag}"
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    started = time.monotonic()
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "45", tool.command], check=True)
    pid = 0
    try:
        pid = int(subprocess.run(["tmux", "display-message", "-p", "-t", session, "#{pane_pid}"], capture_output=True, text=True, check=True).stdout)
        shown = changed = None
        last = ""
        while True:
            now = time.monotonic()
            text = screen(session)
            if shown is None and SHOWN.search(text):
                shown = now - started
            if text != last:
                last, changed = text, now
            elif shown is not None and now - changed >= QUIET and not (tool.busy and tool.busy in text):
                break
            if now - started > LIMIT:
                tail = " | ".join(line.strip() for line in last.splitlines() if line.strip())[:300]
                return f"{tool.name}: no settled board in {LIMIT:.0f} s; screen: {tail}"
            time.sleep(POLL)
        settled = changed - started
        pids = process_tree(pid)
        memory = rss_mb(pids)
        before, clock = cpu_seconds(pids), time.monotonic()
        time.sleep(idle)
        used = cpu_seconds(process_tree(pid)) - before
        return {"shown_s": shown, "settled_s": settled, "rss_mb": memory, "idle_cpu": used / (time.monotonic() - clock)}
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        if pid:  # anything of the tree that outlived its terminal
            for left in process_tree(pid):
                try:
                    os.kill(left, 9)
                except OSError:
                    pass


def tools_for(root: Path, tasks: int, backlog: Path | None, ktui: Path | None) -> dict[str, Tool]:
    workspace = make_board(root / "board", tasks)
    tools = {"board": Tool("board", f"exec env PYTHONPATH={ROOT} {sys.executable} -m board ui {workspace}", busy="loading")}
    # Not a peer: Textual's floor on the same task files (``textual_floor.py``).
    tools[FLOOR] = Tool(FLOOR, f"exec {sys.executable} {Path(__file__).with_name('textual_floor.py')} {workspace}")
    if ktui is not None:
        folder = make_kanban_tui(root / "kanban-tui", tasks, ktui, SUBJECT, place)
        env = " ".join(f"{key}={value}" for key, value in kanban_tui_env(folder).items())
        tools["kanban-tui"] = Tool("kanban-tui", f"cd {folder} && exec env {env} {ktui}")
    if backlog is not None:
        project = make_backlog(root / "backlog", tasks, backlog, SUBJECT, lambda n: ["To Do", "In Progress", "Done"][place(n)])
        tools["Backlog.md"] = Tool("Backlog.md", f"cd {project} && exec {backlog} board")
    return tools


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def ratios(figures: dict[str, dict[str, dict[str, float]]]) -> dict[str, float]:
    """board / peer for each size, peer and figure."""
    found = {}
    for size, by_tool in figures.items():
        ours = by_tool.get("board")
        for peer, theirs in by_tool.items():
            if peer == "board" or ours is None:
                continue
            for key in ("settled_s", "shown_s", "rss_mb", "idle_cpu"):
                if theirs[key] > 0:
                    found[f"{size} {key} board/{peer}"] = ours[key] / theirs[key]
    return found


def compare(now: dict[str, float], out: Path) -> None:
    """Each ratio beside the newest earlier run's that has any of the same sizes and peers (runs
    of other sizes in between are passed over)."""
    earlier = sorted((p for p in out.parent.glob("peers-*.json") if p != out), reverse=True)
    if not earlier:
        print("\nno earlier run in", out.parent, "to compare with")
        return
    for path in earlier:
        before = json.loads(path.read_text()).get("ratios", {})
        common = [key for key in now if key in before]
        if common:
            break
    else:
        print(f"\nno earlier run in {out.parent} has these sizes and peers to compare with")
        return
    print(f"\nagainst {path.name} (ratios board/peer; lower is better for board)")
    for key in common:
        value = now[key]
        # Board's standing: the peer's figure per board's; lower ratio, better standing.
        standing = before[key] / value if value else float("inf")
        print(f"  {key:<40} {before[key]:>8.2f} -> {value:>8.2f}  standing {standing * 100:>5.0f} %")
        if standing < 0.8:
            print(f"WARNING: {key}: board's standing is {standing * 100:.0f} % of the earlier run's (below 80 %)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[100, 1000, 10_000], help="board sizes (default 100 1000 10000)")
    parser.add_argument("--rounds", type=int, default=3, help="starts of each tool per size (default 3)")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle CPU measured after settling (default 10)")
    parser.add_argument("--out", type=Path, help="the JSON file (default tests/bench/results/peers-<UTC time>.json)")
    parser.add_argument("--dir", type=Path, help="where to make the boards (default: a temporary folder)")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tmux is needed: every board is measured in a real terminal")
    load_start = loadavg()
    backlog, why = backlog_program()
    if backlog is None:
        print(f"Backlog.md not measured: {why}")
    ktui, why = kanban_tui_program()
    if ktui is None:
        print(f"kanban-tui not measured: {why}")
    out = args.out or RESULTS / f"peers-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    figures: dict[str, dict[str, dict[str, float]]] = {}
    base = Path(tempfile.mkdtemp(prefix="bench-peers-", dir=args.dir))
    try:
        for size in args.tasks:
            root = base / str(size)
            tools = tools_for(root, size, backlog, ktui)
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in tools}
            for name, tool in list(tools.items()):  # each shows the generated tasks; not counted
                first = run_once(tool, 0, f"check-{size}")
                if isinstance(first, str):
                    print(f"{name} not measured at {size:,} tasks: {first}")
                    del tools[name], runs[name]
            names = list(tools)
            for n in range(args.rounds):
                for name in names[n % len(names) :] + names[: n % len(names)]:
                    got = run_once(tools[name], args.idle, f"{size}-{n}")
                    if isinstance(got, str):
                        print(f"round {n + 1}: {got}")
                    else:
                        runs[name].append(got)
            figures[str(size)] = {
                name: {key: statistics.median(run[key] for run in got) for key in got[0]} for name, got in runs.items() if got
            }
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    load_end = loadavg()

    print(f"\nmedians of {args.rounds} rounds, 160x45 tmux, idle CPU over {args.idle:g} s; load average {load_start} at start, {load_end} at end")
    print(f"peers: Backlog.md {BACKLOG_VERSION} (backlog board), kanban-tui {KANBAN_TUI_VERSION} (ktui)")
    print(f"{'tasks':>7}  {'tool':<11}  {'shown ms':>9}  {'settled ms':>10}  {'RSS MB':>7}  {'idle CPU':>8}  {'settled b/p':>11}  {'RSS b/p':>7}  {'CPU b/p':>7}")
    for size, by_tool in figures.items():
        ours = by_tool.get("board")
        for name, got in by_tool.items():
            row = f"{int(size):>7,}  {name:<11}  {got['shown_s'] * 1000:>9.0f}  {got['settled_s'] * 1000:>10.0f}  {got['rss_mb']:>7.1f}  {got['idle_cpu'] * 100:>7.2f}%"
            if ours is not None and name != "board":
                cpu = f"{ours['idle_cpu'] / got['idle_cpu']:.2f}" if got["idle_cpu"] > 0 else "-"
                row += f"  {ours['settled_s'] / got['settled_s']:>11.2f}  {ours['rss_mb'] / got['rss_mb']:>7.2f}  {cpu:>7}"
            print(row)
    print("b/p: board / peer in the same run (below 1: board faster, smaller, quieter)")
    for size, by_tool in figures.items():
        floor, backlog, ours = by_tool.get(FLOOR), by_tool.get("Backlog.md"), by_tool.get("board")
        if floor is not None and backlog is not None and ours is not None:
            print(f"{int(size):>7,} tasks, settled / Backlog.md's: {FLOOR} {floor['settled_s'] / backlog['settled_s']:.2f}, board {ours['settled_s'] / backlog['settled_s']:.2f}")

    found = ratios(figures)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "when": datetime.now(UTC).isoformat(timespec="seconds"), "tasks": args.tasks, "rounds": args.rounds, "idle_s": args.idle,
        "load_start": load_start, "load_end": load_end, "versions": {"Backlog.md": BACKLOG_VERSION, "kanban-tui": KANBAN_TUI_VERSION},
        "figures": figures, "ratios": found,
    }, indent=2) + "\n")  # fmt: skip
    print(f"figures stored in {out}")
    compare(found, out)


if __name__ == "__main__":
    main()
