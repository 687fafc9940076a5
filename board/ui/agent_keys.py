"""The keys about agents: ``m`` writes to a Claude Code team member (a card's owner, the agent
under the cursor, or the member an idle alert names, with a nudge prepared) and ``A`` moves into
the agents panel. A message is appended to the member's inbox in a worker thread, under Claude
Code's lock; a refusal is one notification and nothing is written.
"""

from __future__ import annotations

from textual import work

from board.alerts import Alert
from board.claude.teams import append_message, why_not_messageable
from board.errors import BoardError, os_error_line
from board.roster import RosterEntry, build_roster, nudge_text
from board.text import printable
from board.ui.task_keys import local_user
from board.ui.widgets.agents_panel import AgentsPanel
from board.ui.widgets.alerts_panel import AlertsPanel

IDLE_ALERT = "agent.idle_with_task"


class AgentKeys:
    """For ``BoardApp`` (a mixin: Textual looks for a binding's action on the app)."""

    def roster(self) -> list[RosterEntry]:
        return build_roster(self.agents, self.teams, self.owned.as_mapping(), self.now(), self.settings.agent_stale_after, self.inboxes)

    def roster_entry(self, name: str, team: str | None) -> RosterEntry | None:
        return next((e for e in self.roster() if e.name == name and (team is None or e.team == team)), None)

    def owner_entry(self, owner: str) -> RosterEntry | None:
        """The team member a task's owner is (the first team's, if several have the name)."""
        return next((e for e in self.roster() if e.name == owner and e.member_of_team), None)

    # -- keys ---------------------------------------------------------------------------------

    def action_agents(self) -> None:
        """Move the cursor into the agents panel (showing the side panels for the moment if hidden)."""
        while len(self.screen_stack) > 1:
            self.pop_screen()
        side = self.query_one("#side")
        if side.has_class("hidden"):
            side.remove_class("hidden")
            self._panels_shown_for_alerts = True
        self.query_one(AgentsPanel).focus()

    def action_message(self) -> None:
        """Write to the owner of the selected task (a nudge, if it sits idle with this task)."""
        task = self._target()
        if task is None:
            return
        if not task.owner:
            self._refuse(f"#{task.id} has no owner to write to")
            return
        entry = self.owner_entry(task.owner)
        if entry is None:
            self._refuse(f"#{task.id}'s owner {task.owner} is not a member of a Claude Code team working on this board, so it has no inbox")
            return
        self.message_agent(entry)

    def message_agent(self, entry: RosterEntry, *, tasks: tuple[str, ...] | None = None) -> None:
        """Open the message dialog for ``entry``; a member idle with work in progress gets a
        nudge prepared (about ``tasks``, default the ones it holds)."""
        from board.ui.screens.message import MessageScreen

        if self.readonly:
            self._refuse("the dashboard is read-only: it sends no messages")
            return
        if entry.team is None:
            self._refuse(f"{entry.name} is a registered agent, not a Claude Code team member: it has no inbox")
            return
        if not entry.messageable:
            self._refuse(why_not_messageable(entry.name))
            return
        about = tasks if tasks is not None else (entry.tasks if entry.idle_with_task else ())
        held = [self.graph.tasks[t] for t in about if t in self.graph.tasks]
        prepared = nudge_text(entry.name, held) if held else ""
        why = f"{entry.name} is idle while {', '.join('#' + t.id for t in held)} {'is' if len(held) == 1 else 'are'} in progress under its name" if held else ""
        team = entry.team

        def chosen(text: str | None) -> None:
            if text:
                self.send_message(team, entry.name, text)

        self.push_screen(MessageScreen(entry.name, team, prepared=prepared, why=why), chosen)

    def on_agents_panel_open_agent(self, message: AgentsPanel.OpenAgent) -> None:
        from board.ui.screens.agent import AgentScreen

        self.push_screen(AgentScreen(message.entry.name, message.entry.team))

    def on_agents_panel_message_agent(self, message: AgentsPanel.MessageAgent) -> None:
        self.message_agent(message.entry)

    def on_agents_panel_left(self, message: AgentsPanel.Left) -> None:
        self._leave_alerts()

    def on_alerts_panel_message_agent(self, message: AlertsPanel.MessageAgent) -> None:
        self.nudge_from_alert(message.alert)

    def nudge_from_alert(self, alert: Alert) -> None:
        """The action of an idle alert: a prepared message to the member it names."""
        if alert.kind != IDLE_ALERT or not alert.agents:
            self._refuse("this alert names no idle team member to write to (m nudges from an agent.idle_with_task alert)")
            return
        team = alert.key.split(":")[1] if alert.key.count(":") >= 2 else None
        entry = self.roster_entry(alert.agents[0], team)
        if entry is None:
            self._refuse(f"{alert.agents[0]} is no longer a member of a team working on this board")
            return
        self.message_agent(entry, tasks=alert.tasks)

    @work(thread=True, group="inbox-write")
    def send_message(self, team_name: str, name: str, text: str) -> None:
        team = next((t for t in self.teams if t.name == team_name), None)
        try:
            if team is None:
                raise BoardError(f"team {team_name} is no longer working on this board")
            append_message(team, name, local_user(), text)
        except BoardError as error:
            self.call_from_thread(self._refuse, f"message to {name}: {error}")
            return
        except OSError as error:
            self.call_from_thread(self._refuse, f"message to {name}: {os_error_line(error)}")
            return
        self.call_from_thread(self.notify, printable(f"sent to {name}'s inbox (team {team_name})"), title="Message", timeout=4, markup=False)
        self._post_agents()
