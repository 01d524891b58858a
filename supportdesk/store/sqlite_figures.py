"""`desk_figures` on SQLite: the desk's aggregates over a window, in SQL (see `figures.py`).

Every statement starts from the sessions touched since the window opened (`sessions.updated_at`,
indexed: an append moves it, so a session with an item in the window is among them) and reaches
their items through the `(session_id, kind, seq)` index: a window of today reads today's
sessions, not the table. The statements run in one read transaction, in one hop to the
connection's thread, so the figures agree with each other.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

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

# The sessions that may hold an item in the window, and the window test on an item `i`.
_TOUCHED = "WITH w AS (SELECT id FROM sessions WHERE updated_at >= :since)"
_IN_WINDOW = "{a}.created_at >= :since AND {a}.created_at < :until"
_MONEY = ", ".join(f"'{name}'" for name in MONEY_TOOLS)
_ROLE_OF = "json_extract({a}.body, '$.role')"
_AT = "{t} >= :since AND {t} < :until"
_WAITING = ", ".join(f"'{status}'" for status in WAITING_STATUSES)
_PENDING = APPROVAL_PENDING.replace("'", "''")


# Which summary row a duration belongs to (`SQL_DURATIONS` returns one row per kind present).
FIRST_ANSWER, RESOLUTION, UNANSWERED = 0, 1, 2


def _summaries(durations_cte: str) -> str:
    """A row per kind of duration `which` in the CTE `dur` (ms `s`): which, n, sum, max,
    percentiles, bucket counts."""
    ranks = ", ".join(f"max(CASE WHEN rn = {rank_sql(p, 'max')} THEN s END)" for p in PERCENTILES)
    return f"""
        {durations_cte},
        r AS (
            SELECT which, s, row_number() OVER (PARTITION BY which ORDER BY s) AS rn,
                   count(*) OVER (PARTITION BY which) AS n
            FROM dur)
        SELECT which, count(*), coalesce(sum(s), 0), max(s), {ranks}, {bucket_sums('s', DURATION_EDGES_MS)}
        FROM r GROUP BY which ORDER BY which
    """


def _micros(stamp: str) -> str:
    """Microseconds since the epoch of an ISO timestamp as Python writes it: whole seconds from
    the date, time and offset with the fraction cut off (SQLite keeps milliseconds, and rounds
    .9995 up to the next second), plus the fraction's six digits when there is one."""
    whole = f"substr({stamp}, 1, 19) || CASE WHEN substr({stamp}, -6, 1) IN ('+', '-') THEN substr({stamp}, -6) ELSE '' END"
    return (
        f"(CAST(strftime('%s', {whole}) AS INTEGER) * 1000000"
        f" + CASE WHEN substr({stamp}, 20, 1) = '.' THEN CAST(substr({stamp}, 21, 6) AS INTEGER) ELSE 0 END)"
    )


def _millis(later: str, earlier: str) -> str:
    """Whole milliseconds between two timestamps (integer arithmetic: the fold's figures exactly)."""
    return f"(({_micros(later)} - {_micros(earlier)}) / 1000)"


