"""The widgets carry their own look: in a plain App, without the dashboard's stylesheet, they
are drawn as on the board."""

from __future__ import annotations

import pytest
from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.color import Color

from board.alerts import Alert, Severity
from board.graph import TaskGraph
from board.model import Task
from board.ui.card import CARD_HEIGHT, CardView
from board.ui.lanes import Lane, Lanes
from board.ui.widgets.alerts_panel import SEVERITY_MARK, AlertList, AlertsPanel
from board.ui.widgets.kanban import KanbanBoard
from tests.ui.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio


class PlainApp(App[None]):
    """Only the widgets under test: no CSS of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.graph = TaskGraph([
            Task(id="1", subject="Selected card"),
            Task(id="2", subject="Plain card"),
        ])
        self.lanes = Lanes()
        self.lanes.rebuild(self.graph)
        self.view = CardView(self.graph, lambda: FIXED_NOW, selected="1", states=self.lanes.states)

    def compose(self) -> ComposeResult:
        yield KanbanBoard(self.lanes, self.view, select=lambda task_id: setattr(self.view, "selected", task_id))
        yield AlertsPanel()

    def on_mount(self) -> None:
        board = self.query_one(KanbanBoard)
        board.show_lanes()
        board.focus()
        error = Alert(key="graph.cycle:1,2", kind="graph.cycle", severity=Severity.ERROR, message="#1 and #2 wait on each other", action="drop one edge", tasks=("1", "2"))
        self.query_one(AlertsPanel).show_alerts([error], FIXED_NOW)


def segment_with(segments: list[Segment], text: str) -> Segment:
    return next(segment for segment in segments if text in segment.text)


def theme_colour(app: App, name: str) -> tuple[int, int, int]:
    return Color.parse(app.theme_variables[name]).rgb


async def test_a_column_and_the_alerts_panel_have_their_look_outside_the_dashboard() -> None:
    app = PlainApp()
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        column = app.query_one(KanbanBoard).columns[Lane.READY]
        assert column.ids == ["1", "2"]
        assert column.styles.border_top[0] == "round"
        assert column.styles.background.rgb == theme_colour(app, "surface")

        selected = segment_with(list(column.render_line(0)), "#1")
        plain = segment_with(list(column.render_line(CARD_HEIGHT)), "#2")
        assert plain.style.bgcolor.triplet == theme_colour(app, "surface")
        assert selected.style.bgcolor is not None and selected.style.bgcolor != plain.style.bgcolor, "the selected card is not highlighted"

        listing = app.query_one(AlertList)
        mark = segment_with(list(listing.render_line(0)), SEVERITY_MARK[Severity.ERROR])
        assert mark.style.color is not None and mark.style.color.triplet == theme_colour(app, "error")
        assert mark.style.bold


async def test_alert_ages_move_on_as_the_clock_does_though_the_panel_skips_seconds_that_change_nothing() -> None:
    """Once a second the dashboard hands the panel the same alerts: an age in seconds moves each
    time, one in minutes only at its minute's end, and each reads right whenever it is looked at."""
    from datetime import timedelta

    fresh = Alert(key="a", kind="lease.expiring", severity=Severity.WARNING, message="fresh", action="-", since=FIXED_NOW - timedelta(seconds=59.5))
    old = Alert(key="b", kind="lease.expiring", severity=Severity.WARNING, message="old", action="-", since=FIXED_NOW - timedelta(minutes=5, seconds=0.5))
    app = App()
    async with app.run_test(size=(120, 30)) as pilot:
        panel = AlertsPanel()
        await app.mount(panel)
        alerts = [fresh, old]

        def ages_at(seconds: float) -> list[str]:
            panel.show_alerts(alerts, FIXED_NOW + timedelta(seconds=seconds))
            listing = panel.query_one(AlertList)
            texts = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
            return [next(word for word in text.split() if word[:-1].isdigit() and word[-1] in "smhd") for text in texts]

        await pilot.pause()
        assert ages_at(0) == ["59s", "5m"]
        assert ages_at(0.4) == ["59s", "5m"]
        assert ages_at(0.6) == ["1m", "5m"]
        assert ages_at(30) == ["1m", "5m"]
        assert ages_at(59.4) == ["1m", "5m"]
        assert ages_at(59.6) == ["1m", "6m"]
        assert ages_at(60.6) == ["2m", "6m"]
        assert ages_at(30) == ["1m", "5m"]  # a clock set back reads right too


async def test_each_second_the_panel_works_out_the_ages_of_its_rows_alone_not_of_alerts_folded_into_a_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind with many alerts is one row, which shows no age: as the clock moves, only the alerts
    on rows of their own are aged (an idle dashboard with thousands of alerts aged them all each
    second), and a group opened shows its members' ages as they move."""
    from datetime import timedelta

    folded = [Alert(key=f"f{n}", kind="task.failed", severity=Severity.ERROR, message=f"#{n} failed", action="-", tasks=(str(n),), since=FIXED_NOW - timedelta(seconds=10)) for n in range(500)]
    alone = Alert(key="b", kind="lease.expiring", severity=Severity.WARNING, message="old", action="-", since=FIXED_NOW - timedelta(seconds=20))
    alerts = [*folded, alone]
    aged = 0
    age = Alert.age

    def counted(alert: Alert, now):
        nonlocal aged
        aged += 1
        return age(alert, now)

    monkeypatch.setattr(Alert, "age", counted)
    app = App()
    async with app.run_test(size=(120, 30)) as pilot:
        panel = AlertsPanel()
        await app.mount(panel)
        await pilot.pause()
        listing = panel.query_one(AlertList)

        def shown() -> list[str]:
            return [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]

        panel.show_alerts(alerts, FIXED_NOW)
        assert [text.split()[1:3] for text in shown()] == [["▸", "500"], ["20s", "old"]]
        aged = 0
        for second in range(1, 4):
            panel.show_alerts(alerts, FIXED_NOW + timedelta(seconds=second))
        assert aged <= 3 * 3  # the one row with an age, each second: its age, how long it stays, its text
        assert shown()[1].split()[1] == "23s"
        panel.expanded.add("group:task.failed")
        panel.show_alerts(alerts, FIXED_NOW + timedelta(seconds=4))
        assert shown()[1].split()[1:3] == ["14s", "#0"]
        panel.show_alerts(alerts, FIXED_NOW + timedelta(seconds=5))
        assert shown()[1].split()[1] == "15s"
