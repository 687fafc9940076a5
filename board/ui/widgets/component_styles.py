"""Component-class styles for widgets that build their own Rich text or lines."""

from __future__ import annotations

from rich.style import Style
from textual.widget import Widget

from board.ui.card import STYLE_NAMES, component_class

#: How each of the cards' ``STYLE_NAMES`` looks: the same in the kanban's columns and the graph.
CARD_STYLES = {
    "id": "text-style: bold; color: $foreground;",
    "subject": "color: $foreground;",
    "owner": "color: $secondary;",
    "muted": "color: $text-muted;",
    "failures": "color: $error; text-style: bold;",
    "bar-empty": "color: $foreground 20%;",
    "blocker": "color: $warning; text-style: bold;",
    "dependent": "color: $secondary; text-style: bold;",
    "selected": "background: $primary 45%;",
    "related": "background: $foreground 10%;",
    "priority-critical": "color: $error; text-style: bold;",
    "priority-high": "color: $warning; text-style: bold;",
    "priority-medium": "color: $text-muted;",
    "priority-low": "color: $text-muted;",
    "waiting-deps": "color: $text-muted;",
    "ready": "color: $primary;",
    "in_progress": "color: $accent;",
    "waiting": "color: $warning;",
    "paused": "color: $warning;",
    "blocked": "color: $error;",
    "failed": "color: $error;",
    "completed": "color: $success;",
    "cancelled": "color: $text-disabled;",
    "critical-path": "color: $accent; text-style: bold;",
    "edge": "color: $foreground 45%;",
    "alert-error": "color: $error; text-style: bold;",
    "alert-warning": "color: $warning; text-style: bold;",
    "alert-info": "color: $primary;",
}


#: The frame every panel of the board is drawn in (columns, agents, alerts): a rounded border
#: with its title, on the surface colour.
PANEL_FRAME = (
    "border: round $panel-lighten-2; border-title-color: $foreground; border-title-style: bold; "
    "border-subtitle-color: $text-muted; background: $surface;"
)


def card_css(widget_type: str, prefix: str) -> str:
    """``CARD_STYLES`` as the component-class rules of one widget, for its ``DEFAULT_CSS``."""
    return "".join(f"{widget_type} > .{component_class(prefix, name)} {{ {CARD_STYLES[name]} }}\n" for name in STYLE_NAMES)


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


class CardStyles(Widget):
    """The cards' styles, worked out once for all of the kanban's columns.

    Textual works out a widget's component styles again at every restyle of it (its mount, a
    change of focus or theme), one virtual node per component class: 28 for the cards' styles.
    Declared by each of five columns, that was a sixth of the time to the first frame. Never
    shown; drawn on the columns' own surface, so colours with an alpha blend as they do on a
    column.
    """

    COMPONENT_CLASSES = {component_class("card", name) for name in STYLE_NAMES}
    DEFAULT_CSS = "CardStyles { display: none; background: $surface; }\n" + card_css("CardStyles", "card")

    def __init__(self) -> None:
        super().__init__()
        self._by_name: dict[str, Style] | None = None

    def notify_style_update(self) -> None:
        self._by_name = None
        super().notify_style_update()

    @property
    def by_name(self) -> dict[str, Style]:
        """Each of the cards' ``STYLE_NAMES`` as a Rich style."""
        if self._by_name is None:
            self._by_name = component_styles(self, "card")
        return self._by_name
