"""What the command line does before anything else, to start fast.

A hook or a script runs board many times a minute, so a one-shot command should pay only for
what it uses. pydantic looks for plugins (other packages' entry points) the first time a model
is built, and that search imports ``importlib.metadata`` and reads every installed package's
metadata: about 15-20 ms of every command here. A plugin observing board's own models has
nothing to do in a command that lives a tenth of a second, so the command line skips the search.
Library users of ``board`` keep pydantic's behaviour: this runs only from ``board.cli.main``.
"""

from __future__ import annotations

import sys
from types import ModuleType

_LOADER = "pydantic.plugin._loader"


class _NoPluginsLoader(ModuleType):
    """Stands in for pydantic's plugin loader: no plugins. Any other name it is asked for loads
    the real loader, so a pydantic that expects more of the module keeps working."""

    @staticmethod
    def get_plugins() -> tuple[()]:
        return ()

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):  # the import system asking what kind of module this is
            raise AttributeError(name)
        del sys.modules[_LOADER]
        import importlib

        real = importlib.import_module(_LOADER)
        return getattr(real, name)


def skip_pydantic_plugins() -> None:
    """Make pydantic find no plugins, without looking (unless its loader already looked)."""
    sys.modules.setdefault(_LOADER, _NoPluginsLoader(_LOADER))
