"""Argument types shared by command groups: each refuses a bad value with one line."""

from __future__ import annotations

import argparse
import re

from board.names import LABEL_REGEX, LABEL_RULE, validate_id
from board.text import shortened


def agent_name(value: str) -> str:
    """An agent name: the same rule as an id, since it names files under ``.tasks/agents/``."""
    try:
        return validate_id(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{shortened(value)}' is not a valid agent name (letters, digits, '_' or '-', at most 64)") from None


def label(value: str) -> str:
    if not re.fullmatch(LABEL_REGEX, value):
        raise argparse.ArgumentTypeError(f"'{shortened(value)}' is not a valid label ({LABEL_RULE})")
    return value


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{shortened(value)}' is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number
