"""The footer of keys, fitted to its width.

Textual's footer lets keys that do not fit run off the right edge, so on a narrow terminal the
two a newcomer needs most, help and quit, were the ones cut (and a clipped key left a stray
letter). This footer leaves out keys from the right until the rest fit, and always keeps help
and quit; every key, shown or not, is listed by ``?``.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: Actions whose keys are always shown, however narrow the footer.
ALWAYS_SHOWN = frozenset({"help", "quit", "back"})


class KeyFooter(Footer):
    """A footer that shows the keys that fit, help and quit always among them."""

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        active = self.screen.active_bindings
        by_action: dict[str, tuple[Binding, bool, str]] = {}
        for _, binding, enabled, tooltip in active.values():
            if binding.show:
                by_action.setdefault(binding.action, (binding, enabled, tooltip))
        keys = list(by_action.values())
        palette = active.get(self.app.COMMAND_PALETTE_BINDING) if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE else None
        room = (self.size.width or self.app.size.width) - (self._width(palette[1]) + 2 if palette else 0)
        while keys and sum(self._width(binding) for binding, _, _ in keys) > room:
            optional = [n for n, (binding, _, _) in enumerate(keys) if binding.action not in ALWAYS_SHOWN]
            if not optional:
                break
            del keys[optional[-1]]
        self.styles.grid_size_columns = len(keys)
        for binding, enabled, tooltip in keys:
            yield FooterKey(
                binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                disabled=not enabled, tooltip=tooltip,
            ).data_bind(compact=Footer.compact)
        if palette is not None:
            _, binding, enabled, tooltip = palette
            yield FooterKey(
                binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                classes="-command-palette", disabled=not enabled, tooltip=binding.tooltip or binding.description,
            )

    def _width(self, binding: Binding) -> int:
        """Cells one key takes: its key, its description, their padding and the gap after it."""
        key, description = self.app.get_key_display(binding), binding.description
        return len(key) + len(description) + (2 if self.compact else 3)

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self.recompose)

    def watch_compact(self, compact: bool) -> None:
        if self.is_attached:
            self.call_after_refresh(self.recompose)
