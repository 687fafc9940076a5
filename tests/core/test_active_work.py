"""``active.json`` and its journal: what ``board hook`` reads to know who works on what, kept
by many processes at once on one machine."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from board import active_work
from board.active_work import FILE_NAME, JOURNAL_NAME, LOCK_NAME, READY, forget_index, note_task, read_active, read_ready, write_active, write_ready
from tests.conftest import REPO

WRITER = """
import sys
from pathlib import Path
import board.active_work as active
active.FOLD_BYTES = 1500  # fold often, while the others append and read
state, name, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for n in range(count):
    active.note_task(state, f"{name}-{n}", {"owner": name, "files": [f"src/{n}.py"]})
for n in range(0, count, 2):
    active.note_task(state, f"{name}-{n}", None)
"""

READER = """
import sys, json
from pathlib import Path
import board.active_work as active
state, stop = Path(sys.argv[1]), Path(sys.argv[2])
kept = set()  # odd-numbered tasks are never dropped: once seen, every later read has them
reads = 0
while not stop.exists():
    now = active.read_active(state)
    reads += 1
    for task, entry in now.items():
        owner, n = task.rsplit("-", 1)
        assert entry == {"owner": owner, "files": [f"src/{n}.py"]}, (task, entry)
    missing = kept - set(now)
    assert not missing, f"read {reads} lost {sorted(missing)[:5]}"
    kept |= {task for task in now if int(task.rsplit("-", 1)[1]) % 2}
