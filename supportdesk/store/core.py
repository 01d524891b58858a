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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, assert_never

from supportdesk.desk_state import ConversationState, DeskFilter, start
from supportdesk.exact import read_back
from supportdesk.items import Item, item_from_json
from supportdesk.store.figure_summary import FigureSummary
from supportdesk.store.protocol import ContextEntry, DeskRow, SessionInfo, session_info

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


@dataclass(frozen=True)
class StoreDialect:
    """The few words in which the two databases' SQL differs, for the statements built here."""

    # The placeholder of the n-th parameter (from 1): "?" or "$n".
    param: Callable[[int], str]
    # A time as the driver binds it (SQLite: ISO text, compared as the log stores it).
    time: Callable[[datetime], Any]
    # A field of the kept desk summary (`desk_summary`, JSON text) as SQL text.
    summary_field: Callable[[str], str]
    # True when the kept summary's snooze ends at or before the time in placeholder p (NULL: false).
    snooze_over: Callable[[str], str]
    # True when the kept summary's tags hold the text in placeholder p.
    has_tag: Callable[[str], str]


def desk_where(dialect: StoreDialect, where: DeskFilter, now: datetime) -> tuple[str, list[Any]]:
    """The WHERE clause (parameters numbered from 1) that keeps the sessions `where.matches` keeps."""
    clauses: list[str] = []
    params: list[Any] = []

    def param(value: Any) -> str:
        params.append(value)
        return dialect.param(len(params))

    def snooze_ended() -> str:  # a snooze whose time has passed: back with staff (desk_state.at)
        return f"(desk_state = 'snoozed' AND {dialect.snooze_over(param(dialect.time(now)))})"

    match where.group:
        case "all":
            pass
        case "needs_staff":
            clauses.append(f"(desk_state = 'needs_staff' OR {snooze_ended()})")
        case "working" | "waiting_customer":
            clauses.append(f"(desk_state = 'ai' AND {dialect.summary_field('detail')} = {param(where.group)})")
        case "idle":
            clauses.append(f"(desk_state = 'resolved' OR (desk_state = 'snoozed' AND NOT {snooze_ended()}))")
        case _:
            assert_never(where.group)
    if where.tag:
        clauses.append(dialect.has_tag(param(where.tag)))
    if where.priority:
        clauses.append(f"{dialect.summary_field('priority')} = {param(where.priority)}")
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def desk_page_sql(dialect: StoreDialect, clause: str, n_params: int) -> str:
    """The inbox page under a `desk_where` clause of n_params parameters (then LIMIT, OFFSET)."""
    return (
        f"SELECT {SESSION_COLS}, desk_summary FROM sessions{clause} "
        f"ORDER BY updated_at DESC, id LIMIT {dialect.param(n_params + 1)} OFFSET {dialect.param(n_params + 2)}"
    )


def desk_row(row: Sequence[Any]) -> DeskRow:
    """An inbox row from SESSION_COLS then desk_summary: the session and its kept state."""
    *cols, summary = row
    info = session_of_row(cols)
    return DeskRow(info, ConversationState.from_json(summary) if summary else start(info.entry_agent))
