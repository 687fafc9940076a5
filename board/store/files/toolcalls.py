"""Tool calls on a board's files: appended to logs, counted by every read (``board.toolcall_log``)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any

from board.model import Task, ToolCalls, lean, validate_id
from board.status import Status
from board.disk.atomic import read_jsonl
from board.names import ID_PATTERN
from board.toolcall_log import TASK_LOGS, append_call, count_unfolded, task_log, task_log_name
from board.store.base import ChangeSet
from board.store.files.state import FileBoard



def counts_of(calls: ToolCalls) -> dict[str, Any]:
    """``calls.model_dump(by_alias=True)``, field by field: pydantic's serializer imports
    ``uuid`` on first use, which cost a ``board toolcall`` more than its own write."""
    return {
        **(calls.__pydantic_extra__ or {}),
        **{field.alias or name: getattr(calls, name) for name, field in ToolCalls.model_fields.items()},
    }


class FileToolCalls(FileBoard):
    """The tool-call side of ``FileStore``."""

    def _count_logged_calls(self, task: Task) -> Task:
        """The task with the calls its log holds beyond what its document counted.

        Tool calls are appended to the task's log without rewriting its file (``board hook``
        cannot afford a rewrite per call); every read adds them, so every reader sees exact
        counts, and the next write of the task stores them.
        """
        calls = task.tool_calls
        name = task_log_name(task.id)
        if self._logs_listed is not None and name not in self._logs_listed:
            return task
        # The log's name as a string: a board is read through here task by task, most of them
        # with no log, and building a Path (with its id check: the task's id was checked when
        # it was read) cost more than looking for the file.
        counts = count_unfolded(os.path.join(self._task_logs_dir, name), calls.logged, lambda: counts_of(calls))
        if counts is None:
            return task
        counted = task.model_copy()
        counted.tool_calls = ToolCalls.model_validate(counts)
        return lean(counted)

    @contextmanager
    def _logs_listed_once(self) -> Iterator[None]:
        """While many task files are read at once, list the tool-call logs one time rather than
        look for each task's log (most tasks have none): a log made after the listing holds
        calls made after this read began, which the next read counts."""
        try:
            self._logs_listed = frozenset(os.listdir(self._task_logs_dir))
        except FileNotFoundError:  # no task has a log yet
            self._logs_listed = frozenset()
        except OSError:
            self._logs_listed = None
        try:
            yield
        finally:
            self._logs_listed = None

    @cached_property
    def _task_logs_dir(self) -> str:
        return str(self.state_dir / TASK_LOGS)

    def logged_task_paths(self, paths: Iterable[Path]) -> set[Path]:
        """The task files whose tool-call logs are among ``paths`` (a watcher's changed files):
        a call changes a task's counts without touching its file, so its log stands in for it."""
        logs = self.state_dir / TASK_LOGS
        return {self.layout.task_path(p.stem) for p in map(Path, paths) if p.parent == logs and p.suffix == ".jsonl" and ID_PATTERN.fullmatch(p.stem)}

    def sync_tool_calls(self) -> ChangeSet:
        """Count the calls logged since the last look on tasks in progress (the ones policies
        and alerts judge by their calls); history says nothing of calls."""
        stale = []
        for task in self.graph.tasks.values():
            if task.status == Status.IN_PROGRESS:
                try:
                    size = os.stat(self.toolcalls_path(task.id)).st_size
                except (OSError, ValueError):
                    continue
                if size > (task.tool_calls.logged or 0):
                    stale.append(task.id)
        return self._reread_ids(stale) if stale else ChangeSet()

    # -- tool calls ---------------------------------------------------------------------------

    def toolcalls_path(self, task_id: str) -> Path:
        return task_log(self.state_dir, validate_id(task_id))

    def _append_call(self, record: dict[str, Any]) -> None:
        append_call(self.state_dir, record)

    def toolcalls(self, task_id: str) -> list[dict[str, Any]]:
        records, _ = read_jsonl(self.toolcalls_path(task_id))
        return records

    def touching_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """Read from each ``toolcalls/<id>.jsonl`` only what was appended since the last look
        (a log replaced or cut short is read again from its start)."""
        seen = self._touching_logs
        try:
            entries = [e for e in os.scandir(self.state_dir / TASK_LOGS) if e.name.endswith(".jsonl")]
        except (FileNotFoundError, NotADirectoryError):
            return []
        found: list[tuple[str, dict[str, Any]]] = []
        for entry in entries:
            task_id = entry.name[: -len(".jsonl")]
            path = Path(entry.path)
            try:
                info = entry.stat()
            except FileNotFoundError:
                continue
            inode, offset, known = seen.get(path, (info.st_ino, 0, []))
            if inode != info.st_ino or info.st_size < offset:
                offset, known = 0, []
            if info.st_size > offset:
                records, offset = read_jsonl(path, offset)
                known = known + [record for record in records if record.get("files")]
            seen[path] = (info.st_ino, offset, known)
            found.extend((task_id, record) for record in known)
        return found
