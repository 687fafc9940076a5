"""Which tasks are in progress, by whom, on which files: ``active.json`` in the board's folder.

``board hook`` asks two questions on an agent's tool calls that would otherwise mean reading
every task file: "which task is this agent working on?" and "is this file held by another
agent's task?". The store answers them ahead of time: whenever it writes a task that enters,
leaves or changes while ``in_progress``, it notes the change; and a coordinator that sees the
whole board puts right what outside writers changed.

A change is one line appended to ``active.journal``, which a writer folds into ``active.json``
once it is long: a claim costs the same however many tasks are in progress. Writers take a
lock of their own (``.active.lock``), not the board's: a database board has no local board
lock, and agents on one machine claim at the same moment. Readers take no lock: both files
are replaced whole by a fold, and each names its generation, so a reader that read across a
fold reads again.

The same journalled files keep two more indexes, so that a command about one task reads only
what concerns it: the parents of sub-tasks (``PARENTS``, for ``task show``), and the tasks ready
to be claimed with their place in the claim order (``READY``, for ``claim``).

Standard library only, for the hook's sake.
"""

from __future__ import annotations

import fcntl
import heapq
import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from _thread import allocate_lock
from contextlib import contextmanager
from pathlib import Path
from stat import S_ISREG

from board import json_bounds
from board.disk import confine
from board.disk.flock import flock_within
from board.names import id_sort_key
from board.priority import PRIORITY_RANK

# Only for annotations, which are never evaluated: ``board hook`` starts faster without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FILE_NAME = "active.json"
#: The changes since ``active.json`` was last written whole, a line each.
JOURNAL_NAME = "active.journal"
LOCK_NAME = ".active.lock"


class IndexFiles:
    """The three files of one journalled index: its snapshot, its journal, its lock. Work in
    progress is one such index (``ACTIVE``); the parents of sub-tasks another (``PARENTS``)."""

    def __init__(self, snapshot: str, journal: str, lock: str, *, limit: int = 1024 * 1024, head: int = 0) -> None:
        self.snapshot, self.journal, self.lock = snapshot, journal, lock
        #: The most of the snapshot a reader reads: one longer is not one board wrote.
        self.limit = limit
        #: How many entries the snapshot lists first in claim order (``read_ready_head``).
        self.head = head


#: Its snapshot may be as long as the other indexes': one longer than readers read could never
#: be folded again (at 1 MiB, about 12,000 tasks in progress with three files each).
ACTIVE = IndexFiles(FILE_NAME, JOURNAL_NAME, LOCK_NAME, limit=64 * 1024 * 1024)
#: task id -> {"parent": its parent's id} for every task with a parent, so that a command about
#: one task finds its sub-tasks without reading the board. Unlike ``ACTIVE`` it is trusted only
#: once a reader of the whole board wrote it whole (``write_index``): a change noted while it
#: is missing is not noted at all.
PARENTS = IndexFiles("parents.json", "parents.journal", ".parents.lock", limit=64 * 1024 * 1024)
#: task id -> {"rank": its priority's rank, "remaining": its remaining critical path} for every
#: task ready to be claimed, so that a claim finds the best one without reading the board.
#: Trusted, like ``PARENTS``, only once written whole; a claim checks every task it takes.
#: Its snapshot lists its best 1,536 entries first, in claim order (about 70 KB): a journal
#: folded at ``FOLD_BYTES`` holds at most about a thousand changes, one a claim, so the head
#: lasts from one fold to the next.
READY = IndexFiles("ready.json", "ready.journal", ".ready.lock", limit=64 * 1024 * 1024, head=1536)
#: The most of a snapshot's first bytes ``read_ready_head`` reads for the entries listed first.
HEAD_BYTES = 128 * 1024
#: A journal this long is folded into ``active.json`` by the writer that finds it so.
FOLD_BYTES = 32 * 1024
#: An index without a head (work in progress, parents) folds its journal only once it is a
#: quarter of its snapshot's size, up to this: a fold rewrites the whole snapshot under the
#: lock every writer waits on, so with 15,000 tasks in progress folding every ``FOLD_BYTES``
#: cost each note more than its own line. A reader then reads at most a quarter more.
FOLD_BYTES_MOST = 256 * 1024
#: How many times longer than due a journal grows before a note waits for its fold (rather than
#: leaving it to the next note while another note holds the lock), and at most half of
#: ``JOURNAL_MOST``.
FOLD_OVERDUE = 4
#: The most of a journal a reader reads.
JOURNAL_MOST = 1024 * 1024
#: How often a reader starts again when a fold happened as it read (it then sees the next one).
READ_ATTEMPTS = 5


# Paths as text (os.path.join): a claim notes its task here, and building Paths cost it more
# than the writing.


def active_path(state_dir: Path | str, files: IndexFiles = ACTIVE) -> str:
    return os.path.join(state_dir, files.snapshot)


def journal_path(state_dir: Path | str, files: IndexFiles = ACTIVE) -> str:
    return os.path.join(state_dir, files.journal)