print(json.dumps({"reads": reads}))
"""


def test_many_writers_and_a_reader_across_folds_keep_every_entry(tmp_path: Path) -> None:
    state = tmp_path / ".tasks"
    state.mkdir()
    stop = tmp_path / "stop"
    names, count = [f"agent{n}" for n in range(6)], 120
    reader = subprocess.Popen([sys.executable, "-c", READER, str(state), str(stop)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(state), name, str(count)], cwd=REPO, stderr=subprocess.PIPE, text=True) for name in names]
    try:
        for writer in writers:
            assert writer.wait(timeout=120) == 0, writer.stderr.read() if writer.stderr else ""
        stop.touch()
        out, err = reader.communicate(timeout=120)
        assert reader.returncode == 0, err
        assert json.loads(out)["reads"] > 0
    finally:
        for process in (reader, *writers):
            if process.poll() is None:
                process.kill()
                process.wait(timeout=60)
    # Every odd-numbered task of every writer is in progress; every even one was dropped.
    expected = {f"{name}-{n}": {"owner": name, "files": [f"src/{n}.py"]} for name in names for n in range(1, count, 2)}
    assert read_active(state) == expected
    header = (state / JOURNAL_NAME).read_bytes().split(b"\n")[0]
    assert json.loads(header)["generation"] == json.loads((state / FILE_NAME).read_bytes())["generation"] > 1  # it did fold


def test_a_board_from_before_the_journal_is_read_and_then_journaled(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_text(json.dumps({"tasks": {"3": {"owner": "ann", "files": []}}}))
    assert read_active(tmp_path) == {"3": {"owner": "ann", "files": []}}
    note_task(tmp_path, "4", {"owner": "bob", "files": ["a.py"]})
    assert read_active(tmp_path) == {"3": {"owner": "ann", "files": []}, "4": {"owner": "bob", "files": ["a.py"]}}
    note_task(tmp_path, "3", None)
    assert read_active(tmp_path) == {"4": {"owner": "bob", "files": ["a.py"]}}


def test_a_rebuild_replaces_what_the_journal_said_and_a_torn_line_is_skipped(tmp_path: Path) -> None:
    note_task(tmp_path, "1", {"owner": "ann", "files": []})
    with open(tmp_path / JOURNAL_NAME, "ab") as journal:
        journal.write(b'{"task":"2","entry":{"owner":"b')  # a write a full disk cut short
    assert read_active(tmp_path) == {"1": {"owner": "ann", "files": []}}
    note_task(tmp_path, "5", {"owner": "eve", "files": []})  # starts a line of its own
    assert read_active(tmp_path) == {"1": {"owner": "ann", "files": []}, "5": {"owner": "eve", "files": []}}
    write_active(tmp_path, {"7": {"owner": "cy", "files": []}})
    assert read_active(tmp_path) == {"7": {"owner": "cy", "files": []}}
    note_task(tmp_path, "8", {"owner": "dee", "files": []})
    assert read_active(tmp_path) == {"7": {"owner": "cy", "files": []}, "8": {"owner": "dee", "files": []}}


def test_a_writer_killed_between_the_index_and_its_journal_loses_no_later_entry(tmp_path: Path) -> None:
    from board.active_work import replace_file

    note_task(tmp_path, "1", {"owner": "ann", "files": []})
    # A fold killed after it replaced active.json and before it started the journal anew: the
    # journal still names the generation before.
    generation = json.loads((tmp_path / FILE_NAME).read_bytes())["generation"]
    replace_file(tmp_path / FILE_NAME, json.dumps({"generation": generation + 1, "tasks": {"1": {"owner": "ann", "files": []}}}, separators=(",", ":")).encode())
    note_task(tmp_path, "2", {"owner": "bob", "files": []})
    note_task(tmp_path, "3", {"owner": "cy", "files": []})
    assert read_active(tmp_path) == {name: {"owner": owner, "files": []} for name, owner in (("1", "ann"), ("2", "bob"), ("3", "cy"))}
    for n in range(700):  # folds many times over
        note_task(tmp_path, f"x{n}", None)
    assert set(read_active(tmp_path)) == {"1", "2", "3"}


def test_an_index_lost_with_the_power_keeps_the_journal_and_what_follows(tmp_path: Path) -> None:
    write_active(tmp_path, {"1": {"owner": "ann", "files": []}})
    note_task(tmp_path, "2", {"owner": "bob", "files": []})
    (tmp_path / FILE_NAME).write_bytes(b"")  # written without fsync: empty after a crash
    assert read_active(tmp_path) == {"2": {"owner": "bob", "files": []}}
    note_task(tmp_path, "3", {"owner": "cy", "files": []})
    assert read_active(tmp_path) == {"2": {"owner": "bob", "files": []}, "3": {"owner": "cy", "files": []}}
    header = (tmp_path / JOURNAL_NAME).read_bytes().split(b"\n")[0]
    assert json.loads(header)["generation"] == json.loads((tmp_path / FILE_NAME).read_bytes())["generation"]


def test_a_large_index_is_folded_once_its_journal_is_a_quarter_of_it(tmp_path: Path) -> None:
    """A fold rewrites the whole snapshot under the lock every writer waits on: with thousands
    of tasks in progress, folding every ``FOLD_BYTES`` of journal cost each note more than its
    own line. Folds come once the journal is a quarter of the snapshot; readers still read all."""
    import board.active_work as active

    def generation() -> int:
        return json.loads((tmp_path / FILE_NAME).read_bytes())["generation"]

    held = {f"held-{n}": {"owner": f"agent{n % 4}", "files": [f"src/{n}.py"]} for n in range(6000)}
    write_active(tmp_path, held)
    snapshot = (tmp_path / FILE_NAME).stat().st_size
    assert snapshot // 4 > 2 * active.FOLD_BYTES  # a large index
    before, noted = generation(), 0
    while noted * 57 <= 2 * active.FOLD_BYTES:  # a note's line is 57 bytes
        note_task(tmp_path, f"new-{noted}", {"owner": "agent9", "files": []})
        noted += 1
    assert generation() == before  # past FOLD_BYTES twice over, and not folded
    assert read_active(tmp_path) == {**held, **{f"new-{n}": {"owner": "agent9", "files": []} for n in range(noted)}}
    while generation() == before and noted < 10_000:
        note_task(tmp_path, f"new-{noted}", {"owner": "agent9", "files": []})
        noted += 1
    assert snapshot // 4 <= noted * 60 <= snapshot // 4 + 4 * active.FOLD_BYTES  # folded about a quarter in
    assert (tmp_path / JOURNAL_NAME).stat().st_size < 100
    assert len(read_active(tmp_path)) == len(held) + noted


def test_a_small_index_is_folded_every_fold_bytes(tmp_path: Path) -> None:
    import board.active_work as active

    write_active(tmp_path, {"one": {"owner": "agent1", "files": []}})
    first = json.loads((tmp_path / FILE_NAME).read_bytes())["generation"]
    for n in range(active.FOLD_BYTES // 40 + 10):
        note_task(tmp_path, f"new-{n}", {"owner": "agent9", "files": []})
    assert json.loads((tmp_path / FILE_NAME).read_bytes())["generation"] > first
    assert len(read_active(tmp_path)) == active.FOLD_BYTES // 40 + 11


def test_a_journals_header_is_read_as_json_reads_it() -> None:
    """Every note reads its journal's header; the one ``_header`` writes is read without the
    JSON parser, and any other as the parser reads it."""
    from board.active_work import _generation_of, _header

    for generation in (0, 1, 7, 10, 123456789):
        assert _generation_of(_header(generation).rstrip(b"\n")) == generation
    for odd in (b'{"generation":5}', b'{"generation": 05}', b'{"generation": -1}', b'{"generation": 5.0}', b'{"generation": "5"}', b'{"generation": 5, "x": 1}', b"", b"{}", b"[5]"):
        try:
            data = json.loads(odd)
        except ValueError:
            data = None
        expected = data.get("generation") if isinstance(data, dict) and isinstance(data.get("generation"), int) else None
        assert _generation_of(odd) == expected, odd


NOTES = """
import sys
from pathlib import Path
import board.active_work as active
active.FOLD_BYTES = 200  # due a fold after a few notes
for n in range(int(sys.argv[3])):
    active.note_task(Path(sys.argv[1]), f"{sys.argv[2]}-{n}", {"owner": sys.argv[2], "files": []})
