"""The words a regular expression cannot match without: a quick "no" before the search.

A cue (cues.py) is an alternation of phrases searched case-insensitively; Python's `re` tries
every alternative at every position, 10-45 µs for one short message, and most cues find nothing
in most messages. `required_literals` reads a pattern's parse tree for a set of strings one of
which every match contains; a text (ASCII, lower-cased) holding none of them cannot match, so the
search is skipped. Only ever a shortcut to the same answer: where the tree says nothing certain
(a character class, an optional part, a lookaround, a non-ASCII letter), it asks for nothing,
and the search runs.
"""

from __future__ import annotations

import re
from typing import Any

try:  # the parser `re` itself uses (Python 3.11+); without it, nothing is skipped
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    _parser = None

# Fewer than this many characters in the shortest literal asks too little to be worth the look.
MIN_LITERAL = 2
# More alternatives than this costs about what the search does.
MAX_LITERALS = 64


def required_literals(source: str, flags: int = 0) -> tuple[str, ...] | None:
    """Lower-case ASCII strings of which every match of `source` contains at least one, or None
    when no such set is certain (then a text is always searched)."""
    if _parser is None or flags & (re.VERBOSE | re.LOCALE):
        return None
    try:
        found = _sequence(list(_parser.parse(source, flags)))
    except Exception:  # a parser that reads otherwise (another Python): nothing is skipped
        return None
    if not found or len(found) > MAX_LITERALS or min(len(s) for s in found) < MIN_LITERAL:
        return None
    return tuple(sorted(found))


def _sequence(items: list[tuple[Any, Any]]) -> frozenset[str] | None:
    """One of these strings is in every match of the items in a row, or None."""
    candidates: list[frozenset[str]] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            candidates.append(frozenset({"".join(run)}))
            run.clear()

    for op, av in items:
        if op is _c.LITERAL and av < 128:
            run.append(chr(av).lower())
            continue
        close_run()  # anything else (zero-width ones too) ends a stretch of literal text
        found: frozenset[str] | None = None
        if op is _c.SUBPATTERN:
            found = _sequence(list(av[-1]))
        elif op is _c.ATOMIC_GROUP:
            found = _sequence(list(av))
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
            low, _, body = av
            found = _sequence(list(body)) if low >= 1 else None
        elif op is _c.BRANCH:
            branches = [_sequence(list(b)) for b in av[1]]
            if branches and all(b for b in branches):
                found = frozenset().union(*branches)  # type: ignore[arg-type]
        if found:
            candidates.append(found)
    close_run()
    if not candidates:
        return None
    # The surest to rule a text out: the longest shortest string, then the fewest strings.
    return max(candidates, key=lambda c: (min(len(s) for s in c), -len(c)))


def cannot_match(needs: tuple[str, ...] | None, text: str) -> bool:
    """True when `text` holds none of `needs` (so the pattern they came from cannot match it).
    Only ASCII text is ruled out: a case-insensitive match of a non-ASCII letter ("ſ" for "s",
    "K" for "k") is not what lower-casing gives."""
    if needs is None or not text.isascii():
        return False
    low = text.lower()
    for literal in needs:
        if literal in low:
            return False
    return True
