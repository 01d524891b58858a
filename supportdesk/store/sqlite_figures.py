"""`desk_figures` on SQLite: `figures.FigureSql` in SQLite's words (JSON through json_extract;
item times are ISO text, compared as text as every read of the log does). The statements run in
one read transaction, in one hop to the connection's thread, so the figures agree with each other.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

from supportdesk.store.figures import (
    GRAINS,
    PERCENTILES,
    WALK_SHARE,
    DeskFigures,
    Dialect,
    FigureSql,
    assemble,
    duration_counts,
    nearest_rank,
    window_params,
)


def _field(a: str, col: str, path: str) -> str:
    return f"json_extract({a}.{col}, '$.{path}')"


DIALECT = Dialect(field=_field, number=_field, ids="SELECT value AS id FROM json_each(:ids)", is_false=lambda a, col, path: f"{_field(a, col, path)} = 0")
SQL = FigureSql(DIALECT)
# The sessions whose span ends at or after an hour, by `span_hour` (the hour the span ends in,
# moved by a trigger only when that hour changes: schema migration 14) rather than by the span's
# end itself, whose index every append would rewrite; the exact end is checked on the rows found,
# so the same sessions come back.
_SPAN_START_EDGE = "SELECT id FROM sessions WHERE span_first >= :since_us AND span_first < :h1_us"
SQL.edges = (
    f"{_SPAN_START_EDGE} UNION SELECT id FROM sessions "
    "WHERE span_hour >= :h2 AND +span_last >= :h2_us AND +span_first < :until_us"
)
SQL.edges_from_start = (
    f"{SQL.edges} UNION SELECT id FROM sessions "
    "WHERE span_hour >= :since_h AND +span_last >= :since_us AND +span_first < :since_us"
)
_HOUR = dict(GRAINS)["h"]


def read_figures(conn: sqlite3.Connection, since: datetime | None, until: datetime) -> DeskFigures:
    """Every figure of the window, in one read transaction (run in the connection's thread)."""
    params = window_params(since, until)
    params["since"], params["until"] = params["since"].isoformat(), until.isoformat()
    params["since_h"] = params["since_us"] // _HOUR

    def rows(sql: str, **extra: Any) -> list[tuple[Any, ...]]:
        return conn.execute(sql, {**params, **extra}).fetchall()

    edges = SQL.edges_from_start if since is not None else SQL.edges
    conn.execute("BEGIN")
    try:
        shares = rows(SQL.rollup)
        found = [row[0] for row in rows(edges)]
        if found:
            for statement in SQL.edge_statements.values():
                shares += rows(statement, ids=json.dumps(found))
        ranks = {}
        for name, n in duration_counts(shares).items():
            if n:
                walk = since is None or (n >= 5000 and n * WALK_SHARE >= rows(SQL.totals[name])[0][0])
                rank, largest = SQL.ranks[name, walk]
                ranks[name] = [rows(rank, k=nearest_rank(p, n) - 1)[0][0] for p in PERCENTILES] + [rows(largest)[0][0]]
        return assemble(since, until, shares, ranks)
    finally:
        conn.execute("COMMIT")
