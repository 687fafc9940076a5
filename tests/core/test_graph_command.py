"""``board graph`` run as a process on a copy of the sample board: the dashboard's layout as text
or JSON, bands that fit the width, the questions of tasks waiting on a person, bad arguments."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from board.graph import is_hidden
from board.status import Status
from board.store import Store
from board.ui.graph_layout import layout_to_fit
from tests.conftest import REPO


def board_process(workspace: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("COLUMNS", None)
    return subprocess.run([sys.executable, "-m", "board", "-w", str(workspace), *args], capture_output=True, text=True, env=env, timeout=60)


def dashboard_layout(workspace: Path, width: int):
    """The layout the dashboard's graph view makes of the board at this width (cancelled and
    internal tasks hidden, as it starts)."""
    graph = Store.open(workspace).graph
    shown = {t for t, task in graph.tasks.items() if not is_hidden(task) and task.status != Status.CANCELLED}
    return graph, layout_to_fit(graph, shown, width)


def test_prints_the_dashboards_layout_row_by_row(sample: Path) -> None:
    result = board_process(sample, "graph", "--width", "400")
    assert result.returncode == 0, result.stderr
    graph, layout = dashboard_layout(sample, 400)
    assert layout.width <= 400  # one band: every row printed whole
    lines = result.stdout.splitlines()
    for y in range(layout.height):
        printed = re.findall(r"#(\d+) ", lines[y])
        assert printed == [task_id for _x, task_id in sorted(layout.nodes_by_row.get(y, ()))], f"row {y}: {lines[y]}"
    assert "✓ #1 Write the project charter" in lines[0]
    assert "#29" not in result.stdout  # cancelled, hidden as on the dashboard
    assert "#29" in board_process(sample, "graph", "--width", "400", "--cancelled").stdout


def test_a_graph_wider_than_the_width_is_printed_in_bands_of_whole_waves(sample: Path) -> None:
    result = board_process(sample, "graph", "--width", "100")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines[:-3]) <= 100
    headers = [line for line in lines if line.startswith("── waves ")]
    assert len(headers) >= 3 and headers[0].startswith("── waves 1–3 of 8 ")
    # Each band repeats the last wave of the one before: every task shows at least once.
    graph, _layout = dashboard_layout(sample, 100)
    shown = {t for t, task in graph.tasks.items() if task.status != Status.CANCELLED}
    assert set(re.findall(r"#(\d+) ", result.stdout)) == shown
    # Not a terminal: 160 columns.
    piped = board_process(sample, "graph").stdout.splitlines()
    assert max(len(line) for line in piped if not line.startswith("?")) <= 160


def test_a_task_waiting_on_a_person_shows_its_question(sample: Path) -> None:
    result = board_process(sample, "graph")
    waiting = [t for t in Store.open(sample).graph.tasks.values() if t.status == Status.WAITING]
    assert waiting and waiting[0].question
    assert f"? #{waiting[0].id} needs you: {' '.join(waiting[0].question.split())}" in result.stdout.splitlines()
    shown = json.loads(board_process(sample, "graph", "--json").stdout)
    assert {t["id"]: t["question"] for t in shown if t["question"]} == {waiting[0].id: waiting[0].question}


def test_focus_shows_a_task_with_what_it_waits_on_and_what_waits_on_it(sample: Path) -> None:
    graph = Store.open(sample).graph
    related = graph.ancestors("13") | graph.descendants("13") | {"13"}
    result = board_process(sample, "graph", "--focus", "13", "--json")
    assert result.returncode == 0, result.stderr
    placed = json.loads(result.stdout)
    assert {t["id"] for t in placed} == {t for t in related if graph.tasks[t].status != Status.CANCELLED}
    text = board_process(sample, "graph", "--focus", "13").stdout
    assert set(re.findall(r"#(\d+) ", text)) == {t["id"] for t in placed}


def test_json_gives_each_tasks_wave_order_and_row(sample: Path) -> None:
    result = board_process(sample, "graph", "--json")
    assert result.returncode == 0, result.stderr
    placed = json.loads(result.stdout)
    graph, layout = dashboard_layout(sample, 160)
    waves = graph.waves()
    assert [t["id"] for t in placed] == [task_id for members in layout.columns for task_id in members]
    for task in placed:
        assert (task["column"], task["order"]) == layout.position[task["id"]]
        assert task["row"] == layout.row_of[task["id"]] and task["wave"] == waves[task["id"]]
        assert task["critical"] == (task["id"] in layout.critical)


def test_bad_arguments_are_one_line_and_exit_2(sample: Path) -> None:
    for args, words in (
        (["--focus", "999"], "no task with id '999'"),
        (["--width", "20"], "too narrow"),
        (["--width", "wide"], "not a number"),
        (["--focus", "../x"], "--focus"),
    ):
        result = board_process(sample, "graph", *args)
        assert result.returncode == 2, args
        assert result.stdout == "" and len(result.stderr.splitlines()) == 1 and words in result.stderr, result.stderr
