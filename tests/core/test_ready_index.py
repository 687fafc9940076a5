"""``board claim`` on board's own folder reads only the index of ready tasks and what it takes.

The index (``ready.json`` and its journal) is written whole by the first claim that reads the
whole board, then kept in step by every write. A claim checks each candidate against its file,
its blockers' and its sub-tasks' under the lock; what the index cannot vouch for (never
written, or none of its candidates ready now), the whole board decides. These tests hold the
claims it makes against what the whole board's claim order says, through writes of every kind,
outside writers, and claimers in several processes at once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from board.cli import main
from board.graph import id_sort_key
from board.status import Status
from board.store import Store

NOTHING_READY = 3


def claim(workspace: Path, agent: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, int] | None:
    """``board claim --agent AGENT``: the task taken and its token, or None when nothing is ready."""
    status = main(["-w", str(workspace), "claim", "--agent", agent])
    out, err = capsys.readouterr()
    if status == NOTHING_READY:
        return None
    assert (status, err) == (0, ""), err
    task_id, token, _ = out.split("\t", 2)
    return task_id, int(token)


def best_on_the_whole_board(workspace: Path) -> str | None:
    """What a claim reading every task file would take."""
    return Store.open(workspace).graph.best_ready()


def index_entries(workspace: Path) -> dict[str, dict]:
    from board.active_work import read_ready

    entries = read_ready(workspace / ".tasks")
    assert entries is not None
    return entries


@pytest.fixture(params=[1536, 2], ids=["head as shipped", "head of 2"])
def head(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The entries ``ready.json`` lists first in claim order: as shipped (every entry of these
    small boards), and two, which the journal uses up between folds."""
    from board.active_work import READY

    monkeypatch.setattr(READY, "head", request.param)
    return request.param


def test_claims_follow_the_claim_order_of_the_whole_board_through_every_kind_of_write(workspace: Path, capsys, head: int) -> None:
    store = Store.open(workspace)
    # Three chains of different lengths, priorities, a parent with sub-tasks, an estimate.
    for n in range(1, 4):
        store.create(f"long chain {n}", blocked_by=[str(n - 1)] if n > 1 else [])
    store.create("short chain")  # 4
    store.create("after the short one", blocked_by=["4"])  # 5
    store.create("urgent", priority="high")  # 6
    store.create("release")  # 7
    store.create("code", parent="7")  # 8
    store.create("docs", parent="7")  # 9
    store.create("big job", metadata={"estimate": 50})  # 10
    taken: list[str] = []
    for step in range(40):
        wanted = best_on_the_whole_board(workspace)
        got = claim(workspace, f"agent-{step}", capsys)
        assert (got[0] if got else None) == wanted, f"step {step}: the index's claim took {got}, the whole board says {wanted}"
        if got is None:
            break
        task_id, token = got
        taken.append(task_id)
        writer = Store.open(workspace)  # every other kind of write, by a store that read the whole board
        if step == 1:
            writer.release(task_id, token=token)  # back in the queue: the index gets it back
            continue
        if step == 2:
            writer.create("new work below #1", blocked_by=["1"], priority="high")  # 11
        if step == 3:
            writer.update("4", priority="critical")
        if step == 4:
            writer.delete("9", force=True)
        writer.set_status(task_id, Status.COMPLETED, token=token)
    assert sorted(taken, key=id_sort_key)[0] == "1" and len(set(taken)) == len(taken) - 1  # one taken twice: the release
    assert Store.open(workspace).graph.ready_ids() == set() == set(index_entries(workspace))


def test_a_claim_never_says_nothing_is_ready_on_the_indexs_word(workspace: Path, capsys) -> None:
    """An outside writer completes a blocker in its file: the index knows of no ready task, and
    the claim asks the whole board, which has one."""
    store = Store.open(workspace)
    store.create("first")
    store.create("second", blocked_by=["1"])
    store.create("third", blocked_by=["1"])
    assert claim(workspace, "alice", capsys)[0] == "1"
    assert index_entries(workspace) == {}
    path = workspace / ".tasks" / "task_1.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "status": "completed", "owner": "", "lease": None}))
    assert claim(workspace, "bob", capsys)[0] == "2"
    # That claim read the whole board, and put the index right from it.
    assert set(index_entries(workspace)) == {"3"}
    assert claim(workspace, "carol", capsys)[0] == "3"
    assert claim(workspace, "dave", capsys) is None


