"""The task document (one JSON file per task) and its single serializer.

Field names are camelCase on disk and shared with Claude Code's task files, so those read and
write unchanged. Unknown fields are kept in ``model_extra`` and written back on every rewrite.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from typing import Any, TypeVar

from board.records import NamedTuple
from board.document_schema import ValidationError

from board.document_json import indented, plain_dict
from board.document import Document, checked, constrained_str, datetime_schema, enum_schema, field, list_of, optional
from board import json_bounds
from board.errors import BoardError, InvalidTaskFile
from board.json_bounds import TooDeep, deeper_than_allowed
# Ids, labels and priorities live in light modules the command line reads before anything else;
# they are re-exported here, where the rest of board looks for them.
from board.names import ID_PATTERN, ID_REGEX, ID_RULE, LABEL_REGEX, LABEL_RULE, validate_id  # noqa: F401
from board.priority import PRIORITY_RANK, Priority  # noqa: F401
from board.status import Status
from board.text import shortened

MAX_FILE_BYTES = 1024 * 1024

#: Unicode's White_Space characters: what ``\s`` matched when the subject and labels were checked
#: by patterns in pydantic's core, so the same files are valid.
_WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
_NOT_IN_A_LABEL = frozenset(_WHITE_SPACE + ",")


def _one_line(subject: str) -> str:
    if "\n" in subject or "\r" in subject or not subject.strip(_WHITE_SPACE):
        raise ValueError("must be a single line that is not blank")
    return subject


def _labels(labels: list[str]) -> list[str]:
    """Each label one word (``LABEL_REGEX``; its 1-40 characters are the core's to check, which
    also refuses text that is not Unicode), each named once."""
    for label in labels:
        if not _NOT_IN_A_LABEL.isdisjoint(label):
            raise ValueError(f"'{shortened(label)}' is not a valid label ({LABEL_RULE})")
    return _no_repeats(labels)


# Constraints are checked inside pydantic's core rather than by Python validators: loading
# 10,000 files spends most of its time here. The subject's and the labels' are the exception: a
# pattern with Unicode classes costs the core 0.3-0.6 ms to compile in every process that reads
# a task, where a function costs a tenth of a microsecond a task.
_TASK_ID = constrained_str(pattern=f"^{ID_REGEX}$")
_SUBJECT = checked(constrained_str(min_length=1, max_length=200), _one_line)
_FILE_PATH = constrained_str(min_length=1)
_LABEL = constrained_str(min_length=1, max_length=40)
_TEXT = constrained_str()
_COUNT = {"type": "int", "ge": 0}
_PERCENT = {"type": "int", "ge": 0, "le": 100}
_TIME = datetime_schema()
_STATUS = enum_schema(Status)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Seen(NamedTuple):
    """What a person saw of a task when they pressed a key: a move made on it is refused if any
    of this changed meanwhile (an agent's tool calls and progress in between do not count)."""

    status: str
    owner: str
    holder: str | None
    token: int | None

    @classmethod
    def of(cls, task: Task) -> Seen:
        return cls(str(task.status), task.owner, task.lease.owner if task.lease else None, task.lease.token if task.lease else None)

    def differs(self, task: Task) -> str | None:
        """How ``task`` moved on from what was seen, in words; None if it did not."""
        now = Seen.of(task)
        if now == self:
            return None
        return f"it is now {task.status}" + (f", held by {task.owner}" if task.owner else "")


def by_policy(task: Task) -> bool:
    """Whether a policy, not a person or the agent, chose the task's current status."""
    mark = task.policy
    return mark is not None and not mark.settled and mark.status == task.status


def live_lease_holder(task: Task, now: datetime) -> str | None:
    """The agent holding ``task`` under a lease that has not run out, or None."""
    lease = task.lease
    if task.status != "in_progress" or lease is None or lease.expires_at <= now:
        return None
    return lease.owner


class ToolCalls(Document):
    total: int = field(_COUNT, default=0)
    ok: int = field(_COUNT, default=0)
    failed: int = field(_COUNT, default=0)
    consecutive_failures: int = field(_COUNT, default=0)
    last_tool: str | None = field(optional(_TEXT), default=None)
    last_at: datetime | None = field(optional(_TIME), default=None)
    #: How much of the task's tool-call log (bytes) these counts include; readers count the
    #: rest (``board.toolcall_log``). None in documents written before logs were appended alone.
    logged: int | None = field(optional(_COUNT), default=None)


def _empty_list() -> list[Any]:
    return []


def _empty_dict() -> dict[str, Any]:
    return {}


def _no_tool_calls() -> ToolCalls:
    # Copying a prototype is several times cheaper than validating a fresh default per file.
    return _NO_TOOL_CALLS.model_copy()


_NO_TOOL_CALLS = ToolCalls()
#: The tool calls of every task read with none (``lean``): shared, so never changed in place.
_IDLE_TOOL_CALLS = ToolCalls()


class Lease(Document):
    owner: str = field(_TEXT)
    token: int = field(_COUNT)
    expires_at: datetime = field(_TIME)
    #: The lease's length: a heartbeat renews it by this much (older files lack it).
    seconds: float | None = field(optional({"type": "float", "gt": 0}), default=None)


class Budget(Document):
    """What a task may spend in model tokens (all four kinds: input, output, cache writes and
    reads) and in estimated dollars; either or both. The ``budget`` policy pauses the task once
    it has spent either (``board.budgets``)."""

    tokens: int | None = field(optional({"type": "int", "ge": 1}), default=None)
    usd: float | None = field(optional({"type": "float", "gt": 0, "allow_inf_nan": False}), default=None)


def checked_budget(value: Any) -> dict[str, Any]:
    """A budget change: ``{"tokens": N, "usd": X}``, either left out (kept as it is) or None
    (its limit removed); anything else is refused in one line."""
    if isinstance(value, Budget):
        value = value.model_dump()
    if value is None:
        return {"tokens": None, "usd": None}
    if not isinstance(value, dict) or not set(value) <= {"tokens", "usd"}:
        raise BoardError("a budget is {'tokens': N, 'usd': X}: a whole number of tokens and an amount of dollars, either or both")
    tokens, usd = value.get("tokens"), value.get("usd")
    if tokens is not None and (type(tokens) is not int or tokens < 1):
        raise BoardError(f"a budget's tokens are a whole number of at least 1 (or none), not {shortened(repr(tokens))}")
    if usd is not None and (type(usd) not in (int, float) or not 0 < usd < 1e9):
        raise BoardError(f"a budget's dollars are more than 0 and less than a billion (or none), not {shortened(repr(usd))}")
    return {name: (float(v) if name == "usd" and v is not None else v) for name, v in value.items()}


def with_limits(budget: Budget | None, change: dict[str, Any]) -> Budget | None:
    """``budget`` with the limits ``change`` names set (None removes one); None once it has none."""
    limits = {**(budget.model_dump() if budget is not None else {}), **change}
    if limits.get("tokens") is None and limits.get("usd") is None:
        return None
    return Budget(tokens=limits.get("tokens"), usd=limits.get("usd"))


class PolicyMark(Document):
    """Which seed-002 policy set the task's status, and why: it can be wrong, so the board
    shows it and a person can undo it."""

    name: str = field(_TEXT)
    status: Status = field(_STATUS)
    reason: str = field(_TEXT)
    fired_at: datetime = field(_TIME)
    #: ``toolCalls.total`` when it fired; calls up to here never fire a policy again.
    at_total: int = field(_COUNT, default=0)
    #: Who held the task, and its progress, when the policy fired (an undo restores them).
    owner: str = field(_TEXT, default="")
    progress: int = field(_PERCENT, default=0)
    #: Whether its holder had a lease (an agent) or not (a person): an undo gives it back alike.
    leased: bool = field({"type": "bool"}, default=True)
    #: True once the status moved on (undone, or changed by anyone): no longer the policy's.
    settled: bool = field({"type": "bool"}, default=False)
    #: The budget the ``budget`` policy paused the task at: once undone, it does not pause the
    #: task again until the budget changes.
    budget: Budget | None = field(optional(Budget.__pydantic_core_schema__), default=None)


def _no_repeats(value: list[str]) -> list[str]:
    """A list of ids, paths or labels names each once: a repeat is dropped, the first kept."""
    return value if len(set(value)) == len(value) else list(dict.fromkeys(value))


def _ids() -> Any:
    return field(list_of(_TASK_ID, after=_no_repeats), default_factory=_empty_list)


class Task(Document):
    id: str = field(_TASK_ID)
    subject: str = field(_SUBJECT)
    description: str = field(_TEXT, default="")
    active_form: str = field(_TEXT, default="")
    status: Status = field(_STATUS, default=Status.PENDING)
    blocked_by: list[str] = _ids()
    blocks: list[str] = _ids()
    owner: str = field(_TEXT, default="")
    priority: Priority = field(enum_schema(Priority), default=Priority.MEDIUM)
    parent: str | None = field(optional(_TASK_ID), default=None)
    files: list[str] = field(list_of(_FILE_PATH, after=_no_repeats), default_factory=_empty_list)
    labels: list[str] = field(list_of(_LABEL, after=_labels), default_factory=_empty_list)
    progress: int = field(_PERCENT, default=0)
    tool_calls: ToolCalls = field(ToolCalls.__pydantic_core_schema__, default_factory=_no_tool_calls)
    lease: Lease | None = field(optional(Lease.__pydantic_core_schema__), default=None)
    error: str | None = field(optional(_TEXT), default=None)
    #: Set when a policy (not a person or the agent) chose the current status.
    policy: PolicyMark | None = field(optional(PolicyMark.__pydantic_core_schema__), default=None)
    #: What the task may spend in tokens and dollars (None: the board's default, if any).
    budget: Budget | None = field(optional(Budget.__pydantic_core_schema__), default=None)
    #: What the task, in ``waiting``, asks a person; the person's answer; when it was asked.
    question: str | None = field(optional(_TEXT), default=None)
    answer: str | None = field(optional(_TEXT), default=None)
    asked_at: datetime | None = field(optional(_TIME), default=None)
    metadata: dict[str, Any] = field({"type": "dict", "keys_schema": _TEXT, "values_schema": {"type": "any"}}, default_factory=_empty_dict)
    #: The file wrote its ids as JSON integers (seed 001 does): written back the same way, so
    #: code that compares ``1 in task["blockedBy"]`` keeps working. Not a field of the file.
    integer_ids: bool = field({"type": "bool"}, default=False, exclude=True)
    created_at: datetime | None = field(optional(_TIME), default=None)
    updated_at: datetime | None = field(optional(_TIME), default=None)
    started_at: datetime | None = field(optional(_TIME), default=None)
    completed_at: datetime | None = field(optional(_TIME), default=None)
    version: int = field(_COUNT, default=0)


_D = TypeVar("_D", bound=Document)


def task_to_dict(task: Task) -> dict[str, Any]:
    plain = plain_dict(task)  # the first few of a process, without the core's package
    return plain if plain is not None else task.model_dump(mode="json", by_alias=True)


def dump_task(task: Task) -> bytes:
    """The one serializer for task files: stable key order, two-space indent, trailing newline.

    pydantic's own encoder writes the same bytes as ``json.dumps(..., ensure_ascii=False,
    indent=2)`` five times faster (the standard library encodes indented JSON in Python). The
    first few documents of a process are written without it (``board.document_json``).
    """
    if task.integer_ids:
        return (json.dumps(with_integer_ids(task_to_dict(task)), ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    plain = plain_dict(task)
    if plain is not None:
        try:
            return indented(plain).encode("utf-8") + b"\n"
        except UnicodeEncodeError:
            pass  # text that is not Unicode (a lone surrogate): the core's own error says so
    return task.model_dump_json(by_alias=True, indent=2).encode("utf-8") + b"\n"


def with_integer_ids(data: dict[str, Any]) -> dict[str, Any]:
    """A task document with its numeric ids as JSON integers, as its file had them."""

    def number(value: Any) -> Any:
        return int(value) if isinstance(value, str) and value.isdigit() and value == str(int(value)) else value

    data["id"] = number(data["id"])
    data["blockedBy"] = [number(b) for b in data.get("blockedBy", [])]
    data["blocks"] = [number(b) for b in data.get("blocks", [])]
    if data.get("parent") is not None:
        data["parent"] = number(data["parent"])
    return data


#: What ``\s`` matches in a pattern of bytes.
_SPACE = b" \t\n\r\f\v"


def _id_value_at(raw: bytes) -> int:
    r"""Where the value of the first ``"id"`` key starts (as the pattern ``"id"\s*:\s*`` would
    find it); -1 when there is none. Found without a pattern: compiling one cost a command about
    one task more than the search."""
    at, end = raw.find(b'"id"'), len(raw)
    while at >= 0:
        position = at + 4
        while position < end and raw[position] in _SPACE:
            position += 1
        if position < end and raw[position] == 0x3A:  # ":"
            position += 1
            while position < end and raw[position] in _SPACE:
                position += 1
            return position
        at = raw.find(b'"id"', at + 1)
    return -1


def _wrote_integer_id(raw: bytes, task: Task) -> bool:
    """Whether the file gave the task's own id as a JSON integer (``"id": 7``, not ``"id": "7"``).

    Looks at the first ``"id"`` key only, where every writer puts the task's own id: a full
    parse of each file would cost more than the rest of loading a board."""
    start = _id_value_at(raw)
    if start < 0:
        return False
    digits = task.id.encode()
    end = start + len(digits)
    return raw[start:end] == digits and not raw[end:end + 1].isdigit()


def draft_of(document: _D) -> _D:
    """A copy to change while the original (shared by the index) stays as it was.

    The same as ``model_copy(deep=True)``, several times faster: only lists, dicts and nested
    documents are copied; strings, numbers and datetimes are immutable and shared.
    """
    copy = document.model_copy()
    values = copy.__dict__
    for name, value in values.items():
        kind = type(value)
        if kind is list:
            values[name] = value.copy() if all(type(item) is str for item in value) else _copied(value)
        elif kind is dict:
            values[name] = _copied(value) if value else {}
        elif isinstance(value, Document):
            values[name] = draft_of(value)
    if copy.__pydantic_extra__:
        copy.__pydantic_extra__ = _copied(copy.__pydantic_extra__)
    return copy


def _copied(value: Any) -> Any:
    """A deep copy of a JSON value (metadata, unknown fields); anything else goes to
    ``copy.deepcopy``, loaded only then: the ``copy`` module costs a command that changes one
    task more than all its copying."""
    kind = type(value)
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    if kind is list:
        return [_copied(item) for item in value]
    if value is None or kind in _IMMUTABLE:
        return value
    from copy import deepcopy

    return deepcopy(value)


_IMMUTABLE = frozenset({str, int, float, bool})


def parse_task(raw: bytes, source: str | os.PathLike[str], *, limit: int | None = MAX_FILE_BYTES, compact: bool = True) -> Task:
    """Parse one task file; every failure is an InvalidTaskFile naming the file and the field.
    ``limit=None`` for a document a database kept, whose text form spaces out what was written
    within the limit. ``compact``: made as small in memory as it can be (``lean``), for a task
    an index will hold; else only its field sets are shared (``share_fields_sets``: most of the
    saving for little of the work), for a task read once and let go (an import)."""
    if limit is not None and len(raw) > limit:
        raise InvalidTaskFile(str(source), f"file is {len(raw):,} bytes; the limit is {limit:,}")
    try:
        # pydantic's own JSON parser is several times faster than json.loads + validate;
        # on any failure, redo it the slow way for a message that names the problem.
        task = Task.model_validate_json(raw)
    except (ValidationError, ValueError):
        pass
    else:
        if nested_too_deep(task):
            raise InvalidTaskFile(str(source), TooDeep().args[0])
        if task.id.isdigit() and _wrote_integer_id(raw, task):
            task.integer_ids = True
        return lean(task) if compact else share_fields_sets(task)
    source = str(source)
    try:
        data = json_bounds.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InvalidTaskFile(source, "not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise InvalidTaskFile(source, f"not valid JSON ({json_bounds.where_broken(error)})") from None
    except TooDeep as error:
        raise InvalidTaskFile(source, str(error)) from None
    task = task_from_dict(data, source)
    if isinstance(data.get("id"), int) and not isinstance(data.get("id"), bool):
        task.integer_ids = True
    return lean(task) if compact else share_fields_sets(task)


#: The empty list and metadata every task read without any shares (see ``lean``).
_NONE: list[Any] = []
_NO_METADATA: dict[str, Any] = {}
#: One set of field names per model, shared by every instance read from a file (see ``lean``).
_SHARED_FIELDS_SET: dict[type, set[str]] = {}


def share_fields_sets(task: Task) -> Task:
    """The part of ``lean`` that saves the most for the least work: one set of given fields per
    model, not one per instance (see ``lean``)."""
    for part in (task, task.tool_calls, task.lease, task.policy, task.budget):
        if part is not None:
            shared = _SHARED_FIELDS_SET.setdefault(type(part), set(type(part).model_fields))
            object.__setattr__(part, "__pydantic_fields_set__", shared)
    return task


def lean(task: Task) -> Task:
    """Make a task read from a file or a database row as small in memory as it can be, for the
    indexes that hold every task of a board (a 100,000-task board's dashboard holds them all).

    pydantic keeps, per instance, the set of the fields the input gave: for a task and its tool
    calls, about 3 KB, most of a task's memory (90 MB of a 30,000-task board). board never asks
    for it (it serialises every field, never ``exclude_unset``), so one set per model, holding
    every field name, serves all of them; an assignment adds a name already there. The rest
    (shared ids, empty lists and tool calls, a dict of values only) is explained below; none of
    it changes what the task says, compares equal to or writes.
    """
    share_fields_sets(task)
    # An id is named by its task, by its dependents' blockedBy and its blockers' blocks, and by
    # every index and lane: one string for all of them, not one per mention. Owners and parents
    # repeat across tasks the same way.
    values = task.__dict__
    values["id"] = sys.intern(task.id)
    values["blocked_by"] = _interned(task.blocked_by) if task.blocked_by else _NONE
    values["blocks"] = _interned(task.blocks) if task.blocks else _NONE
    # Empty lists and metadata are one shared object each: an indexed task is never changed in
    # place (``draft_of`` gives a change fresh ones), and each would cost 56-64 bytes a task.
    if not task.files:
        values["files"] = _NONE
    if not task.labels:
        values["labels"] = _NONE
    if not task.metadata:
        values["metadata"] = _NO_METADATA
    if task.parent is not None:
        values["parent"] = sys.intern(task.parent)
    if task.owner:
        values["owner"] = sys.intern(task.owner)
    # Most tasks on a big board have no tool calls yet: they share one record of none, which no
    # one changes in place (a change is made on ``draft_of``'s copy, which copies it).
    calls = task.tool_calls
    if calls.total == 0 and calls == _IDLE_TOOL_CALLS:
        values["tool_calls"] = _IDLE_TOOL_CALLS
    object.__setattr__(task, "__dict__", _key_sharing(values))
    return task


def _interned(ids: list[str]) -> list[str]:
    """The list just read, its ids interned in place: pydantic made it the exact size, where a
    new list built item by item keeps room for more (on a 100,000-task board, 3 MB). So
    ``lean`` changes the lists of the task it is given (each item for an equal string): only
    for a task just read, or a copy of one already lean."""
    for index, task_id in enumerate(ids):
        ids[index] = sys.intern(task_id)
    return ids


class _FieldValues:
    """Holds a task's field values only long enough to hand out its ``__dict__`` (``_key_sharing``)."""


def _key_sharing(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` in a dict that shares its keys with every other task's.

    pydantic gives each instance a dict of its own, keys and all: 832 bytes for a task's 27
    fields, the largest part of a task in memory. The attribute dicts of a plain class's
    instances share one table of keys and hold only the values (296 bytes), so the values go
    through one of those. The result is an ordinary dict: setting a field keeps the sharing,
    and should the keys stop being shared (CPython shares up to 30 per class; a task has 27
    fields), it is simply a dict like pydantic's own.
    """
    holder = _FieldValues()
    for name, value in values.items():
        setattr(holder, name, value)
    return holder.__dict__


def task_from_dict(data: Any, source: str) -> Task:
    if not isinstance(data, dict):
        raise InvalidTaskFile(source, "top level must be a JSON object")
    try:
        task = Task.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "document"
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise InvalidTaskFile(source, f"field {where!r}: {_readable(first)}{more}") from None
    except RecursionError:
        raise InvalidTaskFile(source, TooDeep().args[0]) from None
    if nested_too_deep(task):
        raise InvalidTaskFile(source, TooDeep().args[0])
    return task


def nested_too_deep(task: Task) -> bool:
    """Whether the free-form parts of a task (metadata, fields board does not know) nest
    deeper than ``json_bounds.MAX_DEPTH``: the declared fields are shallow by their types."""
    if task.metadata and deeper_than_allowed(task.metadata, 1):
        return True
    # A part's unknown fields sit where its own fields do: the task at level 1, its parts at 2.
    for part, level in ((task, 0), (task.tool_calls, 1), (task.lease, 1), (task.policy, 1), (task.budget, 1)):
        extra = part.__pydantic_extra__ if part is not None else None
        if extra and deeper_than_allowed(extra, level):
            return True
    return False


def check_readable_back(task: Task, encoded: bytes) -> None:
    """Refuse to write what board could not read back: a task file over ``MAX_FILE_BYTES``
    would drop out of every listing, and its dependents would wait on it forever."""
    if len(encoded) > MAX_FILE_BYTES:
        raise BoardError(
            f"task {task.id} not written: it would take {len(encoded):,} bytes, over the {MAX_FILE_BYTES:,} "
            "board reads of one task (long text, or control characters, which take six bytes each); nothing was changed"
        )


def _readable(error: Any) -> str:
    """pydantic's message, or a plainer one where it would only quote a regular expression."""
    if error["type"] == "string_pattern_mismatch":  # only ids are checked by a pattern
        return f"'{shortened(str(error['input']))}' is not a valid id ({ID_RULE})"
    return str(error["msg"]).removeprefix("Value error, ")