"""


def run_to_the_end(script: str, *args: str) -> None:
    """Run ``script`` in a process of its own; fail if it fails or has not ended in 30 s."""
    process = subprocess.Popen([sys.executable, "-c", script, *args], cwd=REPO, stderr=subprocess.PIPE, text=True)
    try:
        assert process.wait(timeout=30) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_note_does_not_wait_for_another_note_under_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Agents claiming at once on one machine each note their task; one of them descheduled (or
    # stopped) in the middle of its note must not hold up the others' claims.
    state = tmp_path / ".tasks"
    state.mkdir()
    note_task(state, "first", {"owner": "first", "files": []})
    with open(state / LOCK_NAME, "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)  # a note under way holds the lock so
        # Ten notes (about 500 bytes): past the journal's fold, which waits for the note under
        # way, and leaves it to a later note.
        run_to_the_end(NOTES, str(state), "second", "10")
        assert set(read_active(state)) == {"first", *(f"second-{n}" for n in range(10))}
    monkeypatch.setattr(active_work, "FOLD_BYTES", 200)
    note_task(state, "third", {"owner": "third", "files": []})  # the lock free: folded now
    assert len((state / JOURNAL_NAME).read_bytes().splitlines()) == 1
    assert set(read_active(state)) == {"first", "third", *(f"second-{n}" for n in range(10))}


def test_a_note_starts_a_line_of_its_own_after_one_cut_short_meanwhile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / ".tasks"
    state.mkdir()
    note_task(state, "a", {"owner": "ann", "files": []})
    read_head = active_work._snapshot_generation_and_size

    def cut_short_meanwhile(*args):
        # Another note, under way beside this one, lands only in part (its writer killed).
        monkeypatch.setattr(active_work, "_snapshot_generation_and_size", read_head)
        with open(state / JOURNAL_NAME, "ab") as journal:
            journal.write(b'{"task":"c","entry":{"own')
        return read_head(*args)

    monkeypatch.setattr(active_work, "_snapshot_generation_and_size", cut_short_meanwhile)
    note_task(state, "b", {"owner": "bob", "files": []})
    assert read_active(state) == {"a": {"owner": "ann", "files": []}, "b": {"owner": "bob", "files": []}}


FIFO_BEFORE_THE_FOLD = """
import os, sys
from pathlib import Path
import board.active_work as active
state = Path(sys.argv[1])
active.note_task(state, "a", {"owner": "ann", "files": []})
due = active._fold_at

def planted(*args):  # between a note and its fold, a FIFO in place of the journal
    active._fold_at = due
    (state / active.JOURNAL_NAME).unlink()
    os.mkfifo(state / active.JOURNAL_NAME)
    return 0

