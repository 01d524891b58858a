"""Times staff type: a duration (`30m`, `2h`, `3d`, `1w`) or a moment (`2h`, `-1d`, an ISO date),
for snoozes and for the audit's `--since`."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

_DURATION = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class WhenError(ValueError):
    """A time that cannot be read; the message is one line for the user."""


def parse_duration(text: str) -> timedelta:
    """`30m`, `2h`, `3d`, `1w`."""
    found = _DURATION.match(text.strip().lower())
    if not found:
        raise WhenError(f"{text!r} is not a duration; write it like 30m, 2h, 3d or 1w")
    return timedelta(**{_UNITS[found.group(2)]: int(found.group(1))})


def parse_when(text: str, now: datetime) -> datetime:
    """A moment given as a duration from `now` (`2h`: in two hours; `-2h` or `2h ago`: two hours
    ago) or as an ISO 8601 date or time (UTC unless it names its offset)."""
    raw = text.strip()
    past = raw.startswith("-") or raw.lower().endswith(" ago")
    bare = raw.lstrip("-").removesuffix(" ago").removesuffix(" AGO").strip()
    if _DURATION.match(bare.lower()):
        delta = parse_duration(bare)
        return now - delta if past else now + delta
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise WhenError(
            f"{text!r} is not a time; write a duration (2h, 3d, -1d for a day ago) or an ISO date (2026-03-09T09:00)"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
