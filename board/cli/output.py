"""Printing a command's ``--json`` answer; how tasks are shown is ``board.present``'s."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")