def read_active(state_dir: Path) -> dict[str, dict[str, Any]]:
    """task id -> {"owner", "files"} for every task in progress; {} when unknown or unreadable."""
    return _read(state_dir)[1]


def read_parents(state_dir: Path) -> dict[str, str] | None:
    """task id -> its parent's id, for every task with one; None when no whole reader wrote the
    index yet (or it cannot be read)."""
    entries = _read_written(state_dir, PARENTS)
    if entries is None:
        return None
    return {task_id: entry["parent"] for task_id, entry in entries.items() if isinstance(entry.get("parent"), str)}


def read_ready(state_dir: Path) -> dict[str, dict[str, Any]] | None:
    """task id -> {"rank", "remaining"} for every task ready to be claimed; None when no whole
    reader wrote the index yet (or it cannot be read)."""
    return _read_written(state_dir, READY)


def read_ready_head(state_dir: Path, count: int) -> list[tuple[str, dict[str, Any]]] | None:
    """The ``count`` best entries of the index of ready tasks in claim order, best first, read
    from the head of its snapshot (``IndexFiles.head`` entries in claim order) and its journal,
    not the whole index (414 KB at 100,000 tasks). None when the head cannot say: an index never
    written whole, a snapshot without a head (written before heads), or one whose head the
    journal used up; ``read_ready`` then.

    Every entry of the snapshot beyond its head comes after every entry in it, so once the
    journal's changes are set aside (each read from the journal), ``count`` entries of the head
    left untouched outrank all the rest."""
    for _ in range(READ_ATTEMPTS):
        start = _snapshot_start(state_dir, READY, HEAD_BYTES)
        if start is None:
            return None
        lines = _journal_lines(state_dir, READY)
        changed: dict[str, dict[str, Any] | None] = {}
        _fold(changed, lines[1:] if lines else [], removed=None)
        # Of the head's first ``count`` + (entries the journal changed), at least ``count`` are
        # untouched: only those are parsed, not the whole head (1,536 entries).
        head = _head_of(start, count + len(changed))
        if head is None:
            return None
        generation, best, complete = head
        if lines and not _follows(lines[0], generation):  # no journal: no changes
            continue  # folded meanwhile: read the new pair
        # The head is in claim order: of its entries the journal left alone, only the first
        # ``count`` can be among the best.
        untouched: list[tuple[str, dict[str, Any]]] = []
        for task_id, entry in best:
            if task_id not in changed:
                untouched.append((task_id, entry))
                if len(untouched) == count:
                    break
        if len(untouched) < count and not complete:
            return None
        candidates = untouched + [(task_id, entry) for task_id, entry in changed.items() if entry is not None]
        return heapq.nsmallest(count, candidates, key=lambda pair: claim_order_key(*pair))
    return None


def claim_order_key(task_id: str, entry: Mapping[str, Any]) -> tuple[int, float, tuple[int, int, str]]:
    """The claim order (priority, the longest remaining path first, then the id) of an entry of
    the index of ready tasks; one it cannot read goes last."""
    rank, remaining = entry.get("rank"), entry.get("remaining")
    return (
        rank if type(rank) is int else len(PRIORITY_RANK),
        -remaining if isinstance(remaining, (int, float)) and not isinstance(remaining, bool) else 0.0,
        id_sort_key(task_id),
    )


def _head_of(start: bytes, wanted: int) -> tuple[int, list[tuple[str, dict[str, Any]]], bool] | None:
    """(generation, the entries listed first, whether they are all there are) from the first
    bytes of a snapshot ``_write`` wrote with a head, at most the first ``wanted`` entries of
    it (then never all there are); None for any other."""
    end = start.find(b',"tasks":')  # no JSON string holds it: a quote inside one is escaped
    if end < 0:
        return None
    head, cut = start[:end], False
    # ``_write`` ends each entry with its object and its pair ("}]") and puts "," between two:
    # cut after the ``wanted``th and close the list. (A head that is not ``_write``'s may be
    # cut elsewhere: it then fails to parse, or parses into entries every claim checks anyway.)
    at = head.find(b'"best":[')
    for _ in range(wanted if at >= 0 else 0):
        at = head.find(b"}],[", at + 1)
        if at < 0:
            break
    else:
        if at >= 0:
            head, cut = head[: at + 2] + b"]", True
    try:
        data = json_bounds.loads(head + b"}")
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    generation, best, complete = data.get("generation"), data.get("best"), data.get("complete")
    if type(generation) is not int or generation <= 0 or not isinstance(best, list) or type(complete) is not bool:
        return None
    entries = [(pair[0], pair[1]) for pair in best if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], dict)]
    return generation, entries, complete and not cut and len(entries) == len(best)


def index_written(state_dir: Path, files: IndexFiles = ACTIVE) -> bool:
    """Whether the index's snapshot is there to be read: written whole once, by a reader of the
    whole board, and kept from then on (an empty index and a lost one read alike otherwise)."""
    return _snapshot_generation(state_dir, files) is not None


def _read_written(state_dir: Path, files: IndexFiles) -> dict[str, dict[str, Any]] | None:
    """An index trusted only once written whole: what it holds, or None before then (a journal
    alone holds only some of its entries)."""
    if not index_written(state_dir, files):
        return None
    generation, entries = _read(state_dir, files)
    return entries if generation else None


