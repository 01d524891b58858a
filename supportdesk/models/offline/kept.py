"""What the offline model keeps between steps: what a text says, keyed by the text, at most so
many entries (the oldest goes first). One definition for the router, the cues and the view."""

from __future__ import annotations

from typing import TypeVar

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
