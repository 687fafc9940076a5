"""Typed JSON documents (a task, its lease, its tool calls), checked and written by pydantic's core.

The task model is what every command reads first, and a hook or a script runs a command many
times a minute. pydantic's ``BaseModel`` costs 80 ms of import on a small machine before a line
of board runs, most of the time of a one-shot command; its core, the validator and serializer
``BaseModel`` itself hands its work to, costs a quarter of that. So the documents are declared
here with the core's own schema, and behave as the ``BaseModel``s they were for what board uses:
validation by field name or camelCase alias, unknown fields kept and written back, ``model_*``
methods, the same ``ValidationError``. Settings, themes and agent records are documents too,
so the dashboard starts without ``BaseModel`` as well; the MCP server keeps pydantic's models
(its SDK is built on them), which can hold a document as a field.

A document class lists its fields as ``name: type = field(schema, ...)``: the annotation is for
readers and type checkers, the schema is what the core checks. Keywords on the class statement
set how the whole document is read (``Document.__init_subclass__``); subclasses inherit them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Self

from board import document_schema as core_schema
from board.document_schema import SchemaSerializer, SchemaValidator

__all__ = ["Document", "field", "constrained_str", "datetime_schema", "enum_schema", "list_of", "optional"]

_REQUIRED = object()
if TYPE_CHECKING:  # a bound named by text is compiled at run time (``ForwardRef``)
    from typing import TypeVar

    _D = TypeVar("_D", bound="Document")


class _Field:
    """One field's schema and default, as declared in a document class (see ``field``)."""

    __slots__ = ("schema", "default", "default_factory", "exclude", "name", "alias")

    def __init__(self, schema: core_schema.CoreSchema, default: Any, default_factory: Any, exclude: bool) -> None:
        self.schema = schema
        self.default = default
        self.default_factory = default_factory
        self.exclude = exclude
        self.name = ""
        self.alias = ""

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED and self.default_factory is None

    def core(self) -> Any:
        schema = self.schema
        if self.default_factory is not None:
            schema = core_schema.with_default_schema(schema, default_factory=self.default_factory)
        elif self.default is not _REQUIRED:
            schema = core_schema.with_default_schema(schema, default=self.default)
        return core_schema.model_field(
            schema, validation_alias=self.alias, serialization_alias=self.alias, serialization_exclude=self.exclude or None
        )


def field(schema: core_schema.CoreSchema, *, default: Any = _REQUIRED, default_factory: Any = None, exclude: bool = False) -> Any:
    """A field of a document: its schema, its default (a value, or a function that makes one),
    and whether it stays out of what is written (``exclude``)."""
    return _Field(schema, default, default_factory, exclude)


def camel(name: str) -> str:
    """``active_form`` → ``activeForm``: field names as they are on disk."""
    first, *rest = name.split("_")
    return first + "".join(part.capitalize() for part in rest)


def constrained_str(**constraints: Any) -> core_schema.CoreSchema:
    return core_schema.str_schema(**constraints)


def datetime_schema() -> core_schema.CoreSchema:
    return core_schema.datetime_schema(microseconds_precision="truncate")


def enum_schema(enum: Any) -> core_schema.CoreSchema:
    """A ``StrEnum``: read from its value, written as its value."""
    return core_schema.enum_schema(enum, list(enum.__members__.values()), sub_type="str")


def checked(schema: core_schema.CoreSchema, after: Any) -> core_schema.CoreSchema:
    """``schema``, then ``after``: a function of the value read, which returns it or raises
    ValueError."""
    return core_schema.no_info_after_validator_function(after, schema)


def list_of(items: core_schema.CoreSchema, *, after: Any = None) -> core_schema.CoreSchema:
    """A list, with ``after`` (a function of the list) applied once it is checked."""
    schema = core_schema.list_schema(items)
    return checked(schema, after) if after else schema


def optional(schema: core_schema.CoreSchema) -> core_schema.CoreSchema:
    return core_schema.nullable_schema(schema)


