import json

import pytest

from board.errors import InvalidTaskFile
from board.model import MAX_FILE_BYTES, dump_task, parse_task
from board.status import Status


def doc(**fields) -> bytes:
    base = {"id": "1", "subject": "Write the parser"}
    base.update(fields)
    return json.dumps(base).encode()


def test_integer_ids_are_read_as_strings_and_written_back_as_integers() -> None:
    task = parse_task(doc(id=7, blockedBy=[1, 2], blocks=[3], parent=4), "task_7.json")
    assert task.id == "7"  # one type inside board
    assert task.blocked_by == ["1", "2"] and task.blocks == ["3"] and task.parent == "4"
    written = json.loads(dump_task(task))  # the file's own type on disk
    assert written["id"] == 7 and written["blockedBy"] == [1, 2] and written["blocks"] == [3] and written["parent"] == 4
    assert "integerIds" not in written


def test_the_id_key_is_found_exactly_where_its_pattern_found_it() -> None:
    """The first ``"id"`` key of a file and where its value starts, found without a pattern, as
    ``"id"\\s*:\\s*`` found it: over spaced, tabbed and broken keys, ``"id"`` as a value, and keys
    that end in ``id``."""
    import itertools
    import re

    from board.model import _id_value_at

    pattern = re.compile(rb'"id"\s*:\s*')
    parts = [b'"id"', b" ", b"\t\n", b"\x0b\x0c", b":", b"7", b'"7"', b'"kid"', b",", b'\\"id\\"', b"{", b"\r"]
    tried = 0
    for length in range(1, 6):
        for pieces in itertools.product(parts, repeat=length):
            raw = b"".join(pieces)
            found = pattern.search(raw)
            assert _id_value_at(raw) == (found.end() if found else -1), raw
            tried += 1
    assert tried > 200_000


def test_string_ids_stay_strings_even_when_numeric() -> None:
    task = parse_task(doc(id="7", blockedBy=["1"], metadata={"id": 3}), "task_7.json")
    written = json.loads(dump_task(task))
    assert written["id"] == "7" and written["blockedBy"] == ["1"]


def test_unknown_fields_survive_a_rewrite_at_every_level() -> None:
    raw = doc(customField={"nested": [1, 2]}, metadata={"team": "core"}, toolCalls={"total": 2, "ok": 2, "vendorExtra": True})
    written = json.loads(dump_task(parse_task(raw, "f")))
    assert written["customField"] == {"nested": [1, 2]}
    assert written["metadata"] == {"team": "core"}
    assert written["toolCalls"]["vendorExtra"] is True
    assert written["toolCalls"]["total"] == 2


def test_written_keys_are_camel_case() -> None:
    written = json.loads(dump_task(parse_task(doc(), "f")))
    assert {"blockedBy", "activeForm", "toolCalls", "createdAt", "updatedAt", "startedAt", "completedAt"} <= set(written)
    assert not any("_" in key for key in written)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (doc(subject=""), "'subject'"),
        (doc(subject="two\nlines"), "single line"),
        (doc(subject="x" * 201), "'subject'"),
        (doc(status="done"), "'status'"),
        (doc(progress=101), "'progress'"),
        (doc(priority="urgent"), "'priority'"),
        (doc(id="../x"), "not a valid id"),
        (doc(blockedBy="1"), "'blockedBy'"),
        (doc(blockedBy=["ok", "bad id"]), "not a valid id"),
        (doc(id=True), "'id'"),
        (b"\xff\xfe", "UTF-8"),
    ],
)
def test_every_invalid_file_names_the_file_and_the_problem(raw: bytes, expected: str) -> None:
    with pytest.raises(InvalidTaskFile) as caught:
        parse_task(raw, "/board/.tasks/task_1.json")
    message = str(caught.value)
    assert message.startswith("/board/.tasks/task_1.json: ")
    assert expected in message
    assert "\n" not in message


def test_files_over_one_mebibyte_are_refused_before_parsing() -> None:
    raw = doc(description="x" * MAX_FILE_BYTES)
    with pytest.raises(InvalidTaskFile, match="limit is 1,048,576"):
        parse_task(raw, "big.json")


def test_dump_is_stable() -> None:
    task = parse_task(doc(description="ünïcode ✓"), "f")
    assert dump_task(task) == dump_task(parse_task(dump_task(task), "f"))
    assert "ünïcode ✓".encode() in dump_task(task)


def test_tasks_read_from_files_share_one_fields_set_and_still_write_every_field() -> None:
    """Memory: pydantic's per-instance set of given fields was most of a task's size; tasks
    read from files share one. Nothing board writes may change for it."""
    from board.model import dump_task, parse_task

    raw = b'{"id": "1", "subject": "a", "toolCalls": {"total": 2, "ok": 2}, "lease": {"owner": "x", "token": 3, "expiresAt": "2026-01-01T00:00:00Z"}}'
    first, second = parse_task(raw, "task_1.json"), parse_task(raw.replace(b'"a"', b'"b"'), "task_1.json")
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    assert first.tool_calls.__pydantic_fields_set__ is second.tool_calls.__pydantic_fields_set__
    first.progress = 40  # an assignment adds nothing new to the shared set
    assert second.progress == 0 and first != second
    reread = parse_task(dump_task(first), "task_1.json")
    assert reread == first and reread.tool_calls.total == 2 and reread.lease.token == 3
    assert dump_task(reread) == dump_task(first)