active._fold_at = planted
active.note_task(state, "b", {"owner": "bob", "files": []})
"""


def test_a_fifo_planted_for_the_journal_never_hangs_a_note(tmp_path: Path) -> None:
    state = tmp_path / ".tasks"
    state.mkdir()
    run_to_the_end(FIFO_BEFORE_THE_FOLD, str(state))
    assert stat.S_ISFIFO((state / JOURNAL_NAME).lstat().st_mode)  # left for 'board check', never read


def test_an_index_trusted_once_written_whole_is_not_made_again_from_its_journal_alone(tmp_path: Path) -> None:
    state = tmp_path / ".tasks"
    state.mkdir()
    write_ready(state, {str(n): {"rank": 2, "remaining": 1.0} for n in range(1, 101)})
    note_task(state, "101", {"rank": 0, "remaining": 1.0}, files=READY)
    assert len(read_ready(state) or {}) == 101
    forget_index(state, READY)  # a note that could not be made drops the index
    note_task(state, "102", {"rank": 0, "remaining": 1.0}, files=READY)
    # Two of 102 ready tasks are not the index: a claim reads the whole board, which writes it anew.
    assert read_ready(state) is None


def test_a_snapshot_the_disk_takes_in_parts_is_written_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / ".tasks"
    state.mkdir()
    entries = {str(n): {"owner": f"agent{n}", "files": [f"src/{n}.py"]} for n in range(200)}
    write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: write(fd, bytes(data[:100])))  # as a nearly full disk may
    write_active(state, entries)
    monkeypatch.undo()
    assert read_active(state) == entries


# A process that notes more than once holds the index open between its notes (``_KeptIndex``):
# what it holds must never outlive the files it stands for.


def test_a_note_after_another_writer_folded_lands_in_the_new_journal(tmp_path: Path) -> None:
    note_task(tmp_path, "a", {"owner": "ann", "files": []})
    note_task(tmp_path, "b", {"owner": "bob", "files": []})  # from here on, held open
    old_journal = (tmp_path / JOURNAL_NAME).stat().st_ino
    write_active(tmp_path, read_active(tmp_path))  # a fold: both files replaced
    assert (tmp_path / JOURNAL_NAME).stat().st_ino != old_journal
    note_task(tmp_path, "c", {"owner": "cid", "files": []})
    assert set(read_active(tmp_path)) == {"a", "b", "c"}
    assert b'"task":"c"' in (tmp_path / JOURNAL_NAME).read_bytes()


def test_a_note_after_its_folder_was_moved_away_lands_in_the_folder_now_named(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    note_task(state, "a", {"owner": "ann", "files": []})
    note_task(state, "b", {"owner": "bob", "files": []})
    state.rename(tmp_path / "moved")
    state.mkdir()
    note_task(state, "c", {"owner": "cid", "files": []})
    assert read_active(state) == {"c": {"owner": "cid", "files": []}}
    assert set(read_active(tmp_path / "moved")) == {"a", "b"}


HOLDS_THEN_NOTES = """
import sys
from pathlib import Path
import board.active_work as active
state = Path(sys.argv[1])
active.note_task(state, "a", {"owner": "ann", "files": []})
active.note_task(state, "b", {"owner": "bob", "files": []})
print("holding", flush=True)
sys.stdin.readline()
active.note_task(state, "c", {"owner": "cid", "files": []})
"""


def test_a_note_takes_the_lock_file_now_named_not_one_it_held_before(tmp_path: Path) -> None:
    # Should the lock file be made anew, a fold takes the new one: a note locking the old one
    # would write while the fold rewrites.
    process = subprocess.Popen([sys.executable, "-c", HOLDS_THEN_NOTES, str(tmp_path)], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdin is not None
        assert process.stdout.readline() == "holding\n"
        (tmp_path / LOCK_NAME).unlink()
        with open(tmp_path / LOCK_NAME, "wb") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # a fold under way
            process.stdin.write("\n")
            process.stdin.flush()
            wchan = Path(f"/proc/{process.pid}/wchan")
            # Until the note waits on the lock, between its tries (``flock_within``), or, wrongly,
            # has ended without it.
            while process.poll() is None and not any(word in wchan.read_text() for word in ("lock", "sleep")):
                time.sleep(0.001)
            assert process.poll() is None, "noted while a fold held the lock"
            assert "cid" not in (tmp_path / JOURNAL_NAME).read_text()
        assert process.wait(timeout=30) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert set(read_active(tmp_path)) == {"a", "b", "c"}


def test_a_forked_child_holds_none_of_its_parents_descriptors(tmp_path: Path) -> None:
    # A lock taken or let go through a copy of a descriptor is the parent's own lock.
    note_task(tmp_path, "a", {"owner": "ann", "files": []})
    note_task(tmp_path, "b", {"owner": "bob", "files": []})
    held = [fd for kept in active_work._kept.values() if kept.state_dir == str(tmp_path) for fd in (kept.folder.fd, kept.lock, kept.journal, kept.snapshot)]
    assert len(held) == 4
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's own exit status is the assertion
        still = [fd for fd in held if _is_open(fd)]
        note_task(tmp_path, "c", {"owner": "cid", "files": []})
        os._exit(1 if still else 0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert all(_is_open(fd) for fd in held)  # the parent's own, untouched
    note_task(tmp_path, "d", {"owner": "dan", "files": []})
    assert set(read_active(tmp_path)) == {"a", "b", "c", "d"}


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_threads_noting_across_folds_lose_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    monkeypatch.setattr(active_work, "FOLD_BYTES", 600)  # a fold every dozen notes
    note_task(tmp_path, "first", {"owner": "ann", "files": []})
    before = len(os.listdir("/proc/self/fd"))

    def notes(name: str) -> None:
        for n in range(150):
            note_task(tmp_path, f"{name}-{n}", {"owner": name, "files": []})

    threads = [threading.Thread(target=notes, args=(f"t{n}",)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(read_active(tmp_path)) == {"first", *(f"t{t}-{n}" for t in range(6) for n in range(150))}
    assert len(os.listdir("/proc/self/fd")) <= before + 4  # one folder, lock, journal and snapshot held


def test_a_process_noting_to_many_boards_holds_only_the_latest_open(tmp_path: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    for n in range(3 * active_work.KEPT_MOST):
        state = tmp_path / str(n)
        state.mkdir()
        for task in ("a", "b"):
            note_task(state, task, {"owner": "ann", "files": []})
    assert len(os.listdir("/proc/self/fd")) <= before + 4 * active_work.KEPT_MOST


def test_a_process_that_notes_once_holds_nothing_open(tmp_path: Path) -> None:
    write_active(tmp_path, {"a": {"owner": "ann", "files": []}})
    before = sorted(os.listdir("/proc/self/fd"))
    note_task(tmp_path, "b", {"owner": "bob", "files": []})  # as 'board claim' does
    assert sorted(os.listdir("/proc/self/fd")) == before
    assert set(read_active(tmp_path)) == {"a", "b"}


# A fold makes the new snapshot before it takes the lock alone (``_fold_journal``).

NOTES_NO_FOLD = """
import sys
from pathlib import Path
import board.active_work as active
for n in range(int(sys.argv[3])):
    active.note_task(Path(sys.argv[1]), f"{sys.argv[2]}-{n}", {"owner": sys.argv[2], "files": []})
