"""Write to a Claude Code team member: the message typed (or prepared, for a nudge) and sent to
its inbox."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Label, TextArea

from board.claude.teams import MAX_MESSAGE_CHARS
from board.text import printable
from board.ui.screens.dialog import Dialog


class MessageArea(TextArea):
    """The message, wrapped so a prepared one reads whole; enter sends it (no line breaks:
    a message from the dashboard is one paragraph)."""

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            self.text = text
            super().__init__()

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self.text))
            return
        await super()._on_key(event)


class MessageScreen(Dialog[str | None]):
    """Enter sends the message to the member's inbox, escape sends nothing."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="message.cancel")]
    DEFAULT_CSS = """
    #why { width: 100%; margin-bottom: 1; color: $warning; }
    #message-input { height: 6; }
    """

    def __init__(self, name: str, team: str, *, prepared: str = "", why: str = "", cursor_blink: bool = True) -> None:
        super().__init__()
        self.cursor_blink = cursor_blink
        self.recipient = name
        self.team = team
        self.prepared = prepared
        #: What the prepared message answers ("ben is idle while #4 is in progress").
        self.why = why

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Text(f"Message {printable(self.recipient)} (team {printable(self.team)})"), id="question")
            if self.why:
                yield Label(Text(printable(self.why)), id="why")
            yield MessageArea(self.prepared, soft_wrap=True, show_line_numbers=False, id="message-input")
            yield Label(Text(f"enter: send to {printable(self.recipient)}'s inbox · escape: send nothing"), id="detail")

    def on_mount(self) -> None:
        field = self.query_one(MessageArea)
        field.cursor_blink = self.cursor_blink
        field.move_cursor(field.document.end)
        field.focus()

    def on_message_area_submitted(self, event: MessageArea.Submitted) -> None:
        text = " ".join(event.text.split())
        problem = ""
        if not text:
            problem = "an empty message tells the agent nothing: type one, or escape"
        elif len(text) > MAX_MESSAGE_CHARS:
            problem = f"the message is {len(text):,} characters; at most {MAX_MESSAGE_CHARS:,}"
        if problem:
            self.query_one("#detail", Label).update(problem)
            self.query_one("#detail", Label).add_class("problem")
            return
        self.dismiss(text)
