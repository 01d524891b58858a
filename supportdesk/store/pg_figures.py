"""`desk_figures` on PostgreSQL: the same aggregates as `sqlite_figures.py`, in PostgreSQL's terms.

Item bodies are JSON text, read with `::json` (a parse without jsonb's conversion); timestamps
are timestamptz, so durations are exact. Like SQLite, every statement starts from the sessions
touched since the window opened (`sessions_by_activity`) and reaches their items through the
`(session_id, kind, seq)` index. The statements run in one read-only repeatable-read
transaction, so the figures agree with each other.
"""

from __future__ import annotations

from datetime import datetime

import asyncpg

from supportdesk.items import APPROVAL_PENDING
from supportdesk.store.figures import (
    AMOUNT_EDGES,
    DURATION_EDGES_MS,
    EPOCH,
    MONEY_TOOLS,
    PERCENTILES,
    WAITING_STATUSES,
    DeskFigures,
    Distribution,
    HandoffEdge,
    MoneyFigures,
    UsageRow,
    bucket_sums,
    rank_sql,
)

_TOUCHED = "WITH w AS (SELECT id FROM sessions WHERE updated_at >= $1)"
_IN_WINDOW = "{a}.created_at >= $1 AND {a}.created_at < $2"
_FIELD = "({a}.body::json ->> '{f}')"
_MONEY = ", ".join(f"'{name}'" for name in MONEY_TOOLS)
_ROLE_OF = "({a}.body::json ->> 'role')"
_AT = "{t} >= $1 AND {t} < $2"
_WAITING = ", ".join(f"'{status}'" for status in WAITING_STATUSES)
_PENDING = APPROVAL_PENDING.replace("'", "''")


# Which summary row a duration belongs to (`SQL_DURATIONS` returns one row per kind present).
FIRST_ANSWER, RESOLUTION, UNANSWERED = 0, 1, 2


def _summaries(durations_cte: str) -> str:
    """A row per kind of duration `which` in the CTE `dur` (ms `s`): which, n, sum, max,
    percentiles, bucket counts."""
    ranks = ", ".join(f"max(CASE WHEN rn = {rank_sql(p, 'greatest')} THEN s END)" for p in PERCENTILES)
    return f"""
        {durations_cte},
        r AS (
            SELECT which, s, row_number() OVER (PARTITION BY which ORDER BY s) AS rn,
                   count(*) OVER (PARTITION BY which) AS n
            FROM dur)
        SELECT which, count(*), coalesce(sum(s), 0), max(s), {ranks}, {bucket_sums('s', DURATION_EDGES_MS)}
        FROM r GROUP BY which ORDER BY which
    """


def _millis(later: str, earlier: str) -> str:
    """Whole milliseconds between two timestamps (extract gives exact numeric seconds)."""
    return f"floor(extract(epoch FROM ({later} - {earlier})) * 1000)::bigint"


def _tokens(path: str) -> str:
    """A usage count from item meta: numbers count, anything else is 0 (as on SQLite)."""
    return f"CASE WHEN json_typeof(x.m #> '{{usage,{path}}}') = 'number' THEN (x.m #>> '{{usage,{path}}}')::numeric ELSE 0 END"


