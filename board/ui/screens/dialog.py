"""What every modal dialog of the dashboard shares: a framed box in the middle of the dimmed board,
a bold question, a muted line below it that turns red when the answer is not acceptable."""

from __future__ import annotations

from textual.screen import ModalScreen, ScreenResultType


class Dialog(ModalScreen[ScreenResultType]):
    """A modal screen whose ``compose`` puts its content in a container with ``id="dialog"``:
    ``#question`` on top, ``#detail`` (class ``problem`` for a mistake) below."""

    # The backdrop is set for ``:ansi`` too: ModalScreen makes it transparent there.
    DEFAULT_CSS = """
    Dialog {
        align: center middle;
        background: $background 60%;
        &:ansi { background: $background 60%; }
    }
    #dialog {
        width: 72;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: thick $primary;
        background: $surface;
        padding: 1 2;
    }
    #question { text-style: bold; width: 100%; margin-bottom: 1; }
    #detail { color: $text-muted; width: 100%; margin-top: 1; }
    #detail.problem { color: $error; }
    """
