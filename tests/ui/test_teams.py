"""A Claude Code team on the dashboard: its members in the agents panel, m to write to one (a
nudge prepared for an idle member with work in progress), changes to its files shown live."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.identity import local_user
from board.ui.widgets.agents_panel import AgentsPanel
from tests.teams import inbox_message, write_inbox
from tests.ui.boards import team_board
from tests.ui.conftest import make_app, settled_quietly, wait_for, writes_done

pytestmark = pytest.mark.anyio


def inbox(claude_home: Path, name: str) -> list[dict]:
    return json.loads((claude_home / "teams" / "crew" / "inboxes" / f"{name}.json").read_text())


async def shown(pilot, selector: str):
    """The widget ``selector`` names on the screen now on top, once a screen pushed shows it."""
    await wait_for(pilot, lambda: bool(pilot.app.screen.query(selector)), message=f"{selector} on screen")
    return pilot.app.screen.query_one(selector)


async def team_shown(pilot) -> None:
    await settled_quietly(pilot)
    await wait_for(pilot, lambda: bool(pilot.app.teams) and bool(pilot.app.alerts), message="the team and its alert")


async def test_m_on_a_card_writes_to_its_owner_in_claude_codes_format(claude_home: Path) -> None:
    app = make_app(team_board(claude_home))
    async with app.run_test(size=(160, 45)) as pilot:
        await team_shown(pilot)
        app.select("2")  # ana's task: she is working, so nothing is prepared
        await pilot.press("m")
        assert (await shown(pilot, "#message-input")).text == ""
        for key in ("h", "i", "space", "a", "n", "a"):
            await pilot.press(key)
        await pilot.press("enter")
        await wait_for(pilot, lambda: (claude_home / "teams" / "crew" / "inboxes" / "ana.json").exists(), message="ana's inbox written")
        [message] = inbox(claude_home, "ana")
        assert (message["from"], message["text"], message["read"]) == (local_user(), "hi ana", False)
        assert set(message) == {"from", "text", "summary", "timestamp", "read"}
        await wait_for(pilot, lambda: any("sent to ana's inbox" in n.message for n in app._notifications), message="the sending announced")


async def test_the_idle_alerts_action_is_a_prepared_nudge_one_key_away(claude_home: Path) -> None:
    app = make_app(team_board(claude_home))
    async with app.run_test(size=(160, 45)) as pilot:
        await team_shown(pilot)
        [alert] = [a for a in app.alerts if a.kind == "agent.idle_with_task"]
        assert alert.agents == ("ben",) and alert.tasks == ("3",)
        earlier = inbox(claude_home, "ben")
        before = len(earlier)
        await pilot.press("e", "m")
        prepared = (await shown(pilot, "#message-input")).text
        assert prepared.startswith("ben, the task board shows you idle while #3 (Write the parser) is still in progress")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(inbox(claude_home, "ben")) == before + 1, message="the nudge written")
        nudge = inbox(claude_home, "ben")[-1]
        assert nudge["text"] == prepared and nudge["read"] is False
        assert inbox(claude_home, "ben")[:before] == earlier  # what was there stays as it was


async def test_m_refuses_an_owner_that_has_no_inbox_and_writes_nothing(claude_home: Path) -> None:
    app = make_app(team_board(claude_home))
    async with app.run_test(size=(160, 45)) as pilot:
        await team_shown(pilot)
        app.select("4")  # no owner
        assert app.check_action("message", ()) is False  # not offered in the footer, and m does nothing
        await pilot.press("m")
        await pilot.pause()
        assert app.screen is app.screen_stack[0]
        app.action_message()  # as the command palette calls it
        await writes_done(pilot)
        assert any("#4 has no owner to write to" in n.message for n in app._notifications)
        assert app.screen is app.screen_stack[0]
        assert sorted(p.name for p in (claude_home / "teams" / "crew" / "inboxes").iterdir()) == ["ben.json", "team-lead.json"]


async def test_a_read_only_dashboard_sends_no_message(claude_home: Path) -> None:
    app = make_app(team_board(claude_home), readonly=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await team_shown(pilot)
        app.select("3")
        before = inbox(claude_home, "ben")
        await pilot.press("m")
        await pilot.press("e", "m")
        await writes_done(pilot)
        assert app.screen is app.screen_stack[0]
        assert inbox(claude_home, "ben") == before


async def test_changes_to_the_teams_files_show_live_and_a_broken_config_is_shown_not_raised(claude_home: Path) -> None:
    task_list = team_board(claude_home)
    app = make_app(task_list, watch=True, reconcile_seconds=0.2)
    async with app.run_test(size=(160, 45)) as pilot:
        await team_shown(pilot)
        panel = app.query_one(AgentsPanel)
        assert app.view.unread == {"ben": 1}
        # Claude Code delivers another message to ben: his card and line count two unread.
        team = claude_home / "teams" / "crew"
        write_inbox(team, "ben", [*inbox(claude_home, "ben"), inbox_message("ana", "The tokenizer API is ready.", "2026-11-20T23:34:00.000Z")])
        await wait_for(pilot, lambda: app.view.unread == {"ben": 2} and "✉2" in str(panel.render()), message="the new message counted")
        # config.json caught mid-rewrite: the panel says so and keeps the members it knew.
        config = (team / "config.json").read_text()
        (team / "config.json").write_text(config[: len(config) // 2])
        await wait_for(pilot, lambda: "⚠ config.json: not valid" in str(panel.render()), message="the broken config shown")
        assert "not valid JSON" in (app.teams[0].problem or "")
        assert "ben" in str(panel.render()) and app.is_running
        (team / "config.json").write_text(config)
        await wait_for(pilot, lambda: "not valid JSON" not in str(panel.render()), message="the config mended")


async def test_the_agents_panel_opens_a_members_messages_and_writes_to_it(claude_home: Path) -> None:
    app = make_app(team_board(claude_home))
    async with app.run_test(size=(160, 45)) as pilot:
        await team_shown(pilot)
        await pilot.press("A", "down", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "agent_name", None) == "ana", message="ana's messages")
        await pilot.press("escape", "A", "down", "down", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "agent_name", None) == "ben", message="ben's messages")
        conversation = str((await shown(pilot, "#agent-conversation")).render())
        assert "How far is the parser?" in conversation and "unread" in conversation and "idle (available)" in conversation
        await pilot.press("m")
        assert (await shown(pilot, "#message-input")).text.startswith("ben, the task board shows you idle")


async def test_the_idle_alert_clears_when_the_member_works_again(claude_home: Path) -> None:
    from tests.teams import member, write_team

    app = make_app(team_board(claude_home), watch=True, reconcile_seconds=0.2)
    async with app.run_test(size=(160, 45)) as pilot:
        await team_shown(pilot)
        assert [a.kind for a in app.alerts] == ["agent.idle_with_task"]
        write_team(claude_home, "crew", [
            member("team-lead", "crew", agent_type="team-lead", model="claude-opus-4-6"),
            member("ana", "crew"),
            member("ben", "crew", model="claude-haiku-4-5", isActive=True),  # ben took a new turn
        ])
        # The alert and the panel's mark come by two messages (the alerts' evaluation, the
        # agents' records), in either order: both must clear.
        await wait_for(pilot, lambda: not app.alerts, message="the alert to clear")
        await wait_for(pilot, lambda: "⚠" not in str(app.query_one(AgentsPanel).render()), message="the panel's mark to clear")