def test_a_task_the_index_calls_ready_is_checked_and_a_stale_entry_dropped(workspace: Path, capsys) -> None:
    store = Store.open(workspace)
    store.create("urgent", priority="critical")
    store.create("routine")
    store.claim("alice")  # the index is written whole; #1 is taken, and #2 is left
    token = store.get("1").lease.token
    store.release("1", token=token)
    assert set(index_entries(workspace)) == {"1", "2"}
    # An outside writer cancels #1 in its file: the index still says it is the best.
    path = workspace / ".tasks" / "task_1.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "status": "cancelled"}))
    assert claim(workspace, "bob", capsys)[0] == "2"
    assert "1" not in index_entries(workspace)


def test_claimers_in_several_processes_take_each_task_once(workspace: Path) -> None:
    store = Store.open(workspace)
    for n in range(40):
        store.create(f"job {n}", priority=("low", "medium", "high")[n % 3])
    first = store.claim("warm-up").id  # writes the index whole; the claims below go by it
    script = (
        "import sys\n"
        "from board.store import Store\n"
        "taken = []\n"
        "while True:\n"
        "    task = Store.open(sys.argv[1], whole=False).claim(sys.argv[2], max_held=None)\n"
        "    if task is None:\n"
        "        break\n"
        "    taken.append(task.id)\n"
        "print(' '.join(taken))\n"
    )
    claimers = [subprocess.Popen([sys.executable, "-c", script, str(workspace), f"w{n}"], stdout=subprocess.PIPE, text=True) for n in range(4)]
    try:
        outputs = [c.communicate(timeout=120)[0] for c in claimers]
    finally:
        for c in claimers:
            c.kill()
    taken = [task_id for out in outputs for task_id in out.split()]
    assert sorted(taken, key=id_sort_key) == sorted((str(n) for n in range(1, 41) if str(n) != first), key=id_sort_key)
    owners = {t.id: t.owner for t in Store.open(workspace).tasks.values()}
    assert all(owners[task_id].startswith("w") for task_id in taken)


def test_links_planted_in_place_of_the_indexes_change_nothing_outside_and_fail_no_command(workspace: Path, tmp_path: Path, capsys) -> None:
    """A co-tenant replaces the indexes' files by links to a file of the user's: every command
    still does its work and says so, nothing is written through a link, and the indexes come
    back as files of their own."""
    store = Store.open(workspace)
    store.create("first")
    store.create("second", parent="1")
    store.create("third")
    assert claim(workspace, "alice", capsys)[0] == "2"  # writes the index of ready tasks
    outside = tmp_path / "precious.txt"
    outside.write_text("the user's own file\n")
    tasks_dir = workspace / ".tasks"
    for name in ("ready.journal", "ready.json", "parents.json", "parents.journal", "active.journal"):
        (tasks_dir / name).unlink(missing_ok=True)
        (tasks_dir / name).symlink_to(outside)
    taken = claim(workspace, "bob", capsys)
    assert taken is not None and taken[0] == "3"
    assert main(["-w", str(workspace), "task", "show", "1"]) == 0
    assert main(["-w", str(workspace), "heartbeat", "--agent", "bob"]) == 0
    assert main(["-w", str(workspace), "task", "update", "3", "--progress", "40", "--token", str(taken[1])]) == 0
    capsys.readouterr()
    for lock in (".ready.lock", ".parents.lock", ".active.lock"):
        (tasks_dir / lock).unlink(missing_ok=True)
        (tasks_dir / lock).symlink_to(outside)
    Store.open(workspace).refresh_active()  # as the coordinator's tick does: it goes on
    assert outside.read_text() == "the user's own file\n"
    assert Store.open(workspace).get("3").progress == 40
    for lock in (".ready.lock", ".parents.lock", ".active.lock"):
        (tasks_dir / lock).unlink()
    # A claim that reads the whole board writes the indexes anew, as files of its own.
    assert claim(workspace, "carol", capsys) is None
    assert not (tasks_dir / "ready.json").is_symlink() and index_entries(workspace) == {}