def write_ready(state_dir: Path, entries: Mapping[str, dict[str, Any]]) -> None:
    """Replace the index of ready tasks whole, from the whole board."""
    write_active(state_dir, entries, files=READY)


def _read(state_dir: Path, files: IndexFiles = ACTIVE) -> tuple[int, dict[str, dict[str, Any]]]:
    """The index's generation and what it holds now.

    ``active.json`` holds the index as of its generation; ``active.journal`` starts by naming
    the generation it follows, then holds one change a line. A fold writes both anew, so a
    reader that met them from two different generations reads again."""
    generation: int = 0
    tasks: dict[str, dict[str, Any]] = {}
    lines: list[bytes] = []
    for _ in range(READ_ATTEMPTS):
        generation, tasks = _read_snapshot(state_dir, files)
        read = _journal_lines(state_dir, files)
        if read is None:
            return generation, tasks
        lines = read
        if not _follows(lines[0], generation):
            continue  # folded meanwhile: read the new pair
        _fold(tasks, lines[1:])
        # A journal that follows the snapshot by its "since" (a fold stopped after its first
        # replacement) names a generation no snapshot has yet: the next writer of a new pair
        # numbers above it, or its snapshot would pair with this journal and take its lines.
        return max(generation, _generation_of(lines[0]) or 0), tasks
    # Still two generations: not a fold under way but a pair a writer left unmatched (killed
    # between the two files, an index lost with the machine's power). Say what is known.
    return _reconciled(generation, tasks, lines)


def _journal_lines(state_dir: Path, files: IndexFiles) -> list[bytes] | None:
    """The journal's lines, its header first; None when it cannot be read (there is none yet)."""
    read = confine.read_if_regular(journal_path(state_dir, files), JOURNAL_MOST)
    return None if read is None else read.split(b"\n")


def _reconciled(generation: int, tasks: dict[str, dict[str, Any]], lines: list[bytes]) -> tuple[int, dict[str, dict[str, Any]]]:
    """The index from a snapshot and a journal of different generations. A journal older than
    the snapshot was folded into it already; a newer one holds changes the snapshot lacks (its
    own was lost), so they are kept. The generation returned is above both, for the next
    writer to start a pair no reader can take for either."""
    journal_generation = _generation_of(lines[0]) if lines else None
    if journal_generation is not None and journal_generation > generation:
        _fold(tasks, lines[1:])
    return max(generation, journal_generation or 0), tasks


def _read_snapshot(state_dir: Path, files: IndexFiles = ACTIVE) -> tuple[int, dict[str, dict[str, Any]]]:
    raw = confine.read_if_regular(active_path(state_dir, files), files.limit)
    try:
        data = json_bounds.loads(raw) if raw is not None else None
    except ValueError:
        return 0, {}
    if not isinstance(data, dict):
        return 0, {}
    generation = data.get("generation", 0)
    tasks = data.get("tasks")
    if not isinstance(tasks, dict):
        return generation if isinstance(generation, int) else 0, {}
    return generation if isinstance(generation, int) else 0, {str(k): v for k, v in tasks.items() if isinstance(v, dict)}


def _snapshot_generation(state_dir: Path, files: IndexFiles = ACTIVE) -> int | None:
    """``active.json``'s generation from its first bytes (``_write`` puts it first), without
    reading the index: None when it is missing or not one ``_write`` wrote."""
    return _snapshot_generation_and_size(state_dir, files)[0]


def _snapshot_generation_and_size(state_dir: Path | str, files: IndexFiles, folder: confine.OpenFolder | None = None) -> tuple[int | None, int]:
    """The snapshot's generation (as ``_snapshot_generation``) and its size in bytes (0 when
    it cannot be read)."""
    head = _snapshot_head(state_dir, files, 64, folder)
    if head is None:
        return None, 0
    start, size = head
    return _generation_in(start), size


def _generation_in(start: bytes) -> int | None:
    """A snapshot's generation from its first bytes (``_write`` puts it first); None for one
    ``_write`` did not write."""
    prefix, _, rest = start.partition(b'{"generation":')
    digits = rest.split(b",", 1)[0]
    return int(digits) if not prefix and digits.isdigit() and b"," in rest else None


def _snapshot_start(state_dir: Path, files: IndexFiles, size: int) -> bytes | None:
    """The snapshot's first ``size`` bytes (fewer when it is shorter); None when it cannot be
    read."""
    head = _snapshot_head(state_dir, files, size)
    return None if head is None else head[0]


def _snapshot_head(state_dir: Path | str, files: IndexFiles, size: int, folder: confine.OpenFolder | None = None) -> tuple[bytes, int] | None:
    """The snapshot's first ``size`` bytes (fewer when it is shorter) and its whole size; None
    when it cannot be read. Bare descriptor calls: every note to the index reads its generation
    this way, under the index's lock, and a buffered file costs five more system calls."""
    path = active_path(state_dir, files)
    try:
        fd = (confine.opener if folder is None else folder.opener)(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        whole = os.fstat(fd).st_size
        chunks: list[bytes] = []
        while size > 0 and (chunk := os.read(fd, size)):
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks), whole
    except OSError:
        return None
    finally:
        os.close(fd)


