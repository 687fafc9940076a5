"""What the dashboard does before its first frame: a small board, read whole before it, is drawn
before the workers that judge its alerts and tell the person start (they hold the interpreter's
lock as they load and work, and the frame would wait on them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.conftest import live_app, settled

pytestmark = pytest.mark.anyio


async def test_the_alert_and_notice_workers_start_after_the_first_frame(sample: Path) -> None:
    app = live_app(sample)  # follows the files: tells the person too
    frames: list[int] = []
    started: dict[str, int] = {}
    display, follow_alerts, tell_person = app._display, app.follow_alerts, app.tell_person

    def counting_frames(*args, **kwargs):
        frames.append(1)
        return display(*args, **kwargs)

    def following(*args, **kwargs):
        started["alerts"] = len(frames)
        return follow_alerts(*args, **kwargs)

    def telling(*args, **kwargs):
        started["notices"] = len(frames)
        return tell_person(*args, **kwargs)

    app._display, app.follow_alerts, app.tell_person = counting_frames, following, telling  # type: ignore[method-assign]
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot)  # the alerts came: their worker ran
        assert started["alerts"] >= 1 and started["notices"] >= 1, started
        assert app.alerts, "the sample board's alerts were judged"
