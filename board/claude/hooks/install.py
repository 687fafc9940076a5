"""``board hooks install`` / ``uninstall``: board's entries in Claude Code's settings.json.

The events of every tool call (``HTTP_EVENTS``) are POSTed to board's server on 127.0.0.1
(``board.claude.hooks.server``): no process is started per call. The other events, a few per session,
run ``board hook``; the session's start and each prompt also start that server when none
listens. ``--command`` installs ``board hook`` on every event, as on a system that cannot
tell who connects to a port (no ``/proc/net/tcp``).

The settings file is the user's: everything else in it (other hooks, permissions, env, keys
board has never heard of) is kept as it is, in its order; installing twice changes nothing;
uninstalling removes board's entries and nothing else.
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from board import json_bounds
from board.errors import BoardError
from board.claude.hooks.endpoint import CARRIED, ENV_HEADER, HOST, PATH, port_problem
from board.claude.hooks.where import claude_home
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
#: The events of every tool call, served over HTTP when board's server runs.
HTTP_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
#: A new port is drawn from here: below Linux's range for outgoing connections (32768-60999),
#: so no connection of the machine's own takes it by chance.
PORTS = range(20000, 32768)
_BOARD_URL = re.compile(r"http://127\.0\.0\.1:(\d{1,5})/board/hook")


def settings_path(*, user: bool, workspace: Path) -> Path:
    return claude_home(os.environ) / "settings.json" if user else workspace / ".claude" / "settings.json"


def hook_command() -> str:
    """How Claude Code should run ``board hook``: this installation's own ``board`` script, so
    the hook works whatever PATH the agent's shell has."""
    script = Path(sys.executable).parent / "board"
    if script.is_file() and os.access(script, os.X_OK):
        return f"{shlex.quote(str(script))} hook"
    return f"{shlex.quote(sys.executable)} -m board hook"


def hook_url(port: int) -> str:
    return f"http://{HOST}:{port}{PATH}"


def http_hook(port: int) -> dict:
    """The entry that POSTs an event to board's server on ``port``, with the environment the
    command hook would have read in headers (Claude Code fills each from its own environment,
    the one its command hooks get; only the names listed in ``allowedEnvVars``)."""
    return {
        "type": "http",
        "url": hook_url(port),
        "timeout": TIMEOUT_SECONDS,
        "headers": {f"{ENV_HEADER}{name}": f"${{{name}}}" for name in CARRIED},
        "allowedEnvVars": list(CARRIED),
    }


def board_port(entry: object) -> int | None:
    """The port of a hook entry that POSTs to board's server, else None."""
    if not isinstance(entry, dict) or entry.get("type") != "http" or not isinstance(entry.get("url"), str):
        return None
    found = _BOARD_URL.fullmatch(entry["url"])
    return int(found.group(1)) if found and 0 < int(found.group(1)) < 65536 else None


def is_board_hook(entry: object) -> bool:
    """Whether a hook entry is one board installed (whichever installation's path it names)."""
    if board_port(entry) is not None:
        return True
    if not isinstance(entry, dict) or entry.get("type") != "command" or not isinstance(entry.get("command"), str):
        return False
    words = entry["command"].split()
    return len(words) >= 2 and words[-1] == "hook" and (Path(words[-2].strip("'\"")).name == "board" or words[-3:-1] == ["-m", "board"])


#: The largest settings file read: far beyond any written by hand or by Claude Code.
MAX_SETTINGS_BYTES = 16 * 1024 * 1024