def _follows(header: bytes, generation: int) -> bool:
    """Whether a journal with ``header`` holds the changes since the snapshot of ``generation``:
    the journal of that generation, or the one a fold puts in place before the new snapshot,
    which holds the changes since the old one as well (``_fold_journal``)."""
    if _generation_of(header) == generation:
        return True
    try:
        data = json_bounds.loads(header)
    except ValueError:
        return False
    return isinstance(data, dict) and type(data.get("since")) is int and data["since"] == generation


def _generation_of(header: bytes) -> int | None:
    # Every note reads its journal's header, which ``_header`` wrote: read as written without
    # the JSON parser; anything else, by it.
    digits = header.removeprefix(b'{"generation": ').removesuffix(b"}")
    if len(digits) == len(header) - 16 and digits.isdigit() and (digits[:1] != b"0" or digits == b"0"):
        return int(digits)
    try:
        data = json_bounds.loads(header)
    except ValueError:
        return None
    generation = data.get("generation") if isinstance(data, dict) else None
    return generation if isinstance(generation, int) else None


_DROP = object()


def _fold(tasks: dict[str, Any], lines: list[bytes], *, removed: object = _DROP) -> None:
    """Apply journal lines in order; a line cut short (a writer killed mid-line, or the last
    one still being written) is skipped. A task's entry dropped is taken out of ``tasks``, or
    with ``removed`` given, set to it (to tell a change from no change)."""
    for line in lines:
        try:
            change = json_bounds.loads(line)
        except ValueError:
            continue
        if not isinstance(change, dict) or not isinstance(change.get("task"), str):
            continue
        entry = change.get("entry")
        if isinstance(entry, dict):
            tasks[change["task"]] = entry
        elif removed is _DROP:
            tasks.pop(change["task"], None)
        else:
            tasks[change["task"]] = removed


def held_files(task_id: str, files: list[str], metadata: Mapping[str, Any]) -> list[str]:
    """The files a task in progress holds: those it declared, and those its own worktree
    changed (``board.worktrees``; looked into only for a task that has one)."""
    if not metadata or "worktree" not in metadata:
        return files
    from board.worktrees.held import worked_files

    return worked_files(task_id, files, metadata)


def entry_for(status: str, owner: str, files: Iterable[str]) -> dict[str, Any] | None:
    """What the index holds for a task: something only while it is in progress."""
    if status != "in_progress":
        return None
    return {"owner": owner, "files": list(files)}


