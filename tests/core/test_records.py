"""board's named tuples (``board.records``) behave as ``typing.NamedTuple``'s, built without
compiling anything."""

from __future__ import annotations

import copy
import pickle
import typing
from collections.abc import Callable
from typing import Any

import pytest

from board.records import NamedTuple


class Ours(NamedTuple):
    x: int
    y: str = "d"
    z: list[int] | None = None

    def twice(self) -> int:
        return self.x * 2


class Theirs(typing.NamedTuple):
    x: int
    y: str = "d"
    z: list[int] | None = None

    def twice(self) -> int:
        return self.x * 2


def outcome(make: Callable[[], Any]) -> Any:
    """What ``make`` gives, or the kind of error it raises (messages name the class)."""
    try:
        return make()
    except Exception as error:  # noqa: BLE001
        return type(error).__name__


@pytest.mark.parametrize(
    "use",
    [
        lambda c: c(1), lambda c: c(1, "e"), lambda c: c(x=2, y="f"), lambda c: c(3, z=[1]), lambda c: c(1, "e", [2]),
        lambda c: c(), lambda c: c(1, 2, 3, 4), lambda c: c(1, x=2), lambda c: c(1, q=2), lambda c: c(y="only"),
        lambda c: c(1).twice(), lambda c: c(1)._replace(y="z"), lambda c: c(1)._replace(q=1), lambda c: c(1)._asdict(),
        lambda c: c._fields, lambda c: c._field_defaults, lambda c: c.__match_args__, lambda c: c._make([5, "h", None]),
        lambda c: c._make([5]), lambda c: c(1) == (1, "d", None), lambda c: hash(c(1)) == hash((1, "d", None)),
        lambda c: tuple(c(7, "s")), lambda c: c(7, "s")[1], lambda c: c(7)[-1], lambda c: isinstance(c(1), tuple),
        lambda c: pickle.loads(pickle.dumps(c(1, "p", [3]))), lambda c: copy.deepcopy(c(1, "p", [3])), lambda c: copy.copy(c(1)),
        lambda c: hasattr(c(1), "__dict__"), lambda c: setattr(c(1), "x", 5), lambda c: sorted([c(2), c(1, "b"), c(1, "a")]),
        lambda c: repr(c(1, "r")).split("(", 1)[1], lambda c: c.x.__doc__,
    ],
)
def test_a_record_behaves_as_typings_named_tuple(use: Callable[[type], Any]) -> None:
    ours, theirs = outcome(lambda: use(Ours)), outcome(lambda: use(Theirs))
    if isinstance(theirs, tuple) and type(theirs) is Theirs:
        assert type(ours) is Ours and tuple(ours) == tuple(theirs)
    else:
        assert ours == theirs


def test_a_record_matches_a_pattern_by_its_fields() -> None:
    match Ours(2, "f"):
        case Ours(x, y):
            assert (x, y) == (2, "f")
        case _:
            pytest.fail("no match")


def test_a_field_without_a_default_after_one_with_a_default_is_refused_as_typing_refuses_it() -> None:
    with pytest.raises(TypeError):

        class Wrong(NamedTuple):
            x: int = 0
            y: str


def test_a_records_subclass_keeps_its_fields_as_typings_does() -> None:
    class Sub(Ours):
        def thrice(self) -> int:
            return self.x * 3

    class TheirSub(Theirs):
        def thrice(self) -> int:
            return self.x * 3

    for sub in (Sub, TheirSub):
        made = sub(2, "s")
        assert (made.thrice(), made.y, sub._fields) == (6, "s", ("x", "y", "z"))


def test_a_field_may_be_named_cls_and_type_hints_resolve_as_typings() -> None:
    class Odd(NamedTuple):
        cls: str
        self: int = 0

    assert Odd(cls="a", self=2) == ("a", 2) and Odd("b").cls == "b"
    assert typing.get_type_hints(Ours) == typing.get_type_hints(Theirs) == {"x": int, "y": str, "z": list[int] | None}
    assert (Ours.__doc__, Theirs.__doc__) == ("Ours(x, y, z)", "Theirs(x, y, z)")


def test_a_document_class_is_held_by_pydantics_type_adapter() -> None:
    """pydantic's ``TypeAdapter`` reads a class's validator from its ``__dict__``, where a
    document's is made on first use."""
    pydantic = pytest.importorskip("pydantic")
    from board.model import Budget, Task

    adapter = pydantic.TypeAdapter(Task)
    task = adapter.validate_python({"id": "1", "subject": "kept"})
    assert (task.subject, adapter.dump_python(task, by_alias=True)["activeForm"]) == ("kept", "")
    assert pydantic.TypeAdapter(Budget).validate_python({"tokens": 5}).tokens == 5
