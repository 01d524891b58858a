"""`desk_figures` on PostgreSQL: `figures.FigureSql` in PostgreSQL's words (item bodies are JSON
text read with `::json`; `:name` parameters become `$n`). The statements run in one read-only
repeatable-read transaction, so the figures agree with each other.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import asyncpg

from supportdesk.store.figures import (
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


def _path(path: str) -> str:
    return "{" + ",".join(path.split(".")) + "}"


def _field(a: str, col: str, path: str) -> str:
    return f"({a}.{col}::json #>> '{_path(path)}')"


def _number(a: str, col: str, path: str) -> str:
    """A JSON number, NULL when the field is absent or not a number (as json_extract sums it)."""
    return f"CASE WHEN json_typeof({a}.{col}::json #> '{_path(path)}') = 'number' THEN {_field(a, col, path)}::float8 END"


DIALECT = Dialect(field=_field, number=_number, ids="SELECT unnest(CAST(:ids AS text[])) AS id", is_false=lambda a, col, path: f"{_field(a, col, path)} = 'false'")
SQL = FigureSql(DIALECT)
_PARAM = re.compile(r"(?<!:):([a-z][a-z0-9_]*)")


def _numbered(sql: str, params: dict[str, Any]) -> tuple[str, list[Any]]:
    """The statement with `$n` for each `:name`, and the arguments in that order."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in names:
            names.append(name)
        return f"${names.index(name) + 1}"

    return _PARAM.sub(number, sql), [params[name] for name in names]


async def read_figures(conn: asyncpg.Connection, since: datetime | None, until: datetime) -> DeskFigures:
    """Every figure of the window, in one read-only repeatable-read transaction."""
    params = window_params(since, until)

    async def rows(sql: str, **extra: Any) -> list[tuple[Any, ...]]:
        text, args = _numbered(sql, {**params, **extra})
        return [tuple(r) for r in await conn.fetch(text, *args)]

    edges = SQL.edges_from_start if since is not None else SQL.edges
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        shares = await rows(SQL.rollup)
        found = [row[0] for row in await rows(edges)]
        if found:
            for statement in SQL.edge_statements.values():
                shares += await rows(statement, ids=found)
        ranks = {}
        for name, n in duration_counts(shares).items():
            if n:
                walk = since is None or (n >= 5000 and n * WALK_SHARE >= (await rows(SQL.totals[name]))[0][0])
                rank, largest = SQL.ranks[name, walk]
                found_ranks = [(await rows(rank, k=nearest_rank(p, n) - 1))[0][0] for p in PERCENTILES]
                ranks[name] = found_ranks + [(await rows(largest))[0][0]]
        return assemble(since, until, shares, ranks)
