"""pydantic's core without its Python wrapper, and the schemas documents are declared with.

A command about one task spends most of its time importing before it runs a line. Of
``import pydantic_core`` (about 17 ms here), the compiled core itself is 2 ms: the rest is its
package's typing helpers (``core_schema``'s hundreds of ``TypedDict``s, ``typing_extensions``,
``inspect``), there for type checkers and for building schemas. A schema is a plain dict, so
board builds the few kinds it uses here, key for key as ``pydantic_core.core_schema`` builds them
(``tests/core/test_document_schema.py`` holds them side by side), and loads the compiled core
under its own name without running the package's ``__init__``. Anything that imports
``pydantic_core`` later (pydantic, for the MCP server) finds this same module there, so its
classes and errors are the ones board uses.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

__all__ = [
    "SchemaSerializer",
    "SchemaValidator",
    "ValidationError",
    "any_schema",
    "bool_schema",
    "core_config",
    "datetime_schema",
    "dict_schema",
    "enum_schema",
    "float_schema",
    "int_schema",
    "list_schema",
    "literal_schema",
    "model_field",
    "model_fields_schema",
    "model_schema",
    "no_info_after_validator_function",
    "nullable_schema",
    "str_schema",
    "with_default_schema",
]

_COMPILED = "pydantic_core._pydantic_core"


def _compiled_core() -> Any:
    """The compiled module of pydantic's core: the one already imported, else loaded from the
    package's folder without importing the package (else, should that fail, imported whole)."""
    loaded = sys.modules.get(_COMPILED)
    if loaded is not None:
        return loaded
    from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, FileFinder, PathFinder
    from importlib.util import module_from_spec

    package = PathFinder.find_spec("pydantic_core") if "pydantic_core" not in sys.modules else None
    for folder in (package.submodule_search_locations or []) if package is not None else []:
        spec = FileFinder(folder, (ExtensionFileLoader, EXTENSION_SUFFIXES)).find_spec(_COMPILED)
        if spec is not None and spec.loader is not None:
            module = module_from_spec(spec)
            sys.modules[_COMPILED] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[_COMPILED]
                raise
            return module
    import pydantic_core._pydantic_core

    return pydantic_core._pydantic_core


if TYPE_CHECKING:
    from pydantic_core import SchemaSerializer, SchemaValidator, ValidationError
    from pydantic_core.core_schema import CoreConfig, CoreSchema
else:
    _core = _compiled_core()
    SchemaSerializer = _core.SchemaSerializer
    SchemaValidator = _core.SchemaValidator
    ValidationError = _core.ValidationError
    CoreConfig = CoreSchema = dict


def _schema(kind: str, **keys: Any) -> Any:
    """A schema of ``kind`` with the keys given a value, as ``core_schema`` leaves out those
    given None."""
    return {"type": kind, **{key: value for key, value in keys.items() if value is not None}}


def str_schema(**constraints: Any) -> CoreSchema:
    """Text; ``constraints`` as ``core_schema.str_schema`` takes them (``pattern``, ``max_length``...)."""
    return _schema("str", **constraints)  # type: ignore[no-any-return]


def int_schema(**constraints: Any) -> CoreSchema:
    return _schema("int", **constraints)  # type: ignore[no-any-return]


def float_schema(**constraints: Any) -> CoreSchema:
    return _schema("float", **constraints)  # type: ignore[no-any-return]


def bool_schema() -> CoreSchema:
    return _schema("bool")  # type: ignore[no-any-return]


def any_schema() -> CoreSchema:
    return _schema("any")  # type: ignore[no-any-return]


def literal_schema(expected: list[Any]) -> CoreSchema:
    return _schema("literal", expected=expected)  # type: ignore[no-any-return]


def datetime_schema(*, microseconds_precision: str = "truncate") -> CoreSchema:
    return _schema("datetime", microseconds_precision=microseconds_precision)  # type: ignore[no-any-return]


def enum_schema(cls: Any, members: list[Any], *, sub_type: str | None = None) -> CoreSchema:
    return _schema("enum", cls=cls, members=members, sub_type=sub_type)  # type: ignore[no-any-return]


def list_schema(items_schema: CoreSchema | None = None) -> CoreSchema:
    return _schema("list", items_schema=items_schema)  # type: ignore[no-any-return]


def dict_schema(keys_schema: CoreSchema | None = None, values_schema: CoreSchema | None = None) -> CoreSchema:
    return _schema("dict", keys_schema=keys_schema, values_schema=values_schema)  # type: ignore[no-any-return]


def nullable_schema(schema: CoreSchema) -> CoreSchema:
    return _schema("nullable", schema=schema)  # type: ignore[no-any-return]


def no_info_after_validator_function(function: Any, schema: CoreSchema) -> CoreSchema:
    return _schema("function-after", function={"type": "no-info", "function": function}, schema=schema)  # type: ignore[no-any-return]


_NO_DEFAULT = object()


def with_default_schema(schema: CoreSchema, *, default: Any = _NO_DEFAULT, default_factory: Any = None) -> CoreSchema:
    made = _schema("default", schema=schema, default_factory=default_factory)
    if default is not _NO_DEFAULT:
        made["default"] = default  # None too: a default of None is a default
    return made  # type: ignore[no-any-return]


def model_field(
    schema: CoreSchema, *, validation_alias: str | None = None, serialization_alias: str | None = None, serialization_exclude: bool | None = None
) -> Any:
    return _schema(
        "model-field",
        schema=schema,
        validation_alias=validation_alias,
        serialization_alias=serialization_alias,
        serialization_exclude=serialization_exclude,
    )


def model_fields_schema(fields: dict[str, Any], *, model_name: str | None = None) -> CoreSchema:
    return _schema("model-fields", fields=fields, model_name=model_name)  # type: ignore[no-any-return]


def model_schema(cls: type[Any], schema: CoreSchema, *, config: CoreConfig | None = None, ref: str | None = None) -> CoreSchema:
    return _schema("model", cls=cls, schema=schema, config=config, ref=ref)  # type: ignore[no-any-return]


def core_config(**settings: Any) -> CoreConfig:
    """The core's settings for a schema (``pydantic_core.core_schema.CoreConfig``'s keys)."""
    return settings  # type: ignore[return-value]
