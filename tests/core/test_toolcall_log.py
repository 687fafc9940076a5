"""Tool calls are lines appended to logs, counted by every reader, folded in at the next write."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from board.coordinator.tick import tick
from board.config import BoardSettings, PolicySettings
from board.status import Status
from board.store import Store

from tests.disk import history, task_file


def test_a_call_appends_to_the_logs_and_leaves_the_task_file_alone(store: Store, workspace: Path) -> None:
    task = store.create("edit things")
    path = workspace / ".tasks" / f"task_{task.id}.json"
    before = path.read_bytes()
    store.record_toolcall(task.id, "Edit", files=["src/a.py"], agent="ann")
    store.record_toolcall(task.id, "Bash", ok=False, agent="ann")
    assert path.read_bytes() == before  # no rewrite per call
    assert [r["op"] for r in history(workspace)] == ["create"]
    lines = [json.loads(line) for line in (workspace / ".tasks" / "toolcalls" / f"{task.id}.jsonl").read_text().splitlines()]
    assert [(r["tool"], r["ok"], r["files"], r["agent"], r["task"]) for r in lines] == [("Edit", True, ["src/a.py"], "ann", task.id), ("Bash", False, [], "ann", task.id)]
    assert (workspace / ".tasks" / "agents" / "ann.calls.jsonl").read_text().count("\n") == 2

    fresh = Store.open(workspace).get(task.id)  # another reader counts the log
    calls = fresh.tool_calls
    assert (calls.total, calls.ok, calls.failed, calls.consecutive_failures, calls.last_tool) == (2, 1, 1, 1, "Bash")


def test_the_next_write_folds_the_calls_in_and_later_calls_still_count(store: Store, workspace: Path) -> None:
    task = store.create("edit things")
    for _ in range(3):
        store.record_toolcall(task.id, "Edit")
    store.update(task.id, description="now written")
    on_disk = task_file(workspace, task.id)["toolCalls"]
    log_size = (workspace / ".tasks" / "toolcalls" / f"{task.id}.jsonl").stat().st_size
    assert on_disk["total"] == 3 and on_disk["logged"] == log_size
    store.record_toolcall(task.id, "Read")
    assert Store.open(workspace).get(task.id).tool_calls.total == 4  # 3 stored + 1 past ``logged``


def test_a_document_from_before_the_logs_stood_alone_counts_its_log_once(workspace: Path) -> None:
    # An older writer counted each call in the task file and logged the same call: its first
    # ``total`` lines are already in the counts.
    tasks = workspace / ".tasks"
    (tasks / "task_1.json").write_text(json.dumps({"id": "1", "subject": "old", "toolCalls": {"total": 2, "ok": 2, "failed": 0}}))
    (tasks / "toolcalls").mkdir()
    line = json.dumps({"ts": "2026-01-01T00:00:00Z", "agent": "ann", "tool": "Edit", "ok": True, "ms": None, "files": []})
    (tasks / "toolcalls" / "1.jsonl").write_text(line + "\n" + line + "\n")
    store = Store.open(workspace)
    assert store.get("1").tool_calls.total == 2
    store.record_toolcall("1", "Bash", ok=False)
    calls = Store.open(workspace).get("1").tool_calls
    assert (calls.total, calls.failed, calls.last_tool) == (3, 1, "Bash")


def test_a_line_still_being_written_is_not_counted_until_it_is_whole(store: Store, workspace: Path) -> None:
    task = store.create("edit things")
    store.record_toolcall(task.id, "Edit")
    log = workspace / ".tasks" / "toolcalls" / f"{task.id}.jsonl"
    with log.open("ab") as handle:
        handle.write(b'{"ts":"2026-01-01T00:00:00Z","agent":"x","tool":"Ed')
    assert Store.open(workspace).get(task.id).tool_calls.total == 1
    with log.open("ab") as handle:
        handle.write(b'it","ok":true}\n')
    assert Store.open(workspace).get(task.id).tool_calls.total == 2



def test_a_reader_that_reads_again_counts_each_call_once_across_writes_and_a_replaced_log(store: Store, workspace: Path) -> None:
    """A long-lived reader (the dashboard, board mcp) reads only what a log gained since it last
    looked; what it counted stays right when another process folds the calls in or the log is
    replaced."""
    task = store.create("edit things")
    reader = Store.open(workspace)
    other = Store.open(workspace)
    for n in range(1, 301):
        store.record_toolcall(task.id, "Edit" if n % 3 else "Bash", ok=bool(n % 5))
        if n % 50 == 0:
            reader.load()
            calls = reader.get(task.id).tool_calls
            assert (calls.total, calls.failed) == (n, n // 5), n
    other.update(task.id, progress=40)  # a write elsewhere folds the 300 calls into the file
    store.record_toolcall(task.id, "Read")
    reader.load()
    calls = reader.get(task.id).tool_calls
    assert (calls.total, calls.failed, calls.last_tool) == (301, 60, "Read")
    log = workspace / ".tasks" / "toolcalls" / f"{task.id}.jsonl"
    # Replaced by a log that has the calls the file counts, then two others in place of the Read.
    folded = log.read_bytes().splitlines(keepends=True)[:300]
    failed = json.dumps({"ts": "2026-01-01T00:00:00Z", "agent": "x", "tool": "Bash", "ok": False}).encode() + b"\n"
    replaced = log.with_name("replacement")
    replaced.write_bytes(b"".join(folded) + failed + failed)
    replaced.replace(log)
    reader.load()
    calls = reader.get(task.id).tool_calls
    assert (calls.total, calls.failed, calls.last_tool) == (302, 62, "Bash")


WRITER = """
import sys, time
from board.store import Store
store = Store.open(sys.argv[1], whole=False)
if sys.argv[2] == "rewrites":  # begin once calls are coming in, however the processes were scheduled
    deadline = time.monotonic() + 60
    while Store.open(sys.argv[1], whole=False).get("1").tool_calls.total == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
