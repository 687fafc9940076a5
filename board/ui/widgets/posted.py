"""The base of the messages a widget posts about itself."""

from __future__ import annotations

from textual.message import Message
from textual.widget import Widget


class Posted(Message):
    """A message about the widget that posted it: ``control`` is that widget, so a handler (or an
    ``@on(..., "#id")`` selector) can tell which of several alike widgets it came from."""

    def __init__(self, widget: Widget) -> None:
        self.widget = widget
        super().__init__()

    @property
    def control(self) -> Widget:
        return self.widget
