"""Ask which of a few ways to go; answers the chosen one's value, or None (escape: nothing)."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Button, Label

from board.ui.screens.dialog import Dialog


class ChoiceScreen(Dialog[str | None]):
    """| key | action |
    |---|---|
    | the key on a button, or enter on it | that choice |
    | escape | none of them |
    """

    BINDINGS = [Binding("escape", "dismiss_none", "Back", id="choice.back")]
    DEFAULT_CSS = """
    ChoiceScreen #dialog { border: thick $error; }
    ChoiceScreen #buttons { height: auto; margin-top: 1; }
    ChoiceScreen #buttons Button { width: 100%; }
    """

    def __init__(self, question: str, detail: str, choices: list[tuple[str, str, str | None]]) -> None:
        """``choices``: (label, key, value) each; the last is the safe one, focused first."""
        super().__init__()
        self.question = question
        self.detail = detail
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Text(self.question), id="question")
            if self.detail:
                yield Label(Text(self.detail), id="detail")
            with Vertical(id="buttons"):  # one above the other: the choices are phrases
                for index, (label, key, value) in enumerate(self.choices):
                    yield Button(f"{label} ({key})", variant="error" if value is not None else "default", id=f"choice-{index}")

    def on_mount(self) -> None:
        self.query_one(f"#choice-{len(self.choices) - 1}", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(self.choices[int(str(event.button.id).removeprefix("choice-"))][2])

    def on_key(self, event: events.Key) -> None:
        for _, key, value in self.choices:
            if event.key == key:
                event.stop()
                self.dismiss(value)
                return

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
