"""Which board a hook event belongs to, and what it needs of its tasks, read without the store."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from board.names import ID_PATTERN
from board.disk import confine
from board.store.file_format import CLAUDE_STATE_DIR, HIGH_WATER_MARK, TASKS_DIR, database_state_dir, looks_like_claude_list, read_task_document, status_and_owner, task_file_name

# Only for annotations, which are never evaluated: ``board hook`` starts faster without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

class HookBoard:
    """A board as the hook sees it: where its files are, and the workspace paths are relative to."""

    __slots__ = ("workspace", "state_dir", "tasks_dir", "claude", "database")

    def __init__(self, workspace: Path, state_dir: Path, tasks_dir: Path, *, claude: bool, database: bool = False) -> None:
        self.workspace = workspace
        self.state_dir = state_dir
        self.tasks_dir = tasks_dir
        confine.confine(tasks_dir)  # a Claude Code list's own folder holds state_dir (.board/)
        confine.confine(state_dir)
        self.claude = claude
        #: The board is kept in PostgreSQL: the hook, which opens no connection, knows its tasks
        #: in progress from this machine's ``active.json`` (kept by the store and the coordinator).
        self.database = database

    def task_path(self, task_id: str) -> Path:
        return self.tasks_dir / task_file_name(task_id, claude=self.claude)

    def has_task(self, task_id: str) -> bool:
        if not ID_PATTERN.fullmatch(task_id):
            return False
        if self.database:
            return task_id in self._active()
        return self.task_path(task_id).is_file()

    def _active(self) -> dict[str, Any]:
        from board.active_work import read_active

        return read_active(self.state_dir)

    def task_state(self, task_id: str) -> tuple[str, str] | None:
        """(status, owner) of a task, or None when it cannot be read."""
        if self.database:
            entry = self._active().get(task_id)
            return ("in_progress", str(entry.get("owner") or "")) if isinstance(entry, dict) else None
        data = read_task_document(self.task_path(task_id))
        return None if data is None else status_and_owner(data, claude=self.claude)


def claude_home(environ: Mapping[str, str]) -> Path:
    config = environ.get("CLAUDE_CONFIG_DIR")
    if config:
        return Path(config).expanduser()
    # The hook's HOME, which board's server gets in a header (its own may be another's).
    home = environ.get("HOME")
    return (Path(home) if home else Path.home()) / ".claude"


def find_board(payload: Mapping[str, Any], environ: Mapping[str, str]) -> HookBoard | None:
    """The board of the agent that raised the event, in this order:

    1. ``BOARD_WORKSPACE``: a worker of ``board run`` started the agent;
    2. the Claude Code task list the session shares (``CLAUDE_CODE_TASK_LIST_ID``, or the
       event's team, whose list has the team's name, when that list holds tasks);
    3. the nearest ``.tasks/`` from the session's directory upward, as the command line finds it;
    4. the event's team's list, empty as it is.
    """
    cwd = Path(str(payload.get("cwd") or environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()))
    named = environ.get("BOARD_WORKSPACE")
    if named:
        board = _board_at(Path(named), cwd, environ)
        if board is not None:
            return board
    team_list = None
    for list_id, named_by_env in ((environ.get("CLAUDE_CODE_TASK_LIST_ID"), True), (payload.get("team_name"), False)):
        if isinstance(list_id, str) and ID_PATTERN.fullmatch(list_id):
            list_dir = claude_home(environ) / "tasks" / list_id
            if named_by_env and list_dir.is_dir():
                return HookBoard(cwd, list_dir / CLAUDE_STATE_DIR, list_dir, claude=True)
            if list_dir.is_dir():
                # A team's list is its board when it holds tasks; Claude Code makes one for
                # every team, and a team working on the workspace's .tasks/ leaves it empty.
                if _holds_tasks(list_dir):
                    return HookBoard(cwd, list_dir / CLAUDE_STATE_DIR, list_dir, claude=True)
                team_list = list_dir
    for directory in (cwd, *cwd.parents):
        if (directory / TASKS_DIR).is_dir():
            return _tasks_dir_board(directory, environ)
    database = _bare_database_board(cwd, environ)
    if database is not None:
        return database
    if team_list is not None:
        return HookBoard(cwd, team_list / CLAUDE_STATE_DIR, team_list, claude=True)
    return None


def _holds_tasks(list_dir: Path) -> bool:
    return (list_dir / HIGH_WATER_MARK).exists() or any(list_dir.glob("*.json"))


def event_task_list(payload: Mapping[str, Any], environ: Mapping[str, str]) -> str | None:
    """The shared Claude Code task list the session works on (``CLAUDE_CODE_TASK_LIST_ID``, or
    its team's list, named after the team); None for a session on its private todo list."""
    for list_id in (environ.get("CLAUDE_CODE_TASK_LIST_ID"), payload.get("team_name")):
        if isinstance(list_id, str) and ID_PATTERN.fullmatch(list_id):
            return list_id
    return None


def _board_at(location: Path, cwd: Path, environ: Mapping[str, str]) -> HookBoard | None:
    if (location / TASKS_DIR).is_dir():
        return _tasks_dir_board(location, environ)
    if looks_like_claude_list(location):
        return HookBoard(cwd, location / CLAUDE_STATE_DIR, location, claude=True)
    return _bare_database_board(location, environ)


def files_board_at(workspace: Path, environ: Mapping[str, str]) -> HookBoard | None:
    """The board in ``workspace/.tasks/`` when it is kept there in files (None for none, or for
    one whose board.toml or ``BOARD_DB`` names a database)."""
    if not (workspace / TASKS_DIR).is_dir():
        return None
    board = _tasks_dir_board(workspace, environ)
    return None if board.database else board


def _bare_database_board(workspace: Path, environ: Mapping[str, str]) -> HookBoard | None:
    """A database board (``BOARD_DB``) worked on from a folder with no ``.tasks/``: this
    machine's files of it are in the state directory, where the store keeps them."""
    url = environ.get("BOARD_DB")
    if not url:
        return None
    state_dir = database_state_dir(url, environ)
    return HookBoard(workspace, state_dir, state_dir, claude=False, database=True)


def _tasks_dir_board(workspace: Path, environ: Mapping[str, str]) -> HookBoard:
    tasks = workspace / TASKS_DIR
    return HookBoard(workspace, tasks, tasks, claude=False, database=bool(environ.get("BOARD_DB")) or _names_a_database(tasks / "board.toml"))


#: The most of ``board.toml`` the hook reads (a few lines; ``board check`` judges the rest).
SETTINGS_MOST = 1024 * 1024


def _names_a_database(settings: Path) -> bool:
    """Whether ``board.toml`` keeps the board in a database (``[store] url``)."""
    raw = confine.read_if_regular(settings, SETTINGS_MOST)  # a FIFO planted there held every hook call
    try:
        text = raw.decode("utf-8") if raw is not None else ""
    except UnicodeDecodeError:
        return False
    if "[store]" not in text:
        return False  # most boards: no need to parse
    import tomllib

    try:
        store = tomllib.loads(text).get("store")
    except tomllib.TOMLDecodeError:
        return False
    return isinstance(store, dict) and bool(store.get("url"))