for n in range(int(sys.argv[3])):
    if sys.argv[2] == "calls":
        store.record_toolcall("1", "Edit", ok=n % 5 != 0, agent="agent" + sys.argv[4])
    else:
        store.update("1", description=f"rewrite {n}")
"""


def test_calls_from_many_processes_and_rewrites_between_them_are_all_counted(store: Store, workspace: Path) -> None:
    store.create("busy task")
    processes = [subprocess.Popen([sys.executable, "-c", WRITER, str(workspace), "calls", "150", str(n)]) for n in range(3)]
    processes.append(subprocess.Popen([sys.executable, "-c", WRITER, str(workspace), "rewrites", "60", "x"]))
    try:
        for process in processes:
            assert process.wait(timeout=120) == 0
    finally:
        for process in processes:
            process.kill()
    calls = Store.open(workspace).get("1").tool_calls
    assert (calls.total, calls.ok, calls.failed) == (450, 360, 90)
    # The document folded some of them in along the way; the rest are past ``logged``.
    assert 0 < task_file(workspace, "1")["toolCalls"]["total"] <= 450
    assert sum((workspace / ".tasks" / "agents" / f"agent{n}.calls.jsonl").read_text().count("\n") for n in range(3)) == 450


def test_a_policy_judges_calls_that_were_only_logged(store: Store, workspace: Path) -> None:
    task = store.claim_task(store.create("flaky").id, "ann")
    watcher = Store.open(workspace)  # a long-lived store, like the coordinator's
    for _ in range(3):
        store.record_toolcall(task.id, "Bash", ok=False, agent="ann")
    settings = BoardSettings(policies=PolicySettings(block_after_failures=3))
    report = tick(watcher, [], settings, checkpoints=False)
    assert [d.task for d in report.policies] == [task.id]
    assert Store.open(workspace).get(task.id).status == Status.BLOCKED


def test_an_agents_calls_are_counted_from_its_log(store: Store, workspace: Path) -> None:
    from board.agents import list_agents, register_agent

    register_agent(store.agent_records, "ann")
    task = store.create("t")
    store.record_toolcall(task.id, "Edit", agent="ann")
    store.record_toolcall(task.id, "Read", agent="ann")
    assert [(a.name, a.tool_calls) for a in list_agents(store.agent_records)] == [("ann", 2)]
    store.record_toolcall(task.id, "Read", agent="ann")
    assert [a.tool_calls for a in list_agents(store.agent_records)] == [3]
