"""What the dashboard looks like: deterministic SVG snapshots (fixed clock, no watcher, no blink)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot

from board.store import Store
from tests.ui.boards import hostile_board
from tests.ui.conftest import make_app, settled


async def open_detail(pilot: Pilot, *keys: str) -> None:
    await settled(pilot)
    await pilot.press(*keys, "enter")
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_kanban(sample: Path, snap_compare) -> None:
    assert snap_compare(make_app(sample), terminal_size=(140, 40), run_before=settled)


def test_kanban_80x24(sample: Path, snap_compare) -> None:
    assert snap_compare(make_app(sample), terminal_size=(80, 24), run_before=settled)


def test_kanban_160x45(sample: Path, snap_compare) -> None:
    assert snap_compare(make_app(sample), terminal_size=(160, 45), run_before=settled)


def test_selection_highlights_blockers_and_dependents(sample: Path, snap_compare) -> None:
    # Down twice in Ready, then right into In progress: #7, blocked by #3 and #4, blocking #5, #15, #16, #21.
    assert snap_compare(make_app(sample), press=["l"], terminal_size=(140, 40), run_before=settled)


def test_graph_view(sample: Path, snap_compare) -> None:
    assert snap_compare(make_app(sample), press=["g"], terminal_size=(140, 40), run_before=settled)


def test_detail(sample: Path, snap_compare) -> None:
    assert snap_compare(make_app(sample), terminal_size=(140, 40), run_before=open_detail)


def test_help(sample: Path, snap_compare) -> None:
    assert snap_compare(make_app(sample), press=["question_mark"], terminal_size=(140, 40), run_before=settled)


def test_filter_dialog(sample: Path, snap_compare) -> None:
    assert snap_compare(make_app(sample), press=["slash", *"@alice"], terminal_size=(140, 40), run_before=settled)


def test_filtered_board(sample: Path, snap_compare) -> None:
    press = ["slash", *"status:fail", "enter"]
    assert snap_compare(make_app(sample), press=press, terminal_size=(140, 40), run_before=settled)


def test_cancel_confirmation(sample: Path, snap_compare) -> None:
    assert snap_compare(make_app(sample), press=["c"], terminal_size=(140, 40), run_before=settled)


def test_readonly(sample: Path, snap_compare) -> None:
    assert snap_compare(make_app(sample, readonly=True), terminal_size=(140, 40), run_before=settled)


def test_panels_with_coordinator_alerts(sample: Path, snap_compare) -> None:
    (sample / ".tasks" / "alerts.json").write_text(
        '[{"kind": "conflict.files", "severity": "warning", "message": "#7 and #8 both touch src/app/models.py", "tasks": ["7", "8"]},'
        ' {"kind": "lease.expired", "severity": "warning", "message": "#12 was reclaimed from erin", "tasks": ["12"]}]'
    )
    assert snap_compare(make_app(sample), terminal_size=(140, 40), run_before=settled)


@pytest.mark.parametrize("theme", ["board-light", "board-high-contrast"])
def test_shipped_themes(sample: Path, snap_compare, theme: str) -> None:
    (sample / ".tasks" / "board.toml").write_text(f'[ui]\ntheme = "{theme}"\n')
    app = make_app(sample)
    assert app.theme == theme
    assert snap_compare(app, terminal_size=(140, 40), run_before=settled)


def test_empty_board(tmp_path: Path, snap_compare) -> None:
    Store.open(tmp_path / "empty", create=True)
    assert snap_compare(make_app(tmp_path / "empty"), terminal_size=(100, 30), run_before=settled)


def test_invalid_files_markup_and_wide_text(tmp_path: Path, snap_compare) -> None:
    workspace = hostile_board(tmp_path / "hostile")
    assert snap_compare(make_app(workspace), terminal_size=(140, 40), run_before=settled)


def test_hostile_detail(tmp_path: Path, snap_compare) -> None:
    workspace = hostile_board(tmp_path / "hostile")
    # Right twice: the task with markup in its subject and description, in progress.
    assert snap_compare(make_app(workspace), terminal_size=(120, 35), run_before=lambda pilot: open_detail(pilot, "l", "l"))


def test_graph_view_80x24(sample: Path, snap_compare) -> None:
    shutil.rmtree(sample / ".tasks" / "agents")
    assert snap_compare(make_app(sample), press=["g"], terminal_size=(80, 24), run_before=settled)
