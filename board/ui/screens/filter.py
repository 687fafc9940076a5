"""Type a filter: text, ``@owner``, ``status:failed``, ``priority:high``, ``label:api``, ``#id``."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label

from board.ui.screens.dialog import Dialog
from board.ui.task_filter import TaskQuery


HINT = "enter: apply (empty clears) · escape: keep the current filter"


class FilterScreen(Dialog[str | None]):
    """Enter applies (empty clears), escape leaves the filter as it was."""

    BINDINGS = [Binding("escape", "dismiss_unchanged", "Keep filter", id="filter.cancel")]

    def __init__(self, current: str, labels_in_use: set[str] | None = None, *, cursor_blink: bool = True) -> None:
        super().__init__()
        self.cursor_blink = cursor_blink
        self.current = current
        self.labels_in_use = labels_in_use or set()

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Filter tasks", id="question")
            yield Input(self.current, placeholder="text  @owner  status:ready  priority:high  label:api  #12", id="filter-input")
            yield Label(HINT, id="detail", markup=False)

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = self.cursor_blink
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        problems = TaskQuery(event.value).problems(self.labels_in_use)
        if problems:
            # Said here, with the text kept to correct, instead of an empty board.
            self.query_one("#detail", Label).update("; ".join(problems))
            self.query_one("#detail", Label).add_class("problem")
            return
        self.dismiss(event.value)

    def action_dismiss_unchanged(self) -> None:
        self.dismiss(None)
