"""A command about one task asks the history log about that task alone, from the log's end: it
never reads a log that grows by a line with every heartbeat of every agent."""

from __future__ import annotations

import json
import random
from pathlib import Path

from board.store import Store
from board.store.history import HistoryLog


def _line(task: str, version: int, crc: str | None, *, note: str = "") -> bytes:
    record: dict = {"ts": "2026-01-01T00:00:00Z", "task": task, "version": version}
    if crc is not None:
        record["file"] = crc
    record.update(actor="a", op="outside edit" if crc is None else "update", changes={"note": note})
    return (json.dumps(record, separators=(",", ":")) + "\n").encode()


def test_reading_back_in_chunks_gives_every_line_once_whatever_the_chunk(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    rng = random.Random(3)
    path.write_bytes(b"".join(_line(str(n % 7), n, "ab", note="x" * rng.choice([0, 5, 300])) for n in range(200)))
    log = HistoryLog(path)
    whole = path.read_bytes()
    ends = [0, len(whole)] + [i + 1 for i, byte in enumerate(whole) if byte == ord("\n")][::17]
    for end in ends:
        for size in (1, 7, 64, 1 << 16):
            chunks = list(log.chunks_back(end, size))
            assert b"".join(reversed(chunks)) == whole[:end]
            assert all(chunk.endswith(b"\n") for chunk in chunks)  # whole lines only
    log.close()


def test_one_tasks_answer_is_the_whole_logs_answer_for_that_task(tmp_path: Path) -> None:
    """A log as stores write it, with outside edits noted (at lower and higher versions than
    logged), lines from before checksums, and lines longer than a chunk."""
    store = Store.open(tmp_path, create=True)
    rng = random.Random(11)
    tasks = [str(n) for n in range(1, 30)] + ["never-written-by-a-store"]
    logged: dict[str, int] = {}
    lines = [_line(task, 1, None) for task in tasks[:5]]  # a log from before checksums
    for _ in range(3000):
        task = rng.choice(tasks)
        if task != tasks[-1] and rng.random() < 0.85:
            logged[task] = logged.get(task, 1) + 1  # a store's write: one above everything logged
            lines.append(_line(task, logged[task], f"{rng.getrandbits(32):08x}", note="y" * (70_000 if rng.random() < 0.005 else 0)))
        else:
            lines.append(_line(task, rng.randint(0, logged.get(task, 1) + 3), None))  # an outside edit noted
    (tmp_path / ".tasks" / "history.jsonl").write_bytes(b"".join(lines))
    store.close()

    whole = Store.open(tmp_path)
    expected = whole._every_logged_version()
    assert len(expected) == len(tasks) and tasks[-1] not in whole._logged_crc
    assert any(task not in whole._logged_crc for task in tasks[:-1])  # an outside edit logged above a store's version
    for task in [*tasks, "not-in-the-log"]:
        one = Store.open(tmp_path, whole=False)
        assert one._logged_version(task) == expected.get(task), task
        assert one._logged_crc.get(task) == whole._logged_crc.get(task), task
        one.close()
    whole.close()


def test_a_heartbeat_reads_the_end_of_a_long_history_not_all_of_it(tmp_path: Path) -> None:
    store = Store.open(tmp_path, create=True)
    store.create("job")
    store.create("other")
    store.close()
    history = tmp_path / ".tasks" / "history.jsonl"
    own = history.read_bytes()
    # A week of other agents' heartbeats on task 2 before this agent took task 1.
    history.write_bytes(b"".join(_line("2", n, "00000000", note="z" * 200) for n in range(20_000)) + own)
    assert history.stat().st_size > 5_000_000
    assert Store.open(tmp_path, whole=False).claim("a1") is not None

    store = Store.open(tmp_path, whole=False)
    before = _bytes_read()
    renewed = store.heartbeat("a1")
    read = _bytes_read() - before
    assert [t.id for t in renewed] == ["1"] and renewed[0].version == 3
    assert read < 1_000_000, f"{read:,} bytes read for one heartbeat"
    assert [r["op"] for r in store.history("1")] == ["create", "claim", "heartbeat"]


def _bytes_read() -> int:
    """Bytes this process has read through system calls so far (``rchar``)."""
    for row in Path("/proc/self/io").read_text().splitlines():
        if row.startswith("rchar:"):
            return int(row.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def test_a_store_that_goes_on_to_read_the_whole_board_asks_the_log_in_one_pass(tmp_path: Path) -> None:
    store = Store.open(tmp_path, create=True)
    for name in ("a", "b", "c"):
        store.create(name)
    store.close()
    one = Store.open(tmp_path, whole=False)
    assert one._logged_version("1") == 1 and one._logged_scope == {"1"}
    assert set(one.tasks) == {"1", "2", "3"}  # the whole board read
    assert one._logged_scope is None and one._max_logged is None
    assert one._logged_version("2") == 1 and one._max_logged == {"1": 1, "2": 1, "3": 1}


def test_a_log_cut_short_while_it_is_read_is_asked_again(tmp_path: Path) -> None:
    store = Store.open(tmp_path, create=True)
    store.create("a")
    store.update("1", progress=5)
    store.close()
    one = Store.open(tmp_path, whole=False)
    one.get("1")
    history = tmp_path / ".tasks" / "history.jsonl"
    lines = history.read_bytes().splitlines(keepends=True)
    history.write_bytes(b"".join(lines[:-1]))  # by hand, outside the lock
    one._logged_version("1")
    assert "1" not in (one._logged_scope or set())  # not kept: the next question reads again


def test_a_version_no_store_writes_is_not_read_as_one(tmp_path: Path) -> None:
    """A line naming a version of thousands of digits (``int`` refuses past 4,300) or of more
    than 18 is nobody's write: it is passed over, by one pass and by a lookup alike."""
    store = Store.open(tmp_path, create=True)
    store.create("a")
    assert store.claim("a1") is not None
    store.close()
    history = tmp_path / ".tasks" / "history.jsonl"
    with history.open("ab") as log:
        for digits in (5000, 19):
            log.write(b'{"ts":"2026-01-01T00:00:00Z","task":"1","version":' + b"9" * digits + b',"file":"00000000","actor":"x","op":"update","changes":{}}\n')
    renewed = Store.open(tmp_path, whole=False).heartbeat("a1")
    assert [t.version for t in renewed] == [3]
    whole = Store.open(tmp_path)
    assert whole.update("1", description="more", token=renewed[0].lease.token).version == 4
    assert whole._every_logged_version()["1"] == 4


def test_a_store_following_the_log_drops_the_checksum_when_a_later_line_has_none(tmp_path: Path) -> None:
    store = Store.open(tmp_path, create=True)
    store.create("a")
    store.update("1", progress=5)  # logged with its file's checksum
    assert store._logged_version("1") == 2 and "1" in store._logged_crc
    history = tmp_path / ".tasks" / "history.jsonl"
    with history.open("ab") as log:
        log.write(_line("1", 7, None))  # an outside edit noted, at a higher version
    store.sync()
    fresh = Store.open(tmp_path)
    assert fresh._every_logged_version()["1"] == store._logged_version("1") == 7
    assert store._logged_crc.get("1") == fresh._logged_crc.get("1") is None


def test_the_log_read_from_its_start_in_chunks_is_the_log_and_leaves_out_only_a_line_no_store_writes(tmp_path: Path, monkeypatch) -> None:
    """Every version logged is read from the log's start a chunk at a time, in whole lines (it
    was read whole: a sparse file of a terabyte planted as the log failed every write with a
    MemoryError); a line longer than ``LINE_MOST`` is left out, and nothing else."""
    from board.store import history

    lines = [json.dumps({"task": str(n), "version": n, "pad": "x" * random.randrange(0, 300)}).encode() + b"\n" for n in range(200)]
    log = tmp_path / "history.jsonl"
    log.write_bytes(b"".join(lines) + b'{"task":"last","ver')  # a last line still being written
    reader = HistoryLog(log)
    for size in (7, 64, 1000, 1 << 20):
        assert b"".join(reader.chunks_forward(log.stat().st_size, size)) == log.read_bytes()
        assert all(chunk.endswith(b"\n") for chunk in list(reader.chunks_forward(len(b"".join(lines)), size)))
    monkeypatch.setattr(history, "LINE_MOST", 500)
    long = b'{"task":"long","version":99,' + b"0" * 2000 + b"}\n"
    log.write_bytes(b"".join(lines[:50]) + long + b"".join(lines[50:]))
    for size in (7, 64, 1000):
        assert b"".join(reader.chunks_forward(log.stat().st_size, size)) == b"".join(lines)
