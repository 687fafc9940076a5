"""The command palette: the dashboard's actions by name, and every task by id or subject."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.command import Hit, Hits, Provider
from textual.content import Content

from board.text import printable

if TYPE_CHECKING:
    from board.ui.app import BoardApp

#: A palette entry: what it says, what it does, the key that does the same.
PaletteAction = tuple[str, Callable[[], object], str]


def palette_actions(app: BoardApp) -> list[PaletteAction]:
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
        app: BoardApp = self.app  # type: ignore[assignment]
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
