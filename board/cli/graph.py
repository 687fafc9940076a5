"""``board graph``: the dashboard's dependency graph, printed to a terminal or a CI log."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from board.cli.parser import add_command
from board.cli.tasks import task_id

if TYPE_CHECKING:  # loaded by the handler: the parser must stay light
    from board.graph import TaskGraph
    from board.ui.graph_layout import GraphLayout

#: Position of this command in --help.
ORDER = 12
#: The narrowest a print can be: two waves' labels side by side, so a band of it always shows
#: the lines from one wave to the next.
MIN_WIDTH = 48
#: Width when the output is not a terminal (a CI log, a file, a pipe).
PIPE_WIDTH = 160
#: What each node's first symbol means, in the order the dashboard's legend gives them.
STATE_NAMES = {
    "completed": "done", "in_progress": "running", "ready": "ready", "waiting-deps": "on deps",
    "waiting": "needs you", "paused": "paused", "blocked": "blocked", "failed": "failed", "cancelled": "cancelled",
}


def width_value(value: str) -> int:
    try:
        width = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of columns") from None
    if width < MIN_WIDTH:
        raise argparse.ArgumentTypeError(f"{width} columns is too narrow: the graph needs at least {MIN_WIDTH}")
    return width


def register(commands: argparse._SubParsersAction) -> None:
    graph = add_command(commands, "graph", "print the dependency graph by wave, as the dashboard draws it")
    graph.add_argument("--width", type=width_value, metavar="N", help=f"columns to fit it in (default: the terminal's width, {PIPE_WIDTH} when not a terminal); a wider graph is printed in bands of whole waves, one under another")
    graph.add_argument("--focus", type=task_id, metavar="ID", help="only this task, what it waits on and what waits on it")
    graph.add_argument("--cancelled", action="store_true", help="show cancelled tasks too (hidden, as on the dashboard)")
    graph.set_defaults(handler=cmd_graph)


def cmd_graph(args: argparse.Namespace) -> int:
    import shutil
    import sys

    from board.cli.output import print_json
    from board.cli.opening import open_store
    from board.errors import TaskNotFound
    from board.graph import is_hidden
    from board.status import Status
    from board.ui.graph_layout import layout_to_fit

    store = open_store(args)
    graph = store.graph
    shown = {
        tid for tid, task in graph.tasks.items()
        if not is_hidden(task) and (args.cancelled or task.status != Status.CANCELLED)
    }
    if args.focus is not None:
        if args.focus not in graph.tasks:
            raise TaskNotFound(args.focus)
        shown = (shown & (graph.ancestors(args.focus) | graph.descendants(args.focus))) | {args.focus}
    if args.width is not None:
        width = args.width
    elif sys.stdout.isatty():
        width = max(MIN_WIDTH, shutil.get_terminal_size((PIPE_WIDTH, 24)).columns)
    else:
        width = PIPE_WIDTH
    layout = layout_to_fit(graph, shown, width)
    if args.json:
        print_json(graph_json(graph, layout))
    else:
        print(graph_text(graph, layout, width))
    return 0


def graph_json(graph: TaskGraph, layout: GraphLayout) -> list[dict[str, Any]]:
    """Each shown task where the layout put it: its wave, its column (waves with nothing shown
    are left out), its order in the column, top first, and its row."""
    from board.status import Status
    from board.ui.lanes import display_state

    waves = graph.waves()
    placed = []
    for column, members in enumerate(layout.columns):
        for order, tid in enumerate(members):
            task = graph.tasks[tid]
            placed.append({
                "id": tid, "subject": task.subject, "state": display_state(task, graph),
                "wave": waves[tid], "column": column, "order": order, "row": layout.row_of[tid],
                "critical": tid in layout.critical, "blockedBy": [b for b in task.blocked_by if b in layout.position],
                "question": task.question if task.status == Status.WAITING else None,
            })
    return placed


def graph_text(graph: TaskGraph, layout: GraphLayout, width: int) -> str:
    """The graph as lines of text, in bands of whole columns no wider than ``width`` (unless
    two columns and the lines between them are wider), then what the tasks waiting on a person
    ask, and the legend."""
    from board.status import Status
    from board.text import printable
    from board.ui.card import STATE_SYMBOLS
    from board.ui.lanes import display_state

    if not layout.columns:
        return "no tasks to show"

    def label(tid: str) -> str:
        task = graph.tasks[tid]
        text = STATE_SYMBOLS.get(display_state(task, graph), "■") + ("★" if tid in layout.critical else " ")
        text += f"#{tid} {printable(task.subject)}"
        room = layout.node_width - 1
        return text if len(text) <= room else text[: room - 1] + "…"

    lines: list[str] = []
    spans = bands(layout, width)
    for number, (first, last, x0, x1) in enumerate(spans):
        if len(spans) > 1:
            if number:
                lines.append("")
            title = f"── waves {first + 1}–{last + 1} of {len(layout.columns)} "
            lines.append(title + "─" * max(0, min(width, x1 - x0) - len(title)))
        for y in range(layout.height):
            lines.append(layout.plain_row(y, label)[x0:x1].rstrip())
        while lines and not lines[-1]:
            lines.pop()
    asking = [tid for members in layout.columns for tid in members if graph.tasks[tid].status == Status.WAITING]
    if asking:
        lines.append("")
        for tid in asking:
            question = " ".join((graph.tasks[tid].question or "").split())
            lines.append(f"? #{tid} needs you: {printable(question)}" if question else f"? #{tid} needs you")
    lines.append("")
    states = [state for state in STATE_NAMES if state != "cancelled" or any(graph.tasks[t].status == Status.CANCELLED for t in layout.position)]
    lines.append(" ".join(f"{STATE_SYMBOLS[state]} {STATE_NAMES[state]}" for state in states) + " ★ critical path")
    return "\n".join(lines)


def bands(layout: GraphLayout, width: int) -> list[tuple[int, int, int, int]]:
    """(first column, last column, first x, end x) of each band to print: as many whole columns
    as fit in ``width``, two at least; each band after the first repeats the last column of the
    one before, so every line is seen leaving its blocker."""
    count = len(layout.columns)

    def end(column: int) -> int:
        return layout.column_x[column] + layout.node_width

    spans = []
    first = 0
    while True:
        x0 = 0 if first == 0 else layout.column_x[first]
        last = first
        while last + 1 < count and end(last + 1) - x0 <= width:
            last += 1
        last = max(last, min(first + 1, count - 1))
        spans.append((first, last, x0, layout.width if last == count - 1 else end(last)))
        if last == count - 1:
            return spans
        first = last