"""


def _fold_due(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index with five notes in its journal, and a fold due at the next note."""
    write_active(state, {f"old-{n}": {"owner": "ann", "files": []} for n in range(3)})
    for n in range(5):
        note_task(state, f"ann-{n}", {"owner": "ann", "files": []})
    monkeypatch.setattr(active_work, "FOLD_BYTES", 200)


def test_notes_made_while_a_fold_is_made_go_on_and_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fold_due(tmp_path, monkeypatch)
    ahead = active_work._fold_ahead

    def others_note_meanwhile(*args):
        made = ahead(*args)
        # Agents claim while the snapshot is being made: their notes neither wait for it nor fold.
        run_to_the_end(NOTES_NO_FOLD, str(tmp_path), "bob", "5")
        return made

    monkeypatch.setattr(active_work, "_fold_ahead", others_note_meanwhile)
    note_task(tmp_path, "ann-5", {"owner": "ann", "files": []})
    journal = (tmp_path / JOURNAL_NAME).read_bytes()
    assert journal.startswith(b'{"generation": 2}\n')  # folded
    assert journal.count(b'"owner":"bob"') == 5 and b"ann" not in journal  # bob's carried over to the new journal
    assert set(read_active(tmp_path)) == {*(f"old-{n}" for n in range(3)), *(f"ann-{n}" for n in range(6)), *(f"bob-{n}" for n in range(5))}


def test_a_fold_made_while_another_writer_rebuilt_the_index_is_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fold_due(tmp_path, monkeypatch)
    ahead = active_work._fold_ahead

    def rebuilt_meanwhile(*args):
        made = ahead(*args)
        write_active(tmp_path, {"rebuilt": {"owner": "cid", "files": []}})  # the coordinator's rebuild
        return made

    monkeypatch.setattr(active_work, "_fold_ahead", rebuilt_meanwhile)
    note_task(tmp_path, "ann-5", {"owner": "ann", "files": []})
    assert read_active(tmp_path) == {"rebuilt": {"owner": "cid", "files": []}}
    assert json.loads((tmp_path / FILE_NAME).read_bytes())["generation"] == 2


def test_a_note_past_due_leaves_the_fold_to_the_writer_folding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fold_due(tmp_path, monkeypatch)
    with open(tmp_path / JOURNAL_NAME, "rb") as journal:
        fcntl.flock(journal, fcntl.LOCK_EX)  # another writer's turn to fold this journal
        run_to_the_end(NOTES, str(tmp_path), "bob", "6")
        assert json.loads((tmp_path / FILE_NAME).read_bytes())["generation"] == 1  # not folded
    note_task(tmp_path, "ann", {"owner": "ann", "files": []})  # its turn free: folded now
    assert json.loads((tmp_path / FILE_NAME).read_bytes())["generation"] == 2
    assert set(read_active(tmp_path)) == {*(f"old-{n}" for n in range(3)), *(f"ann-{n}" for n in range(5)), *(f"bob-{n}" for n in range(6)), "ann"}


def test_a_reader_of_the_old_snapshot_reads_every_entry_while_a_fold_replaces_the_pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fold_due(tmp_path, monkeypatch)
    journals: list[bytes] = []
    replace = active_work.replace_file

    def keep_journals(path, data, *folder):
        if str(path).endswith(JOURNAL_NAME):
            journals.append(data)
        replace(path, data, *folder)

    monkeypatch.setattr(active_work, "replace_file", keep_journals)
    old_snapshot = (tmp_path / FILE_NAME).read_bytes()
    note_task(tmp_path, "ann-5", {"owner": "ann", "files": []})  # folds: two journals put in place
    assert len(journals) == 2
    # A reader that read the old snapshot, then found the fold's first journal each time but the
    # last, when the fold had ended.
    (tmp_path / FILE_NAME).write_bytes(old_snapshot)
    seen = iter([journals[0]] * (active_work.READ_ATTEMPTS - 1) + [journals[1]])
    monkeypatch.setattr(active_work, "_journal_lines", lambda *args: next(seen).split(b"\n"))
    assert set(read_active(tmp_path)) == {*(f"old-{n}" for n in range(3)), *(f"ann-{n}" for n in range(6))}


