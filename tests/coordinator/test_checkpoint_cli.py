"""``board checkpoint`` and ``board resume`` from the command line."""

from __future__ import annotations

import json

from board.checkpoints import list_checkpoints
from board.cli import main
from board.store import Store


def run(capsys, *args):
    code = main([*args])
    out, err = capsys.readouterr()
    return code, out, err


def test_checkpoint_then_resume_shows_the_note_and_what_changed(workspace, capsys):
    store = Store.open(workspace)
    (workspace / "a.py").write_text("one\n")
    task = store.create("parser", files=["a.py", "b.py"])
    code, out, _ = run(capsys, "checkpoint", task.id, "--note", "next: handle escapes", "-w", str(workspace))
    assert code == 0 and "checkpoint 1 of #1 written" in out

    code, out, _ = run(capsys, "resume", task.id, "-w", str(workspace))
    assert code == 0
    assert "note: next: handle escapes" in out and "checksum ok" in out
    assert "nothing: the task, its files and git HEAD are as they were" in out

    (workspace / "a.py").write_text("two\n")
    (workspace / "b.py").write_text("new\n")
    store.update(task.id, progress=50)
    code, out, _ = run(capsys, "resume", task.id, "-w", str(workspace))
    assert "a.py: modified" in out and "b.py: created" in out and "progress: 0 -> 50" in out

    code, out, _ = run(capsys, "resume", task.id, "--json", "-w", str(workspace))
    data = json.loads(out)
    assert data["checkpoint"]["note"] == "next: handle escapes" and set(data["changedFiles"]) == {"a.py", "b.py"}


def test_resume_refuses_a_corrupt_checkpoint_and_list_names_it(workspace, capsys):
    store = Store.open(workspace)
    task = store.create("job")
    for note in ("first", "second"):
        run(capsys, "checkpoint", task.id, "--note", note, "-w", str(workspace))
    newest = store.checkpoint_book.path(task.id, list_checkpoints(store.checkpoint_book, task.id)[-1])
    newest.write_text(newest.read_text().replace("second", "tampered"))

    code, _, err = run(capsys, "resume", task.id, "-w", str(workspace))
    assert code == 2 and "corrupt" in err and "refusing to resume" in err and len(err.strip().splitlines()) == 1

    code, out, _ = run(capsys, "checkpoint", task.id, "--list", "-w", str(workspace))
    assert code == 1 and "CORRUPT" in out and "first" in out

    code, out, _ = run(capsys, "resume", task.id, "--seq", "1", "-w", str(workspace))
    assert code == 0 and "note: first" in out


def test_resume_without_checkpoints_and_unknown_tasks_are_clear_errors(workspace, capsys):
    Store.open(workspace).create("job")
    code, _, err = run(capsys, "resume", "1", "-w", str(workspace))
    assert code == 2 and "no checkpoint to resume from" in err
    code, _, err = run(capsys, "checkpoint", "99", "-w", str(workspace))
    assert code == 2 and "no task with id '99'" in err
