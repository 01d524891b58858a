"""A part of the desk built on first use, once.

The TUI shows a session's last page before the model and the tool registry exist: building
the offline model and importing every tool costs more than reading and drawing the page, and
neither is needed until a turn runs. The app builds them in a thread after the first frame;
whoever needs one earlier builds it then (the lock keeps that to one build).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Later(Generic[T]):
    def __init__(self, build: Callable[[], T]):
        self._build = build
        self._lock = threading.Lock()
        self._value: T | None = None
        self._built = False

    @property
    def built(self) -> bool:
        return self._built

    def get(self) -> T:
        if not self._built:
            with self._lock:
                if not self._built:
                    self._value = self._build()
                    self._built = True
        return self._value  # type: ignore[return-value]


def ready(value: T | Later[T]) -> T:
    """The value itself, building it first if it was deferred."""
    return value.get() if isinstance(value, Later) else value
