"""``board mcp``: the board served to agents over the Model Context Protocol (``server``), and
kept current for subscribed clients (``follow``). Only ``board mcp`` loads it, so other commands
never load the ``mcp`` SDK."""
