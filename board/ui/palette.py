"""The command palette: the dashboard's actions by name, and every task by id or subject."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from textual.command import Hit, Hits, Provider
from textual.content import Content

from board.text import printable
from board.ui.session import BoardSession

#: A palette entry: what it says, what it does, the key that does the same.
PaletteAction = tuple[str, Callable[[], object], str]


class PaletteHost(Protocol):
    """What the palette asks of the app it serves (the dashboard's, ``BoardApp``)."""

    readonly: bool
    session: BoardSession

    def jump_to(self, task_id: str) -> object: ...
    def action_toggle_view(self) -> object: ...
    def action_filter(self) -> object: ...
    def action_toggle_cancelled(self) -> object: ...
    def action_toggle_panels(self) -> object: ...
    def action_alerts(self) -> object: ...
    def action_agents(self) -> object: ...
    def action_next_theme(self) -> object: ...
    def action_help(self) -> object: ...
    def action_start(self) -> object: ...
    def action_pause(self) -> object: ...
    def action_retry(self) -> object: ...
    def action_cancel(self) -> object: ...
    def action_assign(self) -> object: ...
    def action_undo_policy(self) -> object: ...
    def action_answer(self) -> object: ...
    def action_message(self) -> object: ...


def palette_actions(app: PaletteHost) -> list[PaletteAction]:
    """The dashboard's actions (those that write, unless it is read-only)."""
    actions: list[PaletteAction] = [
        ("Toggle kanban / graph view", app.action_toggle_view, "g"),
        ("Filter tasks", app.action_filter, "/"),
        ("Show or hide cancelled tasks", app.action_toggle_cancelled, "x"),
        ("Show or hide the agents and alerts panels", app.action_toggle_panels, "i"),
        ("Go to the alerts (enter on one selects its task)", app.action_alerts, "e"),
        ("Go to the agents (enter shows one and its messages)", app.action_agents, "A"),
        ("Next theme", app.action_next_theme, "t"),
        ("Keys and help", app.action_help, "?"),
    ]
    if not app.readonly:
        actions += [
            ("Start or resume the selected task", app.action_start, "s"),
            ("Pause or resume the selected task", app.action_pause, "p"),
            ("Retry, reopen or requeue the selected task", app.action_retry, "r"),
            ("Cancel the selected task", app.action_cancel, "c"),
            ("Assign the selected task to an agent", app.action_assign, "a"),
            ("Undo the status a policy set on the selected task", app.action_undo_policy, "u"),
            ("Answer the selected task's question", app.action_answer, "w"),
            ("Message the selected task's owner (a Claude Code team member)", app.action_message, "m"),
        ]
    return actions


class TaskCommands(Provider):
    """Command palette: act on the selected task, jump to a task by id or subject."""

    async def search(self, query: str) -> Hits:
        app: PaletteHost = self.app  # type: ignore[assignment]
        matcher = self.matcher(query)
        for label, action, help_text in palette_actions(app):
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), action, help=help_text)
        if len(query) >= 1:
            shown = 0
            for task in app.session.graph.tasks.values():
                label = f"#{task.id} {printable(task.subject)}"
                score = matcher.match(label)
                if score > 0:
                    # Plain content: a subject is text, never markup (highlighting parses markup).
                    yield Hit(score * 0.9, Content(label), lambda t=task.id: app.jump_to(t), help="go to task")
                    shown += 1
                    if shown >= 50:
                        break
