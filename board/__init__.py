"""board: a live, dependency-aware task board for teams of AI coding agents.

Data flows one way: task files on disk -> ``board.store`` -> ``board.watch`` -> ``board.ui``.
The coordinator sits beside the UI and talks to it only through the same files.
"""

__version__ = "0.1.0"