class _MadeOnFirstUse:
    """A document class's validator or serializer, made from its schema the first time it is
    asked for, and from then on the class's own attribute."""

    def __init__(self, owner: type, name: str, make: Any, schema: core_schema.CoreSchema, config: Any) -> None:
        self.owner, self.name, self.make, self.schema, self.config = owner, name, make, schema, config

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        return self.made()

    def made(self) -> Any:
        current = self.owner.__dict__.get(self.name)
        if current is not self:
            return current  # made already, through another reference to this stand-in
        made = self.make(self.schema, self.config)
        setattr(self.owner, self.name, made)
        return made

    def __getattr__(self, name: str) -> Any:
        # Read from the class's ``__dict__`` itself, as pydantic's ``TypeAdapter`` does, it
        # stands in for what it makes.
        return getattr(self.made(), name)


class Document:
    """A JSON object with typed fields; unknown fields are kept in ``model_extra``.

    Instances hold their fields in ``__dict__`` as ``BaseModel``'s do (the core writes them
    there), so reading and setting a field is a plain attribute access. Assignments are not
    checked, as they were not before: writers build a document from data, which is.
    """

    # The same four slots as pydantic's BaseModel: the core fills them.
    __slots__ = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")

    model_fields: ClassVar[dict[str, _Field]]
    #: What pydantic's JSON schema of a model holding a document reads of it.
    model_config: ClassVar[dict[str, Any]] = {"extra": "allow"}
    __pydantic_core_schema__: ClassVar[core_schema.CoreSchema]
    __pydantic_validator__: ClassVar[SchemaValidator]
    __pydantic_serializer__: ClassVar[SchemaSerializer]

    #: How the class reads its input (the keywords of ``__init_subclass__``).
    _reading: ClassVar[dict[str, Any]] = {"extra": "allow", "camel_case": True, "numbers_as_str": True}

    def __init_subclass__(cls, *, extra: str | None = None, camel_case: bool | None = None, numbers_as_str: bool | None = None, **kwargs: Any) -> None:
        """Build the class's validator and serializer from its fields.

        - ``extra``: ``"allow"`` keeps unknown fields (the default: a task written by a newer
          board or another tool loses nothing); ``"forbid"`` refuses them (a setting misspelt).
        - ``camel_case``: each field is also read and written by its camelCase name, as on disk
          (default); False: by its own name only (``board.toml``'s keys are snake_case).
        - ``numbers_as_str``: a number where text is declared is read as that text (default:
          integer ids from seed 001); False refuses it.
        """
        super().__init_subclass__(**kwargs)
        given = {"extra": extra, "camel_case": camel_case, "numbers_as_str": numbers_as_str}
        reading = cls._reading = {**cls._reading, **{key: value for key, value in given.items() if value is not None}}
        cls.model_config = {"extra": reading["extra"]}
        fields: dict[str, _Field] = {}
        for name, value in list(vars(cls).items()):
            if isinstance(value, _Field):
                value.name, value.alias = name, camel(name) if reading["camel_case"] else name
                fields[name] = value
                delattr(cls, name)  # the instance's own value, never a class attribute, answers
        cls.model_fields = fields
        config = core_schema.core_config(
            title=cls.__name__,
            extra_fields_behavior=reading["extra"],
            validate_by_alias=True,
            validate_by_name=True,
            coerce_numbers_to_str=reading["numbers_as_str"],
        )
        schema = core_schema.model_schema(
            cls,
            core_schema.model_fields_schema({name: spec.core() for name, spec in fields.items()}, model_name=cls.__name__),
            config=config,
            ref=f"{cls.__module__}.{cls.__qualname__}",
        )
        cls.__pydantic_core_schema__ = schema
        # Made when first used: a task's own validator and serializer hold its lease's, tool
        # calls' and budget's schemas, so a command that only reads and writes tasks never makes
        # theirs (0.2 ms of its start).
        cls.__pydantic_validator__ = _MadeOnFirstUse(cls, "__pydantic_validator__", SchemaValidator, schema, config)  # type: ignore[assignment]
        cls.__pydantic_serializer__ = _MadeOnFirstUse(cls, "__pydantic_serializer__", SchemaSerializer, schema, config)  # type: ignore[assignment]

    def __init__(self, **data: Any) -> None:
        type(self).__pydantic_validator__.validate_python(data, self_instance=self)

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        return cls.__pydantic_validator__.validate_python(data)  # type: ignore[no-any-return]

    @classmethod
    def model_validate_json(cls, raw: str | bytes) -> Self:
        return cls.__pydantic_validator__.validate_json(raw)  # type: ignore[no-any-return]

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
        """What lets a pydantic model or ``TypeAdapter`` hold a document."""
        return cls.__pydantic_core_schema__

    def model_dump(self, *, mode: str = "python", by_alias: bool = False) -> dict[str, Any]:
        return self.__pydantic_serializer__.to_python(self, mode=mode, by_alias=by_alias)  # type: ignore[no-any-return]

    def model_dump_json(self, *, by_alias: bool = False, indent: int | None = None) -> str:
        return self.__pydantic_serializer__.to_json(self, indent=indent, by_alias=by_alias).decode()

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Self:
        """A shallow copy: the same values, in a new document (and new dicts of them), with the
        fields in ``update`` set (unchecked, as an assignment is; an undeclared one is kept as
        an unknown field)."""
        extra = self.__pydantic_extra__
        extra = extra.copy() if extra is not None else None
        values = self.__dict__.copy()
        if update:
            declared = type(self).model_fields
            for name, value in update.items():
                if name in declared or extra is None:
                    values[name] = value
                else:
                    extra[name] = value
        return _made(type(self), values, extra)

    @property
    def model_extra(self) -> dict[str, Any] | None:
        """The fields the document has that its class does not declare, kept as they were read."""
        return self.__pydantic_extra__

    def __getattr__(self, name: str) -> Any:
        # Only reached when ``__dict__`` lacks ``name``: an unknown field read as an attribute.
        extra = object.__getattribute__(self, "__pydantic_extra__") if name != "__pydantic_extra__" else None
        if extra and name in extra:
            return extra[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        # A field not declared is an unknown field, kept and written back as one read is.
        if name in type(self).model_fields or name.startswith("__"):
            object.__setattr__(self, name, value)
            return
        extra = self.__pydantic_extra__
        if extra is None:
            raise AttributeError(f"{type(self).__name__!r} object has no field {name!r}")
        extra[name] = value

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__ and (self.__pydantic_extra__ or None) == (other.__pydantic_extra__ or None)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        values = [f"{name}={value!r}" for name, value in self.__dict__.items()]
        values += [f"{name}={value!r}" for name, value in (self.__pydantic_extra__ or {}).items()]
        return f"{type(self).__name__}({', '.join(values)})"

    def __copy__(self) -> Self:
        return self.model_copy()

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        from copy import deepcopy

        return _made(type(self), deepcopy(self.__dict__, memo), deepcopy(self.__pydantic_extra__, memo))

    def __reduce__(self) -> Any:
        return _rebuilt, (type(self), self.__dict__, self.__pydantic_extra__)


def _rebuilt(cls: type[Document], values: dict[str, Any], extra: dict[str, Any] | None) -> Document:
    """A pickled document, unpickled as it was (no validation: it was checked when made)."""
    return _made(cls, dict(values), extra)


def _made(cls: type[_D], values: dict[str, Any], extra: dict[str, Any] | None) -> _D:
    """A document of ``cls`` holding ``values`` and ``extra`` as they are, unchecked: the four
    slots filled as the core fills them."""
    document = object.__new__(cls)
    object.__setattr__(document, "__dict__", values)
    object.__setattr__(document, "__pydantic_extra__", extra)
    object.__setattr__(document, "__pydantic_fields_set__", set(values))
    object.__setattr__(document, "__pydantic_private__", None)
    return document