def read_settings(path: Path) -> dict:
    from board.disk.atomic import read_regular

    try:
        # A link is followed (settings kept in a dotfiles folder); a FIFO or a device planted
        # in its place is refused rather than waited on.
        text = read_regular(path, MAX_SETTINGS_BYTES, follow=True).decode("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise BoardError(f"cannot read {path}: {error}") from None
    try:
        data = json_bounds.loads(text) if text.strip() else {}
    except json.JSONDecodeError as error:
        raise BoardError(f"{path} is not valid JSON ({json_bounds.where_broken(error)}); fix it first, nothing was changed") from None
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


def with_board(settings: dict, command: str, port: int | None = None) -> dict:
    """The settings with board's entries: ``board hook`` on every event, or with a ``port``,
    the events of ``HTTP_EVENTS`` POSTed to board's server there."""
    result = without_board(settings)
    hooks = dict(result.get("hooks") or {})
    for event, matcher in EVENTS.items():
        group: dict = {"matcher": matcher} if matcher else {}
        if port is not None and event in HTTP_EVENTS:
            group["hooks"] = [http_hook(port)]
        else:
            group["hooks"] = [{"type": "command", "command": command, "timeout": TIMEOUT_SECONDS}]
        hooks[event] = [*hooks.get(event, []), group]
    result["hooks"] = hooks
    return result


def install(path: Path, *, command: str | None = None, http: bool = True, port: int | None = None) -> bool:
    """Put board's entries in; True if the file changed. ``http``: the events of every tool call
    go to board's server, on ``port``, else the port the file names already, else a free one."""
    current = read_settings(path)
    if http:
        port = port or installed_port(current) or free_port()
    return _write_if_changed(path, current, with_board(current, command or hook_command(), port if http else None))


def installed_port(settings: dict) -> int | None:
    """The port board's http hooks in these settings POST to (the first found)."""
    return next(iter(_ports(settings)), None)


def _ports(settings: dict) -> list[int]:
    found = []
    for entry in _entries(settings):
        port = board_port(entry)
        if port is not None and port not in found:
            found.append(port)
    return found


def _entries(settings: dict):
    """(event, entry) of every hook entry in the settings."""
    hooks = settings.get("hooks") or {}
    for groups in hooks.values() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            yield from group.get("hooks", ()) if isinstance(group, dict) and isinstance(group.get("hooks"), list) else ()


def free_port() -> int:
    """A port of ``PORTS`` nothing listens on now, drawn at random: each user's (and each
    settings file's) differs, and none is known in advance to squat."""
    import socket

    for port in random.SystemRandom().sample(PORTS, 64):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise BoardError(f"no free port of 127.0.0.1 in {PORTS.start}-{PORTS.stop - 1} after 64 tries; name one with --port")


def http_ports(workspace: Path) -> list[int]:
    """The ports of board's http hooks in every settings file a session in ``workspace`` reads."""
    found: list[int] = []
    for _, settings in readable_settings(workspace):
        found += [port for port in _ports(settings) if port not in found]
    return found


def uninstall(path: Path) -> bool:
    """Take board's entries out; True if the file changed."""
    if not path.exists():
        return False
    current = read_settings(path)
    return _write_if_changed(path, current, without_board(current))


def _write_if_changed(path: Path, before: dict, after: dict) -> bool:
    if after == before and path.exists():
        return False
    from board.disk.atomic import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    write_atomic(path, (json.dumps(after, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), mode=mode)
    return True


# -- what is installed, and whether it can run ---------------------------------------------------


@dataclass(frozen=True)
class InstalledHooks:
    """board's hooks in one settings file: the events they are on, the command they run (or
    the URL they POST to), and why they cannot reach board (None: they can)."""

    settings: Path
    events: tuple[str, ...]
    command: str
    problem: str | None
    #: For http hooks: whether board's server listens now, in words.
    state: str | None = None


def settings_files(workspace: Path) -> list[Path]:
    """Every settings file whose hooks Claude Code runs for a session in the workspace."""
    return [workspace / ".claude" / "settings.json", workspace / ".claude" / "settings.local.json", claude_home(os.environ) / "settings.json"]


def readable_settings(workspace: Path) -> Iterator[tuple[Path, dict]]:
    """Each settings file of ``settings_files`` with what it holds; one that cannot be read is
    passed over (``board hooks install`` says why)."""
    for path in settings_files(workspace):
        try:
            yield path, read_settings(path)
        except BoardError:
            continue


def installed_hooks(workspace: Path) -> list[InstalledHooks]:
    """board's hooks in each settings file that has some (one entry per command it names);
    a settings file that cannot be read is left out (``board hooks install`` says why)."""
    found = []
    for path, settings in readable_settings(workspace):
        by_command: dict[str, list[str]] = {}
        hooks = settings.get("hooks") or {}
        for event, groups in hooks.items():
            for group in groups if isinstance(groups, list) else ():
                for entry in group.get("hooks", ()) if isinstance(group, dict) and isinstance(group.get("hooks"), list) else ():
                    if is_board_hook(entry):
                        by_command.setdefault(entry.get("command") or entry["url"], []).append(event)
        for command, events in by_command.items():
            port = board_port({"type": "http", "url": command})
            if port is None:
                found.append(InstalledHooks(path, tuple(events), command, command_problem(command)))
            else:
                found.append(InstalledHooks(path, tuple(events), command, *_server_state(port)))
    return found


def _server_state(port: int) -> tuple[str | None, str]:
    from board.claude.hooks import loopback

    problem = port_problem(port)
    if problem is not None:
        return problem, "not served by board"
    if loopback.listener_uid(port) is not None:
        return None, "board's server listens"
    return None, "no server listens now: the next session's start starts one (or run 'board hooks serve')"


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
        Problem("hooks.broken", str(h.settings), _broken(h))
        for h in installed_hooks(workspace) if h.problem is not None
    ]  # fmt: skip


def _broken(hooks: InstalledHooks) -> str:
    if board_port({"type": "http", "url": hooks.command}) is not None:
        return f"board's http hooks on {len(hooks.events)} events do not reach board: {hooks.problem}"
    return f"board's hooks on {len(hooks.events)} events cannot run, so nothing is counted or guarded: {hooks.problem}"
