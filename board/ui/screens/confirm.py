"""Ask before a destructive action; answers True (confirm) or False."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Label

from board.ui.screens.dialog import Dialog


class ConfirmScreen(Dialog[bool]):
    """| key | action |
    |---|---|
    | y / enter on the button | confirm |
    | n / escape | keep things as they are |
    """

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]
    DEFAULT_CSS = """
    ConfirmScreen #dialog { border: thick $error; }
    #buttons { height: auto; align-horizontal: right; margin-top: 1; }
    #buttons Button { margin-left: 2; }
    """

    def __init__(self, question: str, detail: str = "", *, confirm_label: str = "Yes") -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Text(self.question), id="question")
            if self.detail:
                yield Label(Text(self.detail), id="detail")
            with Horizontal(id="buttons"):
                yield Button(f"{self.confirm_label} (y)", variant="error", id="yes")
                yield Button("Keep it (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
