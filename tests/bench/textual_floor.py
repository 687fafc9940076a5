"""The least a Textual dashboard does to show a board: a header, the subjects of the task files
(read with ``json``) in one ``Static``, and a footer. ``bench_peers.py`` starts it beside board
and its peers, so each run shows how much of board's start is Textual's own.

Run: python tests/bench/textual_floor.py WORKSPACE
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Static


class Floor(App[None]):
    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, tasks: Path) -> None:
        super().__init__()
        self.tasks = tasks

    def compose(self) -> ComposeResult:
        subjects = [json.loads(path.read_bytes())["subject"] for path in sorted(self.tasks.glob("task_*.json"))]
        yield Header()
        yield Static("\n".join(subjects))
        yield Footer()


if __name__ == "__main__":
    Floor(Path(sys.argv[1]) / ".tasks").run()
