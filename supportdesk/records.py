"""Records: stdlib dataclasses that pydantic validates and dumps, imported only when it does.

The desk's records (stored items, a session's row, the desk file's tables) are plain
dataclasses, so importing them, constructing them and reading a session's first page never
import pydantic: that import alone was about 75 ms of wall time with a cold page cache, the
largest single cost on the way to the TUI's first page. pydantic still judges every record
that comes from outside (a stored row the exact reader would not take, a request body, a desk
file): it validates stdlib dataclasses from their annotations, honours the metadata below
(`Annotated[int, Bounds(ge=0)]`, `Annotated[str, After(check)]`) and a class's
`__pydantic_config__`, and builds each validator the first time it is asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, TypeAdapter
    from pydantic_core import CoreSchema

T = TypeVar("T")

# What a record's class sets as `__pydantic_config__`: a field no record declares is refused,
# not dropped (a plain dict, as pydantic's ConfigDict is a TypedDict; no import needed).
FORBID_EXTRA: dict[str, Any] = {"extra": "forbid"}


_adapters: dict[Any, TypeAdapter[Any]] = {}


def adapter(tp: Any) -> TypeAdapter[Any]:
    """pydantic's validator and serializer for `tp`, built on first use and kept."""
    found = _adapters.get(tp)
    if found is None:
        from pydantic import TypeAdapter

        found = _adapters[tp] = TypeAdapter(tp)
    return found


def validate(tp: type[T], data: Any) -> T:
    """`data` as a `tp`, validated (raises pydantic's ValidationError)."""
    validated: T = adapter(tp).validate_python(data)
    return validated


def dump(record: Any, *, exclude: set[str] | None = None) -> dict[str, Any]:
    """`record` as JSON-ready data (datetimes as ISO text)."""
    dumped: dict[str, Any] = adapter(type(record)).dump_python(record, mode="json", exclude=exclude)
    return dumped


class SharedMethods:
    """One `__eq__` and `__repr__` for a family of dataclasses declared eq=False, repr=False
    (items, the desk file's tables). Python 3.11 builds each generated method with `exec`; for
    each class of a family, that was start-up time spent on the same two methods. Equal: the same
    class with equal fields, as a dataclass's own; unhashable, as a mutable one's."""

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in vars(self).items())
        return f"{type(self).__name__}({fields})"


# Field metadata that pydantic reads when it builds a validator, and that costs nothing before:
# neither imports pydantic (nor annotated_types, whose import builds a dozen dataclasses).


class Bounds:
    """`Annotated[int, Bounds(ge=0)]`: pydantic's constraints for a field (ge, gt, le, lt,
    min_length ...), with its own checks and words ("Input should be greater than or equal to 0")."""

    def __init__(self, **constraints: Any):
        self.constraints = constraints

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic import Field

        return handler.generate_schema(Annotated[source, Field(**self.constraints)])


class After:
    """`Annotated[str, After(check)]`: `check` runs on the validated value, as a field validator
    would; it returns the value, or raises ValueError saying what would be valid (pydantic
    reports it as "Value error, ...")."""

    def __init__(self, check: Callable[[Any], Any]):
        self.check = check

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(self.check, handler(source))
