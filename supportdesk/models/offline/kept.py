"""What the offline model keeps between steps: what a text says, keyed by the text, at most so
many entries (the oldest goes first). One definition for the router, the cues and the view."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

K = TypeVar("K")
V = TypeVar("V")


def keep(kept: dict[K, V], key: K, value: V, most: int) -> V:
    """`value` kept under `key`, the oldest entry dropped past `most`; returns `value`.

    Steps may run on threads: a key another one dropped already, or the dict changing under
    the look-up, only leaves one more entry for a while (and try/except is cheaper than
    contextlib.suppress, on a path most inserts take)."""
    kept[key] = value
    if len(kept) > most:
        try:
            kept.pop(next(iter(kept)), None)
        except (RuntimeError, StopIteration):
            pass
    return value


_UNSEEN = object()
F = TypeVar("F", bound=Callable[..., Any])


def kept_by_text(most: int, longest: int = 2_000) -> Callable[[F], F]:
    """Decorator: a pure reading of a text (its result never changed by its callers), kept for
    the `most` latest texts of at most `longest` characters, keyed by the text and the keyword
    options. Several cues and skills read the same words in one step (and every step of a turn
    reads the turn's message again): each reading is made once."""

    def wrap(fn: F) -> F:
        kept: dict[Any, Any] = {}

        @functools.wraps(fn)
        def read(text: str, **options: Any) -> Any:
            key = (text, *options.items()) if options else text
            found = kept.get(key, _UNSEEN)
            if found is _UNSEEN:
                found = fn(text, **options)
                if len(text) <= longest:
                    keep(kept, key, found, most)
            return found

        read.kept = kept  # type: ignore[attr-defined]  # (what tests look at)
        return cast(F, read)

    return wrap
