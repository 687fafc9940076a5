"""``board demo --worktrees``: a small git repository with a board, and simulated agents that
make real changes in each task's worktree and commit them, so every card has a diff to look at,
two tasks merge cleanly and two clash on the same lines.

Run as a module, this is the simulated agent itself: it reads the edits planned for its task
(``metadata.demoEdits``) and makes them in the folder it runs in, one commit each, pausing
between them (``BOARD_DEMO_PACE`` seconds a step).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from board.store import Store

#: Where a task's planned edits are kept: [[file, text to write], ...].
EDITS = "demoEdits"

_FILES = {
    "app.py": 'from greet import greeting\n\n\ndef main() -> None:\n    print(greeting("world"))\n\n\nif __name__ == "__main__":\n    main()\n',
    "greet.py": 'def greeting(name: str) -> str:\n    return "Hello, " + name\n',
    "README.md": "# hello\n\nPrints a greeting.\n",
}

#: (subject, blocked by, files, edits) of each task; ids are 1, 2, ... in this order.
_TASKS: list[tuple[str, list[str], list[str], list[tuple[str, str]]]] = [
    (
        "Greet with an exclamation mark",
        [],
        ["greet.py"],
        [("greet.py", 'def greeting(name: str) -> str:\n    return "Hello, " + name + "!"\n')],
    ),
    (
        "Add a test for the greeting",
        ["1"],
        ["test_greet.py"],
        [("test_greet.py", 'from greet import greeting\n\n\ndef test_greeting() -> None:\n    assert greeting("world") == "Hello, world!"\n')],
    ),
    (
        "Take the name from the command line",
        [],
        ["app.py"],
        [
            ("app.py", 'import sys\n\nfrom greet import greeting\n\n\ndef main() -> None:\n    print(greeting("world"))\n\n\nif __name__ == "__main__":\n    main()\n'),
            ("app.py", 'import sys\n\nfrom greet import greeting\n\n\ndef main() -> None:\n    print(greeting(sys.argv[1] if len(sys.argv) > 1 else "world"))\n\n\nif __name__ == "__main__":\n    main()\n'),
        ],
    ),
    (
        "Document how to run it",
        ["3"],
        ["README.md"],
        [("README.md", "# hello\n\nPrints a greeting.\n\n    python app.py [NAME]\n")],
    ),
    (
        "Greet in French",  # changes the line #1 changes: the two conflict when both are merged
        [],
        ["greet.py"],
        [("greet.py", 'def greeting(name: str) -> str:\n    return "Bonjour, " + name\n')],
    ),
]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, stdin=subprocess.DEVNULL)


def prepare_worktree_demo(target: Path | None = None) -> Path:
    """A new git repository (``target``, default a temp folder) with a small project and a board
    whose tasks plan real edits."""
    if target is None:
        target = Path(tempfile.mkdtemp(prefix="board-demo-")) / "hello"
    target.mkdir(parents=True)
    for name, text in _FILES.items():
        (target / name).write_text(text, encoding="utf-8")
    _git(target, "init", "-q", "-b", "main")
    _git(target, "add", "--all")
    _git(target, "-c", "user.name=board demo", "-c", "user.email=demo@localhost", "commit", "-q", "-m", "A greeting program")
    store = Store.open(target, create=True, actor="demo")
    try:
        for subject, blocked_by, files, edits in _TASKS:
            store.create(subject, blocked_by=blocked_by, files=files, metadata={EDITS: [list(edit) for edit in edits]}, actor="demo")
    finally:
        store.close()
    return target


def agent_command() -> list[str]:
    """The simulated agent, as a worker runs it for each task."""
    return [sys.executable, "-m", "board.coordinator.worktree_demo"]


def _run_agent() -> int:
    """Make the task's planned edits here, one commit each, at the demo's pace."""
    task_id = os.environ["BOARD_TASK_ID"]
    pace = float(os.environ.get("BOARD_DEMO_PACE", "1"))
    store = Store.open(Path(os.environ["BOARD_WORKSPACE"]), whole=False, actor=os.environ.get("BOARD_AGENT"))
    task = store.get(task_id)
    store.close()
    edits = task.metadata.get(EDITS) or []
    here = Path.cwd()
    for step, (name, text) in enumerate(edits, 1):
        time.sleep(3 * pace)
        (here / name).write_text(text, encoding="utf-8")
        _git(here, "add", name)
        _git(here, "-c", "user.name=demo agent", "-c", "user.email=agent@localhost", "commit", "-q", "-m", f"#{task_id} step {step}: {name}")
    time.sleep(2 * pace)
    return 0


if __name__ == "__main__":
    raise SystemExit(_run_agent())
