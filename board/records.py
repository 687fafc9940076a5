"""Named tuples as ``typing.NamedTuple`` declares them, made without its price at import.

Every module here is written with ``from __future__ import annotations``, so a class
``X(typing.NamedTuple)`` hands typing each field's type as text, and typing compiles every one
of them (``ForwardRef``); ``collections.namedtuple`` then compiles its ``__new__`` from source.
A record cost a command 0.1–0.15 ms to declare, and the first compile in a process 0.9 ms
more: a command about one task declared eight, 1.9 ms of its start. The records here are the
same tuples (fields, defaults, methods, ``_replace``, ``_asdict``, pickling, equality) built
from the annotations' names alone, with nothing compiled.

Type checkers see ``typing.NamedTuple`` itself. Standard library only: ``board hook`` may
import what imports this.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple as NamedTuple
else:
    from _collections import _tuplegetter  # the field accessor collections.namedtuple uses

    class _RecordType(type):
        """Builds each subclass of ``NamedTuple`` into a tuple with named fields."""

        def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> type:
            if namespace.get("__module__") == __name__ and name == "NamedTuple":
                return super().__new__(mcls, name, (tuple,), namespace)
            if any(isinstance(base, _RecordType) and base is not NamedTuple for base in bases):
                return super().__new__(mcls, name, bases, namespace)  # a record's subclass keeps its fields
            fields = tuple(namespace.get("__annotations__", {}))
            defaults: dict[str, Any] = {}
            for field in fields:
                if field in namespace:
                    defaults[field] = namespace.pop(field)
                elif defaults:
                    raise TypeError(f"non-default field {field!r} follows a field with a default in {name}")
            for index, field in enumerate(fields):
                if field.startswith("_"):
                    raise ValueError(f"field names cannot start with an underscore: {field!r}")
                namespace[field] = _tuplegetter(index, f"Alias for field number {index}")
            namespace.setdefault("__doc__", f"{name}({', '.join(fields)})")
            namespace.update(__slots__=(), _fields=fields, _field_defaults=defaults, __match_args__=fields)
            return super().__new__(mcls, name, bases, namespace)

    class NamedTuple(tuple, metaclass=_RecordType):
        """The base of a record: ``class Point(NamedTuple): x: int; y: int = 0``."""

        # Without annotations: ``typing.get_type_hints`` of a record reads its bases' too.
        __slots__ = ()
        _fields = ()
        _field_defaults = {}  # noqa: RUF012

        def __new__(cls, /, *args: Any, **named: Any) -> Any:  # ``/``: a field may be named ``cls``
            fields = cls._fields
            if named or len(args) != len(fields):
                args = cls._bound(args, named)
            return tuple.__new__(cls, args)

        @classmethod
        def _bound(cls, args: tuple[Any, ...], named: dict[str, Any]) -> tuple[Any, ...]:
            """The values of every field, in order, from arguments given as a call would give them."""
            fields, defaults = cls._fields, cls._field_defaults
            if len(args) > len(fields):
                raise TypeError(f"{cls.__name__}() takes {len(fields)} positional arguments but {len(args)} were given")
            values = list(args)
            for field in fields[len(args):]:
                if field in named:
                    values.append(named.pop(field))
                elif field in defaults:
                    values.append(defaults[field])
                else:
                    raise TypeError(f"{cls.__name__}() missing required argument: {field!r}")
            if named:
                given = next(iter(named))
                raise TypeError(f"{cls.__name__}() got {'multiple values for' if given in fields else 'an unexpected keyword'} argument {given!r}")
            return tuple(values)

        @classmethod
        def _make(cls, iterable: Any) -> Any:
            values = tuple(iterable)
            if len(values) != len(cls._fields):
                raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(values)}")
            return tuple.__new__(cls, values)

        def _replace(self, **changes: Any) -> Any:
            values = [changes.pop(field, value) for field, value in zip(self._fields, self)]
            if changes:
                raise ValueError(f"Got unexpected field names: {list(changes)!r}")
            return tuple.__new__(type(self), values)

        def _asdict(self) -> dict[str, Any]:
            return dict(zip(self._fields, self))

        def __repr__(self) -> str:
            return f"{type(self).__name__}({', '.join(f'{field}={value!r}' for field, value in zip(self._fields, self))})"

        def __getnewargs__(self) -> tuple[Any, ...]:
            return tuple(self)