REPLACE_FILE = active_work.replace_file


def stopped_after(count: int):
    """``replace_file`` that makes ``count`` replacements and then ends the writer (a
    KeyboardInterrupt, raised where the next would have been)."""
    calls: list[object] = []

    def replacing(path, data, *folder):
        if len(calls) == count:
            raise KeyboardInterrupt  # the writer's end, between two replacements
        calls.append(path)
        REPLACE_FILE(path, data, *folder)

    return replacing


def test_a_writer_killed_in_the_middle_of_a_fold_loses_no_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = {*(f"old-{n}" for n in range(3)), *(f"ann-{n}" for n in range(6))}
    fold_bytes = active_work.FOLD_BYTES
    for replaced in (1, 2):  # after the first journal, after the snapshot
        state = tmp_path / str(replaced)
        state.mkdir()
        monkeypatch.setattr(active_work, "FOLD_BYTES", fold_bytes)
        _fold_due(state, monkeypatch)
        monkeypatch.setattr(active_work, "replace_file", stopped_after(replaced))
        with pytest.raises(KeyboardInterrupt):
            note_task(state, "ann-5", {"owner": "ann", "files": []})
        monkeypatch.setattr(active_work, "replace_file", REPLACE_FILE)
        assert set(read_active(state)) == expected
        note_task(state, "bob", {"owner": "bob", "files": []})  # the next writer goes on from there
        assert set(read_active(state)) == expected | {"bob"}


KILLED_REWRITE = """
import os, signal, sys
from pathlib import Path
import board.active_work as active
replace = active.replace_file

def replace_then_die(path, data, *folder):
    replace(path, data, *folder)
    if str(path).endswith(active.FILE_NAME):
        os.kill(os.getpid(), signal.SIGKILL)  # between the snapshot's replacement and the journal's

active.replace_file = replace_then_die
active.write_active(Path(sys.argv[1]), {"x": {"owner": "coordinator", "files": []}})
"""


def test_a_snapshot_made_anew_under_the_number_of_the_one_held_is_not_taken_for_it(tmp_path: Path) -> None:
    # The snapshot dropped (a note that failed), then a rewrite killed between its two files:
    # the new snapshot may get the dropped one's number, and the journal held is then of an
    # older generation, which readers set aside.
    write_active(tmp_path, {})
    note_task(tmp_path, "a", {"owner": "ann", "files": []})
    note_task(tmp_path, "b", {"owner": "bob", "files": []})  # held open from here
    snapshot = tmp_path / FILE_NAME
    number = snapshot.stat().st_ino
    for _ in range(20):  # ext4 gives a number back at once, as a rule
        forget_index(tmp_path)
        assert subprocess.run([sys.executable, "-c", KILLED_REWRITE, str(tmp_path)], cwd=REPO).returncode == -9
        if snapshot.stat().st_ino == number:
            break
    note_task(tmp_path, "c", {"owner": "cid", "files": []})
    assert "c" in read_active(tmp_path)