def test_a_claim_reads_the_head_of_a_large_index_not_the_whole(workspace: Path, capsys) -> None:
    """``ready.json`` lists its best entries first; a claim reads those and the journal. Cut the
    file after its first 128 KB (no whole reader could parse it) and claims still take the best
    tasks in order, without reading the board again to write the index anew."""
    from board.active_work import HEAD_BYTES

    for n in range(1, 5001):  # written as files, for speed: the board reads them as they are
        doc = {"id": str(n), "subject": f"job {n}", "status": "pending", "priority": ("low", "medium", "high")[n % 3], "blockedBy": [], "blocks": [], "version": 1}
        (workspace / ".tasks" / f"task_{n}.json").write_text(json.dumps(doc))
    first = Store.open(workspace).claim("warm-up").id  # writes the index whole
    path = workspace / ".tasks" / "ready.json"
    raw = path.read_bytes()
    assert len(raw) > HEAD_BYTES and raw.find(b',"tasks":') < HEAD_BYTES
    path.write_bytes(raw[:HEAD_BYTES])
    for step in range(5):
        wanted = best_on_the_whole_board(workspace)
        assert claim(workspace, f"agent-{step}", capsys)[0] == wanted != first
    assert path.read_bytes() == raw[:HEAD_BYTES]  # never read whole, so never written anew


def test_a_claim_below_its_limit_reads_none_of_the_tasks_its_agent_holds(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index of work in progress names what an agent holds; each task named is read fresh
    only to count it out if it moved on. With fewer named than the agent's limit, the claim
    cannot be refused, so none of them is read; at the limit, the claim is refused as before."""
    from board.errors import BoardError
    from board.store.files import FileStore

    for n in range(1, 11):
        doc = {"id": str(n), "subject": f"job {n}", "status": "pending", "blockedBy": [], "blocks": [], "version": 1}
        (workspace / ".tasks" / f"task_{n}.json").write_text(json.dumps(doc))
    Store.open(workspace).refresh_active()  # the indexes, as a reader of the whole board writes them
    held = {Store.open(workspace, whole=False).claim("a", max_held=None).id for _ in range(4)}
    read: list[str] = []
    fresh = FileStore._fresh

    def spied(self: FileStore, task_id: str):  # type: ignore[no-untyped-def]
        read.append(task_id)
        return fresh(self, task_id)

    monkeypatch.setattr(FileStore, "_fresh", spied)
    taken = Store.open(workspace, whole=False).claim("a", max_held=5)
    assert taken is not None and taken.id not in held
    assert read and not held & set(read), read
    held.add(taken.id)
    read.clear()
    with pytest.raises(BoardError, match="agent a already holds"):
        Store.open(workspace, whole=False).claim("a", max_held=5)
    assert held <= set(read)  # at the limit, each is read to count it


def test_a_claim_parses_only_the_first_entries_of_the_head_it_needs(workspace: Path, capsys) -> None:
    """Of the head's entries a claim needs its count of candidates, and as many more as the
    journal changed: only those are parsed. Break the head well after them (no parser of the
    whole head could read it) and claims still take the best tasks in order, from the index,
    which is never written anew."""
    for n in range(1, 301):
        doc = {"id": str(n), "subject": f"job {n}", "status": "pending", "priority": ("low", "medium", "high")[n % 3], "blockedBy": [], "blocks": [], "version": 1}
        (workspace / ".tasks" / f"task_{n}.json").write_text(json.dumps(doc))
    first = Store.open(workspace).claim("warm-up").id  # writes the index whole
    path = workspace / ".tasks" / "ready.json"
    raw = path.read_bytes()
    tasks_at = raw.find(b',"tasks":')
    entry_100 = tasks_at - 100 * 40  # well past the first 16 + 6 entries, inside the head
    broken = raw[:entry_100] + b"\x00 not JSON \x00" + raw[entry_100 + 12 :]
    assert broken.find(b',"tasks":') == tasks_at and broken.find(b"\x00") > raw.find(b'"best":[') + 30 * 40
    path.write_bytes(broken)
    for step in range(6):
        wanted = best_on_the_whole_board(workspace)
        assert claim(workspace, f"agent-{step}", capsys)[0] == wanted != first
    assert path.read_bytes() == broken  # never read whole, so never written anew