def test_tasks_read_share_what_is_empty_and_a_change_to_one_leaves_the_others_alone() -> None:
    from board.model import draft_of, task_from_dict

    raw = [json.dumps({"id": str(n), "subject": f"task {n}", "blockedBy": ["1"] if n > 1 else []}).encode() for n in (1, 2, 3)]
    first, second, third = (parse_task(r, f"task_{n}.json") for n, r in zip((1, 2, 3), raw))
    # What they share is written as each alone would be.
    for task, data in zip((first, second, third), raw):
        assert dump_task(task) == dump_task(task_from_dict(json.loads(data), "x"))
        assert task == task_from_dict(json.loads(data), "x")
    assert second.blocked_by[0] is first.id  # one string for an id, however often it is named
    changed = draft_of(second)
    changed.labels.append("urgent")
    changed.files.append("src/a.py")
    changed.metadata["estimate"] = 60
    changed.blocked_by.append("3")
    changed.tool_calls.total = 4
    changed.status = Status.IN_PROGRESS
    assert (third.labels, third.files, third.metadata, third.tool_calls.total, third.status) == ([], [], {}, 0, "pending")
    assert (first.labels, second.labels, second.blocked_by, second.tool_calls.total) == ([], [], ["1"], 0)
    assert json.loads(dump_task(changed))["labels"] == ["urgent"] and changed.status == "in_progress"


def test_a_draft_copies_nested_metadata_and_unknown_fields_all_the_way_down() -> None:
    from datetime import UTC, datetime

    from board.model import draft_of, task_from_dict

    task = task_from_dict({
        "id": "1", "subject": "job",
        "metadata": {"plan": {"steps": [{"done": False, "notes": ["a"]}], "n": 1.5}, "flag": True, "none": None},
        "fromNewerBoard": [{"kept": {"deep": [1, 2]}}],
    }, "x")
    task.metadata["when"] = datetime(2026, 1, 1, tzinfo=UTC)  # set by code, not read from JSON
    task.metadata["tags"] = {"x", "y"}  # not JSON at all: copied by copy.deepcopy
    draft = draft_of(task)
    assert draft.metadata == task.metadata and draft.model_extra == task.model_extra
    draft.metadata["plan"]["steps"][0]["notes"].append("b")
    draft.metadata["plan"]["steps"][0]["done"] = True
    draft.metadata["tags"].add("z")
    assert draft.model_extra is not None
    draft.model_extra["fromNewerBoard"][0]["kept"]["deep"].append(3)
    assert task.metadata["plan"] == {"steps": [{"done": False, "notes": ["a"]}], "n": 1.5}
    assert task.metadata["tags"] == {"x", "y"}
    assert task.model_extra == {"fromNewerBoard": [{"kept": {"deep": [1, 2]}}]}


def test_a_task_copied_pickled_or_deep_copied_is_equal_and_independent() -> None:
    import copy
    import pickle

    task = parse_task(doc(labels=["a"], metadata={"k": [1]}, vendorField={"x": 1}, toolCalls={"total": 1, "ok": 1}), "f")
    for twin in (copy.deepcopy(task), pickle.loads(pickle.dumps(task)), task.model_copy()):
        assert twin == task and dump_task(twin) == dump_task(task) and twin is not task
    deep = copy.deepcopy(task)
    deep.metadata["k"].append(2)
    deep.model_extra["vendorField"]["x"] = 2
    deep.tool_calls.total = 5
    assert task.metadata == {"k": [1]} and task.model_extra["vendorField"] == {"x": 1} and task.tool_calls.total == 1
    moved = task.model_copy(update={"progress": 30})
    assert moved.progress == 30 and task.progress == 0 and moved != task


def test_unknown_fields_read_as_attributes_and_compare() -> None:
    task = parse_task(doc(vendorField="kept"), "f")
    assert task.vendorField == "kept" and task.model_extra == {"vendorField": "kept"}
    assert task != parse_task(doc(vendorField="other"), "f") and task == parse_task(doc(vendorField="kept"), "f")
    with pytest.raises(AttributeError):
        task.no_such_field  # noqa: B018


def test_a_task_checks_fields_given_by_name_or_on_disk_name_alike() -> None:
    from pydantic_core import ValidationError

    from board.model import Task

    by_name = Task(id="1", subject="s", blocked_by=["2", "2"], active_form="doing")
    by_alias = Task(id="1", subject="s", blockedBy=["2"], activeForm="doing")
    assert by_name == by_alias and by_name.blocked_by == ["2"]
    with pytest.raises(ValidationError) as refused:
        Task(id="1", subject="s", progress=101)
    assert refused.value.errors()[0]["loc"] == ("progress",)


