"""A task waiting for a person: its question on the card, the answer from the dashboard."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from board.agent_record import AgentRecord
from board.agents import write_agent
from board.status import Status
from board.store import Store
from board.ui.card import card_lines
from board.ui.lanes import Lane
from tests.conftest import REPO
from tests.ui.conftest import FIXED_NOW, make_app, settled, wait_for, writes_done

pytestmark = pytest.mark.anyio

QUESTION = "Which paths should the probes check: /healthz and /readyz, or the ops team's /status?"


def on_disk(workspace: Path, task_id: str) -> dict:
    return json.loads((workspace / ".tasks" / f"task_{task_id}.json").read_text())


def footer_keys(app) -> set[str]:
    return {binding.key for (_, binding, enabled, _) in app.active_bindings.values() if binding.show and enabled}


async def test_a_waiting_card_shows_the_question_and_w_answers_it_back_to_its_owner(sample: Path) -> None:
    write_agent(Store.open(sample, whole=False).agent_records, AgentRecord(name="dave", kind="claude-code", heartbeat_at=FIXED_NOW.replace(year=2099), started_at=FIXED_NOW))
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        column = app.kanban.columns[Lane.IN_PROGRESS]
        head, _, foot = (line.plain for line in card_lines(app.graph.tasks["20"], app.view, 30, column.styles_by_name))
        assert "NEEDS YOU" in head and foot.startswith("? Which paths should")

        app.select("32")
        await pilot.pause()
        assert "w" not in footer_keys(app)  # offered only where it means something
        await pilot.press("w")
        await writes_done(pilot)
        assert app.screen is app.screen_stack[0]

        app.select("20")
        await pilot.pause()
        assert "w" in footer_keys(app)
        for key in ("r", "s", "p"):  # no requeue dance: each says what to press
            await pilot.press(key)
            await writes_done(pilot)
            assert app._notifications and "press w to answer" in list(app._notifications)[-1].message
            assert on_disk(sample, "20")["status"] == "waiting"

        await pilot.press("w")
        await pilot.pause()
        assert QUESTION in str(app.screen.query_one("#asked").render())
        await pilot.press("escape")  # leaves it waiting
        await writes_done(pilot)
        assert on_disk(sample, "20")["status"] == "waiting"

        await pilot.press("w")
        await pilot.press("enter")  # an empty answer is not sent
        await writes_done(pilot)
        assert on_disk(sample, "20")["status"] == "waiting" and app.screen is not app.screen_stack[0]
        for char in "Use /healthz":
            await pilot.press(char if char != " " else "space")
        await pilot.press("enter")
        await wait_for(pilot, lambda: on_disk(sample, "20")["status"] == "in_progress", message="the answer written")
        task = on_disk(sample, "20")
        assert task["answer"] == "Use /healthz" and task["owner"] == "dave" and task["lease"]["owner"] == "dave"
        assert task["question"] == QUESTION  # kept beside its answer
        history = [json.loads(line) for line in (sample / ".tasks" / "history.jsonl").read_text().splitlines()]
        assert history[-1]["op"] == "status:in_progress (answered)" and history[-1]["changes"]["answer"] == [None, "Use /healthz"]


async def test_a_task_that_starts_waiting_is_announced_with_its_question_and_the_bell_when_asked(sample: Path) -> None:
    (sample / ".tasks" / "board.toml").write_text("[lease]\nseconds = 30\n[ui]\nbell = true\n")
    app = make_app(sample, watch=True, reconcile_seconds=30)
    rings = []
    app.bell = lambda: rings.append(1)  # the terminal's bell is the one thing a test cannot hear
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.clear_notifications()
        store = Store.open(sample, actor="carol")
        token = store.get("8").lease.token
        subprocess.run([sys.executable, "-m", "board", "-w", str(sample), "task", "update", "8", "--status", "waiting", "--question", "Seed with real\nor fake names?", "--token", str(token)], check=True, cwd=REPO, capture_output=True)
        await wait_for(pilot, lambda: app.graph.tasks["8"].status == Status.WAITING, message="the waiting task read")
        [note] = [n for n in app._notifications if n.title == "#8 needs you"]
        assert note.message.startswith("Seed with real or fake names?") and "press w" in note.message
        await wait_for(pilot, lambda: rings == [1], message="the bell, once")


async def test_answering_a_task_whose_agent_stopped_puts_it_back_in_the_queue(workspace: Path) -> None:
    store = Store.open(workspace, actor="agent-7")
    store.create("Pick a database")
    task = store.claim("agent-7", lease_seconds=30)
    store.set_status(task.id, "waiting", actor="agent-7", token=task.lease.token, fields={"question": "Postgres or SQLite?"})
    write_agent(store.agent_records, AgentRecord(name="agent-7", kind="worker", heartbeat_at=store.clock(), started_at=store.clock(), stopped=True))
    app = make_app(workspace, now=store.clock)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        app.select(task.id)
        await pilot.press("w")
        await pilot.pause()
        assert "it goes back to the queue (agent-7 is not running)" in str(app.screen.query_one("#detail").render())
        for char in "Postgres":
            await pilot.press(char)
        await pilot.press("enter")
        await wait_for(pilot, lambda: on_disk(workspace, task.id)["status"] == "pending", message="back in the queue")
        assert on_disk(workspace, task.id)["answer"] == "Postgres" and on_disk(workspace, task.id)["owner"] == ""
        await wait_for(pilot, lambda: app.graph.is_ready(task.id), message="shown as ready")
