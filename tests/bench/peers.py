"""The peers the benchmarks measure board beside, installed once, pinned, into the user's cache
(``~/.cache/board-tests/``, as the tests install their npm tools), and their boards written
directly in each one's own format: Backlog.md (npm) and kanban-tui (PyPI, in its own venv).
pgqueuer (PyPI, in its own venv) is the PostgreSQL job queue the claims benchmark measures
board's claim beside; it has no board, only its own queue tables."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BACKLOG_PACKAGE, BACKLOG_VERSION = "backlog.md", "1.52.0"
KANBAN_TUI_PACKAGE, KANBAN_TUI_VERSION = "kanban-tui", "0.21.2"
PGQUEUER_PACKAGE, PGQUEUER_VERSION = "pgqueuer", "1.6.0"
#: Both drivers pgqueuer speaks to PostgreSQL through, as wheels that bring their own client
#: code (no libpq from the system): asyncpg, its first choice, and psycopg, board's own driver.
PGQUEUER_DRIVERS = ("asyncpg", "psycopg[binary]")
#: A pip install from the registry on a slow connection.
INSTALL_TIMEOUT = 600


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "board-tests"


def backlog_program() -> tuple[Path | None, str]:
    """Backlog.md's ``backlog``, installed now if not yet; or None and why not."""
    sys.path.insert(0, str(REPO / "tests" / "claude_code"))
    from npm_tools import NpmTool, Unavailable

    try:
        return NpmTool(BACKLOG_PACKAGE, BACKLOG_VERSION, "backlog-md", "backlog").ensure_installed(), ""
    except Unavailable as why:
        return None, str(why)


def make_backlog(project: Path, tasks: int, program: Path, subject: str, status: Callable[[int], str] = lambda n: "To Do") -> Path:
    """The tasks ``subject.format(n)`` for n = 1..tasks as a Backlog.md project: ``backlog init``
    (files only, no git), then task files as ``backlog task create`` writes them (front matter
    and name), written directly; ``status(n)`` is one of its columns (To Do, In Progress, Done)."""
    project.mkdir(parents=True)
    done = subprocess.run(
        [str(program), "init", "bench", "--defaults", "--integration-mode", "none", "--no-git"],
        check=False, cwd=project, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    if done.returncode != 0 or not (project / "backlog" / "config.yml").exists():
        raise SystemExit(f"backlog init failed: {done.stderr.strip() or done.stdout.strip()}")
    folder = project / "backlog" / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    created = time.strftime("%Y-%m-%d %H:%M")
    for n in range(1, tasks + 1):
        title = subject.format(n)
        name = title.replace(" ", "-").replace(":", "")
        (folder / f"task-{n} - {name}.md").write_text(
            f"---\nid: TASK-{n}\ntitle: '{title}'\nstatus: {status(n)}\nassignee: []\ncreated_date: '{created}'\n"
            f"labels: []\ndependencies: []\nordinal: {n * 1000}\n---\n\n"
        )
    return project


def _install_venv(venv: Path, requirements: list[str], works: Callable[[], bool]) -> str:
    """``requirements`` installed with pip into a new venv at ``venv``, unless ``works()``
    already says the one there is good; "" when it works now, else why not."""
    if works():
        return ""
    venv.parent.mkdir(parents=True, exist_ok=True)
    try:
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=120)
        if made.returncode != 0:
            return f"python -m venv failed: {made.stderr.strip()[-200:]}"
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"installing {' '.join(requirements)} took over {INSTALL_TIMEOUT} s"
    if done.returncode != 0 or not works():
        last = (done.stderr.strip().splitlines() or ["installed, but it does not run"])[-1]
        return f"cannot install {' '.join(requirements)} with pip: {last}"
    return ""


def kanban_tui_program() -> tuple[Path | None, str]:
    """kanban-tui's ``ktui``, installed now if not yet into its own venv in the cache; or None
    and why not."""
    venv = cache_dir() / f"kanban-tui-{KANBAN_TUI_VERSION}"
    program = venv / "bin" / "ktui"

    def works() -> bool:
        if not program.exists():
            return False
        try:
            done = subprocess.run([str(program), "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0 and KANBAN_TUI_VERSION in done.stdout

    why = _install_venv(venv, [f"{KANBAN_TUI_PACKAGE}=={KANBAN_TUI_VERSION}"], works)
    return (None, why) if why else (program, "")


def pgqueuer_program() -> tuple[Path | None, str]:
    """The python of a venv in the cache holding pgqueuer and both its drivers (installed now if
    not yet), which runs the claims benchmark's pgqueuer workers; or None and why not. A venv of
    its own keeps pgqueuer's dependencies (pydantic, typer, its drivers) out of board's."""
    venv = cache_dir() / f"pgqueuer-{PGQUEUER_VERSION}"
    python = venv / "bin" / "python"

    def works() -> bool:
        if not python.exists():
            return False
        probe = "import asyncpg, psycopg, pgqueuer; from pgqueuer import Queries; print(pgqueuer.__version__)"
        try:
            done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0 and done.stdout.strip() == PGQUEUER_VERSION

    why = _install_venv(venv, [f"{PGQUEUER_PACKAGE}=={PGQUEUER_VERSION}", *PGQUEUER_DRIVERS], works)
    return (None, why) if why else (python, "")


def kanban_tui_env(folder: Path) -> dict[str, str]:
    """What points kanban-tui at the board in ``folder`` and nowhere else: its config file and
    database by their variables, and the XDG folders it creates at import (never the user's)."""
    return {
        "XDG_CONFIG_HOME": str(folder / "config"),
        "XDG_DATA_HOME": str(folder / "data"),
        "KANBAN_TUI_CONFIG_FILE": str(folder / "config" / "kanban-tui.toml"),
        "KANBAN_TUI_DATABASE_FILE": str(folder / "kanban.db"),
        "KANBAN_TUI_AUTH_FILE": str(folder / "config" / "auth.toml"),
    }


def make_kanban_tui(folder: Path, tasks: int, program: Path, subject: str, column: Callable[[int], int] = lambda n: 0) -> Path:
    """The tasks as a kanban-tui board: ``ktui board create`` (database, config and the default
    columns Ready, Doing, Done, Archive), then rows in its SQLite ``tasks`` table as ``ktui task
    create`` writes them, inserted directly; ``column(n)`` is 0 (Ready), 1 (Doing) or 2 (Done)."""
    import sqlite3

    folder.mkdir(parents=True)
    env = {**os.environ, **kanban_tui_env(folder)}
    done = subprocess.run([str(program), "board", "create", "bench", "--set-active"], env=env, cwd=folder, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    database = folder / "kanban.db"
    if done.returncode != 0 or not database.exists():
        raise SystemExit(f"ktui board create failed: {done.stderr.strip()[-300:] or done.stdout.strip()}")
    connection = sqlite3.connect(database)
    with connection:
        columns = [row[0] for row in connection.execute("SELECT column_id FROM columns WHERE board_id = 1 ORDER BY position")]
        now = time.strftime("%Y-%m-%dT%H:%M:%S")
        positions = [0] * len(columns)
        rows = []
        for n in range(1, tasks + 1):
            where = column(n)
            rows.append((n, subject.format(n), columns[where], "", now, now if where >= 1 else None, now if where >= 2 else None, positions[where]))
            positions[where] += 1
        connection.executemany(
            "INSERT INTO tasks (task_id, title, column, description, creation_date, start_date, finish_date, metadata, position)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, '{}', ?)",
            rows,
        )
    connection.close()
    return folder
