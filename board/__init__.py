"""board: a live, dependency-aware task board for teams of AI coding agents.

Data flows one way: task files or a database -> ``board.store`` -> its follower
(``Store.follow``) -> ``board.ui``. The coordinator, Claude Code's hooks (``board.claude``) and
the MCP server (``board.mcp``) sit beside the UI and reach the board only through the store.
"""

__version__ = "0.1.0"
