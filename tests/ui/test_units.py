"""Textual-free parts of the dashboard: lanes, filter, alerts, themes, watcher."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from board.store import Store
from board.alerts import Alert, Severity
from board.ui.board_alerts import AlertGroup, coordinator_holds_lock, counts_label, panel_rows, severity_counts
from board.ui.card import format_age, progress_bar
from board.ui.lanes import Lane, Lanes
from board.ui.task_filter import TaskQuery
from board.ui.themes import load_themes, remember_theme, remembered_theme
from tests.conftest import REPO
from tests.ui.boards import coordinator_lock_held


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
    before_counts = dict(lanes.counts)
    assert lanes.ids[Lane.READY] == ["32", "26", "27", "14"]  # waves 0, 1, 2, 3: wave first, whatever the priority
    before = {lane: list(ids) for lane, ids in lanes.ids.items()}
    store.set_status("7", "completed", force=True)
    touched = lanes.update(store.graph, {"7", *store.graph.dependents("7")})
    assert set(touched) == {Lane.IN_PROGRESS, Lane.DONE, Lane.WAITING_DEPS, Lane.READY}
    for lane, first in touched.items():  # nothing before the reported index moved
        assert lanes.ids[lane][:first] == before[lane][:first]
    assert lanes.lane_index("7")[0] == Lane.DONE and lanes.lane_index("21")[0] == Lane.READY
    fresh = Lanes()
    fresh.rebuild(store.graph)
    assert fresh.ids == lanes.ids and +fresh.counts == +lanes.counts
    # #7 landed in Done in its place by wave, and #21 (which waited only on #7) joined Ready.
    done_keys = [(waves[t], t) for t in lanes.ids[Lane.DONE]]
    assert "7" in lanes.ids[Lane.DONE] and [w for w, _ in done_keys] == sorted(w for w, _ in done_keys)
    assert "21" in lanes.ids[Lane.READY] and "21" not in before[Lane.READY]
    assert lanes.counts["completed"] == before_counts["completed"] + 1


def test_filter_terms() -> None:
    from board.model import Task

    task = Task(id="7", subject="Implement the repository layer", owner="alice", priority="high", status="in_progress")
    assert TaskQuery("repo").matches(task)
    assert TaskQuery("@ali status:in").matches(task)
    assert not TaskQuery("owner:bob").matches(task)
    assert TaskQuery("priority:hi #7").matches(task)
    assert not TaskQuery("#8").matches(task)
    assert not TaskQuery("[bold]").matches(task)


def test_alert_rows_group_many_of_a_kind_and_counts_name_each_severity() -> None:
    def alert(key: str, kind: str, severity: Severity, task: str) -> Alert:
        return Alert(key=key, kind=kind, severity=severity, message=key, action="do", tasks=(task,))

    waiting = [alert(f"human.waiting:{n}", "human.waiting", Severity.INFO, str(n)) for n in range(1, 6)]
    cycle = alert("graph.cycle:1,2", "graph.cycle", Severity.ERROR, "1")
    conflict = alert("conflict.files:3,4", "conflict.files", Severity.WARNING, "3")
    rows = panel_rows([*waiting, conflict, cycle], expanded=set())
    assert rows[:2] == [cycle, conflict]
    assert isinstance(rows[2], AlertGroup) and rows[2].alerts == tuple(waiting) and len(rows) == 3
    assert panel_rows([*waiting, cycle], expanded={"group:human.waiting"})[2:] == waiting
    assert counts_label(severity_counts([*waiting, cycle])) == [(Severity.ERROR, "1 error"), (Severity.INFO, "5 info")]


def test_a_running_coordinator_is_seen_without_taking_its_lock(sample: Path) -> None:
    state_dir = sample / ".tasks"
    assert not coordinator_holds_lock(state_dir)
    with coordinator_lock_held(sample):
        assert coordinator_holds_lock(state_dir)
        assert coordinator_holds_lock(state_dir)  # probing twice leaves the lock with its holder
    assert not coordinator_holds_lock(state_dir)


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


def test_a_theme_carries_every_value_of_its_file(tmp_path: Path) -> None:
    (tmp_path / "full.toml").write_text(
        'name = "full"\ndark = false\nprimary = "#123456"\nsecondary = "#654321"\naccent = "red"\nwarning = "#ffaa00"\n'
        'error = "#ff0000"\nsuccess = "#00ff00"\nforeground = "#eeeeee"\nbackground = "#111111"\nsurface = "#222222"\n'
        'panel = "#333333"\nboost = "#444444"\nluminosity_spread = 0.3\ntext_alpha = 0.8\n[variables]\nborder = "#abcdef"\n'
    )
    (theme,) = load_themes([tmp_path]).themes
    assert (theme.name, theme.dark, theme.primary, theme.secondary, theme.accent) == ("full", False, "#123456", "#654321", "red")
    assert (theme.warning, theme.error, theme.success) == ("#ffaa00", "#ff0000", "#00ff00")
    assert (theme.foreground, theme.background, theme.surface, theme.panel, theme.boost) == ("#eeeeee", "#111111", "#222222", "#333333", "#444444")
    assert (theme.luminosity_spread, theme.text_alpha, theme.variables) == (0.3, 0.8, {"border": "#abcdef"})


def test_loading_themes_leaves_the_cores_package_unloaded() -> None:
    """The dashboard loads its themes before its first frame: pydantic's serializer would bring
    in its package's typing helpers the first time it runs."""
    code = f"from pathlib import Path\nfrom board.ui.themes import load_themes\nassert load_themes([Path({str(REPO / 'themes')!r})]).themes"
    done = subprocess.run([sys.executable, "-c", f"{code}\nimport sys\nprint('pydantic_core' in sys.modules)"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_theme_choice_is_remembered(user_config: Path) -> None:
    assert remembered_theme() is None
    remember_theme("board-light")
    assert remembered_theme() == "board-light"


def test_the_theme_choice_is_neither_written_through_nor_waited_on_by_what_is_planted(user_config: Path, tmp_path: Path) -> None:
    """A link under the name the writer gave its temp file leaves the file it points at as it
    was; a FIFO in place of the choice is no choice, read at once (the dashboard's start would
    wait on it); a choice linked from a dotfiles folder is read."""
    path = user_config / "board" / "ui.toml"
    path.parent.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own\n")
    os.symlink(victim, path.with_name(".ui.toml.tmp"))
    remember_theme("nord")
    assert victim.read_text() == "the user's own\n" and not path.is_symlink() and remembered_theme() == "nord"
    path.unlink()
    os.mkfifo(path)
    assert remembered_theme() is None
    path.unlink()
    dotfiles = tmp_path / "dotfiles.toml"
    dotfiles.write_text('theme = "board-light"\n')
    path.symlink_to(dotfiles)
    assert remembered_theme() == "board-light"
    themes = user_config / "board" / "themes"
    themes.mkdir()
    os.mkfifo(themes / "planted.toml")
    loaded = load_themes([themes])
    assert loaded.themes == [] and loaded.problems and "planted.toml" in loaded.problems[0]


def test_age_and_bar_formats() -> None:
    assert [format_age(s) for s in (5, 125, 7200, 3 * 86400)] == ["5s", "2m", "2h", "3d"]
    filled, empty = progress_bar(50, 10)
    assert len(filled) + len(empty) == 10 and filled == "█████"


def test_filter_labels_and_terms_that_can_match_nothing() -> None:
    from board.model import Task

    task = Task(id="7", subject="Rate limits", labels=["api", "Perf"])
    assert TaskQuery("label:api").matches(task) and TaskQuery("label:perf l:api").matches(task)
    assert not TaskQuery("label:db").matches(task)
    assert TaskQuery("status:fail priority:hi label:api").problems({"api"}) == []
    problems = TaskQuery("status:finished priority:urgent label:nope").problems({"api", "db"})
    assert problems[0].startswith("no status 'finished': use one of ") and "waiting-deps" in problems[0]
    assert problems[1] == "no priority 'urgent': use one of low, medium, high, critical"
    assert problems[2] == "no task has the label 'nope' (in use: api, db)"