#: How long a writer waits for an index's lock: a fold holds it for milliseconds, so a lock held
#: longer is held by something else (a process stopped, or a lock taken by whoever can open the
#: file, to stall the board). The note then gives way as for any note it cannot make
#: (``note_task`` drops the snapshot): the board's writes go on.
INDEX_LOCK_SECONDS = 10.0
@contextmanager
def _writing(state_dir: Path, files: IndexFiles = ACTIVE, folder: confine.OpenFolder | None = None, *, shared: bool = False, wait: bool = True) -> Iterator[bool]:
    """Hold the index's lock on this machine: alone, or ``shared`` with other appenders.
    Without ``wait``, only if it is free now: yields whether it is held."""
    path, flags = os.path.join(state_dir, files.lock), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = confine.open_file(path, flags, 0o644) if folder is None else folder.open_file(path, flags, 0o644)
    try:
        operation = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        if wait:
            flock_within(fd, operation, INDEX_LOCK_SECONDS)
        else:
            try:
                fcntl.flock(fd, operation | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
        yield True
    finally:
        _let_go(fd)


def _let_go(fd: int) -> None:
    """Release a lock taken on ``fd`` and close it. Released by name, not by the closing alone:
    a child forked meanwhile by another thread holds a copy of the descriptor, and with it the
    lock, for as long as it lives."""
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def write_active(state_dir: Path, tasks: Mapping[str, dict[str, Any]], *, lock: bool = True, files: IndexFiles = ACTIVE) -> None:
    """Replace the index whole (a rebuild from the whole board). ``lock=False`` only for a
    board no one else can see yet (an export being put together)."""
    if not lock:
        _write(state_dir, tasks, _read(state_dir, files)[0] + 1, files)
        return
    with _writing(state_dir, files):
        _write(state_dir, tasks, _read(state_dir, files)[0] + 1, files)


def write_parents(state_dir: Path, parents: Mapping[str, str]) -> None:
    """Replace the index of sub-tasks' parents whole, from the whole board."""
    write_active(state_dir, {task_id: {"parent": parent} for task_id, parent in parents.items()}, files=PARENTS)


def _write(state_dir: Path, tasks: Mapping[str, dict[str, Any]], generation: int, files: IndexFiles = ACTIVE) -> None:
    """A new generation: the index whole, then an empty journal that follows it."""
    replace_file(active_path(state_dir, files), _snapshot_bytes(tasks, generation, files))
    replace_file(journal_path(state_dir, files), _header(generation))


def _snapshot_bytes(tasks: Mapping[str, dict[str, Any]], generation: int, files: IndexFiles) -> bytes:
    document: dict[str, Any] = {"generation": generation}
    if files.head:
        # Before the whole, the best entries in claim order: a claim reads only these.
        best = heapq.nsmallest(files.head, tasks.items(), key=lambda pair: claim_order_key(*pair))
        document.update(complete=len(best) == len(tasks), best=[list(pair) for pair in best])
    document["tasks"] = dict(sorted(tasks.items()))
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _header(generation: int) -> bytes:
    return json.dumps({"generation": generation}).encode() + b"\n"


def note_task(state_dir: Path, task_id: str, entry: dict[str, Any] | None, *, files: IndexFiles = ACTIVE) -> None:
    """Set (or, with None, drop) one task's entry: one line appended to the journal, whatever
    the size of the index (agents claiming together on one machine each wait only for that);
    the writer that finds the journal long folds it into ``active.json``.

    The task's write is done by then, so nothing here may fail it: when the note cannot be made
    (a link planted in place of a file of the index, a full disk), the index's snapshot is
    dropped, no reader trusts the index any more, and the next reader of the whole board writes
    it anew."""
    try:
        _note_task(state_dir, task_id, entry, files)
    except OSError:
        forget_index(state_dir, files)


def forget_index(state_dir: Path, files: IndexFiles = ACTIVE) -> None:
    """Drop an index's snapshot (a link planted there goes, never what it points to)."""
    try:
        confine.unlink(active_path(state_dir, files), missing_ok=True)
    except OSError:
        pass  # the board's folder itself is out of reach: its own writes fail louder


def _note_task(state_dir: Path, task_id: str, entry: dict[str, Any] | None, files: IndexFiles) -> None:
    line = json.dumps({"task": task_id, "entry": entry}, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
    appended = _append_kept(state_dir, files, line)
    if appended is not None and appended[0] <= _fold_at(appended[1], files):
        return
    # The folder reached once for the lock, the journal and the snapshot's first bytes.
    with confine.OpenFolder(state_dir) as folder:
        if appended is None:
            # Notes share the lock: each is one write to the journal opened for appending, which
            # lands whole after the others, so agents claiming at once never wait for one another
            # (with more of them than cores, one descheduled holding the lock alone held up every
            # claim). Starting the pair anew and folding take it alone, and so exclude notes.
            with _writing(state_dir, files, folder, shared=True):
                found = _append(state_dir, files, folder, line)
            if not isinstance(found, tuple):
                with _writing(state_dir, files, folder):
                    found = _append(state_dir, files, folder, line)  # unless another started the pair meanwhile
                    if not isinstance(found, tuple):
                        _start_pair(state_dir, files, line, journal=found)
                        return
            appended = found
        size, snapshot_size = appended
        due = _fold_at(snapshot_size, files)
        if size > due:
            _fold_journal(state_dir, files, folder, overdue=size > min(FOLD_OVERDUE * due, JOURNAL_MOST // 2), due=due)


#: How many indexes a process keeps open between notes (``_KeptIndex``), four descriptors
#: each; past this, the one noted to longest ago is let go. Each board has three indexes.
KEPT_MOST = 16


class _KeptIndex:
    """One index's folder, lock file, journal and snapshot, held open by a process between its
    notes.

    Every claim notes its task (a claim on a board in files, twice: work in progress and the
    ready tasks). Reached by name, a note was 15 to 23 system calls, and on a board in files
    each is made under the board's lock, which every other writer waits on. Held open, a note
    is 8: the folder looked up by its path, then the lock taken, the lock file, the journal and
    the snapshot looked up by name (nothing opened), the line written, the lock let go.

    What is held is used only while all four are still the ones held: a fold (which replaces
    the snapshot and the journal), a folder or a lock file made anew, anything planted in their
    place, and this note goes the long way (``_append``, which opens them by name afresh and
    starts the pair anew where it must); the next note holds what that found. The snapshot is
    held open, though never read again, so that its number cannot be given to another file
    while held: a snapshot dropped and another made could otherwise look like the one held. A
    process holds what it opened only until it forks: the child lets go of its copies.

    Only a folder the path alone says is the same is held: one outside every root of
    ``confine`` (looked up following links, as it was opened), a root, or a folder right
    below one (the last step looked up without following a link). Deeper, ``confine`` walks
    every step without following a link, which one lookup of the path cannot repeat: those
    notes go the long way."""

    def __init__(self, state_dir: str, files: IndexFiles) -> None:
        self.state_dir, self.files = state_dir, files
        where = confine.locate(os.path.join(os.path.abspath(state_dir), "_"))
        if where is not None and len(where[1]) > 1:
            raise OSError(f"{state_dir}: deeper below its root than a note can check by its path")
        #: Whether the folder's path is looked up following links (outside every root).
        self.follow = where is None
        self.folder = confine.OpenFolder(state_dir)
        self.lock = self.journal = self.snapshot = -1
        try:
            self.folder_id = _identity(os.fstat(self.folder.fd))
            self.lock = self.folder.open_file(os.path.join(state_dir, files.lock), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            self.lock_id = _identity(os.fstat(self.lock))
        except BaseException:
            self.close()
            raise
        self.pair: tuple[tuple[int, int], tuple[int, int]] | None = None
        self.snapshot_size = 0

    def append(self, line: bytes) -> tuple[int, int] | None:
        """``line`` appended under the shared lock: (the journal's size after it, the
        snapshot's size); None, having written nothing, when it must go the long way."""
        if _identity(os.stat(self.state_dir, follow_symlinks=self.follow)) != self.folder_id:
            return None
        flock_within(self.lock, fcntl.LOCK_SH, INDEX_LOCK_SECONDS)
        try:
            folder = self.folder.fd
            if _identity(os.stat(self.files.lock, dir_fd=folder, follow_symlinks=False)) != self.lock_id:
                return None
            try:
                pair = (_identity(os.stat(self.files.journal, dir_fd=folder, follow_symlinks=False)),
                        _identity(os.stat(self.files.snapshot, dir_fd=folder, follow_symlinks=False)))
            except FileNotFoundError:
                return None
            if pair != self.pair and not self._hold(pair):
                return None
            # A line of its own, as ``_append`` writes it; with O_APPEND the offset after the
            # write is the journal's end after this line.
            os.write(self.journal, b"\n" + line)
            return os.lseek(self.journal, 0, os.SEEK_CUR), self.snapshot_size
        finally:
            fcntl.flock(self.lock, fcntl.LOCK_UN)

    def _hold(self, pair: tuple[tuple[int, int], tuple[int, int]]) -> bool:
        """Under the shared lock (which keeps both files in place): hold the journal and the
        snapshot now named, if the journal follows the snapshot and both are the files ``pair``
        found."""
        self._let_go_of_pair()
        journal = self.folder.open_file(journal_path(self.state_dir, self.files), os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        snapshot = -1
        try:
            snapshot = self.folder.opener(active_path(self.state_dir, self.files), os.O_RDONLY)
            status = os.fstat(snapshot)
            generation = _generation_in(os.pread(snapshot, 64, 0))
            found = (_identity(os.fstat(journal)), _identity(status))
            header = os.pread(journal, 64, 0).split(b"\n", 1)[0]
        except BaseException:
            for fd in (journal, snapshot):
                if fd >= 0:
                    os.close(fd)
            raise
        if generation is None or _generation_of(header) != generation or found != pair:
            os.close(journal)
            os.close(snapshot)
            return False
        self.journal, self.snapshot, self.pair, self.snapshot_size = journal, snapshot, pair, status.st_size
        return True

    def _let_go_of_pair(self) -> None:
        for fd in (self.journal, self.snapshot):
            if fd >= 0:
                os.close(fd)
        self.journal = self.snapshot = -1
        self.pair = None

    def close(self) -> None:
        self._let_go_of_pair()
        if self.lock >= 0:
            os.close(self.lock)
            self.lock = -1
        self.folder.close()


def _identity(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino


#: The indexes this process holds open, by folder and journal, the one noted to last at the end.
#: A note takes its index out while it uses it: two threads never share one (a lock held on one
#: descriptor is one lock, whichever thread took it).
_kept: dict[tuple[str, str], _KeptIndex] = {}
#: Held only to take an index out of ``_kept`` or put it back, never across a wait for a lock:
#: one index's lock held alone must not hold up the notes to others.
_kept_lock = allocate_lock()
#: The indexes this process noted to once: it holds one open from its second note on, so that
#: a command that notes once (``board claim``) costs no more than it did.
_noted_once: set[tuple[str, str]] = set()


def _append_kept(state_dir: Path | str, files: IndexFiles, line: bytes) -> tuple[int, int] | None:
    """``line`` appended to the journal through what this process holds open; None when it
    must go the long way."""
    key = (os.fspath(state_dir), files.journal)
    with _kept_lock:
        kept = _kept.pop(key, None)
        if kept is None and key not in _noted_once:
            if len(_noted_once) >= 4 * KEPT_MOST:
                _noted_once.clear()
            _noted_once.add(key)
            return None
    try:
        if kept is None:
            kept = _KeptIndex(key[0], files)
        appended = kept.append(line)
    except BaseException as error:
        if kept is not None:
            kept.close()
        if isinstance(error, OSError) and not isinstance(error, TimeoutError):
            return None  # the long way; a lock held too long is given up once, not twice
        raise
    if appended is None:
        kept.close()
        return None
    with _kept_lock:
        let_go = [_kept.pop(key)] if key in _kept else []  # another thread's, made meanwhile
        _kept[key] = kept
        while len(_kept) > KEPT_MOST:
            let_go.append(_kept.pop(next(iter(_kept))))
    for other in let_go:
        other.close()
    return appended


def _let_go_in_child() -> None:
    """After a fork, in the child: its copies of the parent's descriptors share the parent's
    locks, so it holds nothing of its own until its first note."""
    global _kept_lock
    _kept_lock = allocate_lock()
    for kept in _kept.values():
        kept.close()
    _kept.clear()
    _noted_once.clear()


os.register_at_fork(after_in_child=_let_go_in_child)


#: Why a note could not be appended, and the pair must be started anew.
NO_JOURNAL, UNMATCHED = "no journal", "unmatched"


def _append(state_dir: Path, files: IndexFiles, folder: confine.OpenFolder, line: bytes) -> tuple[int, int] | str:
    """Append ``line`` to the journal: (the journal's size after it, the snapshot's size); or,
    having written nothing, why the pair must be started anew: ``NO_JOURNAL``, or
    ``UNMATCHED`` for a journal that does not follow the snapshot."""
    try:
        fd = folder.open_file(journal_path(state_dir, files), os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return NO_JOURNAL
    try:
        size = os.fstat(fd).st_size
        header = os.pread(fd, 64, 0).split(b"\n", 1)[0]
        snapshot_generation, snapshot_size = _snapshot_generation_and_size(state_dir, files, folder)
        if snapshot_generation is None or _generation_of(header) != snapshot_generation:
            # No snapshot, or not this journal's: and a file that is not a journal (one with no
            # generation, say another file linked in its place) is never written to.
            return UNMATCHED
        # Each note starts a line of its own: after a line cut short (a writer killed in the
        # middle of its write, a full disk), even one cut short by another note under way since
        # the size was read, it is not glued to it. Readers skip the cut line and the empty ones;
        # the coordinator's rebuild restores a lost entry.
        return size + os.write(fd, b"\n" + line), snapshot_size
    finally:
        os.close(fd)


def _start_pair(state_dir: Path, files: IndexFiles, line: bytes, *, journal: str) -> None:
    """Under the lock alone: write the index anew with ``line`` folded in, and a journal that
    follows it. ``NO_JOURNAL`` (a new board, or one written before journals): the index as it
    stands, though an index trusted only once written whole waits for that. ``UNMATCHED`` (see
    ``_read``): readers would skip ``line`` in that journal and a later fold drop it."""
    if files is not ACTIVE and (journal == NO_JOURNAL or _snapshot_generation(state_dir, files) is None):
        return  # trusted only once written whole: a journal alone is not the index
    generation, tasks = _read(state_dir, files)  # without a journal, the snapshot as it stands
    _fold(tasks, [line])
    _write(state_dir, tasks, generation + 1, files)


def _fold_journal(state_dir: Path, files: IndexFiles, folder: confine.OpenFolder, *, overdue: bool, due: int) -> None:
    """Fold the journal into a new snapshot, the work done before the lock is taken alone.

    A fold rewrites the whole snapshot (half a megabyte with 10,000 tasks in progress), and
    every note waits while the lock is held alone: folded under it, every claimer on the machine
    stood still for as long (3 to 60 ms, a dozen times in five seconds of claims). So the writer
    whose turn it is (an exclusive lock on the journal itself, not waited for: the others go on)
    reads the pair and makes the new snapshot without the index's lock, as a reader would; then,
    alone, it checks that both files are still the ones it read and carries over to the new
    journal the lines appended meanwhile.

    A fold waits for every note under way. Should one never end (its process stopped holding
    the lock), the notes after it go on, and the journal grows past its size, until it is long
    enough that readers would pay for it (``overdue``): then the fold is waited for, and so is
    the turn of a writer already folding."""
    try:
        # By name in the folder, neither following a link nor waiting on a FIFO planted there.
        journal = folder.opener(journal_path(state_dir, files), os.O_RDONLY)
    except OSError:
        return
    snapshot = -1
    try:
        held = os.fstat(journal)
        if not S_ISREG(held.st_mode):
            return
        try:
            if overdue:
                flock_within(journal, fcntl.LOCK_EX, INDEX_LOCK_SECONDS)
            else:
                fcntl.flock(journal, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (BlockingIOError, TimeoutError):
            return  # another writer is folding it (or a lock taken to stall the board: no fold)
        # Folded since it was found long (this is the next journal, short), or while this writer
        # waited for its turn (no longer the index's): nothing to fold.
        if os.fstat(journal).st_size <= due or not _named(folder, files.journal, _identity(held)):
            return
        try:
            snapshot = folder.opener(active_path(state_dir, files), os.O_RDONLY)
        except OSError:
            return
        # Held open until the check below: its number cannot be given to another file meanwhile.
        snapshot_status = os.fstat(snapshot)
        if not S_ISREG(snapshot_status.st_mode):
            return
        made = _fold_ahead(snapshot, files, journal)
        if made is None:
            return
        generation, start, data, lines = made
        for attempt in range(FOLD_LOCK_TRIES):
            # Notes under way hold the lock for a few microseconds each: tried again a few times
            # over, rather than the work made ahead thrown away at the first.
            with _writing(state_dir, files, folder, wait=overdue) as alone:
                if alone:
                    _commit_fold(state_dir, files, folder, journal, (_identity(held), _identity(snapshot_status)), generation, start, data, lines)
                    return
            time.sleep(FOLD_LOCK_PAUSE)
    finally:
        if snapshot >= 0:
            os.close(snapshot)
        _let_go(journal)  # and with it the turn


#: How often a fold made ahead tries the lock before it leaves the fold to the next note, and
#: the pause between tries. A note stopped holding the lock is what ``overdue`` waits out.
FOLD_LOCK_TRIES = 20
FOLD_LOCK_PAUSE = 0.0005


def _commit_fold(state_dir: Path, files: IndexFiles, folder: confine.OpenFolder, journal: int, read: tuple[tuple[int, int], tuple[int, int]], generation: int, start: int, data: bytes, lines: bytes) -> None:
    """Under the lock alone: put the fold made ahead in place, if the journal and the snapshot
    are still the files it was made from (``read``)."""
    if not (_named(folder, files.journal, read[0]) and _named(folder, files.snapshot, read[1])):
        return  # folded (or dropped) meanwhile
    # What was appended meanwhile: a journal grown longer than a reader reads is no note's.
    tail = confine.read_from(journal, start, JOURNAL_MOST + 1)
    if len(tail) > JOURNAL_MOST:
        return
    # Three replacements, each leaving a pair a reader (or the next writer, should this
    # one die) reads whole: first a journal of the new generation holding every line,
    # which follows the old snapshot as well (its header says so: ``_follows``); then
    # the new snapshot, which that journal's lines, applied again, leave as it is (each
    # sets or drops one task's entry: the last line about a task decides); then the
    # journal of the lines the snapshot lacks.
    # Through the folder checked, not by path: a folder put in place of it meanwhile has an
    # index of its own.
    since = json.dumps({"generation": generation, "since": generation - 1}).encode() + b"\n"
    replace_file(journal_path(state_dir, files), since + lines + tail, folder)
    replace_file(active_path(state_dir, files), data, folder)
    replace_file(journal_path(state_dir, files), _header(generation) + tail, folder)


def _named(folder: confine.OpenFolder, name: str, identity: tuple[int, int]) -> bool:
    """Whether ``name`` in ``folder`` is the file of ``identity`` (a link planted there is not)."""
    try:
        return _identity(os.stat(name, dir_fd=folder.fd, follow_symlinks=False)) == identity
    except FileNotFoundError:
        return False


def _fold_ahead(snapshot: int, files: IndexFiles, journal: int) -> tuple[int, int, bytes, bytes] | None:
    """Without the index's lock: the new generation, how far into ``journal`` the new snapshot
    holds its lines (a whole line's end: a note under way may be in part on disk), the new
    snapshot's bytes, and the lines it holds (the journal's after its header, up to there). None
    when the pair does not match (a fold or a writer killed between the two files: the notes
    start it anew)."""
    raw = confine.read_from(snapshot, 0, files.limit)
    read = confine.read_from(journal, 0, JOURNAL_MOST)
    start = read.rfind(b"\n") + 1
    lines = read[:start].split(b"\n")
    try:
        data = json_bounds.loads(raw)
    except ValueError:
        return None
    generation = data.get("generation") if isinstance(data, dict) else None
    tasks = data.get("tasks") if isinstance(data, dict) else None
    if type(generation) is not int or not isinstance(tasks, dict) or _generation_of(lines[0]) != generation:
        return None
    tasks = {str(k): v for k, v in tasks.items() if isinstance(v, dict)}
    _fold(tasks, lines[1:])
    return generation + 1, start, _snapshot_bytes(tasks, generation + 1, files), read[len(lines[0]) + 1 : start]


def _fold_at(snapshot_size: int, files: IndexFiles) -> int:
    """How long the journal may grow before a writer folds it. An index with a head folds at
    ``FOLD_BYTES`` whatever its size: its head must outlast the journal's changes."""
    if files.head:
        return FOLD_BYTES
    return max(FOLD_BYTES, min(snapshot_size // 4, FOLD_BYTES_MOST))


def replace_file(path: Path | str, data: bytes, folder: confine.OpenFolder | None = None) -> None:
    """Replace a small file whole (a temp file renamed over it), with no fsync: for what is
    derived or rewritten often (this index, the hook's registry records), where ``write_atomic``
    of ``board.disk.atomic`` would cost the hook its imports and a disk flush. With ``folder``
    (the file's, held open), in that folder whatever its path names now."""
    directory, name = os.path.split(path)
    temp_name = f".{name}.{os.getpid()}.tmp"
    temp = os.path.join(directory, temp_name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    # Made anew, never opened as found: a file linked in its place (its name is foreseeable)
    # would be written through. What is found there (this pid's leftover, a link) goes first.
    if folder is None:
        confine.unlink(temp, missing_ok=True)
        fd = confine.open_file(temp, flags, 0o644)
    else:
        try:
            os.unlink(temp_name, dir_fd=folder.fd)
        except FileNotFoundError:
            pass
        fd = os.open(temp_name, flags, 0o644, dir_fd=folder.fd)
    try:
        rest = memoryview(data)
        while rest:  # a write a full disk cuts short ends in an error, never in a shorter file put in place
            rest = rest[os.write(fd, rest):]
    finally:
        os.close(fd)
    if folder is None:
        confine.replace(temp, path)
    else:
        os.replace(temp_name, name, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
