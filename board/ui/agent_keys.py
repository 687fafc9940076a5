"""The keys about agents: ``m`` writes to a Claude Code team member (a card's owner, the agent
under the cursor, or the member an idle alert names, with a nudge prepared) and ``A`` moves into
the agents panel. A message is appended to the member's inbox in a worker thread, under Claude
Code's lock; a refusal is one notification and nothing is written.

``AgentKeys`` builds on ``TaskKeys`` (a key's target, a refusal) for ``BoardApp``, and reads the
agents, teams and inboxes through the session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work

from board.alerts import Alert
from board.claude.teams import why_not_messageable
from board.errors import BoardError, BoardUnavailable, os_error_line
from board.roster import RosterEntry, nudge_text
from board.text import printable
from board.ui.messages import AgentsChanged, SpendChanged
from board.ui.task_keys import TaskKeys
from board.ui.widgets.agents_panel import AgentsPanel
from board.ui.widgets.alerts_panel import AlertsPanel

if TYPE_CHECKING:
    from board.ui.screens.agent import AgentScreen

IDLE_ALERT = "agent.idle_with_task"


class AgentKeys(TaskKeys):
    """m and A, and the agents panel's and agent screen's requests, for ``BoardApp``."""

    #: Whether the side panels were shown just to reach a panel (hidden again after).
    _panels_shown_for_alerts: bool

    def _post_agents(self, *, first: bool = False) -> None:
        """Read the agents, teams and inboxes, then what each task spent; post what changed.
        Called from the board's feed (a worker thread) and after a message is sent; ``first``,
        before the first frame, on the app's thread: the agents without what their tokens and
        the tasks' cost (whole token logs, which the feed reads next, off this thread)."""
        try:
            reading = self.session.read_agents(costs=not first)
        except BoardUnavailable:
            return  # the panel keeps what it shows; the reconnect posts the agents again
        if reading is not None:
            self.post_message(AgentsChanged.of(reading))
            self.session.alerts_follower.wake()  # a member going idle or back to work is an alert's business
        if first:
            return
        spend = self.session.read_spend()
        if spend is not None:
            self.post_message(SpendChanged(spend))

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
        entry = self.session.owner_entry(task.owner)
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
        shown = self.session.graph.tasks
        held = [shown[t] for t in about if t in shown]
        prepared = nudge_text(entry.name, held) if held else ""
        why = f"{entry.name} is idle while {', '.join('#' + t.id for t in held)} {'is' if len(held) == 1 else 'are'} in progress under its name" if held else ""
        team = entry.team

        def chosen(text: str | None) -> None:
            if text:
                self.send_message(team, entry.name, text)

        self.push_screen(MessageScreen(entry.name, team, prepared=prepared, why=why, cursor_blink=self.live_clock), chosen)

    def on_agents_panel_open_agent(self, message: AgentsPanel.OpenAgent) -> None:
        from board.ui.screens.agent import AgentScreen

        self.push_screen(AgentScreen(message.entry.name, message.entry.team, self.session))

    def on_agents_panel_message_agent(self, message: AgentsPanel.MessageAgent) -> None:
        self.message_agent(message.entry)

    def on_agent_screen_message_agent(self, message: AgentScreen.MessageAgent) -> None:
        self.message_agent(message.entry)

    def on_alerts_panel_message_agent(self, message: AlertsPanel.MessageAgent) -> None:
        self.nudge_from_alert(message.alert)

    def nudge_from_alert(self, alert: Alert) -> None:
        """The action of an idle alert: a prepared message to the member it names."""
        if alert.kind != IDLE_ALERT or not alert.agents:
            self._refuse("this alert names no idle team member to write to (m nudges from an agent.idle_with_task alert)")
            return
        team = alert.key.split(":")[1] if alert.key.count(":") >= 2 else None
        entry = self.session.roster_entry(alert.agents[0], team)
        if entry is None:
            self._refuse(f"{alert.agents[0]} is no longer a member of a team working on this board")
            return
        self.message_agent(entry, tasks=alert.tasks)

    @work(thread=True, group="inbox-write")
    def send_message(self, team_name: str, name: str, text: str) -> None:
        try:
            self.session.send_message(team_name, name, text)
        except BoardError as error:
            self.call_from_thread(self._refuse, f"message to {name}: {error}")
            return
        except OSError as error:
            self.call_from_thread(self._refuse, f"message to {name}: {os_error_line(error)}")
            return
        self.call_from_thread(self.notify, printable(f"sent to {name}'s inbox (team {team_name})"), title="Message", timeout=4, markup=False)
        self._post_agents()
