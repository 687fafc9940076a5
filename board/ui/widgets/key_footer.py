"""The footer of keys, fitted to its width.

Textual's footer lets keys that do not fit run off the right edge, so on a narrow terminal the
two a newcomer needs most, help and quit, were the ones cut (and a clipped key left a stray
letter). This footer leaves out keys from the right until the rest fit, and always keeps help
and quit; every key, shown or not, is listed by ``?``.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: Actions whose keys are always shown, however narrow the footer.
ALWAYS_SHOWN = frozenset({"help", "quit", "back"})
#: Below this many columns (a phone's browser, a split pane) the board shows one lane at a time
#: (five lanes in 45 columns would leave each a few letters of its cards) and the keys may take
#: several rows, up to a sixth of the screen (on a phone they are tapped, not typed).
ONE_LANE_BELOW = 80
NARROW_ROWS = 8


class KeyFooter(Footer):
    """A footer that shows the keys that fit, help and quit always among them.

    Every key is composed once; which of them show is a matter of their ``display``, set at once
    for a new width (``fit``), so a resize draws the right keys in its first frame instead of
    composing them again a frame later.
    """

    def __init__(self, *args: Any, keys_at_once: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: The keys composed, with their bindings, in footer order (the palette's apart).
        self._keys: list[tuple[FooterKey, Binding]] = []
        #: The width the keys were last fitted to (None: the footer's own).
        self._fitted_width: int | None = None
        #: What the composed keys show (``_signature``), None before any.
        self._composed: tuple[object, ...] | None = None
        #: The palette's binding and key, when the footer shows one.
        self._palette_binding: Binding | None = None
        self._palette_key: FooterKey | None = None
        if keys_at_once:
            # Composed with its keys from the start, not once the screen signals that its
            # bindings changed (a frame after the first): for a screen whose keys are the app's,
            # which its first focus does not change.
            self.set_reactive(Footer._bindings_ready, True)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        shown, palette = self._keys_to_show(self.screen)
        self._composed = self._signature(shown, palette)
        self._keys = [(self._key(binding, enabled, tooltip), binding) for binding, enabled, tooltip in shown]
        self._palette_binding = self._palette_key = None
        if palette is not None:
            binding, enabled, tooltip = palette
            self._palette_binding = binding
            self._palette_key = self._key(binding, enabled, binding.tooltip or binding.description, palette=True)
        self._fit_keys(self._fitted_width or self.size.width or self.app.size.width)
        for key, _ in self._keys:
            yield key
        if self._palette_key is not None:
            yield self._palette_key

    def _keys_to_show(self, screen: Screen) -> tuple[list[tuple[Binding, bool, str]], tuple[Binding, bool, str] | None]:
        """The bindings the footer shows on ``screen`` (one per action), each with whether it is
        enabled and its tooltip; and the palette's, when it has one."""
        active = screen.active_bindings
        by_action: dict[str, tuple[Binding, bool, str]] = {}
        for _, binding, enabled, tooltip in active.values():
            if binding.show:
                by_action.setdefault(binding.action, (binding, enabled, tooltip))
        palette = active.get(self.app.COMMAND_PALETTE_BINDING) if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE else None
        return list(by_action.values()), (palette[1:] if palette is not None else None)

    def _signature(self, shown: list[tuple[Binding, bool, str]], palette: tuple[Binding, bool, str] | None) -> tuple[object, ...]:
        """What the keys composed from these bindings look like: equal, the same footer."""
        return tuple(
            (binding.key, self.app.get_key_display(binding), binding.description, binding.action, binding.tooltip, enabled, tooltip)
            for binding, enabled, tooltip in [*shown, *([palette] if palette is not None else [])]
        )

    def _key(self, binding: Binding, enabled: bool, tooltip: str, *, palette: bool = False) -> FooterKey:
        """A key as Textual's footer makes it, born in its style: a key starts compact, and
        its first binding to the footer's style restyled it twice more as it mounted (26
        restyles for 13 keys). The palette's key stays compact, as in Textual's footer."""
        classes = "-command-palette" if palette else ""
        key = FooterKey(binding.key, self.app.get_key_display(binding), binding.description, binding.action, disabled=not enabled, tooltip=tooltip, classes=classes)
        compact = True if palette else self.compact
        key.set_reactive(FooterKey.compact, compact)
        key.set_class(compact, "-compact", update=False)
        return key if palette else key.data_bind(compact=Footer.compact)

    def bindings_changed(self, screen: Screen) -> None:
        """Textual composes the footer again whenever the screen says its bindings may have
        changed, which the board says at every move of the cursor: only when the keys it
        would show are not those it shows (a new key, a key enabled or disabled)."""
        if screen is self.screen and self._bindings_ready and self._composed == self._signature(*self._keys_to_show(screen)):
            return
        super().bindings_changed(screen)

    def fit(self, width: int, *, compact: bool) -> None:
        """Show the keys that fit in ``width`` cells, in the compact style or not (the app calls
        this with a new terminal width before the screen is laid out at it)."""
        self._fitted_width = width
        self.compact = compact  # refits (watch_compact)
        self._fit_keys(width)

    def _fit_keys(self, width: int) -> None:
        """Hide keys from the right until the rest fit; help and quit always show. On a narrow
        screen (a phone's browser, where a key is tapped, not typed) the keys first take up to
        ``NARROW_ROWS`` rows."""
        palette = self._palette_binding
        if width < ONE_LANE_BELOW and self._fit_in_rows(width - 1):
            self._show_palette_key(False)  # ctrl+p still opens it; the room goes to the keys
            return
        self._show_palette_key(True)
        room = width - (self._width(palette) + 2 if palette is not None else 0)
        self.styles.layout = "horizontal"
        self.styles.height = 1
        shown = [binding for _, binding in self._keys]
        while shown and sum(self._width(binding) for binding in shown) > room:
            optional = [n for n, binding in enumerate(shown) if binding.action not in ALWAYS_SHOWN]
            if not optional:
                break
            del shown[optional[-1]]
        for key, binding in self._keys:
            key.display = any(binding is kept for kept in shown)
        self.styles.grid_size_columns = max(1, len(shown))

    def _fit_in_rows(self, room: int) -> bool:
        """Every key, in a grid of the fewest rows (at most ``NARROW_ROWS``) whose columns fit
        in ``room`` cells; False when they do not."""
        # A key in a grid cell: its key and description with a cell of padding around each.
        widths = [len(self.app.get_key_display(binding)) + len(binding.description) + 4 for _, binding in self._keys]
        most_rows = max(2, min(NARROW_ROWS, self.app.size.height // 6))
        for columns in range(len(widths), 0, -1):
            rows = -(-len(widths) // columns)
            if rows > most_rows:
                return False
            column_widths = [max(widths[first::columns]) for first in range(columns)]
            if sum(column_widths) <= room:
                for key, _ in self._keys:
                    key.display = True
                self.styles.layout = "grid"
                self.styles.grid_size_columns = columns
                self.styles.grid_columns = " ".join(map(str, column_widths))
                self.styles.height = rows
                return True
        return False

    def _show_palette_key(self, show: bool) -> None:
        if self._palette_key is not None:
            self._palette_key.display = show

    def _width(self, binding: Binding) -> int:
        """Cells one key takes: its key, its description, their padding and the gap after it."""
        key, description = self.app.get_key_display(binding), binding.description
        return len(key) + len(description) + (2 if self.compact else 3)

    def on_resize(self, event: events.Resize) -> None:
        # On a screen that did not fit the footer before its layout (a dialog's, a detail view's).
        if event.size.width != self._fitted_width:
            self._fitted_width = None
            self._fit_keys(event.size.width)

    def watch_compact(self, compact: bool) -> None:
        if self.is_attached:
            self._fit_keys(self._fitted_width or self.size.width or self.app.size.width)
