"""The schemas board builds for pydantic's core are the ones ``pydantic_core.core_schema``
builds from the same arguments (board builds them itself to start without that module)."""

from __future__ import annotations

import enum
from typing import Any

import pytest
from pydantic_core import core_schema

import board.document_schema as ours


class Colour(enum.StrEnum):
    RED = "red"


def _after(value: Any) -> Any:
    return value


def _no_list() -> list[Any]:
    return []


CASES: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("str_schema", (), {}),
    ("str_schema", (), {"min_length": 16, "max_length": 200, "pattern": r"^[a-z]+$"}),
    ("int_schema", (), {"ge": 0}),
    ("int_schema", (), {"ge": 1, "le": 10}),
    ("float_schema", (), {"gt": 0, "allow_inf_nan": False}),
    ("bool_schema", (), {}),
    ("any_schema", (), {}),
    ("literal_schema", (["a", "b"],), {}),
    ("datetime_schema", (), {"microseconds_precision": "truncate"}),
    ("enum_schema", (Colour, list(Colour.__members__.values())), {"sub_type": "str"}),
    ("list_schema", (core_schema.str_schema(),), {}),
    ("dict_schema", (core_schema.str_schema(), core_schema.any_schema()), {}),
    ("nullable_schema", (core_schema.int_schema(),), {}),
    ("no_info_after_validator_function", (_after, core_schema.str_schema()), {}),
    ("with_default_schema", (core_schema.int_schema(),), {"default": 0}),
    ("with_default_schema", (core_schema.int_schema(),), {"default": None}),
    ("with_default_schema", (core_schema.list_schema(),), {"default_factory": _no_list}),
    ("model_field", (core_schema.int_schema(),), {"validation_alias": "lastAt", "serialization_alias": "lastAt"}),
    ("model_field", (core_schema.int_schema(),), {"validation_alias": "x", "serialization_alias": "x", "serialization_exclude": True}),
    ("model_fields_schema", ({"x": core_schema.model_field(core_schema.int_schema())},), {"model_name": "Thing"}),
    ("model_schema", (Colour, core_schema.model_fields_schema({})), {"config": {"title": "Thing"}, "ref": "tests.Thing"}),
]


@pytest.mark.parametrize(("name", "args", "keywords"), CASES, ids=[f"{name}-{n}" for n, (name, _, _) in enumerate(CASES)])
def test_each_schema_is_the_one_pydantic_core_builds(name: str, args: tuple[Any, ...], keywords: dict[str, Any]) -> None:
    assert getattr(ours, name)(*args, **keywords) == getattr(core_schema, name)(*args, **keywords)


def test_the_core_config_is_the_one_pydantic_core_builds() -> None:
    settings = {"title": "Task", "extra_fields_behavior": "allow", "validate_by_alias": True, "coerce_numbers_to_str": False}
    assert ours.core_config(**settings) == core_schema.CoreConfig(**settings)  # type: ignore[typeddict-item]


def test_the_core_board_loads_is_the_one_pydantic_imports() -> None:
    """One module, whichever came first: an error the core raises is caught by either name."""
    import pydantic_core

    assert ours.ValidationError is pydantic_core.ValidationError
    assert ours.SchemaValidator is pydantic_core.SchemaValidator
