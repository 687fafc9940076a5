"""``board hooks install`` / ``uninstall``: board's entries in Claude Code's settings.json.

The settings file is the user's: everything else in it (other hooks, permissions, env, keys
board has never heard of) is kept as it is, in its order; installing twice changes nothing;
uninstalling removes board's entries and nothing else.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from board import json_bounds
from board.errors import BoardError
from board.hooks.where import claude_home
from board.toolcall_log import FILE_TOOLS

#: Each event board listens to, and the tools it concerns (None: the event has no tools).
EVENTS: dict[str, str | None] = {
    "PreToolUse": "|".join(sorted(FILE_TOOLS)),  # only file tools can be stopped; others cost nothing
    "PostToolUse": "*",
    "PostToolUseFailure": "*",
    "SessionStart": None,
    "UserPromptSubmit": None,  # a new turn: working again after the idle of the turn before
    "SessionEnd": None,
    "Stop": None,
    "SubagentStart": None,
    "SubagentStop": None,
    "TeammateIdle": None,
    "TaskCreated": None,  # an item of the model's own todo list: its agent's "done/total todos"
    "TaskCompleted": None,
}
#: Seconds Claude Code gives the hook; it needs milliseconds, and gives up silently on its own.
TIMEOUT_SECONDS = 10


def settings_path(*, user: bool, workspace: Path) -> Path:
    return claude_home(os.environ) / "settings.json" if user else workspace / ".claude" / "settings.json"


def hook_command() -> str:
    """How Claude Code should run ``board hook``: this installation's own ``board`` script, so
    the hook works whatever PATH the agent's shell has."""
    script = Path(sys.executable).parent / "board"
    if script.is_file() and os.access(script, os.X_OK):
        return f"{shlex.quote(str(script))} hook"
    return f"{shlex.quote(sys.executable)} -m board hook"


def is_board_hook(entry: object) -> bool:
    """Whether a hook entry is one board installed (whichever installation's path it names)."""
    if not isinstance(entry, dict) or entry.get("type") != "command" or not isinstance(entry.get("command"), str):
        return False
    words = entry["command"].split()
    return len(words) >= 2 and words[-1] == "hook" and (Path(words[-2].strip("'\"")).name == "board" or words[-3:-1] == ["-m", "board"])


def read_settings(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise BoardError(f"cannot read {path}: {error}") from None
    try:
        data = json_bounds.loads(text) if text.strip() else {}
    except json.JSONDecodeError as error:
        raise BoardError(f"{path} is not valid JSON ({error.msg} at line {error.lineno} column {error.colno}); fix it first, nothing was changed") from None
    except json_bounds.TooDeep as error:
        raise BoardError(f"{path} is {error}; fix it first, nothing was changed") from None
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise BoardError(f"{path} does not hold Claude Code settings (a JSON object whose 'hooks' is an object); nothing was changed")
    return data


def without_board(settings: dict) -> dict:
    """The settings with board's hook entries taken out (and the groups and events left empty):
    a new dict, never the caller's, which ``install`` compares the result with."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return dict(settings)
    kept: dict = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            kept[event] = groups
            continue
        remaining = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list) and any(is_board_hook(h) for h in group["hooks"]):
                others = [h for h in group["hooks"] if not is_board_hook(h)]
                if others:
                    remaining.append({**group, "hooks": others})
            else:
                remaining.append(group)
        if remaining or not groups:
            kept[event] = remaining
    result = dict(settings)
    if kept:
        result["hooks"] = kept
    else:
        result.pop("hooks", None)
    return result


def with_board(settings: dict, command: str) -> dict:
    result = without_board(settings)
    hooks = dict(result.get("hooks") or {})
    for event, matcher in EVENTS.items():
        group: dict = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": command, "timeout": TIMEOUT_SECONDS}]
        hooks[event] = [*hooks.get(event, []), group]
    result["hooks"] = hooks
    return result


def install(path: Path, *, command: str | None = None) -> bool:
    """Put board's entries in; True if the file changed."""
    current = read_settings(path)
    return _write_if_changed(path, current, with_board(current, command or hook_command()))


def uninstall(path: Path) -> bool:
    """Take board's entries out; True if the file changed."""
    if not path.exists():
        return False
    current = read_settings(path)
    return _write_if_changed(path, current, without_board(current))


def _write_if_changed(path: Path, before: dict, after: dict) -> bool:
    if after == before and path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(after, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if path.exists():
        os.chmod(temp, path.stat().st_mode & 0o777)
    os.replace(temp, path)
    return True


# -- what is installed, and whether it can run ---------------------------------------------------


@dataclass(frozen=True)
class InstalledHooks:
    """board's hooks in one settings file: the events they are on, the command they run, and
    why that command cannot run (None: it can)."""

    settings: Path
    events: tuple[str, ...]
    command: str
    problem: str | None


def settings_files(workspace: Path) -> list[Path]:
    """Every settings file whose hooks Claude Code runs for a session in the workspace."""
    return [workspace / ".claude" / "settings.json", workspace / ".claude" / "settings.local.json", claude_home(os.environ) / "settings.json"]


def installed_hooks(workspace: Path) -> list[InstalledHooks]:
    """board's hooks in each settings file that has some (one entry per command it names);
    a settings file that cannot be read is left out (``board hooks install`` says why)."""
    found = []
    for path in settings_files(workspace):
        try:
            settings = read_settings(path)
        except BoardError:
            continue
        by_command: dict[str, list[str]] = {}
        hooks = settings.get("hooks") or {}
        for event, groups in hooks.items():
            for group in groups if isinstance(groups, list) else ():
                for entry in group.get("hooks", ()) if isinstance(group, dict) and isinstance(group.get("hooks"), list) else ():
                    if is_board_hook(entry):
                        by_command.setdefault(entry["command"], []).append(event)
        for command, events in by_command.items():
            found.append(InstalledHooks(path, tuple(events), command, command_problem(command)))
    return found


def command_problem(command: str) -> str | None:
    """Why a hook command cannot run as Claude Code runs it (through a shell), or None: its
    program missing or not executable (the shell exits 127 or 126, which Claude Code takes for
    a hook's error and lets the tool run)."""
    try:
        words = shlex.split(command)
    except ValueError as error:
        return f"the command does not parse ({error})"
    if not words:
        return "the command is empty"
    program = words[0]
    if "/" not in program:
        return None if shutil.which(program) else f"{program} is not on PATH"
    path = Path(program)
    if not path.exists():
        return f"{program} does not exist (was board's environment moved or removed? run 'board hooks install' again)"
    if not path.is_file() or not os.access(path, os.X_OK):
        return f"{program} is not an executable file"
    return None


def broken_hook_problems(workspace: Path) -> list:
    """``board check``'s problems for board's hooks whose command cannot run."""
    from board.store.base import Problem

    return [
        Problem("hooks.broken", str(h.settings), f"board's hooks on {len(h.events)} events cannot run, so nothing is counted or guarded: {h.problem}")
        for h in installed_hooks(workspace) if h.problem is not None
    ]  # fmt: skip
