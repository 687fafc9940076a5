"""Documents written by plain Python (``board.document_json``) are byte for byte what pydantic's
core writes, or left to the core; a process switches to the core after its first few."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from board import document_json
from board.model import Budget, Lease, PolicyMark, Task, ToolCalls, task_from_dict
from board.status import Status
from tests.conftest import REPO

TEXTS = ["", "plain", "é ü 中文 🚀", 'quote " and \\ back', "tab\tnew\nline\rcr\x08\x0c", "\x00\x01\x1f\x7f", "\u2028\u2029", "x" * 300]
FLOATS = [0.0, 0.1, 600.0, 1e15, 123456789.123, 2.5, -3.75]
ZONES = [UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5, minutes=-30)), None]


def a_value(rng: random.Random, depth: int = 0) -> Any:
    """Any JSON value a task's metadata or an unknown field may hold."""
    kinds = ["text", "int", "float", "bool", "none"] + (["list", "dict"] if depth < 3 else [])
    kind = rng.choice(kinds)
    if kind == "text":
        return rng.choice(TEXTS)
    if kind == "int":
        return rng.choice([0, 1, -7, 2**40, 10**30])
    if kind == "float":
        return rng.choice(FLOATS)
    if kind == "bool":
        return rng.choice([True, False])
    if kind == "none":
        return None
    if kind == "list":
        return [a_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(TEXTS) + str(n): a_value(rng, depth + 1) for n in range(rng.randrange(4))}


def a_time(rng: random.Random) -> datetime:
    return datetime(2026, rng.randrange(1, 13), rng.randrange(1, 28), rng.randrange(24), rng.randrange(60), rng.randrange(60), rng.choice([0, 1, 120000, 999999]), tzinfo=rng.choice(ZONES))


def a_task(rng: random.Random, n: int) -> Task:
    maybe = lambda value: value if rng.random() < 0.5 else None  # noqa: E731
    task = Task(
        id=str(n), subject=rng.choice(TEXTS[1:4]) + f" {n}", description=rng.choice(TEXTS), active_form=rng.choice(TEXTS),
        status=rng.choice(list(Status)), blocked_by=[str(b) for b in range(rng.randrange(3))], blocks=[f"b{n}"] if rng.random() < 0.5 else [],
        owner=rng.choice(["", "agent-1", "ägent"]), priority=rng.choice(["critical", "high", "medium", "low"]), parent=maybe("p1"),
        files=["src/a.py", "docs/é.md"][: rng.randrange(3)], labels=["core", "ui"][: rng.randrange(3)], progress=rng.randrange(101),
        tool_calls=ToolCalls(total=5, ok=4, failed=1, consecutive_failures=1, last_tool=maybe("Edit"), last_at=maybe(a_time(rng)), logged=maybe(120)),
        lease=maybe(Lease(owner="agent-1", token=n, expires_at=a_time(rng), seconds=maybe(rng.choice([f for f in FLOATS if f > 0])))),
        error=maybe(rng.choice(TEXTS)),
        policy=maybe(PolicyMark(name="budget", status=Status.PAUSED, reason="spent", fired_at=a_time(rng), budget=maybe(Budget(tokens=100, usd=maybe(2.5))))),
        budget=maybe(Budget(tokens=maybe(1000), usd=maybe(0.1))), question=maybe("why?"), answer=maybe("because"), asked_at=maybe(a_time(rng)),
        metadata={f"k{i}": a_value(rng) for i in range(rng.randrange(4))},
        created_at=maybe(a_time(rng)), updated_at=a_time(rng), started_at=maybe(a_time(rng)), completed_at=maybe(a_time(rng)), version=rng.randrange(50),
    )
    if rng.random() < 0.3:
        task.__pydantic_extra__["somethingElse"] = a_value(rng)  # type: ignore[index]
    return task


def test_plain_python_writes_what_the_core_writes() -> None:
    rng = random.Random(7)
    for n in range(1, 600):
        task = a_task(rng, n)
        made = document_json._document(task)
        assert made == task.model_dump(mode="json", by_alias=True), n
        assert json.dumps(made, ensure_ascii=False) == json.dumps(task.model_dump(mode="json", by_alias=True), ensure_ascii=False), n  # same key order
        assert document_json.indented(made) == task.model_dump_json(by_alias=True, indent=2), n


def test_a_task_read_from_a_file_is_written_back_as_the_core_writes_it() -> None:
    raw = {
        "id": "12", "subject": "Write the parser", "description": "é\n\"q\"", "status": "in_progress", "owner": "agent3", "version": 7,
        "blockedBy": ["3"], "lease": {"owner": "agent3", "token": 7, "expiresAt": "2026-01-01T00:10:00.123456Z", "seconds": 600.0},
        "toolCalls": {"total": 12, "ok": 11, "failed": 1, "lastAt": "2026-01-01T00:05:00+02:00"}, "metadata": {"estimate": 3, "x": [1, 2.5, None, True]},
        "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:05:00Z", "someoneElses": {"kept": ["as", "is"]},
    }
    task = task_from_dict(raw, "a file")
    assert document_json.indented(document_json._document(task)) == task.model_dump_json(by_alias=True, indent=2)


@pytest.mark.parametrize(
    "odd",
    [
        1.5e-7,  # the core writes exponents its own way (1.5e-7)
        1e-05,  # ... or none (0.00001)
        float("inf"),  # and no number at all for what JSON has none for
        datetime(2026, 1, 1, tzinfo=timezone(timedelta(seconds=3661))),  # an offset with seconds: whole minutes
        (1, 2),  # a type it does not write
        {1: "a key that is not text"},
    ],
)
def test_what_the_core_may_write_differently_is_left_to_it(odd: Any) -> None:
    task = Task(id="1", subject="odd", metadata={"value": odd})
    with pytest.raises(document_json._NotPlain):
        document_json._document(task)
    assert document_json.plain_dict(task) is None


def test_a_process_writes_its_first_documents_without_the_cores_package_then_with_it() -> None:
    code = """
import sys
from board import document_json
from board.model import Task, dump_task, task_to_dict
task = Task(id="1", subject="a task", metadata={"n": 1.5e-7})
plain = Task(id="2", subject="a task")
first = dump_task(plain)
assert "pydantic_core" not in sys.modules  # written here
odd = task_to_dict(task)  # left to the core, which loads its package
assert "pydantic_core" in sys.modules and odd["metadata"] == {"n": 1.5e-7}
assert document_json.plain_dict(plain) is None  # the package is loaded: the core writes from now on
assert dump_task(plain) == first
"""
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True, text=True)
    code = """
import sys
from board import document_json
from board.model import Task, task_to_dict
task = Task(id="1", subject="a task")
for _ in range(document_json.WRITTEN_HERE_AT_MOST):
    assert document_json.plain_dict(task) is not None
assert "pydantic_core" not in sys.modules
assert document_json.plain_dict(task) is None  # enough written here: the core, faster, from now on
task_to_dict(task)
assert "pydantic_core" in sys.modules
"""
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True, text=True)


def test_text_that_is_not_unicode_is_refused_as_the_core_refuses_it() -> None:
    task = Task(id="1", subject="a task", description="\udc80")
    code = f"""
import sys
from board.model import Task, dump_task
try:
    dump_task(Task(id="1", subject="a task", description={task.description!r}))
except Exception as error:
    print(type(error).__name__)
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True, text=True)
    try:
        task.model_dump_json(by_alias=True, indent=2).encode("utf-8")
    except Exception as error:  # what the core does with it, in this process
        assert done.stdout.strip() == type(error).__name__
    else:
        pytest.fail("the core wrote a lone surrogate")