SQL_CONVERSATIONS = f"""
    {_TOUCHED}
    SELECT count(*) FROM w WHERE EXISTS (
        SELECT 1 FROM items AS i WHERE i.session_id = w.id AND {_IN_WINDOW.format(a='i')})
"""
SQL_STARTED = """
    SELECT count(*) FROM sessions WHERE updated_at >= $1 AND created_at >= $1 AND created_at < $2
"""
SQL_TAKEN = f"""
    {_TOUCHED},
    took AS (
        SELECT id AS sid, entry_agent AS agent FROM sessions
        WHERE updated_at >= $1 AND created_at >= $1 AND created_at < $2
        UNION
        SELECT i.session_id, {_FIELD.format(a='i', f='to_agent')}
        FROM w JOIN items AS i ON i.session_id = w.id AND i.kind = 'handoff'
        WHERE {_IN_WINDOW.format(a='i')})
    SELECT agent, count(*) FROM took GROUP BY agent ORDER BY agent
"""
SQL_HANDOFFS = f"""
    {_TOUCHED}
    SELECT {_FIELD.format(a='i', f='from_agent')}, {_FIELD.format(a='i', f='to_agent')},
           {_FIELD.format(a='i', f='handoff_kind')}, count(*)
    FROM w JOIN items AS i ON i.session_id = w.id AND i.kind = 'handoff'
    WHERE {_IN_WINDOW.format(a='i')}
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
"""
SQL_ESCALATED = f"""
    {_TOUCHED}
    SELECT {_FIELD.format(a='i', f='from_agent')}, count(DISTINCT i.session_id)
    FROM w JOIN items AS i ON i.session_id = w.id AND i.kind = 'handoff'
    WHERE {_IN_WINDOW.format(a='i')} AND {_FIELD.format(a='i', f='handoff_kind')} = 'escalate'
    GROUP BY 1 ORDER BY 1
"""
# Per touched session, in one pass: its first customer message, the first agent message
# after it, its last message and status. First answers, the unanswered and resolutions are
# all read from these rows (materialized: each probe runs once per session).
SQL_DURATIONS = _summaries(
    f"""
    {_TOUCHED},
    firsts AS MATERIALIZED (
        SELECT w.id AS sid,
            (SELECT seq FROM items WHERE session_id = w.id AND kind = 'message'
                AND {_ROLE_OF.format(a='items')} = 'customer' ORDER BY seq LIMIT 1) AS q,
            (SELECT seq FROM items WHERE session_id = w.id AND kind = 'message' ORDER BY seq DESC LIMIT 1) AS last
        FROM w),
    facts AS MATERIALIZED (
        SELECT q.created_at AS asked_at, l.created_at AS last_at, {_ROLE_OF.format(a='l')} AS last_role, ses.status,
            (SELECT a.created_at FROM items AS a
             WHERE a.session_id = f.sid AND a.kind = 'message' AND a.seq > f.q AND {_ROLE_OF.format(a='a')} = 'agent'
             ORDER BY a.seq LIMIT 1) AS answered_at
        FROM firsts AS f
        JOIN sessions AS ses ON ses.id = f.sid
        JOIN items AS q ON q.session_id = f.sid AND q.seq = f.q
        JOIN items AS l ON l.session_id = f.sid AND l.seq = f.last),
    dur AS (
        SELECT {FIRST_ANSWER} AS which, {_millis('answered_at', 'asked_at')} AS s FROM facts
        WHERE {_AT.format(t='asked_at')} AND answered_at IS NOT NULL
        UNION ALL
        SELECT {RESOLUTION}, {_millis('last_at', 'asked_at')} FROM facts
        WHERE status NOT IN ({_WAITING}) AND last_role = 'agent' AND {_AT.format(t='last_at')}
        UNION ALL
        SELECT {UNANSWERED}, NULL FROM facts WHERE {_AT.format(t='asked_at')} AND answered_at IS NULL)
    """
)
SQL_MONEY = f"""
    {_TOUCHED},
    made AS (
        SELECT {_FIELD.format(a='r', f='name')} AS tool, (c.body::json #>> '{{arguments,amount}}')::float8 AS amount
        FROM w
        JOIN items AS r ON r.session_id = w.id AND r.kind = 'tool_result'
        JOIN items AS c ON c.session_id = r.session_id AND c.seq = (
            SELECT max(seq) FROM items
            WHERE session_id = r.session_id AND kind = 'tool_call' AND seq < r.seq
                AND {_FIELD.format(a='items', f='call_id')} = {_FIELD.format(a='r', f='call_id')})
        WHERE {_IN_WINDOW.format(a='r')}
            AND {_FIELD.format(a='r', f='name')} IN ({_MONEY})
            AND {_FIELD.format(a='r', f='is_error')} = 'false'
            AND {_FIELD.format(a='r', f='output')} NOT LIKE '{_PENDING}%')
    SELECT tool, count(*), round(coalesce(sum(amount), 0)::numeric, 2)::float8, {bucket_sums('amount', AMOUNT_EDGES)}
    FROM made GROUP BY tool ORDER BY tool
"""
SQL_NOTICES = f"""
    {_TOUCHED}
    SELECT {_FIELD.format(a='i', f='notice_kind')}, count(*)
    FROM w JOIN items AS i ON i.session_id = w.id AND i.kind = 'notice'
    WHERE {_IN_WINDOW.format(a='i')}
    GROUP BY 1 ORDER BY 1
"""
SQL_USAGE = f"""
    {_TOUCHED}
    SELECT i.agent, coalesce(x.m ->> 'model', ''), sum({_tokens('input_tokens')}), sum({_tokens('output_tokens')}),
           min(CASE WHEN x.m #>> '{{usage,reported}}' = 'false' THEN 0 ELSE 1 END)
    FROM w JOIN items AS i ON i.session_id = w.id
    CROSS JOIN LATERAL (SELECT i.meta::json AS m) AS x
    WHERE {_IN_WINDOW.format(a='i')} AND i.meta IS NOT NULL AND x.m -> 'usage' IS NOT NULL
        AND json_typeof(x.m -> 'usage') <> 'null'
    GROUP BY 1, 2 ORDER BY 1, 2
"""


async def read_figures(conn: asyncpg.Connection, since: datetime | None, until: datetime) -> DeskFigures:
    """Every figure of the window, in one read-only repeatable-read transaction."""
    args = (since or EPOCH, until)

    async def rows(sql: str) -> list[asyncpg.Record]:
        fetched: list[asyncpg.Record] = await conn.fetch(sql, *args)
        return fetched

    async with conn.transaction(isolation="repeatable_read", readonly=True):
        durations = {row[0]: tuple(row[1:]) for row in await rows(SQL_DURATIONS)}
        return DeskFigures(
            since=since,
            until=until,
            conversations=(await rows(SQL_CONVERSATIONS))[0][0],
            started=(await rows(SQL_STARTED))[0][0],
            taken={agent: n for agent, n in await rows(SQL_TAKEN)},
            escalated={agent: n for agent, n in await rows(SQL_ESCALATED)},
            handoffs=tuple(HandoffEdge(*row) for row in await rows(SQL_HANDOFFS)),
            first_answer=Distribution.from_row(durations.get(FIRST_ANSWER, (0,))),
            unanswered=durations.get(UNANSWERED, (0,))[0],
            resolution=Distribution.from_row(durations.get(RESOLUTION, (0,))),
            money={
                tool: MoneyFigures(count=n, total=float(total), buckets=tuple(int(b or 0) for b in buckets))
                for tool, n, total, *buckets in await rows(SQL_MONEY)
            },
            notices={kind: n for kind, n in await rows(SQL_NOTICES)},
            usage=tuple(
                UsageRow(agent, str(model), int(tokens_in), int(tokens_out), bool(reported))
                for agent, model, tokens_in, tokens_out, reported in await rows(SQL_USAGE)
            ),
        )