SQL_CONVERSATIONS = f"""
    {_TOUCHED}
    SELECT count(*) FROM w WHERE EXISTS (
        SELECT 1 FROM items AS i WHERE i.session_id = w.id AND {_IN_WINDOW.format(a='i')})
"""
SQL_STARTED = """
    SELECT count(*) FROM sessions
    WHERE updated_at >= :since AND created_at >= :since AND created_at < :until
"""
SQL_TAKEN = f"""
    {_TOUCHED},
    took AS (
        SELECT id AS sid, entry_agent AS agent FROM sessions
        WHERE updated_at >= :since AND created_at >= :since AND created_at < :until
        UNION
        SELECT i.session_id, json_extract(i.body, '$.to_agent')
        FROM w CROSS JOIN items AS i ON i.session_id = w.id AND i.kind = 'handoff'
        WHERE {_IN_WINDOW.format(a='i')})
    SELECT agent, count(*) FROM took GROUP BY agent ORDER BY agent
"""
SQL_HANDOFFS = f"""
    {_TOUCHED}
    SELECT json_extract(i.body, '$.from_agent'), json_extract(i.body, '$.to_agent'),
           json_extract(i.body, '$.handoff_kind'), count(*)
    FROM w CROSS JOIN items AS i ON i.session_id = w.id AND i.kind = 'handoff'
    WHERE {_IN_WINDOW.format(a='i')}
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
"""
SQL_ESCALATED = f"""
    {_TOUCHED}
    SELECT json_extract(i.body, '$.from_agent'), count(DISTINCT i.session_id)
    FROM w CROSS JOIN items AS i ON i.session_id = w.id AND i.kind = 'handoff'
    WHERE {_IN_WINDOW.format(a='i')} AND json_extract(i.body, '$.handoff_kind') = 'escalate'
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
        SELECT json_extract(r.body, '$.name') AS tool, CAST(json_extract(c.body, '$.arguments.amount') AS REAL) AS amount
        FROM w
        CROSS JOIN items AS r ON r.session_id = w.id AND r.kind = 'tool_result'
        JOIN items AS c ON c.session_id = r.session_id AND c.seq = (
            SELECT max(seq) FROM items
            WHERE session_id = r.session_id AND kind = 'tool_call' AND seq < r.seq
                AND json_extract(body, '$.call_id') = json_extract(r.body, '$.call_id'))
        WHERE {_IN_WINDOW.format(a='r')}
            AND json_extract(r.body, '$.name') IN ({_MONEY})
            AND NOT json_extract(r.body, '$.is_error')
            AND json_extract(r.body, '$.output') NOT LIKE '{_PENDING}%')
    SELECT tool, count(*), round(coalesce(sum(amount), 0), 2), {bucket_sums('amount', AMOUNT_EDGES)}
    FROM made GROUP BY tool ORDER BY tool
"""
SQL_NOTICES = f"""
    {_TOUCHED}
    SELECT json_extract(i.body, '$.notice_kind'), count(*)
    FROM w CROSS JOIN items AS i ON i.session_id = w.id AND i.kind = 'notice'
    WHERE {_IN_WINDOW.format(a='i')}
    GROUP BY 1 ORDER BY 1
"""
SQL_USAGE = f"""
    {_TOUCHED}
    SELECT i.agent, coalesce(json_extract(i.meta, '$.model'), ''),
           sum(coalesce(json_extract(i.meta, '$.usage.input_tokens'), 0)),
           sum(coalesce(json_extract(i.meta, '$.usage.output_tokens'), 0)),
           min(coalesce(json_extract(i.meta, '$.usage.reported'), 1))
    FROM w CROSS JOIN items AS i ON i.session_id = w.id
    WHERE {_IN_WINDOW.format(a='i')} AND i.meta IS NOT NULL AND json_extract(i.meta, '$.usage') IS NOT NULL
    GROUP BY 1, 2 ORDER BY 1, 2
"""


def read_figures(conn: sqlite3.Connection, since: datetime | None, until: datetime) -> DeskFigures:
    """Every figure of the window, in one read transaction (run in the connection's thread)."""
    params = {"since": (since or EPOCH).isoformat(), "until": until.isoformat()}

    def rows(sql: str) -> list[tuple[Any, ...]]:
        return conn.execute(sql, params).fetchall()

    conn.execute("BEGIN")
    try:
        durations = {row[0]: row[1:] for row in rows(SQL_DURATIONS)}
        return DeskFigures(
            since=since,
            until=until,
            conversations=rows(SQL_CONVERSATIONS)[0][0],
            started=rows(SQL_STARTED)[0][0],
            taken={agent: n for agent, n in rows(SQL_TAKEN)},
            escalated={agent: n for agent, n in rows(SQL_ESCALATED)},
            handoffs=tuple(HandoffEdge(*row) for row in rows(SQL_HANDOFFS)),
            first_answer=Distribution.from_row(durations.get(FIRST_ANSWER, (0,))),
            unanswered=durations.get(UNANSWERED, (0,))[0],
            resolution=Distribution.from_row(durations.get(RESOLUTION, (0,))),
            money={
                tool: MoneyFigures(count=n, total=float(total), buckets=tuple(int(b or 0) for b in buckets))
                for tool, n, total, *buckets in rows(SQL_MONEY)
            },
            notices={kind: n for kind, n in rows(SQL_NOTICES)},
            usage=tuple(
                UsageRow(agent, str(model), int(tokens_in), int(tokens_out), bool(reported))
                for agent, model, tokens_in, tokens_out, reported in rows(SQL_USAGE)
            ),
        )
    finally:
        conn.execute("COMMIT")
