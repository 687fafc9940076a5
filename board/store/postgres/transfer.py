"""Moving a board between files and PostgreSQL, exactly: ``board --db URL import DIR`` and
``board --db URL export DIR``.

Import reads a board in files (``.tasks/``, or a Claude Code task list) under its lock, and
writes it into a database that holds no board, in one transaction: each task document as the
file store reads it (unknown fields, versions and integer ids kept; the calls its tool-call log
holds beyond its counts folded in, as every reader folds them), its dependency edges,
``history.jsonl`` line for line, the tool-call logs (the tasks' logs, and the calls made on no
task from the agents' logs), the archive of deleted tasks, the highest id issued (``meta``), so
that a deleted task's id is never issued again, and what the board keeps beside its tasks
(``board.store.side``): the agents' records, every holder of every reservation (expired ones
too, as stored), the checkpoints and the current alerts.

Export writes the database's board as the file store would write it: each document through
``TasksDirLayout.encode``, the history and each task's tool calls one JSON line per row, every
call in its agent's log too, the archive, the agents' records, the reservations, the
checkpoints and the alerts. It is built in a folder beside ``.tasks/`` and renamed into place,
so a failed export leaves no half board.

Settings (``board.toml``) and what belongs to one machine (logs, locks, git's remembered state)
are not moved.

Export gives back the files import read, byte for byte, in two ways. jsonb keeps an object's
keys in an order of its own (shorter keys first, then by their bytes), and the files' bytes
depend on that order: export puts back what board itself orders (the task document's fields,
the fields of history lines, tool calls, agent records, checkpoints and alerts as board writes
them). What board cannot know (the keys of ``metadata``, unknown fields, a line's extra keys),
and a task file's own counts when its log held calls it had not counted yet, are recorded at
import in ``meta`` rows ``import/<kind>/<key>``, only for the documents that need it, and used
on export while the document is still the one imported (for a record beside the tasks: while
its object has the keys recorded). A task that changed since is written as the file store
writes it, its counts covering its whole log.

Long on purpose: import and export are each other's inverse, and what one records the other
reads back; kept side by side, a change to one shows what the other must do.
"""

from __future__ import annotations

import contextlib
import errno
import heapq
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from board.active_work import FILE_NAME as ACTIVE_FILE, JOURNAL_NAME as ACTIVE_JOURNAL, entry_for, write_active, held_files
from board.agent_record import AgentRecord
from board.errors import BoardError, InvalidTaskFile
from board.graph import TaskGraph, is_hidden, unit_weight
from board.model import MAX_FILE_BYTES, Lease, PolicyMark, Task, ToolCalls, share_fields_sets, task_from_dict, task_to_dict, with_integer_ids
from board.names import ID_PATTERN, ID_RULE, id_sort_key
from board.priority import PRIORITY_RANK
from board.store.base import stored_database_url
from board.store.side import Reservation
from board.disk.atomic import SpecialFile, fsync_directory, json_line, read_regular
from board.disk.confine import OpenFolder
from board.disk.read_ahead import read_ahead
from board.store.file_format import ARCHIVE_DIR, HISTORY, PENDING_HISTORY, looks_like_claude_list, read_pending_note
from board.store.files.side import (
    AGENTS_DIR, ALERTS_FILE, CHECKPOINTS_DIR, RESERVATIONS_DIR, FileAgentRecords, FileReservationBook, alerts_document, read_holders,
)
from board.store.files.index import collection_paused
from board.store.layout import Layout, TasksDirLayout, detect_layout
from board.store.postgres.connect import connect, redact
from board.store.postgres.migrations import CLAIM_ORDER_DEFERRED, HISTORY_AS_GIVEN, NOTIFY_AFTER_COMMIT, TASK_CHANNEL, check_schema
from board.store.postgres.side import NO_ACQUISITION_TIME, reservation_from_row
from board.store.postgres.store import WRITE_LOCK_KEY
from board.toolcall_log import AGENT_LOG_SUFFIX, TASK_LOGS, fold_tail

#: ``meta`` keys this module owns: the highest id issued, and what import recorded to give the
#: files back as they were (``import/task/<id>``, ``import/archive/<id>``, ``import/history/<seq>``,
#: ``import/call/<seq>``, ``import/agent/<name>``, ``import/checkpoint/<task>/<seq>``,
#: ``import/alert/<key>``).
LAST_ID_KEY = "last_task_id"
IMPORTED_PREFIX = "import/"
#: The stamp readers poll to see that the alerts were replaced (``DatabaseAlertBoard.stamp``).
ALERTS_VERSION_KEY = "alerts_version"
#: How many files export makes durable at once.
FSYNC_THREADS = 16


def _aliases(model: type) -> tuple[str, ...]:
    return tuple(info.alias or name for name, info in model.model_fields.items() if not info.exclude)  # type: ignore[attr-defined]


#: The order board writes the fields of a task, of a history line and of a tool call in.
TASK_FIELDS = _aliases(Task)
HISTORY_FIELDS = ("ts", "task", "version", "file", "actor", "op", "changes")
CALL_FIELDS = ("ts", "agent", "task", "tool", "ok", "ms", "files")
#: Task fields that are documents of their own, in a history line's changes.
NESTED_FIELDS = {"toolCalls": _aliases(ToolCalls), "lease": _aliases(Lease), "policy": _aliases(PolicyMark)}
#: The order board writes an agent's record in (``board.agents.write_agent``), a checkpoint in
#: (``board.checkpoints.write_checkpoint``) and an alert in (``Alert.to_dict``).
AGENT_FIELDS = _aliases(AgentRecord)
CHECKPOINT_FIELDS = ("seq", "task", "createdAt", "actor", "reason", "note", "gitHead", "fileHashes", "document", "checksum")
ALERT_FIELDS = ("key", "kind", "severity", "tasks", "agents", "files", "message", "action", "since")


# -- key order ----------------------------------------------------------------------------------


def _ordered(data: dict[str, Any], first: Iterable[str]) -> dict[str, Any]:
    """``data`` with the keys of ``first`` first, in that order, then the rest as they were."""
    head = {key: data[key] for key in first if key in data}
    return head | {key: value for key, value in data.items() if key not in head}


def _jsonb_order(value: Any) -> Any:
    """``value`` with every object's keys in the order jsonb keeps them in."""
    if isinstance(value, dict):
        ordered = sorted(value, key=_jsonb_key)
        return {key: _jsonb_order(value[key]) if isinstance(value[key], (dict, list)) else value[key] for key in ordered}
    if isinstance(value, list):
        return [_jsonb_order(item) if isinstance(item, (dict, list)) else item for item in value]
    return value


def _jsonb_key(key: str) -> tuple[int, bytes]:
    encoded = key.encode()
    return len(encoded), encoded


def history_in_board_order(record: dict[str, Any]) -> dict[str, Any]:
    """A history line's fields in the order the file store writes them."""
    record = _ordered(record, HISTORY_FIELDS)
    changes = record.get("changes")
    if isinstance(changes, dict):
        changes = _ordered(changes, TASK_FIELDS)
        for name, fields in NESTED_FIELDS.items():
            pair = changes.get(name)
            if isinstance(pair, list):
                changes[name] = [_ordered(side, fields) if isinstance(side, dict) else side for side in pair]
        record["changes"] = changes
    return record


