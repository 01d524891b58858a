"""When to try a model server again, and how long to wait first: for any HTTP provider.

Retries are the provider's own, not its client library's: a client would honour a
Retry-After of minutes, far past what a chat turn can afford, so the wait is capped and a
server asking for more gets a clear "rate limited" instead of a frozen conversation.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping

# Longest Retry-After honoured inside a chat turn.
MAX_RETRY_AFTER = 20.0
BACKOFF_BASE = 0.5
BACKOFF_CAP = 8.0
# Statuses that may succeed when asked again (besides every 5xx).
RETRYABLE_STATUSES = frozenset({408, 409, 429})

Sleep = Callable[[float], Awaitable[None]]


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (numeric form); None when absent."""
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if seconds >= 0 and seconds != float("inf"):
            return seconds
    return None


def backoff_delay(attempt: int, rng: random.Random | None = None) -> float:
    """Exponential backoff with jitter: 0.5 s, 1 s, 2 s ... capped at 8 s."""
    base = min(BACKOFF_BASE * 2**attempt, BACKOFF_CAP)
    jitter = 1 - 0.25 * (rng or random).random()
    return base * jitter


def status_retry_wait(status: int, headers: Mapping[str, str] | None, attempt: int) -> float | None:
    """Seconds to wait before asking again after an HTTP error status, or None when asking
    again would not help (a client error, or a Retry-After longer than a turn can wait)."""
    if status not in RETRYABLE_STATUSES and status < 500:
        return None
    asked = parse_retry_after(headers)
    if asked is not None:
        return asked if asked <= MAX_RETRY_AFTER else None
    return backoff_delay(attempt)


def waits_too_long(headers: Mapping[str, str] | None) -> float | None:
    """The wait a server asked for when it is longer than a turn may wait, else None."""
    asked = parse_retry_after(headers)
    return asked if asked is not None and asked > MAX_RETRY_AFTER else None
