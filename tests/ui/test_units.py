"""Textual-free parts of the dashboard: lanes, filter, alerts, themes, watcher."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from board.store import Store
from board.ui.board_alerts import board_alerts, merge_alerts, parse_coordinator_alerts
from board.ui.card import format_age, progress_bar
from board.ui.lanes import Lane, Lanes
from board.ui.task_filter import TaskQuery
from board.ui.themes import load_themes, remember_theme, remembered_theme
from board.watch import BoardWatcher
from tests.conftest import REPO


def test_lanes_order_by_wave_then_priority_and_update_in_place(sample: Path) -> None:
    store = Store.open(sample)
    lanes = Lanes()
    lanes.rebuild(store.graph)
    waves = store.graph.waves()
    for ids in lanes.ids.values():
        keys = [(waves[t], ["critical", "high", "medium", "low"].index(store.tasks[t].priority)) for t in ids]
        assert keys == sorted(keys)
    assert "29" not in lanes.placed_ids()  # cancelled, hidden
    assert lanes.counts["cancelled"] == 1 and lanes.counts["ready"] == 4
    before = {lane: list(ids) for lane, ids in lanes.ids.items()}
    done = store.set_status("7", "completed")
    touched = lanes.update(store.graph, {"7", *store.graph.dependents("7")})
    assert set(touched) == {Lane.IN_PROGRESS, Lane.DONE, Lane.WAITING_DEPS, Lane.READY}
    for lane, first in touched.items():  # nothing before the reported index moved
        assert lanes.ids[lane][:first] == before[lane][:first]
    assert lanes.lane_index("7")[0] == Lane.DONE and lanes.lane_index("21")[0] == Lane.READY
    fresh = Lanes()
    fresh.rebuild(store.graph)
    assert fresh.ids == lanes.ids and +fresh.counts == +lanes.counts
    assert done.version > 0


def test_filter_terms() -> None:
    from board.model import Task

    task = Task(id="7", subject="Implement the repository layer", owner="alice", priority="high", status="in_progress")
    assert TaskQuery("repo").matches(task)
    assert TaskQuery("@ali status:in").matches(task)
    assert not TaskQuery("owner:bob").matches(task)
    assert TaskQuery("priority:hi #7").matches(task)
    assert not TaskQuery("#8").matches(task)
    assert not TaskQuery("[bold]").matches(task)


def test_alerts_merge_and_bad_coordinator_file(sample: Path) -> None:
    store = Store.open(sample)
    own = board_alerts(store.graph, {"x/task_9.json": "not valid JSON"})
    assert own[0].kind == "file.invalid" and any(a.kind == "human.waiting" for a in own)
    assert parse_coordinator_alerts(b"{nope")[0].kind == "file.invalid"
    theirs = parse_coordinator_alerts(b'{"alerts": [{"kind": "lease.expired", "severity": "warning", "message": "m", "task": 3}, 5]}')
    assert theirs[0].tasks == ("3",)
    merged = merge_alerts(own, theirs + own[:1])
    assert [a.severity for a in merged] == sorted((a.severity for a in merged), key=["error", "warning", "info"].index)
    assert len(merged) == len(own) + 1


def test_shipped_themes_load_and_a_broken_one_is_reported(tmp_path: Path) -> None:
    shipped = load_themes([REPO / "themes"])
    assert {"board-dark", "board-light", "board-high-contrast"} <= {t.name for t in shipped.themes}
    assert shipped.problems == []
    (tmp_path / "bad.toml").write_text('name = "bad"\nprimary = "not-a-colour"\n')
    (tmp_path / "worse.toml").write_text("name = [\n")
    (tmp_path / "good.toml").write_text('name = "good"\nprimary = "#123456"\n')
    loaded = load_themes([tmp_path])
    assert [t.name for t in loaded.themes] == ["good"]
    assert len(loaded.problems) == 2 and "bad.toml" in loaded.problems[0]


def test_theme_choice_is_remembered(user_config: Path) -> None:
    assert remembered_theme() is None
    remember_theme("board-light")
    assert remembered_theme() == "board-light"


def test_age_and_bar_formats() -> None:
    assert [format_age(s) for s in (5, 125, 7200, 3 * 86400)] == ["5s", "2m", "2h", "3d"]
    filled, empty = progress_bar(50, 10)
    assert len(filled) + len(empty) == 10 and filled == "█████"


def test_watcher_reports_task_files_quickly(workspace: Path) -> None:
    watcher = BoardWatcher(workspace / ".tasks", reconcile_seconds=30)
    batches = []
    ready = threading.Event()

    def consume() -> None:
        for batch in watcher.batches():
            batches.append(batch)
            ready.set()

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    time.sleep(0.3)  # let the OS watcher start
    Store.open(workspace).create("hello")
    assert ready.wait(5)
    watcher.stop()
    thread.join(5)
    changed = set().union(*(b.task_paths for b in batches))
    assert workspace / ".tasks" / "task_1.json" in changed
