"""Claude Code's hooks, connected to the board.

``board hooks install`` puts board's entries into Claude Code's settings; Claude Code then runs
``board hook`` on each event with the event as JSON on stdin (``handler``): every tool call is
counted on the agent's task and, for file tools, recorded as a touch; a write to a file another
agent's task holds is stopped before it happens (``guard``); sessions, sub-agents and teammates
appear in the agent registry (``registry``).

The hook runs on every tool call of every agent, so this package imports only the standard
library and board's light modules: never pydantic, the store or Textual.
"""
