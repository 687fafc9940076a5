"""Type a filter: text, ``@owner``, ``status:failed``, ``priority:high``, ``#id``."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class FilterScreen(ModalScreen[str | None]):
    """Enter applies (empty clears), escape leaves the filter as it was."""

    BINDINGS = [Binding("escape", "dismiss_unchanged", "Keep filter", id="filter.cancel")]

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Filter tasks", id="question")
            yield Input(self.current, placeholder="text  @owner  status:ready  priority:high  #12", id="filter-input")
            yield Label("enter: apply (empty clears) · escape: keep the current filter", id="detail")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = getattr(self.app, "live_clock", True)
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_dismiss_unchanged(self) -> None:
        self.dismiss(None)