def test_a_pydantic_model_can_hold_a_task() -> None:
    """The MCP server and other pydantic models may name a task as a field's type."""
    from pydantic import BaseModel

    from board.model import Task

    class Envelope(BaseModel):
        task: Task
        note: str = ""

    task = parse_task(doc(vendorField=1, priority="high"), "f")
    held = Envelope.model_validate({"task": json.loads(dump_task(task))})
    assert held.task == task and isinstance(held.task, Task)
    assert Envelope.model_validate_json(held.model_dump_json(by_alias=True)).task == task
    # ... and a tool's schema can be built from it (the MCP SDK does so for typed results).
    assert "subject" in Envelope.model_json_schema()["$defs"]["Task"]["properties"]


def test_an_unknown_field_set_on_a_task_is_written_back_as_one_read_is() -> None:
    task = parse_task(doc(), "f")
    task.reviewer = "ann"
    copied = task.model_copy(update={"subject": "changed", "ticket": 7})
    assert json.loads(dump_task(task))["reviewer"] == "ann"
    written = json.loads(dump_task(copied))
    assert (written["subject"], written["ticket"], written["reviewer"]) == ("changed", 7, "ann")
    assert "ticket" not in json.loads(dump_task(task))


def _valid_under(schema: dict, values: list) -> list[bool]:
    from pydantic_core import SchemaValidator, ValidationError

    validator = SchemaValidator(schema)
    answers = []
    for value in values:
        try:
            validator.validate_python(value)
            answers.append(True)
        except ValidationError:
            answers.append(False)
    return answers


def test_subjects_and_labels_are_valid_exactly_where_the_cores_patterns_said_so() -> None:
    """The subject and labels were checked by patterns in pydantic's core (Rust's ``\\s``: Unicode
    White_Space); they are checked by functions now, and every file valid before is valid still,
    and nothing else."""
    import random

    from board.model import Task

    rng = random.Random(7)
    # Every character Rust or Python counts as space, and their neighbours.
    spaces = [chr(c) for c in range(0x3001) if chr(c).isspace()] + ["\u180e", "\u200b", "\ufeff", "\x1c", "\x1f", "\x85", "\u2028"]
    alphabet = spaces + list("ab,é✓_-") + ["\x00", "\x7f", "\ud800", "\udfff"]  # lone surrogates: not Unicode text
    samples = ["", "a", " a ", "\u3000", "a\nb", "a\rb", "\x1c", "x" * 40, "x" * 41, "x" * 200, "x" * 201, "a,b", "ünïcödé"]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(3000)]
    old_subject = {"type": "str", "min_length": 1, "max_length": 200, "pattern": r"^[^\r\n]*\S[^\r\n]*$"}
    old_label = {"type": "str", "pattern": r"^[^\s,]{1,40}$"}
    for old, check in ((old_subject, lambda s: {"id": "1", "subject": s}), (old_label, lambda s: {"id": "1", "subject": "x", "labels": [s]})):
        expected = _valid_under(old, samples)
        got = []
        for sample in samples:
            try:
                Task.model_validate(check(sample))
                got.append(True)
            except Exception:
                got.append(False)
        differing = [repr(s) for s, e, g in zip(samples, expected, got) if e != g]
        assert not differing, differing[:10]
        assert 0 < sum(expected) < len(samples)  # both kinds are among the samples


def test_a_bad_label_in_a_file_is_named_as_a_label() -> None:
    with pytest.raises(InvalidTaskFile, match="'two words' is not a valid label"):
        parse_task(json.dumps({"id": "1", "subject": "x", "labels": ["two words"]}).encode(), "task_1.json")
    with pytest.raises(InvalidTaskFile, match="field 'subject': must be a single line that is not blank"):
        parse_task(json.dumps({"id": "1", "subject": "a\nb"}).encode(), "task_1.json")


def test_a_label_that_is_not_unicode_text_makes_its_file_invalid_not_the_board_unreadable(tmp_path) -> None:
    """JSON can spell a lone surrogate (``"\\ud800"``): such a label is refused as the file's
    one line, as the patterns refused it, and every other command goes on."""
    from board.store import Store

    store = Store.open(tmp_path, create=True)
    store.create("fine")
    store.create("broken")
    for labels in (["a\\ud800"], ["a b\\ud800"], ["\\ud800" * 41]):
        (tmp_path / ".tasks" / "task_2.json").write_text('{"id": "2", "subject": "broken", "labels": ["' + labels[0] + '"]}')
        again = Store.open(tmp_path)
        assert set(again.tasks) == {"1"} and len(again.invalid) == 1, labels
        assert "task_2.json" in next(iter(again.invalid))
