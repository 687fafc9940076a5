"""Claude Code's agent teams, read and written in place: ``~/.claude/teams/<team>/``.

What Claude Code keeps there (the same folder as its task lists, so ``$CLAUDE_CONFIG_DIR``
moves both):

- ``config.json``: the team (``name``, ``description``, ``createdAt``, ``leadAgentId``,
  ``leadSessionId``) and its ``members``, each with ``name``, ``agentId`` (``name@team``),
  ``agentType``, ``model``, ``color``, ``cwd``, ``joinedAt``, ``backendType`` and ``isActive``
  (false while the member is idle, absent or true while it works). The lead is the member whose
  ``agentId`` is ``leadAgentId``.
- ``inboxes/<member>.json``: the messages to that member, a JSON array of
  ``{from, text, summary, timestamp, read}`` (some carry ``color``; a ``text`` holding a JSON
  object with a ``type`` is a message of Claude Code's own protocol, such as an idle notice).
- The team's tasks are the task list of the same name, ``~/.claude/tasks/<team>/``.

An inbox is written the way Claude Code writes it (with the npm package proper-lockfile): the
file is created as ``[]`` if missing (the lock needs it to exist), then the directory
``<member>.json.lock`` is made; whoever made it re-reads the array, appends and writes it back,
then removes the directory. A lock directory not touched for 10 s is stale and may be broken; a
holder touches it every 5 s. Claude Code reads inboxes without the lock and some versions write
them in place, so a read can meet a half-written file: readers retry, then report it.

Nothing here raises for what it finds in those files: a broken ``config.json`` or inbox is a
``problem`` on the team or inbox, for the dashboard to show.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from board import json_bounds
from board.errors import BoardError, Option
from board.names import ID_PATTERN, ID_RULE
from board.disk import confine
from board.disk.atomic import SpecialFile, TempFile, fsync_directory, read_bytes_retrying
from board.store.claude import claude_config_dir, directory_lock
from board.text import shortened
from board.times import parse_time

CONFIG_FILE = "config.json"
INBOXES = "inboxes"
#: The largest config.json or inbox board reads; a busy lead's inbox reaches hundreds of KiB.
MAX_TEAM_FILE_BYTES = 16 * 1024 * 1024
#: The longest message board sends.
MAX_MESSAGE_CHARS = 10_000
#: A summary is Claude Code's preview of a message: a few words.
SUMMARY_CHARS = 60
#: Reads of a file that does not parse, a moment apart, before it counts as broken: Claude
#: Code may be writing it in place.
_READ_ATTEMPTS = 4
_READ_PAUSE = 0.01


def teams_root() -> Path:
    """Where Claude Code keeps its teams (``$CLAUDE_CONFIG_DIR/teams``, else ``~/.claude/teams``)."""
    return claude_config_dir() / "teams"


def messageable(name: str) -> bool:
    """Can board write to this member's inbox? Only under a name that is also a board agent
    name (an inbox's file name is the member's name, and board's agents are named so)."""
    return bool(ID_PATTERN.fullmatch(name))


def why_not_messageable(name: str) -> str:
    return f"{shortened(name)!r} cannot be messaged from board: its name is not a board agent name ({ID_RULE})"


@dataclass(frozen=True)
class TeamMember:
    name: str
    agent_id: str = ""
    agent_type: str = ""
    model: str = ""
    color: str = ""
    cwd: str = ""
    lead: bool = False
    #: ``isActive`` as Claude Code wrote it: False while idle, None when it did not say.
    active: bool | None = None
    joined_at: datetime | None = None

    @property
    def messageable(self) -> bool:
        return messageable(self.name)


@dataclass(frozen=True)
class Team:
    """One team folder. ``name`` is the folder's name (the one its task list and inbox paths
    use); ``title`` is what config.json calls it."""

    name: str
    directory: Path
    title: str = ""
    description: str = ""
    members: tuple[TeamMember, ...] = ()
    #: Why config.json could not be read, or None.
    problem: str | None = None
    #: When config.json was last written: the moment its ``isActive`` flags were true.
    changed_at: datetime | None = None
    #: The Claude Code session of its lead (``leadSessionId``), or "".
    lead_session_id: str = ""

    def member(self, name: str) -> TeamMember | None:
        return next((m for m in self.members if m.name == name), None)

    def inbox_path(self, name: str) -> Path:
        return self.directory / INBOXES / f"{name}.json"


@dataclass(frozen=True)
class InboxMessage:
    sender: str
    text: str
    summary: str = ""
    timestamp: datetime | None = None
    read: bool = True
    #: The inbox it sits in: the member it was sent to.
    recipient: str = ""

    @property
    def protocol(self) -> dict[str, Any] | None:
        """A message of Claude Code's own protocol (an idle notice, a task assignment, a
        shutdown request...): its ``text`` is a JSON object with a ``type``."""
        if not self.text.startswith("{"):
            return None
        try:
            value = json_bounds.loads(self.text)
        except ValueError:
            return None
        return value if isinstance(value, dict) and isinstance(value.get("type"), str) else None

    def preview(self) -> str:
        """One line for a list: the summary, a protocol message in words, or the text's start."""
        protocol = self.protocol
        if protocol is not None:
            return protocol_line(protocol)
        return " ".join((self.summary or self.text).split())


def protocol_line(message: dict[str, Any]) -> str:
    kind = str(message["type"])
    if kind == "idle_notification":
        reason = message.get("idleReason")
        return "idle" + (f" ({reason})" if isinstance(reason, str) and reason else "")
    if kind == "task_assignment":
        subject = message.get("subject")
        return f"task #{message.get('taskId', '?')} assigned" + (f": {subject}" if isinstance(subject, str) else "")
    return kind.replace("_", " ")


@dataclass(frozen=True)
class Inbox:
    owner: str
    messages: tuple[InboxMessage, ...] = ()
    #: Why the file could not be read, or None (a missing inbox is an empty one).
    problem: str | None = None

    @property
    def unread(self) -> int:
        return sum(1 for m in self.messages if not m.read)


# -- reading ---------------------------------------------------------------------------------------


def _read_json(path: Path) -> tuple[Any, tuple[int, int, int]] | None:
    """The JSON in ``path`` and the stamp of what was read; None when the file is missing.
    Raises ``ValueError`` (with the reason) when it stays unparsable, ``OSError`` when it
    cannot be read."""
    reason = ""
    for attempt in range(_READ_ATTEMPTS):
        read = read_bytes_retrying(path, limit=MAX_TEAM_FILE_BYTES)
        if read is None:
            return None
        raw, stamp = read
        try:
            return json_bounds.loads(raw.decode("utf-8")), stamp
        except (UnicodeDecodeError, ValueError) as error:
            reason = f"not valid JSON ({error})"
        if attempt < _READ_ATTEMPTS - 1:
            time.sleep(_READ_PAUSE)
    raise ValueError(reason)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _moment(value: Any) -> datetime | None:
    """Claude Code writes times as epoch milliseconds (config.json) or ISO text (inboxes)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return datetime.fromtimestamp(value / 1000, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return parse_time(value)


def parse_team(name: str, directory: Path, data: Any, changed_at: datetime | None = None) -> Team:
    """A team from the parsed ``config.json``; what does not fit makes a ``problem``."""
    confine.confine(directory)  # its inboxes/ is read and written, never through a link
    if not isinstance(data, dict):
        return Team(name, directory, problem=f"{CONFIG_FILE} is not a JSON object")
    raw_members = data.get("members")
    if not isinstance(raw_members, list):
        return Team(name, directory, title=_text(data.get("name")), problem=f"{CONFIG_FILE} has no members list")
    lead_id = _text(data.get("leadAgentId"))
    members: list[TeamMember] = []
    skipped = 0
    for entry in raw_members:
        if not isinstance(entry, dict) or not _text(entry.get("name")):
            skipped += 1
            continue
        agent_id = _text(entry.get("agentId"))
        active = entry.get("isActive")
        members.append(
            TeamMember(
                name=entry["name"],
                agent_id=agent_id,
                agent_type=_text(entry.get("agentType")),
                model=_text(entry.get("model")),
                color=_text(entry.get("color")),
                cwd=_text(entry.get("cwd")),
                lead=bool(lead_id) and agent_id == lead_id,
                active=active if isinstance(active, bool) else None,
                joined_at=_moment(entry.get("joinedAt")),
            )
        )
    problem = f"{CONFIG_FILE}: {skipped} member{'s' if skipped != 1 else ''} without a name left out" if skipped else None
    return Team(
        name, directory, title=_text(data.get("name")) or _text(data.get("teamName")), description=_text(data.get("description")),
        members=tuple(members), problem=problem, changed_at=changed_at, lead_session_id=_text(data.get("leadSessionId")),
    )


class _TeamCache:
    """Teams and inboxes re-read only when their file's stat changes: the dashboard and the
    coordinator look at them every few seconds, and most of the time nothing moved."""

    def __init__(self) -> None:
        self._teams: dict[Path, tuple[tuple[int, int, int] | None, Team]] = {}
        self._inboxes: dict[Path, tuple[tuple[int, int, int] | None, Inbox]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _stamp(path: Path) -> tuple[int, int, int] | None:
        try:
            info = os.stat(path)
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size, info.st_ino)

    def team(self, directory: Path) -> Team:
        path = directory / CONFIG_FILE
        stamp = self._stamp(path)
        with self._lock:
            known = self._teams.get(directory)
            if known is not None and stamp is not None and known[0] == stamp:
                return known[1]
        team = _read_team(directory)
        with self._lock:
            if team.problem is not None and not team.members and known is not None and known[1].members:
                # Being rewritten, or broken by hand: keep showing who was in it, and say why.
                team = replace(known[1], problem=team.problem)
            self._teams[directory] = (stamp, team)
        return team

    def inbox(self, path: Path, owner: str) -> Inbox:
        stamp = self._stamp(path)
        with self._lock:
            known = self._inboxes.get(path)
            if known is not None and stamp is not None and known[0] == stamp:
                return known[1]
        inbox = _read_inbox(path, owner)
        with self._lock:
            if inbox.problem is not None and known is not None and known[1].problem is None:
                # Half-written by a writer that does not rename: keep the last good copy, say why.
                inbox = Inbox(owner, known[1].messages, inbox.problem)
            self._inboxes[path] = (stamp, inbox)
        return inbox


_CACHE = _TeamCache()


def _read_team(directory: Path) -> Team:
    name = directory.name
    path = directory / CONFIG_FILE
    try:
        read = _read_json(path)
    except ValueError as error:
        return Team(name, directory, problem=f"{CONFIG_FILE}: {error}")
    except SpecialFile as error:
        return Team(name, directory, problem=f"{CONFIG_FILE}: {error.reason}")
    except OSError as error:
        return Team(name, directory, problem=f"{CONFIG_FILE}: {error.strerror or error}")
    if read is None:
        return Team(name, directory, problem=f"no {CONFIG_FILE}")
    data, stamp = read
    return parse_team(name, directory, data, datetime.fromtimestamp(stamp[0] / 1e9, UTC))


def read_team(directory: Path) -> Team:
    """The team in ``directory`` (never raises: a broken config.json is the team's ``problem``)."""
    return _CACHE.team(Path(directory))


def list_teams(root: Path | None = None) -> list[Team]:
    """Every team folder under ``root`` (default ``teams_root()``), by name."""
    root = teams_root() if root is None else root
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    return [read_team(Path(entry.path)) for entry in entries if entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".")]


def parse_inbox(owner: str, data: Any) -> Inbox:
    if not isinstance(data, list):
        return Inbox(owner, problem="the inbox is not a JSON array")
    messages = []
    for entry in data:
        if not isinstance(entry, dict):
            continue
        read = entry.get("read")
        messages.append(
            InboxMessage(
                sender=_text(entry.get("from")) or "?",
                text=_text(entry.get("text")),
                summary=_text(entry.get("summary")),
                timestamp=_moment(entry.get("timestamp")),
                read=read if isinstance(read, bool) else True,
                recipient=owner,
            )
        )
    return Inbox(owner, tuple(messages))


def _read_inbox(path: Path, owner: str) -> Inbox:
    try:
        read = _read_json(path)
    except ValueError as error:
        return Inbox(owner, problem=f"{path.name}: {error}")
    except SpecialFile as error:
        return Inbox(owner, problem=f"{path.name}: {error.reason}")
    except OSError as error:
        return Inbox(owner, problem=f"{path.name}: {error.strerror or error}")
    if read is None:
        return Inbox(owner)
    return parse_inbox(owner, read[0])


def read_inbox(team: Team, name: str) -> Inbox:
    """``name``'s inbox in ``team`` (missing: empty; broken: its ``problem``, with the last
    messages read well, if any)."""
    if not messageable(name):
        return Inbox(name, problem=why_not_messageable(name))
    return _CACHE.inbox(team.inbox_path(name), name)


def team_inboxes(team: Team) -> dict[str, Inbox]:
    return {member.name: read_inbox(team, member.name) for member in team.members}


def conversation(name: str, inboxes: Iterable[Inbox]) -> list[InboxMessage]:
    """Messages to ``name`` (its inbox) and from it (in its teammates' inboxes), oldest first."""
    found = [m for inbox in inboxes for m in inbox.messages if inbox.owner == name or m.sender == name]
    far_past = datetime.min.replace(tzinfo=UTC)
    return sorted(found, key=lambda m: m.timestamp or far_past)


# -- which teams belong to a board ---------------------------------------------------------------


def team_folder_of_list(list_dir: Path) -> Path:
    """The team folder of a Claude Code task list: teams and their task lists share a name,
    and ``tasks/`` and ``teams/`` share Claude Code's folder."""
    return list_dir.parent.parent / "teams" / list_dir.name


def teams_for_board(
    *, workspace: Path, claude_list: Path | None = None, named: Iterable[str] = (), root: Path | None = None,
) -> list[Team]:
    """The teams working on a board: for a Claude Code task list, the team of the same name;
    for a ``.tasks/`` board, the teams some member of which works in the workspace (its
    ``cwd`` there or below). Teams ``named`` (a registered agent's ``team``) count too, and so
    does a team whose config.json cannot be read (where it works is unknown; its problem shows)."""
    wanted = set(named)
    if claude_list is not None:
        folder = team_folder_of_list(claude_list)
        teams = list_teams(folder.parent)
        wanted.add(folder.name)
        return [t for t in teams if t.name in wanted or (t.title and t.title in wanted)]
    teams = list_teams(root)
    here = _resolved(workspace)
    return [
        t for t in teams
        if t.name in wanted or (t.title and t.title in wanted) or (t.problem and not t.members) or any(_within(m.cwd, here) for m in t.members)
    ]


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path.absolute()


@functools.lru_cache(maxsize=1024)
def _resolved_cwd(cwd: str) -> Path:
    """A member's working directory, resolved once: boards ask every couple of seconds."""
    return _resolved(Path(cwd))


def _within(cwd: str, workspace: Path) -> bool:
    if not cwd:
        return False
    place = _resolved_cwd(cwd)
    return place == workspace or workspace in place.parents


def find_team(name: str, root: Path | None = None) -> Team:
    """A team by folder name or by the name its config gives it; one clear line if none."""
    teams = list_teams(root)
    for team in teams:
        if team.name == name:
            return team
    for team in teams:
        if team.title == name:
            return team
    where = teams_root() if root is None else root
    known = ", ".join(t.name for t in teams[:10]) or "none"
    raise BoardError(f"no Claude Code team {shortened(name)!r} in {where} (there are: {known})")


# -- writing ---------------------------------------------------------------------------------------


def js_timestamp(moment: datetime) -> str:
    """A time as JavaScript's ``toISOString`` writes it, the form inbox messages carry."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.astimezone(UTC).microsecond // 1000:03d}Z"


def summary_of(text: str) -> str:
    """The first words of a message, as Claude Code's senders write a summary."""
    words = " ".join(text.split())
    return words if len(words) <= SUMMARY_CHARS else words[: SUMMARY_CHARS - 1].rstrip() + "…"


def checked_message(text: str) -> str:
    text = text.strip()
    if not text:
        raise BoardError("the message is empty: say what the agent should know or do")
    if len(text) > MAX_MESSAGE_CHARS:
        raise BoardError(f"the message is {len(text):,} characters; at most {MAX_MESSAGE_CHARS:,}")
    return text


def append_message(team: Team, recipient: str, sender: str, text: str, *, summary: str | None = None, now: datetime | None = None) -> dict[str, Any]:
    """Append a message to ``recipient``'s inbox in ``team``, in Claude Code's format and under
    its lock, and return it as written. Every refusal is a ``BoardError`` and leaves the inbox
    as it was; a message another writer appends meanwhile is kept (the array is re-read under
    the lock)."""
    if not messageable(recipient):
        raise BoardError(why_not_messageable(recipient))
    if team.problem is not None and not team.members:
        raise BoardError(f"team {team.name}: {team.problem}; nothing was sent")
    if team.member(recipient) is None:
        names = ", ".join(m.name for m in team.members[:12]) or "none"
        raise BoardError(f"team {team.name} has no member {shortened(recipient)!r} (members: {names})")
    text = checked_message(text)
    message = {
        "from": sender,
        "text": text,
        "summary": summary_of(summary if summary and summary.strip() else text),
        "timestamp": js_timestamp(now or datetime.now(UTC)),
        "read": False,
    }
    inboxes = team.directory / INBOXES
    confine.confine(team.directory)
    confine.make_folders(inboxes)
    path = team.inbox_path(recipient)
    _create_empty(path)
    with directory_lock(path, what=f"{recipient}'s inbox", lock_name=f"the lock on {recipient}'s inbox") as held:
        messages = _inbox_under_lock(path, recipient)
        messages.append(message)
        data = json.dumps(messages, ensure_ascii=False, indent=2).encode("utf-8")
        if len(data) > MAX_TEAM_FILE_BYTES:
            raise BoardError(f"{recipient}'s inbox would pass {MAX_TEAM_FILE_BYTES:,} bytes; nothing was sent")
        temp = TempFile(inboxes)
        try:
            temp.fill(data)
            held.confirm()
            temp.move_to(path)
        finally:
            temp.discard()
        fsync_directory(inboxes)
    return message


def _create_empty(path: Path) -> None:
    """``[]`` if the inbox is missing, as Claude Code does (its lock needs the file to exist).
    Made whole beside it and linked into place, which fails if the inbox exists: a reader never
    meets an empty file, and an inbox made meanwhile by Claude Code is left alone."""
    if os.path.lexists(path):
        return
    temp = TempFile(path.parent)
    try:
        temp.fill(b"[]")
        try:
            confine.link(temp.path, path)
        except FileExistsError:
            pass
    finally:
        temp.discard()


def _inbox_under_lock(path: Path, recipient: str) -> list[Any]:
    try:
        read = _read_json(path)
    except ValueError as error:
        raise BoardError(f"{recipient}'s inbox ({path}) is {error}; nothing was sent: fix or remove the file") from None
    except SpecialFile as error:
        raise BoardError(f"{recipient}'s inbox ({path}) is {error.reason}; nothing was sent") from None
    if read is None:
        return []
    data = read[0]
    if not isinstance(data, list):
        raise BoardError(f"{recipient}'s inbox ({path}) is not a JSON array; nothing was sent: fix or remove the file")
    return data


@dataclass(frozen=True)
class Recipient:
    team: Team
    member: TeamMember


def find_recipient(name: str, teams: Sequence[Team], *, team_name: str | None = None) -> Recipient:
    """The team member ``name`` among ``teams`` (or in the team called ``team_name``)."""
    if team_name is not None:
        chosen = [t for t in teams if team_name in (t.name, t.title)] or [find_team(team_name)]
        teams = chosen
    holding = [Recipient(t, m) for t in teams for m in t.members if m.name == name]
    if len(holding) == 1:
        return holding[0]
    if holding:
        names = ", ".join(r.team.name for r in holding)
        raise BoardError(f"{shortened(name)!r} is a member of several teams ({names}): say which with ", Option("team", metavar="TEAM"))
    broken = [t for t in teams if t.problem and not t.members]
    if len(broken) == len(teams) == 1:
        raise BoardError(f"team {broken[0].name}: {broken[0].problem}; nothing was sent")
    members = sorted({m.name for t in teams for m in t.members})
    if not teams:
        raise BoardError(f"no Claude Code team works on this board, so {shortened(name)!r} has no inbox (name one with ", Option("team", metavar="TEAM"), ")")
    shown = ", ".join(members[:12]) + (" ..." if len(members) > 12 else "")
    unreadable = "".join(f"; team {t.name} cannot be read ({t.problem})" for t in broken[:2])
    raise BoardError(f"no team member named {shortened(name)!r} (members: {shown or 'none'}){unreadable}")

