"""Answer a task that waits for a person: its question above, the answer typed below."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label

from board.model import Task
from board.ui.screens.dialog import Dialog
from board.text import printable


class AnswerScreen(Dialog[str | None]):
    """Enter sends the answer (the task goes back to its owner), escape leaves the task waiting."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Leave it waiting", id="answer.cancel")]
    DEFAULT_CSS = """
    #asked { width: 100%; margin-bottom: 1; color: $warning; }
    """

    def __init__(self, task: Task, goes_to: str, *, cursor_blink: bool = True) -> None:
        super().__init__()
        self.cursor_blink = cursor_blink
        self.asking = task
        #: Where the answer sends the task ("back to dave", "back to the queue ...").
        self.goes_to = goes_to

    def compose(self) -> ComposeResult:
        task = self.asking
        with Vertical(id="dialog"):
            yield Label(Text(f"#{task.id} {printable(task.subject)}"), id="question")
            yield Label(Text(printable(task.question or "(it did not say what it needs)", multiline=True)), id="asked")
            yield Input(placeholder="your answer", id="answer-input")
            yield Label(Text(f"enter: answer, and it goes {printable(self.goes_to)} · escape: leave it waiting"), id="detail")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = self.cursor_blink
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.query_one("#detail", Label).update("an empty answer tells the agent nothing: type one, or escape")
            self.query_one("#detail", Label).add_class("problem")
            return
        self.dismiss(event.value)
