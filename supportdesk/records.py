"""Records: stdlib dataclasses that pydantic validates and dumps, imported only when it does.

The desk's records (stored items, a session's row, the desk file's tables) are plain
dataclasses, so importing them, constructing them and reading a session's first page never
import pydantic: that import alone was about 75 ms of wall time with a cold page cache, the
largest single cost on the way to the TUI's first page. pydantic still judges every record
that comes from outside (a stored row the exact reader would not take, a request body, a desk
file): it validates stdlib dataclasses from their annotations, honours `annotated_types`
constraints (`Annotated[int, Ge(0)]`) and a class's `__pydantic_config__`, and builds each
validator the first time it is asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import TypeAdapter

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


def dump(record: Any, *, tp: Any = None, exclude: set[str] | None = None) -> dict[str, Any]:
    """`record` as JSON-ready data (datetimes as ISO text); `tp`: the type it is validated as."""
    dumped: dict[str, Any] = adapter(tp or type(record)).dump_python(record, mode="json", exclude=exclude)
    return dumped


class After:
    """An `Annotated` check run after a field's type is validated: `fn` returns the value, or
    raises ValueError with what would be valid (pydantic reports it as 'Value error, ...')."""

    def __init__(self, fn: Callable[[Any], Any]):
        self.fn = fn

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(self.fn, handler(source))
