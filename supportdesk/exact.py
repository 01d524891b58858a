"""Building a record from data that already has exactly the types it declares.

Importing pydantic and building its validator for a record (`supportdesk.records`) cost more
at start-up than reading and drawing a session's first page (and the first build scans the
installed packages for pydantic plug-ins). The rows a store reads back were validated when they
were written, so a row whose every value already has exactly the type its record declares is
constructed without the validator; anything else (a missing or extra field, a string where a
number belongs, an odd timestamp) returns None and the caller validates it, which raises as it
always has. The checks are derived from the records' own annotations: there is no second
description of a record to drift from the first.

No I/O and nothing of the desk here: `items.py` (stored items) and the stores (`SessionInfo`)
use it on the path to the first page.
"""

from __future__ import annotations

import dataclasses
import re
import types
from collections.abc import Callable
from datetime import datetime
from functools import cache
from typing import Any, Literal, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from supportdesk.records import validate

M = TypeVar("M")

# The ISO 8601 shapes `datetime.fromisoformat` and pydantic read alike (what the stores write).
_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)?")
UNCHANGED = object()  # a value the model keeps exactly as given
REJECT = object()  # a value only the validator may judge
Check = Callable[[Any], Any]  # a value -> the field's value, UNCHANGED or REJECT


def _as_time(value: Any) -> Any:
    if type(value) is datetime:
        return UNCHANGED if value.tzinfo is not None else REJECT
    if type(value) is str and _ISO_TIME.fullmatch(value):
        return datetime.fromisoformat(value)
    return REJECT


def field_check(annotation: Any) -> Check | None:
    """How a value is taken as-is for `annotation`; None: this type is left to the validator."""
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is Any:
        return lambda value: UNCHANGED
    if annotation in (str, int, bool):
        return lambda value: UNCHANGED if type(value) is annotation else REJECT
    if annotation is datetime:
        return _as_time
    if origin is Literal:
        allowed = frozenset(args)
        return lambda value: UNCHANGED if type(value) is str and value in allowed else REJECT
    if origin is dict and args == (str, Any):
        return lambda value: UNCHANGED if type(value) is dict else REJECT
    if origin is list and args == (str,):
        return lambda value: UNCHANGED if type(value) is list and all(type(v) is str for v in value) else REJECT
    if origin in (Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        inner = field_check(rest[0] if len(rest) == 1 else Union[tuple(rest)])
        if inner is None:
            return None
        return lambda value: UNCHANGED if value is None else inner(value)
    return None


@cache
def model_checks(model: Any) -> tuple[dict[str, Check], frozenset[str]] | None:
    """A check per field of the dataclass `model` and the fields data must have; None if a
    field's type is not one `field_check` handles (such a record is always validated)."""
    hints = get_type_hints(model)
    fields = [f for f in dataclasses.fields(model) if f.init]
    checks = {f.name: field_check(hints[f.name]) for f in fields}
    if any(check is None for check in checks.values()):
        return None
    missing = dataclasses.MISSING
    required = frozenset(f.name for f in fields if f.default is missing and f.default_factory is missing)
    return {n: c for n, c in checks.items() if c is not None}, required


def constructed(model: type[M], data: dict[str, Any]) -> M | None:
    """The `model` that `data` describes, if validation would accept every value as it is; else None."""
    found = model_checks(cast(Any, model))  # (a class is hashable; mypy cannot see it of type[M])
    if found is None:
        return None
    checks, required = found
    if not required <= data.keys():
        return None
    values: dict[str, Any] = {}
    for name, value in data.items():
        check = checks.get(name)
        if check is None:
            return None  # a field the model does not have (extra="forbid")
        taken = check(value)
        if taken is REJECT:
            return None
        values[name] = value if taken is UNCHANGED else taken
    return model(**values)


def read_back(model: type[M], data: dict[str, Any]) -> M:
    """`model` from data a store read back: constructed when it can be, else validated (which
    raises on what it cannot read)."""
    return constructed(model, data) or validate(model, data)
