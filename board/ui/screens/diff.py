"""A task's whole diff against its base, coloured and scrollable (what ``board diff ID`` prints)."""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from board.errors import BoardError
from board.text import printable
from board.ui.session import BoardSession
from board.ui.widgets.key_footer import KeyFooter

#: Lines drawn at most: a diff longer than this is for ``board diff ID | less``.
SHOWN_LINES = 5000


class DiffScreen(Screen[None]):
    """| key | action |
    |---|---|
    | escape / q | back to the task |
    | ↑ ↓ pgup pgdn home end | scroll |
    """

    #: The board's task keys are for the details beneath, not for reading a diff.
    ACTS_ON_TASKS = False
    BINDINGS = [
        Binding("escape,q", "back", "Back", id="diff.back"),
        Binding("j,down", "scroll(1)", "Down", show=False),
        Binding("k,up", "scroll(-1)", "Up", show=False),
    ]
    DEFAULT_CSS = """
    DiffScreen { layout: vertical; }
    #diff-title { height: 1; padding: 0 1; background: $panel; color: $foreground; text-style: bold; }
    #diff-body { height: 1fr; background: $surface; }
    #diff-text { width: auto; padding: 0 1; }
    """

    def __init__(self, task_id: str, session: BoardSession) -> None:
        super().__init__()
        self.task_id = task_id
        self.session = session

    def compose(self) -> ComposeResult:
        yield Static(id="diff-title")
        with VerticalScroll(id="diff-body"):
            yield Static(Text("reading the diff…", style="italic"), id="diff-text")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#diff-body").focus()
        self._load()

    @work(thread=True, exclusive=True, group="diff")
    def _load(self) -> None:
        try:
            title, text = self.session.diff_of(self.task_id)
        except BoardError as error:
            self.app.call_from_thread(self._show, f"#{self.task_id}", None, str(error))
            return
        self.app.call_from_thread(self._show, title, text, None)

    def _show(self, title: str, text: str | None, error: str | None) -> None:
        self.query_one("#diff-title", Static).update(Text(printable(title)))
        body = self.query_one("#diff-text", Static)
        if error is not None or not text:
            body.update(Text(printable(error or "no changes against its base"), style="italic"))
            return
        lines = text.splitlines()
        shown = "\n".join(printable(line) for line in lines[:SHOWN_LINES])
        if len(lines) > SHOWN_LINES:
            shown += f"\n… {len(lines) - SHOWN_LINES:,} more lines: board diff {self.task_id}"
        body.update(Syntax(shown, "diff", theme="ansi_dark" if self.app.current_theme.dark else "ansi_light", background_color="default", word_wrap=False))

    def action_scroll(self, lines: int) -> None:
        self.query_one("#diff-body", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_back(self) -> None:
        self.dismiss(None)