def call_in_board_order(record: dict[str, Any]) -> dict[str, Any]:
    """A tool call's fields in the order its log line has them (``toolcall_log.call_record``)."""
    return _ordered(record, CALL_FIELDS)


def _task_in_board_order(doc: dict[str, Any]) -> dict[str, Any]:
    return task_to_dict(task_from_dict(doc, "a task"))


def agent_in_board_order(record: dict[str, Any]) -> dict[str, Any]:
    """An agent's record with its fields in the order board writes them."""
    return _ordered(record, AGENT_FIELDS)


def checkpoint_in_board_order(record: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint with its fields, and those of the task document it holds, in the order
    board writes them."""
    record = _ordered(record, CHECKPOINT_FIELDS)
    document = record.get("document")
    if isinstance(document, dict):
        document = _ordered(document, TASK_FIELDS)
        for name, fields in NESTED_FIELDS.items():
            if isinstance(document.get(name), dict):
                document[name] = _ordered(document[name], fields)
        record["document"] = document
    return record


def alert_in_board_order(record: dict[str, Any]) -> dict[str, Any]:
    """An alert with its fields in the order board writes them."""
    return _ordered(record, ALERT_FIELDS)


def key_orders(original: Any, produced: Any, path: tuple[str | int, ...] = ()) -> list[list[Any]]:
    """Where ``produced`` gives an object's keys in another order than ``original``:
    ``[path, keys in the original's order]`` for each such object."""
    found: list[list[Any]] = []
    if isinstance(original, dict) and isinstance(produced, dict):
        if list(original) != list(produced) and original.keys() == produced.keys():
            found.append([list(path), list(original)])
        for key, value in original.items():
            if isinstance(value, (dict, list)) and key in produced:
                found += key_orders(value, produced[key], (*path, key))
    elif isinstance(original, list) and isinstance(produced, list) and len(original) == len(produced):
        for index, (item, other) in enumerate(zip(original, produced)):
            if isinstance(item, (dict, list)):
                found += key_orders(item, other, (*path, index))
    return found


def apply_key_orders(value: Any, orders: Iterable[list[Any]]) -> Any:
    """Put the objects ``orders`` names back in their recorded order (in place); an object whose
    keys are no longer those recorded is left as it is."""
    for path, keys in orders:
        node = value
        for step in path:
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                node = None
                break
        if isinstance(node, dict) and len(node) == len(keys) and node.keys() == set(keys):
            reordered = {key: node[key] for key in keys}
            node.clear()
            node.update(reordered)
    return value


# -- reading a board in files -------------------------------------------------------------------


@dataclass
class Logged:
    """One line of a log: its record (key order as in the file), time, and where it was."""

    record: dict[str, Any]
    at: datetime
    where: str


@dataclass
class Imported:
    """A task (or a deleted one) as import read it."""

    #: As the file store's readers see it: the calls its log holds beyond its counts folded in.
    task: Task
    #: The file's own counts, when its log held calls they did not count yet.
    file_tool_calls: dict[str, Any] | None = None
    #: When it was deleted (deleted tasks only).
    deleted_at: datetime | None = None

    @cached_property
    def doc(self) -> dict[str, Any]:
        """Its document as the file store writes it (integer ids as integers)."""
        return _document(self.task)

    def doc_text(self) -> str:
        """The same document as JSON text, for the database (which parses it into jsonb): the
        serializer's own, which writes what ``json.dumps`` of ``doc`` would, several times faster."""
        if self.task.integer_ids:
            return json.dumps(self.doc, ensure_ascii=False)
        return self.task.model_dump_json(by_alias=True)


@dataclass
class Kept:
    """A record a board keeps beside its tasks (an agent's, a checkpoint, an alert) as read."""

    record: dict[str, Any]
    where: str
    #: When its file was last written (an agent's record: the row's ``updated_at``).
    written: datetime | None = None


@dataclass
class FileBoard:
    """A board in files, as import reads it."""

    directory: Path
    layout: Layout
    tasks: list[Imported] = field(default_factory=list)
    archived: list[Imported] = field(default_factory=list)
    history: list[Logged] = field(default_factory=list)
    #: Each task's tool calls (by the id its log is named after), in the log's order.
    calls: dict[str, list[Logged]] = field(default_factory=dict)
    #: The calls made on no task, which only their agents' logs hold, each log in its order.
    taskless_calls: list[list[Logged]] = field(default_factory=list)
    last_id: int = 0
    warnings: list[str] = field(default_factory=list)
    #: Agents' records by name (their file's).
    agents: dict[str, Kept] = field(default_factory=dict)
    #: Every holder of every reserved path (expired ones too), with the file naming it.
    reservations: list[tuple[Reservation, str]] = field(default_factory=list)
    #: Checkpoints by (task, sequence number).
    checkpoints: dict[tuple[str, int], Kept] = field(default_factory=dict)
    #: The current alerts, in their order; None when the board never stored any (no alerts.json).
    alerts: list[dict[str, Any]] | None = None


def read_file_board(directory: Path | str) -> FileBoard:
    """Read the board in ``directory`` whole, under its lock; ``BoardError`` naming the first
    broken file (a task, the archive, history, a tool-call log) if any is."""
    directory = Path(directory).expanduser()
    if not directory.is_dir():
        raise BoardError(f"{directory} is not a directory; nothing was imported")
    directory = directory.resolve()
    if directory.name == ".tasks":
        raise BoardError(f"{directory} is a board's own folder: give the workspace that holds it ({directory.parent}); nothing was imported")
    layout = detect_layout(directory)
    if not layout.exists():
        raise BoardError(f"{directory} holds no board (no .tasks/ folder, and not a Claude Code task list); nothing was imported")
    url = stored_database_url(directory) if isinstance(layout, TasksDirLayout) else None
    if url is not None:
        raise BoardError(f"the board of {directory} is kept in the database {redact(url)} ([store] url in its board.toml), not in files; nothing was imported")
    board = FileBoard(directory, layout)
    broken: list[str] = []
    with _locked(layout), collection_paused():
        logs = _read_call_logs(layout.state_dir / TASK_LOGS, board, broken)
        _read_side_state(layout.state_dir, board, broken)
        board.history = _read_history(layout, broken)
        deleted_at = {str(item.record.get("task")): item.at for item in board.history if item.record.get("op") == "delete"}
        files = sorted(layout.task_files(), key=lambda pair: id_sort_key(pair[0]))
        with _held_open(layout.tasks_dir) as tasks_folder:
            # Read by a child process while this one checks what it has read (``read_ahead``).
            contents = read_ahead([key for _, key in files], limit=MAX_FILE_BYTES, folder=tasks_folder)
            for (task_id, key), read in zip(files, contents, strict=True):  # strict: the reader ends, its child reaped
                task = _task_read(layout, key, task_id, _bytes_or_broken(read, broken), broken)
                if task is not None:
                    board.tasks.append(_imported(task, logs.get(task_id)))
        archive = layout.state_dir / ARCHIVE_DIR
        for name in sorted(_listing(archive, broken)):
            archived_id = layout.task_id_for(layout.tasks_dir / name)
            if archived_id is None:
                continue
            task = _read_task(layout, archive / name, archived_id, broken)
            if task is not None:
                board.archived.append(_imported(task, logs.get(archived_id), deleted_at.get(archived_id) or _mtime(archive / name)))
    if broken:
        more = f" (and {plural(len(broken) - 1, 'more broken file')})" if len(broken) > 1 else ""
        raise BoardError(f"cannot import {broken[0]}{more}; nothing was imported")
    ids = {item.task.id for item in [*board.tasks, *board.archived]}
    # The file store's own rule for the next id (and a Claude Code list's .highwatermark), less one.
    board.last_id = int(layout.next_id(ids)) - 1
    _note_claude_deleted_blockers(board, ids)
    return board


@contextmanager
def _locked(layout: Layout) -> Iterator[None]:
    """The board's lock, so no writer changes it while it is read; a folder nobody may write
    (a read-only copy) is read without it."""
    with ExitStack() as stack:
        try:
            stack.enter_context(layout.lock())
        except OSError as error:
            if error.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
        yield


def _listing(folder: Path, broken: list[str]) -> list[str]:
    try:
        return os.listdir(folder)
    except FileNotFoundError:
        return []
    except NotADirectoryError:
        broken.append(f"{folder}: not a folder")
        return []


@contextmanager
def _held_open(folder: Path) -> Iterator[OpenFolder | None]:
    """``folder`` held open to read its files by name; None when it cannot be opened (a link
    planted in its place, gone): then each file's own opening says what is wrong."""
    try:
        held = OpenFolder(folder)
    except OSError:
        yield None
        return
    with held:
        yield held


def _read_bytes(path: Path | str, broken: list[str], *, limit: int | None) -> bytes | None:
    try:
        return read_regular(path, limit)
    except FileNotFoundError:
        return None
    except SpecialFile as special:
        broken.append(str(special))
        return None


def _bytes_or_broken(read: bytes | OSError | None, broken: list[str]) -> bytes | None:
    """What ``read_ahead`` read of a file, as ``_read_bytes`` returns it."""
    if isinstance(read, SpecialFile):
        broken.append(str(read))
        return None
    if isinstance(read, OSError):
        raise read
    return read


def _read_task(layout: Layout, path: Path | str, task_id: str, broken: list[str]) -> Task | None:
    return _task_read(layout, path, task_id, _read_bytes(path, broken, limit=MAX_FILE_BYTES), broken)


def _task_read(layout: Layout, path: Path | str, task_id: str, raw: bytes | None, broken: list[str]) -> Task | None:
    if raw is None:
        return None
    try:
        return layout.decode(raw, path, task_id, compact=False)  # read once, written, let go
    except InvalidTaskFile as error:
        broken.append(str(error))
        return None


def _imported(task: Task, log: bytes | None, deleted_at: datetime | None = None) -> Imported:
    counted = _counted(task, log)
    own = task.tool_calls.model_dump(mode="json", by_alias=True) if counted is not task else None
    return Imported(counted, own, deleted_at)


def _document(task: Task) -> dict[str, Any]:
    """The task's document as the file store writes it (integer ids as integers)."""
    doc = task_to_dict(task)
    return with_integer_ids(doc) if task.integer_ids else doc


def _mtime(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _json_object(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _read_history(layout: Layout, broken: list[str]) -> list[Logged]:
    """history.jsonl line for line; the line of a writer killed before appending it
    (``.history-pending.json``) completed as the file store's next writer completes it."""
    path = layout.state_dir / HISTORY
    data = _read_bytes(path, broken, limit=None) or b""
    lines = data.split(b"\n")
    if lines[-1]:
        broken.append(f"{path}: line {len(lines)} is cut short (no end of line)")
        return []
    history = []
    for number, line in enumerate(lines[:-1], start=1):
        record = _json_object(line)
        where = f"{path} line {number}"
        if record is None:
            broken.append(f"{where}: not a JSON object")
            continue
        at = _time(record.get("ts"))
        task = record.get("task")
        if at is None:
            broken.append(f"{where}: no time ('ts')")
        elif task is not None and (isinstance(task, bool) or not isinstance(task, (str, int))):
            broken.append(f"{where}: 'task' is not a task id")
        else:
            history.append(Logged(record, at, where))
    recovered = _interrupted_write(layout, len(data))
    if recovered is not None:
        history.append(recovered)
    return history


def _interrupted_write(layout: Layout, history_size: int) -> Logged | None:
    """The history line of a writer killed between renaming a task file into place and
    logging it, as ``FileWrites._finish_interrupted_write`` would append it."""
    path = layout.state_dir / PENDING_HISTORY
    try:
        note = read_pending_note(read_regular(path))
    except OSError:
        return None
    if note is None:
        return None  # torn: its writer died before touching the task file
    record, task_id, version = note.record, note.task_id, note.version
    at = _time(record.get("ts"))
    if history_size > note.history_size or at is None or ID_PATTERN.fullmatch(task_id) is None:
        return None  # its line reached the log
    try:
        current = layout.decode(read_regular(layout.task_path(task_id)), layout.task_path(task_id), task_id)
    except (OSError, BoardError):
        return None
    if current.version != version:
        return None
    return Logged({**record, "recovered": True}, at, str(path))


def _read_call_logs(folder: Path, board: FileBoard, broken: list[str]) -> dict[str, bytes]:
    """Every task's tool-call log: its records into ``board.calls``, and its complete lines
    (what readers count) returned by task id."""
    logs: dict[str, bytes] = {}
    for name in sorted(_listing(folder, broken)):
        task_id = name[: -len(".jsonl")]
        if not name.endswith(".jsonl") or ID_PATTERN.fullmatch(task_id) is None:
            continue
        read = _read_call_log(folder / name, broken)
        if read is not None:
            logs[task_id], board.calls[task_id] = read
    return logs


def _read_call_log(path: Path, broken: list[str]) -> tuple[bytes, list[Logged]] | None:
    """A tool-call log's complete lines and their records. A last line still being written is
    left out, as readers leave it."""
    data = _read_bytes(path, broken, limit=None)
    if data is None:
        return None
    complete = data[: data.rfind(b"\n") + 1]
    calls = []
    for number, line in enumerate(complete.splitlines(), start=1):
        record = _json_object(line)
        at = _time(record.get("ts")) if record is not None else None
        if record is None or not isinstance(record.get("tool"), str) or not isinstance(record.get("agent"), str) or at is None:
            broken.append(f"{path} line {number}: not a tool call (a JSON object with 'ts', 'agent' and 'tool')")
            break
        calls.append(Logged(record, at, f"{path} line {number}"))
    return complete, calls


def _read_side_state(state_dir: Path, board: FileBoard, broken: list[str]) -> None:
    """What the board keeps beside its tasks, read as its readers read it (``board.store.files.side``)."""
    agents = state_dir / AGENTS_DIR
    for name in sorted(_listing(agents, broken)):
        path = agents / name
        if name.startswith("."):
            continue  # a name's lock (a live process's on this machine), a writer's temp file
        if name.endswith(AGENT_LOG_SUFFIX):
            # Calls on a task are in their task's log too: the agent's log adds those on none.
            read = _read_call_log(path, broken)
            if read is not None:
                board.taskless_calls.append([call for call in read[1] if call.record.get("task") is None])
        elif name.endswith(".json"):
            agent = name[: -len(".json")]
            if ID_PATTERN.fullmatch(agent) is None:
                broken.append(f"{path}: '{agent}' is not an agent name ({ID_RULE})")
                continue
            record = _read_record(path, broken)
            if record is not None:
                board.agents[agent] = Kept(record, str(path), _mtime(path))

    reservations = state_dir / RESERVATIONS_DIR
    for name in sorted(_listing(reservations, broken)):
        path = reservations / name
        if name.startswith(".") or not name.endswith(".json"):
            continue
        record = _read_record(path, broken)
        if record is None:
            continue
        if not isinstance(record.get("path"), str):
            broken.append(f"{path}: no reserved path ('path')")
            continue
        board.reservations += [(holder, str(path)) for holder in read_holders(path)]

    checkpoints = state_dir / CHECKPOINTS_DIR
    for task_id in sorted(_listing(checkpoints, broken), key=id_sort_key):
        folder = checkpoints / task_id
        if ID_PATTERN.fullmatch(task_id) is None or not folder.is_dir():
            continue  # board reads the checkpoints of a task id's folder only
        numbered: dict[int, Path] = {}
        for name in sorted(_listing(folder, broken)):
            stem = name[: -len(".json")]
            if name.endswith(".json") and stem.isdigit() and (int(stem) not in numbered or name == f"{int(stem):06d}.json"):
                numbered[int(stem)] = folder / name  # ``<seq:06d>.json`` first, as board reads them
        for seq, path in sorted(numbered.items()):
            record = _read_record(path, broken)
            if record is not None:
                board.checkpoints[(task_id, seq)] = Kept(record, str(path))

    alerts = state_dir / ALERTS_FILE
    if alerts.exists() or alerts.is_symlink():
        record = _read_record(alerts, broken)
        if record is not None:
            entries = record.get("alerts")
            board.alerts = [entry for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []


def _read_record(path: Path, broken: list[str]) -> dict[str, Any] | None:
    """The JSON object a small file holds; None, the file named in ``broken``, when it holds none."""
    raw = _read_bytes(path, broken, limit=1024 * 1024)
    if raw is None:
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        broken.append(f"{path}: not valid JSON")
        return None
    if not isinstance(record, dict):
        broken.append(f"{path}: top level must be a JSON object")
        return None
    return record


def _counted(task: Task, log: bytes | None) -> Task:
    """``task`` with the calls its log holds beyond its counts folded in: what every reader of
    the file store sees (``FileToolCalls._count_logged_calls`` with ``count_unfolded``)."""
    if log is None:
        return task
    calls = task.tool_calls
    start = calls.logged or 0
    # A document from before the logs stood alone counted its first ``total`` lines itself.
    counts = fold_tail(calls.model_dump(by_alias=True), start, log[start:], calls.total if calls.logged is None else 0)
    if counts is None:
        return task
    counted = task.model_copy()
    counted.tool_calls = ToolCalls.model_validate(counts)
    return share_fields_sets(counted)


def _note_claude_deleted_blockers(board: FileBoard, ids: set[str]) -> None:
    """Claude Code deletes a completed task: its dependents' ``blockedBy`` still names it, and
    a Claude Code list counts it done. A database counts a missing blocker as open."""
    gone = [
        (item.task.id, blocker) for item in board.tasks for blocker in item.task.blocked_by
        if blocker not in ids and board.layout.missing_blocker_done(blocker)
    ]
    if gone:
        pairs = ", ".join(f"#{task_id} on #{blocker}" for task_id, blocker in gone[:10]) + (", ..." if len(gone) > 10 else "")
        which = "dependency names a task" if len(gone) == 1 else "dependencies name tasks"
        board.warnings.append(
            f"{len(gone)} {which} Claude Code completed and deleted ({pairs}): in the database a missing "
            "blocker holds its task back; 'board task update ID --remove-blocked-by BLOCKER' lets it start"
        )


# -- import -------------------------------------------------------------------------------------


def import_board(url: str, directory: Path | str, *, replace: bool = False) -> dict[str, Any]:
    """Copy the board in ``directory`` into the database at ``url``, in one transaction.

    Refused (``BoardError``, nothing written) when the directory holds no board or a broken
    file, and when the database already holds a board, unless ``replace``: then the board it
    holds (tasks, edges, history, tool calls, archive, agents, reservations, checkpoints,
    alerts, this module's ``meta``) is replaced in the same transaction."""
    conn = connect(url, autocommit=True)  # first: says so when psycopg is not installed
    import psycopg

    sources: dict[str, list[str]] = {}
    layout: Layout | None = None
    try:
        check_schema(conn)
        source = read_file_board(directory)
        layout = source.layout
        with conn.transaction(), collection_paused():  # every task read stays alive to the end
            conn.execute("set local timezone = 'UTC'")
            # Every writer of the board waits until this transaction ends (claims too).
            conn.execute("select pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
            held = board_counts(conn)
            if any(held.values()):
                if not replace:
                    raise BoardError(
                        f"the database {redact(url)} already holds a board ({counts_text(held)}); nothing was imported: "
                        "pass --replace to replace it"
                    )
                conn.execute(
                    "truncate board.task_edges, board.tasks, board.history, board.tool_calls, board.archive,"
                    " board.agents, board.reservations, board.checkpoints, board.alerts"
                )
                conn.execute("delete from board.meta where key = %s", (LAST_ID_KEY,))
            conn.execute("delete from board.meta where key like %s", (IMPORTED_PREFIX + "%",))
            imported = _write_board(conn, source, sources, alerts_replaced=held["alerts"] > 0)
    except psycopg.Error as error:
        raise BoardError(f"the database refused {_refused_row(error, sources, layout)}: {_first_line(error)}; nothing was imported") from None
    finally:
        conn.close()
    return {
        "database": redact(url),
        "source": str(source.directory),
        "layout": source.layout.name,
        "imported": imported,
        "lastTaskId": source.last_id,
        "replaced": held if any(held.values()) else None,
        "warnings": source.warnings,
    }


#: What a board holds, as counted: the key in the counts, its table, and its noun.
COUNTED = (
    ("tasks", "tasks", "task"), ("history", "history", "history line"), ("toolCalls", "tool_calls", "tool call"),
    ("archived", "archive", "deleted task"), ("agents", "agents", "agent"), ("reservations", "reservations", "reservation"),
    ("checkpoints", "checkpoints", "checkpoint"), ("alerts", "alerts", "alert"),
)


def board_counts(conn: Any) -> dict[str, int]:
    """How much of a board the database holds."""
    row = conn.execute("select " + ", ".join(f"(select count(*) from board.{table})" for _, table, _ in COUNTED)).fetchone()
    return {key: int(count) for (key, _, _), count in zip(COUNTED, row)}


def counts_text(counts: dict[str, int], last: str = ", ") -> str:
    """What a board holds, in words: ``3 tasks, 1 history line, 0 tool calls, 1 deleted task,
    2 agents, 1 reservation, 0 checkpoints, 0 alerts``."""
    parts = [plural(counts[key], noun) for key, _, noun in COUNTED]
    return ", ".join(parts[:-1]) + last + parts[-1]


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _write_board(conn: Any, source: FileBoard, sources: dict[str, list[str]], *, alerts_replaced: bool) -> dict[str, int]:
    orders: list[tuple[str, dict[str, Any]]] = []
    layout = source.layout
    ready: set[str] = set()
    remaining: dict[str, float] = {}
    stuck_waves: dict[str, int] = {}

    def task_rows() -> Iterator[tuple[Any, ...]]:
        for item in source.tasks:
            task = item.task
            sources["tasks"].append(task.id)
            lease = task.lease
            yield (
                task.id, item.doc_text(), str(task.status), task.owner, PRIORITY_RANK[task.priority], task.version,
                lease.owner if lease else None, lease.token if lease else None, lease.expires_at if lease else None, task.updated_at,
                True,  # the document is the rules' own (``_document``): claims may write it in SQL
                task.id in ready, remaining[task.id], stuck_waves.get(task.id),
            )
            _note_file_form("task", item, orders)

    def edge_rows() -> Iterator[tuple[str, str]]:
        for item in source.tasks:
            for blocker in item.task.blocked_by:
                sources["task_edges"].append(f"{item.task.id}\0{blocker}")
                yield item.task.id, blocker

    def archive_rows() -> Iterator[tuple[Any, ...]]:
        for item in source.archived:
            sources["archive"].append(f"{layout.state_dir / ARCHIVE_DIR / layout.task_path(item.task.id).name}")
            yield item.task.id, item.doc_text(), item.deleted_at
            _note_file_form("archive", item, orders)

    for table in ("tasks", "task_edges", "history", "tool_calls", "archive", "agents", "reservations", "checkpoints", "alerts"):
        sources[table] = []
    # The claim columns (migration 3) come with the rows, worked out for the whole board at
    # once (``claim_columns``), not by the triggers row by row as the tasks and edges arrive.
    # Listeners hear once that everything changed, not of each of thousands of tasks.
    conn.execute("select set_config(%s, 'on', true), set_config(%s, 'on', true)", (CLAIM_ORDER_DEFERRED, NOTIFY_AFTER_COMMIT))
    with _foreign_keys_checked_at_once(conn, "board.task_edges"):
        # The edges first, their tasks after (the key is checked once both are in): the server
        # copies the edges, in a thread of this process that mostly waits on it, while this
        # thread works out the claim columns, each on a core of its own.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="board-import") as pool:
            edges_copied = pool.submit(_copy, conn, "task_edges (task_id, blocker_id)", edge_rows())
            ready, remaining, stuck_waves = claim_columns([item.task for item in source.tasks])
        edges_copied.result()  # what the server refused of them, if anything
        _copy(conn, "tasks (id, doc, status, owner, priority, version, lease_owner, lease_token, lease_expires_at, updated_at, normal, ready, remaining, stuck_wave)", task_rows())
    conn.execute("select set_config(%s, 'off', true), set_config(%s, 'off', true), pg_notify(%s, '*')", (CLAIM_ORDER_DEFERRED, NOTIFY_AFTER_COMMIT, TASK_CHANNEL))
    # The history as the files have it, line for line, even where a line's time is before its
    # task's last (written by hand, or by machines whose clocks differ).
    conn.execute("select set_config(%s, 'on', true)", (HISTORY_AS_GIVEN,))

    history = source.history
    sources["history"] = [item.where for item in history]
    _copy(conn, "history (task_id, version, at, record)", (
        (None if item.record.get("task") is None else str(item.record["task"]), _version(item.record), item.at, json.dumps(item.record, ensure_ascii=False))
        for item in history
    ))
    _note_line_orders(conn, "history", history, history_in_board_order, orders)

    # All logs in one stream by time, each log's own lines in its order: the table's order is
    # then the order the calls were made in, as the agents' logs have them.
    logs: list[list[tuple[Logged, str | None]]] = [[(item, task_id) for item in log] for task_id, log in source.calls.items()]
    logs += [[(item, None) for item in log] for log in source.taskless_calls]
    calls = list(heapq.merge(*logs, key=lambda pair: pair[0].at))
    sources["tool_calls"] = [item.where for item, _ in calls]
    _copy(conn, "tool_calls (task_id, agent, at, record)", (
        (task_id, item.record["agent"], item.at, json.dumps(item.record, ensure_ascii=False)) for item, task_id in calls
    ))
    _note_line_orders(conn, "tool_calls", [item for item, _ in calls], call_in_board_order, orders)

    _copy(conn, "archive (id, doc, archived_at)", archive_rows())

    def agent_rows() -> Iterator[tuple[Any, ...]]:
        for name, kept in source.agents.items():
            sources["agents"].append(kept.where)
            yield name, json.dumps(kept.record, ensure_ascii=False), kept.written
            _note_record_order(f"agent/{name}", kept.record, agent_in_board_order, orders)

    def reservation_rows() -> Iterator[tuple[Any, ...]]:
        for holder, where in source.reservations:
            sources["reservations"].append(where)
            yield holder.path, holder.task, holder.owner, holder.mode, holder.expires_at, holder.acquired_at or NO_ACQUISITION_TIME

    def checkpoint_rows() -> Iterator[tuple[Any, ...]]:
        for (task_id, seq), kept in source.checkpoints.items():
            sources["checkpoints"].append(kept.where)
            yield task_id, seq, json.dumps(kept.record, ensure_ascii=False)
            _note_record_order(f"checkpoint/{task_id}/{seq}", kept.record, checkpoint_in_board_order, orders)

    def alert_rows() -> Iterator[tuple[Any, ...]]:
        for index, record in enumerate(source.alerts or []):
            sources["alerts"].append(str(source.layout.state_dir / ALERTS_FILE))
            yield _alert_key(index), json.dumps(record, ensure_ascii=False)
            _note_record_order(f"alert/{_alert_key(index)}", record, alert_in_board_order, orders)

    _copy(conn, "agents (name, record, updated_at)", agent_rows())
    _copy(conn, "reservations (path, task_id, owner, mode, expires_at, created_at)", reservation_rows())
    _copy(conn, "checkpoints (task_id, seq, record)", checkpoint_rows())
    _copy(conn, "alerts (key, record)", alert_rows())
    if source.alerts is not None or alerts_replaced:
        # What readers poll (``DatabaseAlertBoard.stamp``): the alerts they show were replaced.
        conn.execute(
            "insert into board.meta (key, value) values (%s, '1') on conflict (key) do update set value = to_jsonb((board.meta.value)::int + 1)",
            (ALERTS_VERSION_KEY,),
        )
    if source.last_id > 0:
        conn.execute(
            "insert into board.meta (key, value) values (%s, %s) on conflict (key) do update set value = greatest(board.meta.value, excluded.value)",
            (LAST_ID_KEY, json.dumps(source.last_id)),
        )
    if orders:
        with conn.cursor() as cursor:
            cursor.executemany("insert into board.meta (key, value) values (%s, %s)", [(key, json.dumps(value, ensure_ascii=False)) for key, value in orders])
    return {
        "tasks": len(source.tasks),
        "dependencies": len(sources["task_edges"]),
        "history": len(history),
        "toolCalls": len(calls),
        "archived": len(source.archived),
        "agents": len(source.agents),
        "reservations": len(source.reservations),
        "checkpoints": len(source.checkpoints),
        "alerts": len(source.alerts or []),
    }


def claim_columns(tasks: list[Task]) -> tuple[set[str], dict[str, float], dict[str, int]]:
    """The claim columns of every task of a board about to be written whole, as
    ``board.rebuild_claim_order()`` would make them: the ready tasks (``board.task_readiness``:
    a blocker with no row holds its task back), each task's remaining path, and the wave of each
    task the waves never reach. The rules' index works out waves and paths as the database's do
    (``tests/postgres/test_claim_order.py`` holds the two together)."""
    graph = TaskGraph(tasks, readiness=False)  # readiness by the database's rule, below
    by_id = graph.tasks
    open_children = {task.parent for task in tasks if task.parent is not None and task.status not in ("completed", "cancelled")}
    ready = {
        task.id for task in tasks
        if task.status == "pending" and not is_hidden(task) and task.id not in open_children
        and all(b in by_id and by_id[b].status == "completed" for b in task.blocked_by)
    }
    waves = graph.waves()
    stuck = {task_id: waves[task_id] for task_id in graph.stuck_ids()}
    return ready, graph.remaining_path(unit_weight), stuck


def _alert_key(index: int) -> str:
    """An alert's row key: its place in the order given (``DatabaseAlertBoard``)."""
    return f"{index:06d}"


def _note_record_order(key: str, record: dict[str, Any], in_board_order: Any, orders: list[tuple[str, dict[str, Any]]]) -> None:
    """Record the key order of a record export would not write back as it was."""
    found = key_orders(record, in_board_order(_jsonb_order(record)))
    if found:
        orders.append((f"{IMPORTED_PREFIX}{key}", {"orders": found}))


def _note_file_form(kind: str, item: Imported, orders: list[tuple[str, dict[str, Any]]]) -> None:
    """Record what export needs to write the task's file back as it was: the key orders jsonb
    loses, and the file's own counts when its log held calls they did not count."""
    recorded: dict[str, Any] = {}
    found = [] if _keeps_its_key_orders(item.task) else key_orders(item.doc, _task_in_board_order(_jsonb_order(item.doc)))
    if found:
        recorded["orders"] = found
    if item.file_tool_calls is not None:
        recorded["toolCalls"] = item.file_tool_calls
        recorded["counted"] = item.task.tool_calls.model_dump(mode="json", by_alias=True)
    if recorded:
        orders.append((f"{IMPORTED_PREFIX}{kind}/{item.task.id}", {"version": item.task.version, **recorded}))


def _keeps_its_key_orders(task: Task) -> bool:
    """Whether export writes the task's document back key for key as it is without a recorded
    order (the common case, and much cheaper to tell than ``key_orders``): its own objects and
    its sub-documents are ordered by board whatever jsonb does to them, unless they hold fields
    board does not know, and every free object (the metadata) has its keys in jsonb's order."""
    parts = (task, task.tool_calls, task.lease, task.policy, task.budget, task.policy.budget if task.policy else None)
    return not any(part is not None and part.__pydantic_extra__ for part in parts) and _in_jsonb_order(task.metadata)


def _in_jsonb_order(value: Any) -> bool:
    if isinstance(value, dict):
        keys = list(value)
        if len(keys) > 1 and keys != sorted(keys, key=_jsonb_key):
            return False
        return all(_in_jsonb_order(item) for item in value.values() if isinstance(item, (dict, list)))
    if isinstance(value, list):
        return all(_in_jsonb_order(item) for item in value if isinstance(item, (dict, list)))
    return True


def _version(record: dict[str, Any]) -> int | None:
    version = record.get("version")
    return version if type(version) is int else None


def _note_line_orders(conn: Any, table: str, lines: list[Logged], in_board_order: Any, orders: list[tuple[str, dict[str, Any]]]) -> None:
    """Record the key order of the lines export would not write back as they were, by the
    number (``seq``) each was given: the table held nothing else, so in the order copied."""
    kind = "history" if table == "history" else "call"
    pending = []
    for index, item in enumerate(lines):
        found = key_orders(item.record, in_board_order(_jsonb_order(item.record)))
        if found:
            pending.append((index, found))
    if not pending:
        return
    seqs = [seq for (seq,) in conn.execute(f"select seq from board.{table} order by seq").fetchall()]
    if len(seqs) != len(lines):
        raise BoardError(f"board.{table} changed while it was imported; nothing was imported")
    for index, found in pending:
        orders.append((f"{IMPORTED_PREFIX}{kind}/{seqs[index]}", {"orders": found}))


@contextmanager
def _foreign_keys_checked_at_once(conn: Any, table: str) -> Iterator[None]:
    """The table's foreign keys, dropped for the block and made again as they were, in the
    import's transaction: made again, each is checked with one join over the whole table,
    where a copy checks it row by row, locking the referenced row each time (0.7 s of the
    1 s the edges of 100,000 tasks took). While the transaction lasts, readers of the table
    wait for it, as they do for an import that replaces a board (its ``truncate``). Nothing
    puts them back when the block fails: the import's transaction, rolled back, does."""
    from psycopg import sql

    keys = conn.execute(
        "select conname, pg_get_constraintdef(oid) from pg_constraint where conrelid = %s::regclass and contype = 'f' order by conname", (table,)
    ).fetchall()
    schema, name = table.split(".")
    target = sql.Identifier(schema, name)
    for key, _ in keys:
        conn.execute(sql.SQL("alter table {} drop constraint {}").format(target, sql.Identifier(key)))
    yield
    for key, definition in keys:
        conn.execute(sql.SQL("alter table {} add constraint {} {}").format(target, sql.Identifier(key), sql.SQL(definition)))


def _copy(conn: Any, target: str, rows: Iterable[tuple[Any, ...]]) -> None:
    with conn.cursor() as cursor, cursor.copy(f"copy board.{target} from stdin") as copy:
        for row in rows:
            copy.write_row(row)


def _refused_row(error: Exception, sources: dict[str, list[str]], layout: Layout | None = None) -> str:
    """What the database refused, named by its file (and line) when a copy says which row.
    (Tasks and their edges are noted by id, and named by their file only here.)"""
    context = getattr(getattr(error, "diag", None), "context", None) or ""
    found = re.search(r"COPY (\w+), line (\d+)", context)
    if found:
        rows = sources.get(found[1], [])
        number = int(found[2]) - 1
        if 0 <= number < len(rows):
            row = rows[number]
            if layout is not None and found[1] == "tasks":
                return str(layout.task_path(row))
            if layout is not None and found[1] == "task_edges":
                task_id, blocker = row.split("\0")
                return f"{layout.task_path(task_id)} (blockedBy #{blocker})"
            return row
    return "the board"


def _first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return lines[0].strip() if lines else type(error).__name__


# -- export -------------------------------------------------------------------------------------


def export_board(url: str, directory: Path | str, *, replace: bool = False) -> dict[str, Any]:
    """Write the board in the database at ``url`` into ``directory/.tasks/``, as the file store
    would have written it.

    Refused (``BoardError``, nothing written) when ``directory`` already holds a board, unless
    ``replace``: then what a board holds (tasks, history, tool-call logs, archive, agents' records,
    reservations, checkpoints, alerts) is replaced under its lock, and the files of the
    workspace and the machine (settings, locks, logs) stay. The database is read in one
    snapshot."""
    directory = Path(directory).expanduser().absolute()
    target = directory / ".tasks"
    _check_export_target(directory, target, replace)
    existed = target.exists()
    conn = connect(url, autocommit=True)  # first: says so when psycopg is not installed
    import psycopg

    made = not directory.exists()
    staging: Path | None = None
    try:
        check_schema(conn)
        directory.mkdir(parents=True, exist_ok=True)
        staging = directory / f".tasks.export-{os.getpid()}-{secrets.token_hex(4)}"
        staging.mkdir()
        exported, warnings = _export_into(conn, url, staging, TasksDirLayout(directory))
        _put_in_place(staging, target)
        staging = None
    except psycopg.Error as error:
        raise BoardError(f"could not read the board in {redact(url)}: {_first_line(error)}; nothing was exported") from None
    finally:
        conn.close()
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        if made and staging is not None:
            with contextlib.suppress(OSError):
                directory.rmdir()  # made for this export, and empty again
    return {"database": redact(url), "board": str(target), "exported": exported, "replaced": existed, "warnings": warnings}


def _check_export_target(directory: Path, target: Path, replace: bool) -> None:
    if directory.exists() and not directory.is_dir():
        raise BoardError(f"{directory} is not a directory; nothing was exported")
    if looks_like_claude_list(directory):
        raise BoardError(f"{directory} is a Claude Code task list; export writes a .tasks/ board: choose another directory; nothing was exported")
    if not (target.exists() or target.is_symlink()):
        return
    if target.is_symlink() or not target.is_dir():
        raise BoardError(f"{target} is not a folder; nothing was exported")
    url = stored_database_url(directory)
    if url is not None:
        raise BoardError(
            f"the board of {directory} is kept in the database {redact(url)} ([store] url in its board.toml): "
            "board would never read files exported there; nothing was exported"
        )
    if not replace:
        raise BoardError(
            f"{directory} already holds a board ({target}); nothing was exported: pass --replace to replace its tasks, "
            "history, tool calls, deleted tasks, agents, reservations, checkpoints and alerts"
        )


def _export_into(conn: Any, url: str, staging: Path, layout: TasksDirLayout) -> tuple[dict[str, int], list[str]]:
    """Write the database's board into the empty folder ``staging``, laid out as ``.tasks/``."""
    warnings: list[str] = []
    where = redact(url)
    with conn.transaction():
        conn.execute("set transaction isolation level repeatable read, read only")
        meta = dict(conn.execute(
            "select key, value from board.meta where key = any(%s) or key like %s", ([LAST_ID_KEY, ALERTS_VERSION_KEY], IMPORTED_PREFIX + "%")
        ).fetchall())

        # Every call in its agent's log, and in its task's when it was made on one, as
        # ``toolcall_log.append_call`` logs it.
        logs: dict[str, list[bytes]] = {}
        agent_logs: dict[str, list[bytes]] = {}
        calls = 0
        unnamed: set[str] = set()
        for seq, task_id, agent, record in conn.execute("select seq, task_id, agent, record from board.tool_calls order by seq"):
            if task_id is not None:
                _check_id(task_id, f"{where}#tool_calls/{seq}")
            line = json_line(apply_key_orders(call_in_board_order(record), _orders(meta, f"call/{seq}")))
            if task_id is not None:
                logs.setdefault(task_id, []).append(line)
            if ID_PATTERN.fullmatch(agent) is None:
                unnamed.add(agent)
            else:
                agent_logs.setdefault(agent, []).append(line)
            calls += 1
        if unnamed:
            names = ", ".join(sorted(repr(name) for name in unnamed)[:5])
            warnings.append(f"tool calls by agents whose names cannot name a file ({names}) are in their tasks' logs only, not in agents' logs")
        joined = {task_id: b"".join(lines) for task_id, lines in logs.items()}
        if joined:
            (staging / TASK_LOGS).mkdir()
            for task_id, data in joined.items():
                _write_file(staging / TASK_LOGS / f"{task_id}.jsonl", data)
        if agent_logs:
            (staging / AGENTS_DIR).mkdir()
            for agent, lines in agent_logs.items():
                _write_file(staging / AGENTS_DIR / f"{agent}{AGENT_LOG_SUFFIX}", b"".join(lines))

        tasks = 0
        dependencies = 0
        active: dict[str, dict[str, Any]] = {}
        ids: set[str] = set()
        for task_id, doc in conn.execute("select id, doc from board.tasks"):
            task = _task_to_export(task_id, doc, "task", meta, joined, f"{where}#tasks/{task_id}")
            _write_file(staging / layout.task_path(task.id).name, layout.encode(task))
            entry = entry_for(str(task.status), task.owner, held_files(task.id, task.files, task.metadata))
            if entry is not None:
                active[task.id] = entry
            tasks += 1
            dependencies += len(task.blocked_by)
            ids.add(task.id)

        archived = 0
        for task_id, doc in conn.execute("select id, doc from board.archive"):
            task = _task_to_export(task_id, doc, "archive", meta, joined, f"{where}#archive/{task_id}")
            if not archived:
                (staging / ARCHIVE_DIR).mkdir()
            _write_file(staging / ARCHIVE_DIR / layout.task_path(task.id).name, layout.encode(task))
            archived += 1
            ids.add(task.id)

        history = 0
        with conn.cursor(name="board_export_history") as cursor:
            cursor.itersize = 2000
            cursor.execute("select seq, record from board.history order by seq")
            out = None
            try:
                for seq, record in cursor:
                    if out is None:
                        out = open(staging / HISTORY, "xb")  # noqa: SIM115 - closed below
                    out.write(json_line(apply_key_orders(history_in_board_order(record), _orders(meta, f"history/{seq}"))))
                    history += 1
            finally:
                if out is not None:
                    out.close()

        side = _export_side_state(conn, meta, staging, where)

    last_id = meta.get(LAST_ID_KEY)
    highest = max((int(task_id) for task_id in ids if task_id.isdigit()), default=0)
    if isinstance(last_id, int) and last_id > highest:
        warnings.append(
            f"the database has issued ids up to {last_id}, above every task and deleted task (#{highest}); a .tasks/ board "
            f"cannot record that, so ids {highest + 1}-{last_id} may be issued again"
        )
    if active:
        write_active(staging, active, lock=False)  # what 'board hook' reads to tell who works on what
    (staging / ".lock").touch()
    _make_durable(staging)
    return {"tasks": tasks, "dependencies": dependencies, "history": history, "toolCalls": calls, "archived": archived, **side}, warnings


def _export_side_state(conn: Any, meta: dict[str, Any], staging: Path, where: str) -> dict[str, int]:
    """The agents' records, the reservations, the checkpoints and the alerts, written into
    ``staging`` as ``board.store.files.side`` writes them; how many of each."""
    records = FileAgentRecords(staging)
    agents = 0
    for name, record in conn.execute("select name, record from board.agents order by name"):
        if ID_PATTERN.fullmatch(name) is None:
            raise BoardError(f"cannot export {where}#agents/{name}: {name!r} is not an agent name ({ID_RULE}); nothing was exported")
        _check_record(record, f"{where}#agents/{name}")
        records.write(name, apply_key_orders(agent_in_board_order(record), _orders(meta, f"agent/{name}")))
        agents += 1

    holders: dict[str, list[Reservation]] = {}
    for row in conn.execute("select path, owner, task_id, mode, expires_at, created_at from board.reservations order by path, created_at, owner"):
        holder = reservation_from_row(row)
        holders.setdefault(holder.path, []).append(holder)
    book = FileReservationBook(staging)
    for path, held in holders.items():
        book.replace(path, held)

    checkpoints = 0
    for task_id, seq, record in conn.execute("select task_id, seq, record from board.checkpoints order by task_id, seq"):
        _check_id(task_id, f"{where}#checkpoints/{task_id}/{seq}")
        _check_record(record, f"{where}#checkpoints/{task_id}/{seq}")
        folder = staging / CHECKPOINTS_DIR / task_id
        folder.mkdir(parents=True, exist_ok=True)
        record = apply_key_orders(checkpoint_in_board_order(record), _orders(meta, f"checkpoint/{task_id}/{seq}"))
        # As ``FileCheckpointBook.write`` writes it; a file each, made durable with the rest
        # (a large board holds thousands).
        _write_file(folder / f"{seq:06d}.json", (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        checkpoints += 1

    alerts = [
        apply_key_orders(alert_in_board_order(record), _orders(meta, f"alert/{key}"))
        for key, record in conn.execute("select key, record from board.alerts order by key")
    ]
    if alerts or ALERTS_VERSION_KEY in meta:  # alerts were stored, none hold now: an empty list
        _write_file(staging / ALERTS_FILE, alerts_document(alerts))
    return {"agents": agents, "reservations": sum(len(held) for held in holders.values()), "checkpoints": checkpoints, "alerts": len(alerts)}


def _check_record(record: Any, where: str) -> None:
    if not isinstance(record, dict):
        raise BoardError(f"cannot export {where}: the record is not a JSON object; nothing was exported")


def _orders(meta: dict[str, Any], key: str) -> list[list[Any]]:
    record = meta.get(IMPORTED_PREFIX + key)
    return record.get("orders", []) if isinstance(record, dict) else []


def _check_id(task_id: str, where: str) -> None:
    if ID_PATTERN.fullmatch(task_id) is None:
        raise BoardError(f"cannot export {where}: {task_id!r} is not a task id; nothing was exported")


def _task_to_export(task_id: str, doc: Any, kind: str, meta: dict[str, Any], logs: dict[str, bytes], where: str) -> Task:
    """A stored document as the task file to write: while it is the one imported, the file
    import read (its key order, and its own counts if its log held calls they did not count);
    else as the file store writes it, its counts covering its whole log."""
    _check_id(task_id, where)
    if not isinstance(doc, dict):
        raise BoardError(f"cannot export {where}: the document is not a JSON object; nothing was exported")
    stored = meta.get(f"{IMPORTED_PREFIX}{kind}/{task_id}")
    recorded: dict[str, Any] = stored if isinstance(stored, dict) else {}
    unchanged = isinstance(stored, dict) and recorded.get("version") == doc.get("version")
    if unchanged:
        apply_key_orders(doc, recorded.get("orders", []))
    log = logs.get(task_id)
    if unchanged and "toolCalls" in recorded and doc.get("toolCalls") == recorded.get("counted"):
        doc["toolCalls"] = recorded["toolCalls"]  # no call since: the log is the one imported
    elif log is not None:
        # The database counts every call in the document itself: the file's counts then
        # cover the whole log, and its readers add only calls logged after the export.
        counts = doc.get("toolCalls")
        if isinstance(counts, dict):
            counts["logged"] = len(log)
        else:
            doc["toolCalls"] = {"logged": len(log)}
    try:
        task = task_from_dict(doc, where)
    except InvalidTaskFile as error:
        raise BoardError(f"cannot export {error}; nothing was exported") from None
    if task.id != task_id:
        raise BoardError(f"cannot export {where}: its document says it is task {task.id}; nothing was exported")
    task.integer_ids = type(doc.get("id")) is int
    return task


def _write_file(path: Path, data: bytes) -> None:
    """A new file holding ``data``, not yet durable (``_make_durable`` does that for all)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _make_durable(staging: Path) -> None:
    """fsync every file of the staged board, then its folders, before it is put in place.
    Many at once: the file system commits concurrent fsyncs together, one by one costs a
    journal commit each (a 10,000-task board: 20 s one by one, a few seconds this way)."""
    paths = [Path(root) / name for root, _, names in os.walk(staging) for name in names]

    def sync(path: Path) -> None:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    with ThreadPoolExecutor(max_workers=FSYNC_THREADS) as pool:
        list(pool.map(sync, paths))
    for root, _, _ in os.walk(staging, topdown=False):
        fsync_directory(Path(root))


def _put_in_place(staging: Path, target: Path) -> None:
    """Make the staged board ``target``: one rename when there is none; else, under the
    board's lock, what a board holds replaced by the staged one. In ``agents/`` only the records
    and call logs are: the names' locks belong to live processes."""
    if not target.exists():
        os.rename(staging, target)  # the board appears whole or not at all
        fsync_directory(target.parent)
        return
    layout = TasksDirLayout(target.parent)
    with layout.lock():
        for _, key in list(layout.task_files()):
            os.unlink(key)
        for name in (HISTORY, PENDING_HISTORY, ACTIVE_FILE, ACTIVE_JOURNAL, ALERTS_FILE):
            (target / name).unlink(missing_ok=True)
        for name in (TASK_LOGS, ARCHIVE_DIR, RESERVATIONS_DIR, CHECKPOINTS_DIR):
            _remove(target / name)
        agents = target / AGENTS_DIR
        if agents.is_dir() and not agents.is_symlink():
            for name in os.listdir(agents):
                if not name.startswith(".") and (name.endswith(".json") or name.endswith(AGENT_LOG_SUFFIX)):
                    _remove(agents / name)
        else:
            _remove(agents)
        for name in os.listdir(staging):
            if name == AGENTS_DIR and agents.is_dir():
                for record in os.listdir(staging / name):
                    os.rename(staging / name / record, agents / record)
                fsync_directory(agents)
            elif name != ".lock":
                os.rename(staging / name, target / name)
        fsync_directory(target)
    shutil.rmtree(staging)


def _remove(path: Path) -> None:
    """A file or a whole folder, gone (a link itself, never what it points to)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
