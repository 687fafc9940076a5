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
    """What the palette asks of the app it serves (the dashboard's, ``BoardApp``): its actions
    are looked up by name (``action_<name>``), as Textual's own bindings are."""

    readonly: bool
    session: BoardSession

    def jump_to(self, task_id: str) -> object: ...


#: (what it says, the action's name, its key): for everyone, then only for a dashboard that writes.
PALETTE_VIEWS = (
    ("Toggle kanban / graph view", "toggle_view", "g"),
    ("Filter tasks", "filter", "/"),
    ("Show or hide cancelled tasks", "toggle_cancelled", "x"),
    ("Show or hide the agents and alerts panels", "toggle_panels", "i"),
    ("Go to the alerts (enter on one selects its task)", "alerts", "e"),
    ("Go to the agents (enter shows one and its messages)", "agents", "A"),
    ("Next theme", "next_theme", "t"),
    ("Keys and help", "help", "?"),
)
PALETTE_WRITES = (
    ("Start or resume the selected task", "start", "s"),
    ("Pause or resume the selected task", "pause", "p"),
    ("Retry, reopen or requeue the selected task", "retry", "r"),
    ("Cancel the selected task", "cancel", "c"),
    ("Assign the selected task to an agent", "assign", "a"),
    ("Undo the status a policy set on the selected task", "undo_policy", "u"),
    ("Answer the selected task's question", "answer", "w"),
    ("Message the selected task's owner (a Claude Code team member)", "message", "m"),
)


def palette_actions(app: PaletteHost) -> list[PaletteAction]:
    """The dashboard's actions (those that write, unless it is read-only)."""
    listed = PALETTE_VIEWS if app.readonly else PALETTE_VIEWS + PALETTE_WRITES
    return [(label, getattr(app, f"action_{name}"), key) for label, name, key in listed]


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
