"""The names a person or an agent gives a command or a tool (a task id, an agent name, a
label), each checked once for the command line and the MCP server alike: a bad one is a
``ValueError`` whose message is the one line either front end shows.

Standard library only: the command line checks its arguments before it loads anything else.
"""

from __future__ import annotations

import re

from board.names import LABEL_REGEX, LABEL_RULE, validate_id
from board.text import shortened


def task_id(value: str) -> str:
    return validate_id(value)


def agent_name(value: str) -> str:
    """An agent name: the same rule as an id, since it names files under ``.tasks/agents/``."""
    try:
        return validate_id(value)
    except ValueError:
        raise ValueError(f"'{shortened(value)}' is not a valid agent name (letters, digits, '_' or '-', at most 64)") from None


def label(value: str) -> str:
    if not re.fullmatch(LABEL_REGEX, value):
        raise ValueError(f"'{shortened(value)}' is not a valid label ({LABEL_RULE})")
    return value