def test_a_note_to_one_index_does_not_wait_for_another_indexs_lock(tmp_path: Path) -> None:
    import threading

    boards = tmp_path / "x", tmp_path / "y"
    for state in boards:
        state.mkdir()
        write_active(state, {})
        for task in ("a", "b"):  # both held open
            note_task(state, task, {"owner": "ann", "files": []})
    with open(boards[0] / LOCK_NAME, "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a fold of board x under way
        waiting = threading.Thread(target=note_task, args=(boards[0], "c", {"owner": "cid", "files": []}), daemon=True)
        waiting.start()
        other = threading.Thread(target=note_task, args=(boards[1], "c", {"owner": "cid", "files": []}), daemon=True)
        other.start()
        other.join(timeout=30)
        assert not other.is_alive(), "a note to board y waited for board x's lock"
        assert waiting.is_alive()  # as it must
    waiting.join(timeout=30)
    assert "c" in read_active(boards[0]) and "c" in read_active(boards[1])


def test_notes_are_never_written_through_a_folder_moved_out_of_the_board_and_linked_back(tmp_path: Path) -> None:
    from board.disk import confine

    root = tmp_path / "root"
    state = root / "a" / "b"
    state.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    confine.confine(root)
    write_active(state, {})
    note_task(state, "x", {"owner": "ann", "files": []})
    note_task(state, "y", {"owner": "ann", "files": []})
    (root / "a").rename(outside / "a")  # a co-tenant moves the folder out
    (root / "a").symlink_to(outside / "a")  # and links it back
    note_task(state, "z", {"owner": "mallory", "files": []})
    assert b'"task":"z"' not in (outside / "a" / "b" / JOURNAL_NAME).read_bytes()


def test_a_file_linked_in_place_of_a_journal_without_its_snapshot_is_never_written(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    state = tmp_path / "state"
    state.mkdir()
    write_active(state, {})
    forget_index(state)  # the snapshot dropped
    (state / JOURNAL_NAME).unlink()
    os.link(victim, state / JOURNAL_NAME)
    note_task(state, "a", {"owner": "ann", "files": []})
    assert victim.read_text() == "precious\n"
    assert read_active(state) == {"a": {"owner": "ann", "files": []}}


def test_a_file_linked_in_place_of_a_temp_file_is_never_written(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    state = tmp_path / "state"
    state.mkdir()
    os.link(victim, state / f".{FILE_NAME}.{os.getpid()}.tmp")  # its name is foreseeable
    write_active(state, {"a": {"owner": "ann", "files": []}})
    assert victim.read_text() == "precious\n"
    assert read_active(state) == {"a": {"owner": "ann", "files": []}}


FORK_DURING_A_FOLD = """
import os, signal, sys, threading
from pathlib import Path
import board.active_work as active
state = Path(sys.argv[1])
active.write_active(state, {})
held, forked = threading.Event(), threading.Event()

def fold():
    with active._writing(state, active.ACTIVE):  # a fold under way in another thread
        held.set()
        forked.wait()

thread = threading.Thread(target=fold)
thread.start()
held.wait()
child = os.fork()
if child == 0:
    signal.alarm(20)  # the lock copied with the descriptor would hold up the child's note for good
    active.note_task(state, "c", {"owner": "child", "files": []})
    os._exit(0)
forked.set()
thread.join()
_, status = os.waitpid(child, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_a_child_forked_while_a_thread_folds_does_not_keep_the_lock(tmp_path: Path) -> None:
    run_to_the_end(FORK_DURING_A_FOLD, str(tmp_path))
    assert "c" in read_active(tmp_path)


def test_a_writer_that_finds_the_journal_folded_meanwhile_does_not_fold_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from board.disk import confine

    _fold_due(tmp_path, monkeypatch)
    note_task(tmp_path, "ann-5", {"owner": "ann", "files": []})  # folds: generation 2
    due = active_work._fold_at((tmp_path / FILE_NAME).stat().st_size, active_work.ACTIVE)
    with confine.OpenFolder(tmp_path) as folder:  # another writer that found it due before that fold
        active_work._fold_journal(tmp_path, active_work.ACTIVE, folder, overdue=False, due=due)
    assert json.loads((tmp_path / FILE_NAME).read_bytes())["generation"] == 2


def test_a_rebuild_after_a_fold_stopped_midway_brings_back_nothing_it_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fold_due(tmp_path, monkeypatch)
    monkeypatch.setattr(active_work, "replace_file", stopped_after(1))  # the fold: its first journal only
    with pytest.raises(KeyboardInterrupt):
        note_task(tmp_path, "ann-5", {"owner": "ann", "files": []})
    # The coordinator's rebuild: every task but one is done; stopped between its two files.
    monkeypatch.setattr(active_work, "replace_file", stopped_after(1))
    with pytest.raises(KeyboardInterrupt):
        write_active(tmp_path, {"ann-5": {"owner": "ann", "files": []}})
    monkeypatch.setattr(active_work, "replace_file", REPLACE_FILE)
    assert read_active(tmp_path) == {"ann-5": {"owner": "ann", "files": []}}


FIFO_HELD_OPEN = """
import os, sys
from pathlib import Path
import board.active_work as active
state, name = Path(sys.argv[1]), sys.argv[2]
active.write_active(state, {"a": {"owner": "ann", "files": []}})
os.unlink(state / name)
os.mkfifo(state / name)
held = os.open(state / name, os.O_RDWR)  # a FIFO planted, held open for writing
assert active.read_active(state) in ({}, {"a": {"owner": "ann", "files": []}})
active.FOLD_BYTES = 10
active.note_task(state, "b", {"owner": "bob", "files": []})
"""


@pytest.mark.parametrize("name", [FILE_NAME, JOURNAL_NAME])
def test_a_fifo_held_open_in_place_of_an_index_file_is_read_as_no_index(tmp_path: Path, name: str) -> None:
    run_to_the_end(FIFO_HELD_OPEN, str(tmp_path), name)  # no error: the note stands
    if name == FILE_NAME:
        assert "b" in read_active(tmp_path)  # a pair started anew in its place


def test_a_fold_made_ahead_waits_out_a_note_under_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fold_due(tmp_path, monkeypatch)
    lock = open(tmp_path / LOCK_NAME, "rb")
    ahead = active_work._fold_ahead

    def note_under_way(*args):
        made = ahead(*args)
        fcntl.flock(lock, fcntl.LOCK_SH)  # another agent's note, as the fold tries the lock
        return made

    def pause(seconds: float) -> None:
        fcntl.flock(lock, fcntl.LOCK_UN)  # that note done by the time of the next try

    monkeypatch.setattr(active_work, "_fold_ahead", note_under_way)
    monkeypatch.setattr(active_work.time, "sleep", pause)
    try:
        note_task(tmp_path, "ann-5", {"owner": "ann", "files": []})
    finally:
        lock.close()
    assert json.loads((tmp_path / FILE_NAME).read_bytes())["generation"] == 2  # folded, not given up


def test_a_journal_grown_past_what_readers_read_while_a_fold_was_made_is_not_carried_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fold_due(tmp_path, monkeypatch)
    ahead = active_work._fold_ahead

    def grown(*args):
        made = ahead(*args)
        with open(tmp_path / JOURNAL_NAME, "r+b") as journal:
            journal.truncate(3 * active_work.JOURNAL_MOST)  # a co-tenant's zeros, no note's lines
        return made

    monkeypatch.setattr(active_work, "_fold_ahead", grown)
    note_task(tmp_path, "ann-5", {"owner": "ann", "files": []})
    assert json.loads((tmp_path / FILE_NAME).read_bytes())["generation"] == 1  # left as it was


def test_an_index_of_many_tasks_in_progress_is_read_and_folded_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    many = {str(n): {"owner": f"agent-{n % 16}", "files": [f"src/module_{n}/a.py", f"src/module_{n}/b.py", f"tests/test_{n}.py"]} for n in range(15_000)}
    write_active(tmp_path, many)
    assert (tmp_path / FILE_NAME).stat().st_size > 1024 * 1024
    assert read_active(tmp_path) == many
    monkeypatch.setattr(active_work, "FOLD_BYTES_MOST", 200)
    monkeypatch.setattr(active_work, "FOLD_BYTES", 200)
    for n in range(6):  # past due: folded
        note_task(tmp_path, f"new-{n}", {"owner": "ann", "files": []})
    assert json.loads((tmp_path / FILE_NAME).read_bytes())["generation"] > 1
    assert read_active(tmp_path) == {**many, **{f"new-{n}": {"owner": "ann", "files": []} for n in range(6)}}


def test_a_fold_puts_its_files_in_the_folder_it_read_not_one_put_in_its_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state"
    state.mkdir()
    _fold_due(state, monkeypatch)
    ahead = active_work._fold_ahead

    def swapped_meanwhile(*args):
        made = ahead(*args)
        state.rename(tmp_path / "moved")  # the board moved aside, another put in its place
        state.mkdir()
        write_active(state, {"new": {"owner": "cid", "files": []}})
        return made

    monkeypatch.setattr(active_work, "_fold_ahead", swapped_meanwhile)
    note_task(state, "ann-5", {"owner": "ann", "files": []})
    assert read_active(state) == {"new": {"owner": "cid", "files": []}}
    assert set(read_active(tmp_path / "moved")) == {*(f"old-{n}" for n in range(3)), *(f"ann-{n}" for n in range(6))}
    assert json.loads((tmp_path / "moved" / FILE_NAME).read_bytes())["generation"] == 2  # folded there


#: Holds a lock file with ``flock`` until killed, as anyone who can open it can.
HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(600)
"""


def held_by_another_process(path: Path) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


@pytest.mark.parametrize("lock", [READY.lock, LOCK_NAME])
def test_an_index_lock_held_by_another_process_for_ever_delays_a_claim_but_never_stops_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lock: str) -> None:
    """Whoever can open an index's lock file could take it and keep it: every writer that noted
    a task waited on it for ever, holding the board's lock meanwhile. A note waits
    ``INDEX_LOCK_SECONDS`` and gives way; the index is dropped and made again once the lock is free."""
    from board.store import Store

    monkeypatch.setattr(active_work, "INDEX_LOCK_SECONDS", 0.5, raising=False)
    store = Store.open(tmp_path, create=True)
    for n in range(3):
        store.create(f"task {n}")
    assert store.claim("ann").id == "1"  # the indexes are written
    store.close()
    holder = held_by_another_process(tmp_path / ".tasks" / lock)
    try:
        started = time.monotonic()
        claimer = Store.open(tmp_path)
        assert claimer.claim("bob").id == "2"
        assert time.monotonic() - started < 30  # waited, and went on (it waited for ever before)
        claimer.close()
    finally:
        holder.kill()
        holder.wait()
    again = Store.open(tmp_path)
    assert again.claim("cid").id == "3" and again.claim("dan") is None
    again.close()
