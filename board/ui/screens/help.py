"""Every key the dashboard answers to, from the bindings themselves (so a rebind shows here)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from board.ui.graph_layout import COLLAPSE_ABOVE
from board.ui.screens.dialog import Dialog
from board.ui.widgets.graph_view import NEIGHBOURHOOD_LIMIT, WHOLE_GRAPH_LIMIT


MOVES = [
    ("↑ ↓ ← → / h j k l", "move between cards (graph: nodes and waves)"),
    ("home end pgup pgdn", "first, last card; a page up or down"),
    ("ctrl+p", "command palette: actions, themes, jump to a task"),
    ("escape", "clear the filter; close a dialog; leave a focus view"),
    ("f", "graph: only the selected task's chain (f, escape: back)"),
]


FILTER_HELP = (
    "Filter (/): words match the id, subject or owner; @alice or owner:alice; status:ready, "
    "status:waiting-deps, status:fail; priority:high; #12. All terms must match; an empty filter "
    "or escape on the board clears it."
)


class HelpScreen(Dialog[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss(None)", "Close", id="help.close")]
    DEFAULT_CSS = """
    HelpScreen #dialog { width: 90; }
    """

    def __init__(self, *, read_only_actions: frozenset[str] = frozenset()) -> None:
        super().__init__()
        #: Actions the dashboard will not take (it is read-only): marked so.
        self.read_only_actions = read_only_actions

    def compose(self) -> ComposeResult:
        table = Table(show_header=False, box=None, padding=(0, 2, 0, 0), expand=False)
        table.add_column(style="bold")
        table.add_column()
        for keys, what in MOVES:
            table.add_row(Text(keys), Text(what))
        for binding in self.app.BINDINGS:
            assert isinstance(binding, Binding)
            if binding.action == "clear_filter":
                continue
            keys = ", ".join(self.app.get_key_display(Binding(key, "")) for key in binding.key.split(","))
            description = binding.description
            # Only read-only mode marks a key: some keys wait for the right card (w, m), not for leave.
            if binding.action.split("(")[0] in self.read_only_actions:
                description += " (read-only)"
            table.add_row(Text(keys), Text(description))
        lanes = Text(
            "\nColumns: Waiting on deps · Ready · In progress (paused, needs-you badges) · Blocked/Failed · Done.\n"
            "Cards: #id, priority (‼ critical ! high · medium ↓ low), owner, age; progress, ⚒ tool calls, "
            "✗ failed calls, ⧗ open dependencies, ⚠ alerts (coloured by the worst; a count when several), "
            "✉ messages its owner has not read; "
            "⚙ after a status: a policy set it (u takes it back). "
            "▲ marks the selected task's blockers, ▼ its dependents.\n"
            "Alerts (e): worst first with their age; enter on one selects its task, on a group lists it; m on an idle "
            "team member's alert writes it a prepared nudge; escape goes back.\n"
            "Agents (A): ● working ○ idle ✗ stale or gone; ★ a team's lead, ⚠ idle with a task in progress, ✉ unread "
            "messages; enter shows an agent and its messages, m writes to it.\n"
            "Graph (g): waves left to right under headers that stay on top; the selected task's chain (all it needs, "
            "all that waits on it) bright, the rest dimmed; f shows that chain alone. On a board of more than "
            f"{COLLAPSE_ABOVE} tasks a wave whose tasks are all done shrinks to ✓ and its count; past "
            f"{WHOLE_GRAPH_LIMIT:,} tasks the graph shows the selected task's nearest {NEIGHBOURHOOD_LIMIT:,} relatives.\n\n"
            + FILTER_HELP
        )
        with VerticalScroll(id="dialog"):
            yield Static("Keys", id="question")
            yield Static(table)
            yield Static(lanes, id="detail")
