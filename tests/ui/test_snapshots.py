"""What the dashboard looks like: deterministic SVG snapshots (fixed clock, no watcher, no blink)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot

from board.store import Store
from tests.ui.boards import SAMPLE_ALERTS, coordinator_lock_held, hostile_board, team_board, write_alerts_file
from tests.ui.conftest import make_app, settled, settled_quietly, wait_for


async def open_detail(pilot: Pilot, *keys: str, quietly: bool = False) -> None:
    await (settled_quietly if quietly else settled)(pilot)
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


def test_alerts_panel(sample: Path, snap_compare) -> None:
    # e moves into the panel: worst first, ages from fixed "since" times, the first alert's action below.
    write_alerts_file(sample, SAMPLE_ALERTS)
    with coordinator_lock_held(sample):
        assert snap_compare(make_app(sample), press=["e"], terminal_size=(150, 42), run_before=settled_quietly)


def test_alert_badges_on_cards_80x24(sample: Path, snap_compare) -> None:
    # #7 (an error and a warning), #8, #12 and #20 carry badges; the header counts by severity.
    write_alerts_file(sample, SAMPLE_ALERTS)
    with coordinator_lock_held(sample):
        assert snap_compare(make_app(sample), terminal_size=(80, 24), run_before=settled_quietly)


def test_detail_with_alerts(sample: Path, snap_compare) -> None:
    write_alerts_file(sample, SAMPLE_ALERTS)
    with coordinator_lock_held(sample):
        # Right once: #7, named by the drift error and the file conflict.
        assert snap_compare(make_app(sample), terminal_size=(140, 40), run_before=lambda pilot: open_detail(pilot, "l", quietly=True))


def test_jump_from_alert_to_its_task(sample: Path, snap_compare) -> None:
    # Third alert (lease.expired on #12, waiting on deps): enter selects #12 and gives the board the keys.
    write_alerts_file(sample, SAMPLE_ALERTS)
    with coordinator_lock_held(sample):
        assert snap_compare(make_app(sample), press=["e", "down", "down", "enter"], terminal_size=(150, 42), run_before=settled_quietly)


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


async def on_waiting_task(pilot: Pilot) -> None:
    await settled_quietly(pilot)
    pilot.app.jump_to("20")
    await pilot.pause()


def test_detail_of_a_waiting_task_80x24(sample: Path, snap_compare) -> None:
    async def run_before(pilot: Pilot) -> None:
        await on_waiting_task(pilot)
        await open_detail(pilot, quietly=True)

    assert snap_compare(make_app(sample), terminal_size=(80, 24), run_before=run_before)


def test_answer_dialog(sample: Path, snap_compare) -> None:
    assert snap_compare(make_app(sample), press=["w", *"/healthz"], terminal_size=(140, 40), run_before=on_waiting_task)


def test_graph_view_160x45(sample: Path, snap_compare) -> None:
    assert snap_compare(make_app(sample), press=["g"], terminal_size=(160, 45), run_before=settled)


async def on_task_16(pilot: Pilot) -> None:
    await settled(pilot)
    pilot.app.jump_to("16")  # on the critical path: three waves of blockers, two of dependents
    await pilot.pause()


def test_graph_chain_of_the_selection_160x45(sample: Path, snap_compare) -> None:
    # #16's ancestors and descendants bright, the rest of the board dimmed.
    assert snap_compare(make_app(sample), press=["g"], terminal_size=(160, 45), run_before=on_task_16)


def test_graph_focus_view_160x45(sample: Path, snap_compare) -> None:
    assert snap_compare(make_app(sample), press=["g", "f"], terminal_size=(160, 45), run_before=on_task_16)


async def team_settled(pilot: Pilot) -> None:
    """Settled, with the team read (its folder is read beside the board, not before it)."""
    await settled_quietly(pilot)
    await wait_for(pilot, lambda: bool(pilot.app.teams) and bool(pilot.app.alerts), message="the team and its alert")
    await pilot.pause()


def test_team_in_the_agents_panel(claude_home: Path, snap_compare) -> None:
    # The crew's own task list: the lead ★, ana working on #2, ben idle with #3 in progress
    # (⚠, and its agent.idle_with_task alert) and an unread message (✉1, on his card too).
    assert snap_compare(make_app(team_board(claude_home)), terminal_size=(160, 45), run_before=team_settled)


def test_nudge_from_an_idle_alert(claude_home: Path, snap_compare) -> None:
    # e into the alerts, m on ben's agent.idle_with_task alert: the prepared nudge.
    assert snap_compare(make_app(team_board(claude_home)), press=["e", "m"], terminal_size=(160, 45), run_before=team_settled)


def test_agent_detail_with_its_messages(claude_home: Path, snap_compare) -> None:
    # A into the agents panel, down twice to ben, enter: his state, tasks and messages.
    assert snap_compare(make_app(team_board(claude_home)), press=["A", "down", "down", "enter"], terminal_size=(160, 45), run_before=team_settled)
