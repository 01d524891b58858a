"""The store's dialect-free core: what the SQLite and the PostgreSQL adapters share.

`sessions.py` (SQLite) and `postgres.py` (PostgreSQL) keep only what differs between the two
databases: the driver's calls, the placeholders (`?` or `$n`), JSON access, upserts and locking,
the change feed. Everything else lives here once, as pure functions: the session row's columns
and how a row becomes a `SessionInfo` or a `DeskRow`, the fold of a session's whole log into
its kept summaries, the inbox's filter as SQL (through a small `StoreDialect`, as
`figures.FigureSql` does for the figures), what an append writes besides its items, and how
a turn's start read becomes a `TurnStart`. A third backend implements the same few dialect
words and calls the same functions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from supportdesk.exact import read_back
from supportdesk.items import Item, item_from_json
from supportdesk.store.figure_summary import FigureSummary
from supportdesk.store.protocol import ContextEntry, SessionInfo, session_info

# The session row's columns, in the order every read of a whole row selects them.
SESSION_COLS = (
    "id, title, created_at, updated_at, entry_agent, active_agent, status, "
    "item_count, handoff_count, forked_from, forked_at, channel, meta"
)
SESSION_COL_NAMES: tuple[str, ...] = tuple(SESSION_COLS.split(", "))


def session_of_row(row: Iterable[Any]) -> SessionInfo:
    """A session from a row of SESSION_COLS (a tuple or a driver's record, in that order)."""
    return session_info(dict(zip(SESSION_COL_NAMES, row)))


def item_of_row(row: Sequence[Any]) -> Item:
    """An item from a row whose first column is the item as one JSON document."""
    return item_from_json(row[0])


def share_of(text: str | None) -> FigureSummary | None:
    """A session's kept share of the figures (None: none kept yet)."""
    return FigureSummary.from_json(text) if text else None


def context_entries(rows: Iterable[Sequence[Any]]) -> dict[str, ContextEntry]:
    """The shared context from (key, body, seq, created_at) rows, the newest write of each key
    (a cleared key is left out)."""
    out: dict[str, ContextEntry] = {}
    for key, body, at, created in rows:
        data = json.loads(body)
        if data.get("value") is None:
            continue  # cleared
        out[key] = read_back(
            ContextEntry, {"key": key, "value": data["value"], "writer": data["writer"], "seq": at, "created_at": created}
        )
    return out


def _count(value: Any, default: int) -> int:
    """A usage figure from item meta as the SQL back-fill reads it: numbers count, anything else not."""
    if value is None:
        return default
    return int(value) if isinstance(value, (int, float)) else 0


def usage_rows(pairs: Iterable[tuple[str, dict[str, Any]]]) -> list[tuple[str, int, int, int]]:
    """(agent, input, output, reported) summed over (agent, item meta) pairs whose meta carries
    `usage`: what an append adds to `usage_totals`."""
    totals: dict[str, tuple[int, int, int]] = {}
    for agent, meta in pairs:
        usage = meta.get("usage")
        if usage is None:
            continue
        fields = usage if isinstance(usage, dict) else {}
        before_in, before_out, before_reported = totals.get(agent, (0, 0, 1))
        totals[agent] = (
            before_in + _count(fields.get("input_tokens"), 0),
            before_out + _count(fields.get("output_tokens"), 0),
            min(before_reported, _count(fields.get("reported"), 1)),
        )
    return [(agent, *sums) for agent, sums in totals.items()]
