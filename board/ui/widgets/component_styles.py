"""Component-class styles for widgets that build their own Rich text or lines."""

from __future__ import annotations

from rich.style import Style
from textual.widget import Widget

from board.ui.card import STYLE_NAMES, component_class


def component_style(widget: Widget, class_name: str) -> Style:
    """The component class's own settings as a Rich style, to be layered over the widget's.

    Textual's partial style keeps a colour's raw value and drops its alpha, so ``$text-muted``
    or ``background: $foreground 10%`` would be painted at full strength (white on white in a
    light theme); the colours are taken from the full style instead, where the alpha is blended
    over the widget's background.
    """
    partial = widget.get_component_rich_style(class_name, partial=True)
    if partial.color is None and partial.bgcolor is None:
        return partial
    full = widget.get_component_rich_style(class_name, partial=False)
    return partial + Style(
        color=full.color if partial.color is not None else None,
        bgcolor=full.bgcolor if partial.bgcolor is not None else None,
    )


def component_styles(widget: Widget, prefix: str) -> dict[str, Style]:
    """Each of the cards' ``STYLE_NAMES`` for a widget whose component classes are ``<prefix>--<name>``."""
    return {name: component_style(widget, component_class(prefix, name)) for name in STYLE_NAMES}
