"""The board's own screen: the dashboard's widgets, fitted to a new terminal size before it is
laid out for it."""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.screen import Screen


class BoardScreen(Screen[None]):
    """The first screen, holding the board (the app composes onto it).

    ``fit`` is the app's: what a width shows (the side panels, the footer's keys). It runs as
    the resize reaches this screen, before the screen lays itself out at the new size, so the
    first frame drawn is the new screen whole: fitted afterwards, the old arrangement would be
    laid out and drawn once more first, clipped to the new size.
    """

    #: The app focuses the board itself as it mounts (``BoardApp.on_mount``), marked focused
    #: before the screen's first restyle of every widget; Textual's own first focus restyled
    #: the board's widgets once more just before that. Back on this screen with nothing
    #: focused, ``refocus`` gives the keys to the board again, as Textual's would have.
    AUTO_FOCUS = ""

    def __init__(self, fit: Callable[[int], None], refocus: Callable[[], None]) -> None:
        super().__init__(id="_default")
        self.fit = fit
        self.refocus = refocus

    def on_screen_resume(self) -> None:
        if self.focused is None:
            self.refocus()

    def on_resize(self, event: events.Resize) -> None:
        # Runs before ``Screen._on_resize``, which lays the screen out at ``event.size``.
        self.fit(event.size.width)
