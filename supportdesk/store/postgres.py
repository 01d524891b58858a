"""The PostgreSQL session store: the same log as the SQLite one, shared by many machines.

Selected by a `postgresql://` URL in --db; needs the `postgres` extra (asyncpg), imported only
here. The contract is `store/protocol.py`; what both adapters share is `store/core.py`; what
differs from SQLite:

- An append is one statement (data-modifying CTEs): it moves the session's head, whose row
  lock orders appends to one session, inserts the items, keeps the context keys and usage
  totals, and sends a NOTIFY with the new head, all in one transaction and one round trip.
  Appends to different sessions never wait for each other. When this process made the
  session's last append (or created it), the append is that one statement on its own, guarded
  by where that append left the row (`_Kept`, SQL_APPEND_KEPT): one round trip, no BEGIN, no
  locked read, no COMMIT; a guard that fails writes nothing and the transaction that reads the
  row first runs instead.
- A turn lease is a fenced row of `turn_leases`, renewed while the turn runs, that every
  append of the turn checks; a turn takes it with its start read in one statement and gives it
  back in its last append. Its holder's life is the store's one advisory lock on a connection of
  its own (see PostgresLease): a holder that dies loses it with that connection (at once for a
  killed process, after the TCP keepalive for a lost network).
- The change feed is LISTEN on a connection of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import random
import time
import unicodedata
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

import asyncpg

from supportdesk.folds.desk_state import ConversationState, start
from supportdesk.items import Item, item_from_json, utcnow
from supportdesk.store.location import StoreLocation, scrub
from supportdesk.store.figures import DeskFigures
from supportdesk.store.pg_figures import read_figures
from supportdesk.store import figure_summary
from supportdesk.store.core import (
    CopySql,
    SESSION_COLS as _SESSION_COLS,
    ReadSql,
    StoreCore,
    StoreDialect,
    SummarySql,
    context_entries as _context,
    current,
    figure_columns,
    fold_whole_log,
    fork_title,
    import_rows,
    insert_session_sql,
    item_of_row as _item,
    keep_parsed,
    window_item,
    window_item_of_row as _window_item,
    newer_schema,
    plan_append,
    session_of_row as _session,
    share_of as _share,
    status_move,
    turn_start_of,
    usage_rows,
)
from supportdesk.store.figure_summary import FigureSummary, rollup_delta
from supportdesk.store.kept_folds import advance_all
from supportdesk.folds.sla import SlaProgress
from supportdesk.store.pg_schema import CURRENT_VERSION, DESK_FOLD_VERSION, FIGURES_VERSION, MIGRATIONS, TABLES
from supportdesk.store.protocol import (
    MATCH_END,
    MATCH_START,
    Change,
    HeadMoved,
    LeaseLost,
    SearchHit,
    SessionInfo,
    StoreError,
    StoreLocationError,
    TurnLease,
    TurnStart,
    duplicate_item,
    release_token,
    external_ids,
    search_terms,
    search_words,
    session_info,
)

log = logging.getLogger("supportdesk.store")

# The NOTIFY channel of the change feed; payload "<head> <0|1 deleted> <session id>".
CHANNEL = "supportdesk_changes"
# Serializes first opens that migrate (any 64-bit number no other lock of ours uses).
_MIGRATION_LOCK = 0x5344534B_00000001
CONNECT_TIMEOUT_S = 10.0
# A client that vanished from the network is dropped by the server (and its turn lease with
# it) after about idle + interval * count seconds.
_SERVER_SETTINGS = {
    "application_name": "supportdesk",
    "timezone": "UTC",
    "tcp_keepalives_idle": "10",
    "tcp_keepalives_interval": "5",
    "tcp_keepalives_count": "3",
}
# The turn lease's queries, and how a waiter backs off while another process holds it
# (first retry after _WAIT_FIRST seconds, doubling up to _WAIT_MAX, with jitter).
# A store's lock connection holds one advisory lock, its owner lock (OWNER_CLASS, owner): the
# holders of its leases are named `uuid:owner`, and a row whose owner lock is gone while the
# server kept running belongs to a dead holder (migration 9, `supportdesk_owner_gone`).
OWNER_CLASS = 1396986960  # "SDTP"
_TAKE_OWNER = "SELECT pg_try_advisory_lock($1, $2)"
# The lease's row, claimed by `supportdesk_take_turn` (migration 9) when free, expired, already
# ours, or its holder is dead; then the caller's read, run in a statement of its own after the
# claim (so it sees what the previous holder stored as it gave the lease back). One row when the
# lease was taken, none when another holder has it.
_TAKE = "SELECT * FROM supportdesk_take_turn($1, $2, $3, 'SELECT true') AS t(taken boolean)"
_RENEW_ROW = (
    "UPDATE turn_leases SET expires_at = clock_timestamp() + make_interval(secs => $3) "
    "WHERE session_id = $1 AND holder = $2"
)
_DROP_ROW = "DELETE FROM turn_leases WHERE session_id = $1 AND holder = $2"
# In an append's transaction: the current holder, share-locked so no claim moves it meanwhile.
_FENCE = "SELECT holder FROM turn_leases WHERE session_id = $1 FOR SHARE"
# The same check by the turn's last append, which gives the lease back: the row goes if it is ours.
_FENCE_AND_DROP = "DELETE FROM turn_leases WHERE session_id = $1 AND holder = $2 RETURNING holder"
# How long a lease row lives without renewal; holders renew it every LEASE_TTL / 3.
LEASE_TTL = 15.0
_WAIT_FIRST, _WAIT_MAX = 0.01, 0.2
_NO_LIMIT = 2**31 - 1  # larger than any seq: "no upper bound" (seq is a 32-bit integer)

# An item row as one JSON text (envelope merged into the body), so reading it back is a
# single pydantic-core parse, as on SQLite. Timestamps print as ISO 8601 (timezone UTC).
_ITEM_DOC = (
    """'{"session_id":' || to_json(session_id)::text || ',"seq":' || seq || ',"kind":' || to_json(kind)::text"""
    """ || ',"agent":' || to_json(agent)::text || ',"created_at":' || to_json(created_at)::text"""
    """ || ',"meta":' || coalesce(meta, '{}')"""
    """ || CASE WHEN body = '{}' THEN '}' ELSE ',' || substr(body, 2) END"""
)

# The newest n by a backward walk of the primary key, cut at n. (Written as `seq > item_count - n`
# the bound is a parameter the planner cannot see: on a long session it guessed a third of the
# session's rows and chose a parallel sequential scan, 230 ms at 300,000 items.) n is written
# into the statement, not passed: with `LIMIT $2` the generic plan is costed for a tenth of the
# session, so PostgreSQL planned every read afresh (0.1-0.4 ms of server CPU, as much as running
# it); with the number in the text, each n has one cached statement whose generic plan is kept.
def sql_latest(n: int) -> str:
    return (
        f"SELECT doc FROM (SELECT {_ITEM_DOC} AS doc, seq FROM items WHERE session_id = $1 "
        f"ORDER BY seq DESC LIMIT {max(0, min(int(n), _NO_LIMIT))}) AS newest ORDER BY seq"
    )


SQL_LATEST = sql_latest(50)  # the pane's read
SQL_RANGE = f"SELECT {_ITEM_DOC} FROM items WHERE session_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq"
SQL_ITEM = f"SELECT {_ITEM_DOC} FROM items WHERE session_id = $1 AND seq = $2"
SQL_ITEMS_AT = f"SELECT {_ITEM_DOC} FROM items WHERE session_id = $1 AND seq = ANY($2::text[]::integer[]) ORDER BY seq"
SQL_OF_KIND = f"SELECT {_ITEM_DOC} FROM items WHERE session_id = $1 AND kind = $2 AND seq > $3 AND seq <= $4 ORDER BY seq"
SQL_KIND_SEQS = "SELECT seq FROM items WHERE session_id = $1 AND kind = $2 ORDER BY seq"
SQL_AGENT_AT = (
    "SELECT body::json ->> 'to_agent' FROM items "
    "WHERE session_id = $1 AND kind = 'handoff' AND seq <= $2 ORDER BY seq DESC LIMIT 1"
)
# One probe per context key: the newest write to that key at or before seq k.
SQL_CONTEXT_AT = """
    SELECT k.key, i.body, i.seq, i.created_at
    FROM context_keys AS k
    CROSS JOIN LATERAL (
        SELECT body, seq, created_at FROM items
        WHERE session_id = k.session_id AND ctx_key = k.key AND seq <= $1
        ORDER BY seq DESC LIMIT 1) AS i
    WHERE k.session_id = $2
    ORDER BY k.key
"""
# Everything a turn reads when it starts, as one statement (one round trip): the session's row,
# its newest n items, its context now (one probe per key) and the person of a take-over that no
# release came after. n is written into the text like sql_latest's.
def sql_turn_start(n: int) -> str:
    n = max(0, min(int(n), _NO_LIMIT))
    return f"""
    SELECT {", ".join("s." + c for c in _SESSION_COLS.split(", "))},
        ARRAY(SELECT doc FROM (SELECT {_ITEM_DOC} AS doc, seq FROM items WHERE session_id = $1
              ORDER BY seq DESC LIMIT {n}) AS newest ORDER BY seq) AS tail,
        ARRAY(SELECT json_build_array(k.key, i.body, i.seq, i.created_at)::text
              FROM context_keys AS k
              CROSS JOIN LATERAL (
                  SELECT body, seq, created_at FROM items
                  WHERE session_id = k.session_id AND ctx_key = k.key ORDER BY seq DESC LIMIT 1) AS i
              WHERE k.session_id = $1 ORDER BY k.key) AS context,
        (SELECT body::json ->> 'person' FROM items WHERE session_id = $1 AND kind = 'takeover'
              AND seq > coalesce((SELECT max(seq) FROM items WHERE session_id = $1 AND kind = 'release'), 0)
              ORDER BY seq DESC LIMIT 1) AS held_by
    FROM sessions AS s WHERE s.id = $1
    """


# The lease claimed and the same read (with n newest items) run after it, by migration 11's
# function: always one row when taken (NULL columns: no such session), none when another holder
# has the lease.
SQL_TAKE_TURN_START = "SELECT * FROM supportdesk_take_turn_start($1, $2, $3, $4)"


# Where the session stood before an append, its row locked until the append commits, so two
# appends to one session advance the state one after the other (SQL_APPEND then sets it).
_DESK_BEFORE_COLS = "item_count, desk_summary, entry_agent, figure_summary, created_at, sla_summary, status"
SQL_DESK_BEFORE = f"SELECT {_DESK_BEFORE_COLS} FROM sessions WHERE id = $1 FOR UPDATE"
# The same read by a turn's append, with its lease's check (_FENCE, or _FENCE_AND_DROP by the last
# append) in the one statement: a round trip less for every step of every turn. The lease's row
# is locked (or deleted) before the session's row, as when they were two statements.
SQL_FENCED_DESK_BEFORE = f"SELECT ({_FENCE}), {_DESK_BEFORE_COLS} FROM sessions WHERE id = $1 FOR UPDATE"
SQL_FENCED_DROP_DESK_BEFORE = (
    f"WITH dropped AS ({_FENCE_AND_DROP}) "
    f"SELECT (SELECT holder FROM dropped), {_DESK_BEFORE_COLS} FROM sessions WHERE id = $1 FOR UPDATE"
)
SQL_WHOLE_LOG = f"SELECT {_ITEM_DOC} FROM items WHERE session_id = $1 ORDER BY seq"
# Every array parameter of the store's statements is sent as text[] and cast by the server
# (`$n::text[]::bigint[]`): asyncpg knows text[] without asking, but looks up any other array type
# with a recursive catalog query (its JIT switched off and on around it) on each new connection
# before its first statement using it. Measured preparing the four appends on a new connection:
# 12 ms of server CPU and 2.2 ms of ours with the lookup, 3.4 ms and 1.1 ms without (issue 34;
# `bench_serve --pg` opens about 20 pooled connections for its 150 messages).
def _texts(values: Iterable[Any]) -> list[str | None]:
    return [None if v is None else str(v) for v in values]


def _rollup_columns(rows: Sequence[tuple[Any, ...]]) -> Sequence[list[Any] | None]:
    """Roll-up rows (figure_summary.rollup_delta) as `_rollup_rows`' 11 array parameters; no
    rows (most appends): 11 NULLs, which unnest as no rows."""
    return [_texts(column) for column in zip(*rows)] if rows else _NO_ROLLUP


# A column of an append's unnest that would hold only NULLs is sent as NULL: unnest pads it with
# NULLs to the longest array (all NULL: no rows). asyncpg checks each element of an array
# parameter against three abstract base classes before encoding it (about 90 such checks an
# append of three items, issue 34); a NULL is one byte of the message and no check.
_NO_ROLLUP: tuple[None, ...] = (None,) * 11


def _column(values: list[Any]) -> list[Any] | None:
    """An array parameter of the append, or None when every value is None (see _NO_ROLLUP)."""
    for value in values:
        if value is not None:
            return values
    return None


def _notify_docs(args: tuple[Any, ...], last: int) -> str:
    """The append's NOTIFY tail: each item's document as `_ITEM_DOC` makes it of the row the
    append stores (the same text, so a follower's parse of it is kept for its reads of the log,
    `store/core.window_item`), a newline before each, after `last` (where the append's guard or
    locked read says the session ends); empty when they are over NOTIFY_ITEMS_BYTES together.
    `args`: `PostgresStore._append_args`'."""
    session_id, now, kinds, agents, bodies, metas = args[0], args[5], args[6], args[7], args[8], args[9]
    if metas is None:
        metas = [None] * len(kinds)
    head = '{"session_id":' + _json_name(session_id) + ',"seq":'
    at = ',"created_at":"' + _json_time(now) + '","meta":'
    out: list[str] = []
    size = 0
    for n, (kind, agent, body, meta) in enumerate(zip(kinds, agents, bodies, metas), start=1):
        doc = (
            f'{head}{last + n},"kind":{_json_name(kind)},"agent":{_json_name(agent)}'
            f'{at}{meta if meta is not None else "{}"}{"}" if body == "{}" else "," + body[1:]}'
        )
        size += len(doc.encode()) + 1
        if size > NOTIFY_ITEMS_BYTES:
            return ""
        out.append("\n" + doc)
    return "".join(out)


_NO_USAGE: tuple[None, ...] = (None,) * 4  # an append no item of which reports usage: its 4 columns NULL

# The documents of the append last sent (its parameters, by identity, and its base seq): the
# append keeps the parse of what it sent after the statement (`PostgresStore.append`), without
# making the same text twice. One entry: an append in between makes them again, the same text.
_last_sent: tuple[tuple[Any, ...], int, str] | None = None


def _created_notice(meta_json: str) -> str:
    """What a creation's NOTIFY carries after its head line: the new session's meta as stored,
    on a line of its own, when it fits (`Change.meta`; a worker that did not create the session
    learns what it needs of it, a web conversation's token digest, without reading the row:
    issue 34, a read for each stream that joined a conversation on another worker). The meta is
    the row's, which every reader of the database may read anyway; larger: the head alone."""
    return "" if len(meta_json.encode()) > NOTIFY_ITEMS_BYTES else "\n" + meta_json


def _sent_docs(args: tuple[Any, ...], last: int) -> str:
    """`_notify_docs(args, last)`, made once for the statement and the keeping of its parses."""
    global _last_sent
    sent = _last_sent
    if sent is not None and sent[0] is args and sent[1] == last:
        return sent[2]
    docs = _notify_docs(args, last)
    _last_sent = (args, last, docs)
    return docs


@functools.lru_cache(maxsize=1024)
def _json_name(name: str) -> str:
    """A name as a JSON string (an item kind, an agent, a session id): the few a worker writes
    again and again, encoded once each."""
    return json.dumps(name, ensure_ascii=False)


def _json_time(at: datetime) -> str:
    """A time as PostgreSQL's to_json writes a timestamptz in UTC: ISO 8601, the fraction's
    trailing zeros left out (none at all on a whole second), and +00:00."""
    if at.tzinfo is not timezone.utc:
        at = at.astimezone(timezone.utc)
    text = at.isoformat()  # ...THH:MM:SS[.ffffff]+00:00, the fraction only when not zero
    return text[:-6].rstrip("0") + "+00:00" if at.microsecond else text


# The session's share of the figures (migration 5): its columns (SUMMARY_SQL), and the roll-up
# rows it moves (store/figure_summary.py), in the order of the roll-up's key so concurrent appends
# lock rows in one order. A roll-up row emptied by a session moving on is dropped.
def _rollup_rows(first: int) -> str:
    """The roll-up rows (figure_summary.rollup_delta), one array parameter a column from `first` on."""
    p = [f"${first + i}" for i in range(11)]
    return (
        f"unnest({p[0]}::text[], {p[1]}::text[]::bigint[], {p[2]}::text[]::bigint[], {p[3]}::text[], {p[4]}::text[], "
        f"{p[5]}::text[], {p[6]}::text[], {p[7]}::text[]::bigint[], {p[8]}::text[]::bigint[], {p[9]}::text[]::bigint[], "
        f"{p[10]}::text[]::bigint[]) "
        "AS t(grain, lo, hi, what, a, b, c, n, x, y, z)"
    )


def _rollup_add(first: int) -> str:
    return f"""
    INSERT INTO figure_rollup AS r (grain, lo, hi, what, a, b, c, n, x, y, z)
    SELECT * FROM {_rollup_rows(first)} ORDER BY grain, lo, hi, what, a, b, c
    ON CONFLICT (grain, lo, hi, what, a, b, c) DO UPDATE SET
        n = r.n + excluded.n, x = r.x + excluded.x, y = r.y + excluded.y, z = r.z + excluded.z
"""


_ROLLUP_ROWS = _rollup_rows(1)
SQL_ROLLUP_ADD = _rollup_add(1)
# A new session without items (`PostgresStore.create_session`): the row ($1-$8), its share of the
# figures (`figure_columns`, $9-$16) and the roll-up rows the share adds ($17-$27), one statement.
_SQL_CREATE_SESSION = f"""WITH s AS (
        INSERT INTO sessions (id, title, created_at, updated_at, entry_agent, active_agent, channel, meta,
                              desk_state, desk_summary, span_first, span_last, asked_us, answer_ms,
                              resolved_us, resolution_ms, figure_summary, sla_summary)
        VALUES ($1, $2, $3, $3, $4, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
        RETURNING {_SESSION_COLS}),
    rolled AS ({_rollup_add(17)})
    SELECT s.*, pg_notify('{CHANNEL}', '0 0 ' || s.id || $28::text) FROM s"""
SQL_ROLLUP_DROP_EMPTY = f"""
    DELETE FROM figure_rollup AS r USING {_ROLLUP_ROWS}
    WHERE r.n = 0 AND (r.grain, r.lo, r.hi, r.what, r.a, r.b, r.c) = (t.grain, t.lo, t.hi, t.what, t.a, t.b, t.c)
"""
SQL_DESK_TAGS = (
    "SELECT DISTINCT t FROM sessions, jsonb_array_elements_text(sessions.desk_summary::jsonb -> 'tags') AS t ORDER BY t"
)
SQL_DESK_PRIORITIES = (
    "SELECT DISTINCT desk_summary::json ->> 'priority' AS p FROM sessions "
    "WHERE desk_summary::json ->> 'priority' NOT IN ('', 'none') ORDER BY p"
)
SQL_COUNT_NEEDING_STAFF = (
    "SELECT count(*) FROM sessions WHERE desk_state = 'needs_staff' OR (desk_state = 'snoozed' "
    "AND (desk_summary::json ->> 'snoozed_until')::timestamptz <= $1)"
)
DIALECT = StoreDialect(
    param=lambda n: f"${n}",
    time=lambda at: at,
    summary_field=lambda key: f"desk_summary::json ->> '{key}'",
    snooze_over=lambda p: f"coalesce((desk_summary::json ->> 'snoozed_until')::timestamptz <= {p}, false)",
    has_tag=lambda p: f"jsonb_exists(desk_summary::jsonb -> 'tags', {p})",
    no_limit=_NO_LIMIT,
)
SUMMARY_SQL = SummarySql(DIALECT)
COPY = CopySql(DIALECT)
READS = ReadSql(
    DIALECT,
    desk_tags=SQL_DESK_TAGS,
    desk_priorities=SQL_DESK_PRIORITIES,
    count_needing_staff=SQL_COUNT_NEEDING_STAFF,
    item_range=SQL_RANGE,
    item=SQL_ITEM,
    agent_at=SQL_AGENT_AT,
    context_at=SQL_CONTEXT_AT,
)
# The change feed's NOTIFY carries the appended items' documents (the text `_ITEM_DOC` makes of
# their rows, one a line after the head's) when together they fit in this many bytes (a payload
# must stay under 8,000): a worker following the session hands them to its streams without a read
# (issue 34: a range read for nearly every append another worker made). Larger: the head alone.
# The writer makes them (`_notify_docs`, $39), from the texts it sends anyway and the seqs its
# append is guarded to (or has locked the row for): built in SQL (to_json and concatenation per
# item) they cost the server about 45 µs an append of two items against 14 µs of ours in Python
# (measured apart, issue 34: the server's CPU a message on PostgreSQL).
NOTIFY_ITEMS_BYTES = 7_000
# The whole append in one statement. The UPDATE takes the session row's lock, so a second
# append to the same session waits for this one's commit and then reads the moved head.
# `guard`: more of the UPDATE's WHERE clause (the guarded append below); `more`: CTEs after head.
def _append_sql(guard: str = "", more: str = "") -> str:
    # Every write is of a row of `head`'s (the roll-up's too): when the guard fails nothing is written.
    # The roll-up rows come back as this statement left them: under each row's lock, so the one
    # writer that takes a row to n = 0 is the one told (the last column), and only it sends the
    # drop (SQL_ROLLUP_DROP_EMPTY; once a conversation before, issue 34, for a row others still held).
    rollup = _rollup_add(28).replace(" ORDER BY grain", " WHERE EXISTS (SELECT 1 FROM head) ORDER BY grain") + (
        "    RETURNING r.n\n"
    )
    return f"""
WITH head AS (
    UPDATE sessions SET
        item_count = item_count + $2,
        handoff_count = handoff_count + $3,
        active_agent = coalesce($4, active_agent),
        title = CASE WHEN title = '' AND $5::text IS NOT NULL THEN $5::text ELSE title END,
        updated_at = $6,
        desk_state = $17,
        desk_summary = $18,
        span_first = CASE WHEN $19::boolean THEN $20::bigint ELSE span_first END,
        span_last = CASE WHEN $19::boolean THEN $21::bigint ELSE span_last END,
        asked_us = CASE WHEN $19::boolean THEN $22::bigint ELSE asked_us END,
        answer_ms = CASE WHEN $19::boolean THEN $23::bigint ELSE answer_ms END,
        resolved_us = CASE WHEN $19::boolean THEN $24::bigint ELSE resolved_us END,
        resolution_ms = CASE WHEN $19::boolean THEN $25::bigint ELSE resolution_ms END,
        figure_summary = CASE WHEN $19::boolean THEN $26::text ELSE figure_summary END,
        sla_summary = CASE WHEN $19::boolean THEN $27::text ELSE sla_summary END
    WHERE id = $1{guard}
    RETURNING item_count - $2 AS last
), rollup AS ({rollup}), new AS (
    SELECT head.last + t.n AS seq, t.kind, t.agent, t.body, t.meta, t.ctx_key, t.words
    FROM head, unnest($7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])
        WITH ORDINALITY AS t(kind, agent, body, meta, ctx_key, words, n)
), stored AS (
    INSERT INTO items (session_id, seq, kind, agent, created_at, body, meta, ctx_key, search)
    SELECT $1, seq, kind, agent, $6, body, meta, ctx_key, to_tsvector('simple', words) FROM new
), keys AS (
    INSERT INTO context_keys (session_id, key)
    SELECT DISTINCT $1, ctx_key FROM new WHERE ctx_key IS NOT NULL
    ON CONFLICT DO NOTHING
), usage AS (
    INSERT INTO usage_totals (session_id, agent, input_tokens, output_tokens, reported)
    SELECT $1, u.agent, u.tokens_in, u.tokens_out, u.reported
    FROM head, unnest($13::text[], $14::text[]::bigint[], $15::text[]::bigint[], $16::text[]::integer[])
        AS u(agent, tokens_in, tokens_out, reported)
    ON CONFLICT (session_id, agent) DO UPDATE SET
        input_tokens = usage_totals.input_tokens + excluded.input_tokens,
        output_tokens = usage_totals.output_tokens + excluded.output_tokens,
        reported = least(usage_totals.reported, excluded.reported)
){more}
SELECT last, pg_notify('{CHANNEL}', (last + $2) || ' 0 ' || $1 || $39::text),
    EXISTS (SELECT 1 FROM rollup WHERE n = 0) AS emptied FROM head
"""


SQL_APPEND = _append_sql()
# The guarded append: the same statement on its own (autocommit, one round trip, no BEGIN, no
# read, no COMMIT), for when the process still knows where the session stood after its own last
# append (PostgresStore._kept). It writes only if the row still holds exactly that ($40-$45:
# the head, status, creation time and the three kept summaries; any other writer moves one of
# them) and, for a turn's append, the lease is still the turn's ($46; its row share-locked, or
# locked and deleted by the last append, before the session's row, as in the transaction).
# No row back: nothing was written, and the append runs as the transaction that reads first.
_KEPT_GUARD = (
    " AND item_count = $40 AND status = $41 AND created_at = $42 AND desk_summary IS NOT DISTINCT FROM $43"
    " AND figure_summary IS NOT DISTINCT FROM $44 AND sla_summary IS NOT DISTINCT FROM $45"
)
SQL_APPEND_KEPT = _append_sql(_KEPT_GUARD)
SQL_APPEND_KEPT_FENCED = _append_sql(
    _KEPT_GUARD + " AND (SELECT holder FROM turn_leases WHERE session_id = $1 FOR SHARE) = $46"
)
SQL_APPEND_KEPT_RELEASE = _append_sql(
    _KEPT_GUARD + " AND (SELECT holder FROM turn_leases WHERE session_id = $1 FOR UPDATE) = $46",
    ", dropped AS (DELETE FROM turn_leases WHERE session_id = $1 AND holder = $46 AND EXISTS (SELECT 1 FROM head))",
)
# The appends' own connections (issue 34). A new backend pays for its first statements: catalog
# caches warmed, each append parsed (2-6 ms of server CPU), and its first five runs planned afresh
# (0.85 ms each) before PostgreSQL keeps a generic plan (0.09 ms); `bench_serve --pg` paid that on
# the ~20 connections it opened during the load. So the store opens these WRITE_CONNECTIONS at
# once, prepares WRITE_STATEMENTS on each as it connects, and plans them generically from the
# first run (every one is keyed by the session's primary key: no parameter changes the best
# plan). Only these connections say force_generic_plan: the main pool's reads (the inbox's
# LIMIT/OFFSET pages, windows) are planned for their parameters as before.
WRITE_CONNECTIONS = 3
WRITE_SETTINGS = {**_SERVER_SETTINGS, "plan_cache_mode": "force_generic_plan"}
WRITE_STATEMENTS = (
    SQL_APPEND_KEPT, SQL_APPEND_KEPT_FENCED, SQL_APPEND_KEPT_RELEASE, SQL_APPEND,
    SQL_DESK_BEFORE, SQL_FENCED_DESK_BEFORE, SQL_FENCED_DROP_DESK_BEFORE, SQL_ROLLUP_DROP_EMPTY,
)
# A served turn's reads on the main pool, prepared by each of its connections as it connects (a
# new backend's first parse of each warms its catalog caches too).
READ_STATEMENTS = (
    SQL_TAKE_TURN_START, READS.session, READS.last_seq, SQL_LATEST, SQL_RANGE, SQL_OF_KIND, SQL_ITEMS_AT,
)
# How many of the main pool's connections `warm` opens before a desk serves: what the
# `bench_serve` load has open at once on one worker (its 8, with the appends on these pools).
SERVE_CONNECTIONS = 8
# How many sessions' kept state a store remembers (the least recently appended forgotten first).
KEPT_SESSIONS = 4096
# Search: the newest `limit` messages holding every word, in one total order (time, seq,
# session), with headlines built and sessions joined for the page only. PostgreSQL cannot be
# trusted to choose between its two ways to find them: its estimate for a prefix term is a
# guess (a number in 1 of 10,000 messages was planned as if in 2 %, and walked 500,000 rows), so
# the search chooses by the query's shape, in up to three steps, each a complete answer when it
# succeeds:
#   1. walk the newest SEARCH_WINDOW messages backwards (items_messages_by_time) and keep those
#      that match, stopping at the page: a common word fills its page within a few hundred rows,
#      and no word costs more than the window;
#   2. fewer hits than a page there: the word is rare lately, so fetch its matches from the GIN
#      index (materialized: planned for all of them, never as a walk) and sort them, if there
#      are at most SEARCH_MATCH_CAP;
#   3. more than that (a word common long ago, rare lately): walk backwards with no window.
_SEARCH_PAGE = """
SELECT h.session_id, s.title, h.seq, ts_headline('simple', i.body::json ->> 'text', to_tsquery('simple', $1), $2),
    h.found
FROM hits AS h
JOIN items AS i ON i.session_id = h.session_id AND i.seq = h.seq
JOIN sessions AS s ON s.id = h.session_id
ORDER BY h.created_at DESC, h.seq DESC, h.session_id DESC
"""
# Steps 1 and 3 ($4: the window, NULL for none). The window's subquery keeps its order, so the
# outer LIMIT stops the walk at the page.
SQL_SEARCH_NEWEST = (
    """
WITH hits AS (
    SELECT session_id, seq, created_at, NULL::bigint AS found FROM (
        SELECT session_id, seq, created_at, search FROM items WHERE search IS NOT NULL
        ORDER BY created_at DESC, seq DESC, session_id DESC
        LIMIT $4
    ) AS newest
    WHERE search @@ to_tsquery('simple', $1)
    LIMIT $3
)"""
    + _SEARCH_PAGE
)
# Step 2 ($4: the cap). `found` counts the matches up to cap + 1: past the cap the page is
# thrown away and step 3 runs (the matches are not all there to sort).
SQL_SEARCH_MATCHES = (
    """
WITH matches AS MATERIALIZED (
    SELECT session_id, seq, created_at FROM items WHERE search @@ to_tsquery('simple', $1)
), capped AS (
    SELECT * FROM matches LIMIT $4 + 1
), hits AS (
    SELECT session_id, seq, created_at, (SELECT count(*) FROM capped) AS found FROM capped
    ORDER BY created_at DESC, seq DESC, session_id DESC
    LIMIT $3
)"""
    + _SEARCH_PAGE
)
# Messages walked by step 1, and the most matches step 2 fetches from the GIN index before
# giving way to the unbounded walk. A word in 1 % of messages fills its page within the window;
# a rarer one pays the window first (5,000 rows: 2-10 ms; 20,000 doubled a rare word's time
# at 1,000,000 messages on a busy machine, 22-27 ms against 54-58 ms, with common words unchanged).
SEARCH_WINDOW = 5_000
SEARCH_MATCH_CAP = 5_000
# Searches at once per store (more wait for a connection); see PostgresStore._search_pool.
SEARCH_CONNECTIONS = 2
# As SQLite's snippet(): about a dozen words around the match, the match between the marks.
_HEADLINE = f"StartSel={MATCH_START}, StopSel={MATCH_END}, MaxWords=14, MinWords=6, ShortWord=0, MaxFragments=1"


async def _prepare(conn: asyncpg.Connection, statements: Iterable[str]) -> None:
    """The statements parsed into the connection's statement cache, where every fetch of the same
    text finds them (asyncpg's public prepare makes a second, uncached statement). In a
    transaction: a parse alone leaves the server inside an implicit one, holding its snapshot
    and table locks while the connection idles, until the next statement's sync."""
    async with conn.transaction():
        for sql in statements:
            await conn._get_statement(sql, CONNECT_TIMEOUT_S)


async def _end_open_transaction(conn: asyncpg.Connection) -> None:
    """What our pools do to a connection given back: roll back a transaction left open (a
    cancelled or failed caller's), and nothing else. asyncpg's default reset sends a statement
    on every release (unlock all advisory locks, close cursors, unlisten, reset settings): one
    more round trip for every read, for session state that our pooled connections never take
    (leases and LISTEN have connections of their own; settings are set at connect)."""
    if conn.is_in_transaction():
        await conn.execute("ROLLBACK")


def _fold(text: str) -> str:
    """Lower case without accents, as SQLite's unicode61 tokenizer with remove_diacritics.
    ASCII text (most messages) is its own NFKD form and has no combining marks, and its
    casefold is its lower case: it skips the walk over every character (SQLite's tokenizer does
    this in C; here it was a Python call a character, on every stored message)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _search_words(text: str) -> str:
    """The words a message is found by, one space apart (PostgreSQL's parser then sees words only)."""
    return " ".join(search_words(_fold(text)))


def _tsquery(text: str) -> str:
    """Search-box words -> every word required, words of 3+ letters as prefixes (the contract)."""
    return " & ".join(f"'{w}':*" if prefix else f"'{w}'" for w, prefix in search_terms(_fold(text)))


async def _whole_log(
    conn: asyncpg.Connection, session_id: str, entry_agent: str, created_at: datetime, status: str
) -> tuple[ConversationState, FigureSummary, SlaProgress]:
    """The state, the figures' share and the SLA clocks folded from the whole log (a fork, an
    import, a database before migration 5)."""
    copied = await conn.fetchval(SUMMARY_SQL.forked_at, session_id)
    rows = await conn.fetch(SQL_WHOLE_LOG, session_id)
    return fold_whole_log(entry_agent, created_at, status, int(copied or 0), (_item(r) for r in rows))


async def _keep_share(
    conn: asyncpg.Connection,
    session_id: str,
    kept: FigureSummary | None,
    share: FigureSummary | None,
    progress: SlaProgress | None = None,
) -> None:
    """Move the session's share of the figures from `kept` (what the roll-up holds) to `share`
    (None: the session is going away)."""
    delta = rollup_delta(kept, share)
    if delta:
        await conn.execute(SQL_ROLLUP_ADD, *_rollup_columns(delta))
        emptied = [row for row in delta if row[7] < 0]
        if emptied:
            await conn.execute(SQL_ROLLUP_DROP_EMPTY, *_rollup_columns(emptied))
    if share is not None:
        await conn.execute(SUMMARY_SQL.set_figures, *figure_columns(share, progress), session_id)


async def _keep_whole_log_state(conn: asyncpg.Connection, session_id: str, desk: bool = True) -> None:
    """Fold a session's log and keep the results as its summaries; `desk` False keeps its desk
    state as it is (only the figures' share and the clocks were missing)."""
    entry_agent, created_at, figures, status = await conn.fetchrow(SUMMARY_SQL.fold_start, session_id)
    state, share, progress = await _whole_log(conn, session_id, entry_agent, created_at, status)
    if desk:
        await conn.execute(SUMMARY_SQL.set_summary, state.state, state.to_json(), session_id)
    await _keep_share(conn, session_id, _share(figures), share, progress)




def _turn_start_of(row: asyncpg.Record) -> TurnStart:
    """A `TurnStart` of one row of `sql_turn_start` (or of SQL_TAKE_TURN_START: id NULL, no session)."""
    if row["id"] is None:
        return turn_start_of(None, (), (), None)
    return turn_start_of(row, row["tail"], (json.loads(entry) for entry in row["context"]), row["held_by"])


def _connect_error(location: StoreLocation, exc: BaseException) -> StoreLocationError:
    """What went wrong connecting, as one line naming what to fix (never the password)."""
    where = location.display
    parts = location.target
    if isinstance(exc, asyncpg.InvalidPasswordError):
        return StoreLocationError(f"{where}: the server refused the password; check the user and password in the URL")
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        return StoreLocationError(f"{where}: the server has no such database; create it (createdb) or fix its name in the URL")
    if isinstance(exc, asyncpg.InvalidAuthorizationSpecificationError):
        return StoreLocationError(f"{where}: the server refused the user ({scrub(str(exc), parts)}); check the URL")
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return StoreLocationError(f"{where}: the server did not answer within {CONNECT_TIMEOUT_S:g} s; check the host and port")
    if isinstance(exc, OSError):
        said = exc.strerror or str(exc) or type(exc).__name__
        return StoreLocationError(f"{where}: cannot reach the server ({scrub(said, parts)}); check the host and port")
    said = scrub(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, parts)
    return StoreLocationError(f"{where}: cannot connect: {said}")


async def _connect(location: StoreLocation) -> asyncpg.Connection:
    try:
        return await asyncpg.connect(location.target, timeout=CONNECT_TIMEOUT_S, server_settings=_SERVER_SETTINGS)
    except (OSError, TimeoutError, asyncio.TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise _connect_error(location, exc) from None
    except ValueError as exc:  # asyncpg's own URL parsing (a bad port, an unknown option)
        raise StoreLocationError(f"{location.display}: not a usable PostgreSQL URL ({scrub(str(exc), location.target)})") from None


async def _migrate(conn: asyncpg.Connection, where: str) -> None:
    """Refuse a stranger's or a newer database before writing anything; then migrate forward."""

    async def version_now() -> int | None:
        # pg_tables, not to_regclass: a plain query sees what a migration committed while we
        # waited for its lock (the catalog cache may not have yet).
        present = {
            r[0]
            for r in await conn.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY($1::text[])",
                ["supportdesk_meta", *TABLES],
            )
        }
        if "supportdesk_meta" not in present:
            if present:
                raise StoreError(
                    f"{where}: holds tables named like supportdesk's (sessions, items) but is not a supportdesk "
                    "database; refusing to touch it"
                )
            return None
        value = await conn.fetchval("SELECT value FROM supportdesk_meta WHERE key = 'schema_version'")
        return int(value) if value is not None else 0

    def refuse_newer(version: int | None) -> int:
        version = version or 0
        refusal = newer_schema(where, version, CURRENT_VERSION)
        if refusal is not None:
            raise refusal
        return version

    if refuse_newer(await version_now()) == CURRENT_VERSION:
        return
    async with conn.transaction():
        # Another process may be migrating too: one at a time, then read the version again.
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
        version = refuse_newer(await version_now())
        if version == 0:
            await conn.execute("CREATE TABLE IF NOT EXISTS supportdesk_meta (key text PRIMARY KEY, value text NOT NULL)")
        for number in range(version + 1, CURRENT_VERSION + 1):
            await conn.execute(MIGRATIONS[number - 1])
        if version < DESK_FOLD_VERSION or version < FIGURES_VERSION:
            for session_id, lacks_desk in await conn.fetch(SummarySql.LACKING):
                await _keep_whole_log_state(conn, session_id, desk=lacks_desk)
        await conn.execute(
            "INSERT INTO supportdesk_meta (key, value) VALUES ('schema_version', $1) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            str(CURRENT_VERSION),
        )


@dataclass(frozen=True)
class _Kept:
    """Where a session stood after an append: its row's columns that an append reads (as the
    text the row holds: the guarded append compares them) and their parses (all frozen)."""

    count: int
    summary: str | None
    entry_agent: str
    figures: str | None
    created_at: datetime
    clocks: str | None
    status: str
    state: ConversationState
    share: FigureSummary | None
    progress: SlaProgress | None

    @classmethod
    def of_row(
        cls, count: int, summary: str | None, entry_agent: str, figures: str | None, created_at: datetime,
        clocks: str | None, status: str,
    ) -> _Kept:
        state = ConversationState.from_json(summary) if summary else start(entry_agent)
        progress = SlaProgress.from_json(clocks) if clocks else None
        return cls(count, summary, entry_agent, figures, created_at, clocks, status, state, _share(figures), progress)

    def folds(self) -> tuple[ConversationState, FigureSummary, SlaProgress] | None:
        return current(self.count, self.state, self.share, self.progress)

    def advanced(
        self, folds: tuple[ConversationState, FigureSummary, SlaProgress], items: Sequence[Item], now: datetime,
        session_id: str = "", stamped_out: list[Item] | None = None,
    ) -> tuple[tuple[Any, ...], tuple[list[Any] | None, ...], _Kept]:
        """The kept state advanced over the items: SQL_APPEND's parameters from $17 on, the
        roll-up rows the append empties (SQL_ROLLUP_DROP_EMPTY's parameters, empty: none), and
        where the session stands after it. `stamped_out`: given the items as stamped for the fold
        (with `session_id`, their seqs after this state's head and `now`): what the append returns
        when it lands there, so they are not stamped twice (a dataclass replace each, issue 34)."""
        count = self.count
        stamped = [
            replace(item, session_id=session_id, seq=count + n, created_at=now) for n, item in enumerate(items, start=1)
        ]
        if stamped_out is not None:
            stamped_out[:] = stamped
        state, share, progress = advance_all(*folds, stamped)
        # The session's share of the figures and the roll-up rows it moves ride in the same
        # statement (they were two or three more round trips an append); a roll-up row the
        # append empties (rare: a status moving a share) is dropped by a statement of its own.
        delta = rollup_delta(self.share, share)
        figures = figure_columns(share, progress)
        rollup = _rollup_columns(delta)
        emptied = [row for row in delta if row[7] < 0]
        summary = state.to_json()
        after = _Kept(
            count + len(items), summary, self.entry_agent, figures[6], self.created_at, figures[7], self.status,
            state, share, progress,
        )
        tail = (state.state, summary, True, *figures, *rollup)
        return tail, tuple(_rollup_columns(emptied)) if emptied else (), after


@dataclass
class _LocalLease:
    """A session's in-process turn lock, and how many leases hold or wait for it."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class PostgresLease:
    """The turn lease of one session: a fenced row of `turn_leases`, behind an in-process lock
    per session, its holder's liveness shown by its store's owner lock.

    A turn takes it and reads its start in one statement (`try_start`, migration 9's
    `supportdesk_take_turn`) and gives it back in its last append's transaction
    (`PostgresStore.append(release=)`): no round trip of its own. Turns of this process on one
    session wait for each other on the session's asyncio lock, with no round trip either.

    Whether a holder in another process is alive: each store holds one advisory lock on a
    connection of its own (the lock connection, which runs nothing else), and names its
    holders after it. The server drops the lock with the connection: a killed holder's row is
    taken at once, one cut off from the network after the TCP keepalive (about 25 s). The lock
    alone is not the lease: a server restart drops it while its holder is alive in its turn, so
    a row from before a restart is waited out (its holder renews it). The row is: claimed as
    above, renewed every third of its lifetime, and named by every append of the turn
    (`token`), which the store refuses once another holder's name is in the row."""

    def __init__(self, store: PostgresStore, session_id: str):
        self._store = store
        self.session_id = session_id
        self._name = uuid.uuid4().hex
        self.holder = self._name
        self.waited = 0.0
        self.held = False
        self._local: asyncio.Lock | None = None  # this process's lock of the session, while held
        self._renewing: asyncio.Task[None] | None = None

    @property
    def token(self) -> str | None:
        return self.holder if self.held else None

    async def try_acquire(self) -> bool:
        if self.held:
            return True
        return await self._try(None) is not None

    async def try_start(self, n: int) -> TurnStart | None:
        if self.held:
            return await self._store.turn_start(self.session_id, n)
        return await self._try(n)

    async def acquire(self) -> None:
        await self._wait(None)

    async def start(self, n: int) -> TurnStart:
        read = await self._wait(n)
        assert read is not None
        return read

    async def _try(self, n: int | None) -> TurnStart | None:
        """One attempt, without waiting: None when another holder has the session."""
        local = self._store._local_lease(self.session_id)
        if local.locked():
            self._store._local_done(self.session_id)
            return None
        await local.acquire()
        return await self._take_or_let_go(local, n, wait=False)

    async def _wait(self, n: int | None) -> TurnStart | None:
        if n is None:
            read = _TAKEN if await self.try_acquire() else None
        else:
            read = await self.try_start(n)
        if read is not None:
            return read
        started = time.monotonic()
        local = self._store._local_lease(self.session_id)
        try:
            await local.acquire()  # this process's holder of the session first
        except BaseException:
            self._store._local_done(self.session_id)
            raise
        read = await self._take_or_let_go(local, n, wait=True)
        self.waited = time.monotonic() - started
        return read

    async def _take_or_let_go(self, local: asyncio.Lock, n: int | None, *, wait: bool) -> TurnStart | None:
        """Holding the in-process lock, claim the row (and read, when `n` is given), retrying
        while another process holds it if `wait`; on failure or cancellation let go of all."""
        pause = _WAIT_FIRST
        try:
            while True:
                self.holder = f"{self._name}:{await self._store._owner()}"
                read = await self._store._take_turn(self.session_id, self.holder, n)
                if read is not None:
                    self.held, self._local = True, local
                    self._renewing = asyncio.create_task(self._renew(), name=f"lease {self.session_id}")
                    return read
                if not wait:
                    break
                await asyncio.sleep(pause * (0.5 + random.random()))
                pause = min(pause * 2, _WAIT_MAX)
        except BaseException:
            local.release()
            self._store._local_done(self.session_id)
            raise
        local.release()
        self._store._local_done(self.session_id)
        return None

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self._store.lease_ttl / 3)
            with contextlib.suppress(StoreError):  # a lost moment: the next renewal comes in time
                await self._store._execute(_RENEW_ROW, self.session_id, self.holder, self._store.lease_ttl)

    def let_go(self) -> None:
        local, self._local = self._local, None
        if not self.held or local is None:
            return
        self.held = False
        if self._renewing is not None:
            self._renewing.cancel()
            self._renewing = None
        local.release()
        self._store._local_done(self.session_id)

    async def release(self) -> None:
        if not self.held or self._local is None:
            return
        holder = self.holder
        try:
            with contextlib.suppress(StoreError):  # unreachable: the row expires on its own
                await self._store._execute(_DROP_ROW, self.session_id, holder)
        finally:
            self.let_go()

    async def __aenter__(self) -> PostgresLease:
        await self.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.release()


# What a lease taken without a read (`try_acquire`) is told by `_take_turn`.
_TAKEN = TurnStart(None, [], {}, None)


def _created_meta(docs: list[str]) -> dict[str, Any] | None:
    """A creation's meta from its NOTIFY (`_created_notice`); None when it did not come."""
    try:
        meta = json.loads(docs[0]) if docs else None
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


class PostgresFeed:
    """LISTEN on a connection of its own: every NOTIFY an append, create, status change, fork
    or delete sent in its transaction, from any machine, as it commits."""

    def __init__(self, conn: asyncpg.Connection, own: set[int] | frozenset[int] = frozenset()):
        self._conn = conn
        self._queue: asyncio.Queue[Change | None] = asyncio.Queue()
        self._closed = False
        # The server process ids of the store's own pooled connections (`Change.own`).
        self._own = own
        # Whether the reader wants a session's items (`Hub` sets it: the sessions it follows).
        # A change of any other session comes without them: its documents are not parsed (every
        # worker hears every append of the desk; each parsed all of them, issue 34). None: all.
        self.wanted: Callable[[str], bool] | None = None

    @classmethod
    async def start(cls, location: StoreLocation, own: set[int] | frozenset[int] = frozenset()) -> PostgresFeed:
        conn = await _connect(location)
        feed = cls(conn, own)
        conn.add_termination_listener(feed._lost)
        await conn.add_listener(CHANNEL, feed._heard)
        return feed

    def _heard(self, conn: object, pid: int, channel: str, payload: str) -> None:
        first, *docs = payload.split("\n")
        head, deleted, session_id = first.split(" ", 2)
        own = pid in self._own
        items: tuple[Item, ...] = ()
        if head == "0" and deleted == "0":  # a creation: its line after the head's is the session's meta
            self._queue.put_nowait(Change(session_id, 0, own=own, meta=_created_meta(docs)))
            return
        wanted = self.wanted
        # (an own change's items are the writer's to hand over, an unwanted session's nobody's: not parsed)
        if docs and not own and (wanted is None or wanted(session_id)):
            try:
                items = tuple(window_item(doc) for doc in docs)
            except Exception:  # noqa: BLE001 (one this version cannot read: the follower reads the log)
                items = ()
        self._queue.put_nowait(Change(session_id, int(head), deleted == "1", own=own, items=items))

    def _lost(self, conn: object) -> None:
        self._queue.put_nowait(None)

    def __aiter__(self) -> PostgresFeed:
        return self

    async def __anext__(self) -> Change:
        if self._closed:
            raise StopAsyncIteration
        change = await self._queue.get()
        if change is None:
            if self._closed:
                raise StopAsyncIteration
            raise StoreError("the change feed lost its connection to the server")
        return change

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._queue.put_nowait(None)
        try:
            await self._conn.close(timeout=2)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError):
            self._conn.terminate()

    async def __aenter__(self) -> PostgresFeed:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class PostgresStore(StoreCore):
    """A pool of connections to one supportdesk database. Open with `await PostgresStore.open(url)`."""

    dialect = DIALECT
    reads = READS

    def __init__(
        self, pool: asyncpg.Pool, search_pool: asyncpg.Pool, location: StoreLocation,
        write_pool: asyncpg.Pool | None = None,
    ):
        self._pool = pool
        # The appends' connections (`WRITE_SETTINGS`, `_opened_for_appends`): opened, their
        # statements prepared and planned generically, before the store is handed out.
        self._write_pool = write_pool if write_pool is not None else pool
        # Searches have connections of their own (opened by the first search), so a burst of
        # them from many browsers never holds every connection a conversation read waits for.
        self._search_pool = search_pool
        self._where = location
        self.location = location.display
        self.clock: Callable[[], datetime] = utcnow
        # The protocol's flag for a store opened without write access; a server decides per write.
        self.readonly = False
        # Turn leases (PostgresLease): the lock connection, one query on it at a time, the
        # in-process lock of each session some lease holds or waits for (with its count).
        self._lease_conn: asyncpg.Connection | None = None
        self._lease_io = asyncio.Lock()
        self._locals: dict[str, _LocalLease] = {}
        # The number of this store's owner lock on the lock connection (see PostgresLease).
        self._owner_key: int | None = None
        # How long a turn lease's row outlives its holder's last renewal (seconds).
        self.lease_ttl = LEASE_TTL
        # Where this process's last append left each session (the newest KEPT_SESSIONS), for
        # the guarded one-statement append; never trusted: that statement checks it.
        self._kept: dict[str, _Kept] = {}
        # The server process ids of this store's pooled connections (filled as the pool opens
        # them): a NOTIFY from one of them is this process's own write (`Change.own`). A pid a
        # closed connection had may come back as another process's: `own` is only a hint.
        self._pids: set[int] = set()

    @classmethod
    async def open(
        cls, location: StoreLocation, *, pool_size: int = 8, write_connections: int = WRITE_CONNECTIONS
    ) -> PostgresStore:
        conn = await _connect(location)
        try:
            await _migrate(conn, location.display)
        except asyncpg.PostgresError as exc:
            raise StoreError(f"{location.display}: cannot set up the database: {scrub(str(exc), location.target)}") from None
        finally:
            await conn.close()
        pids: set[int] = set()

        async def opened(conn: asyncpg.Connection) -> None:
            pids.add(conn.get_server_pid())
            await _prepare(conn, READ_STATEMENTS)

        async def opened_for_appends(conn: asyncpg.Connection) -> None:
            pids.add(conn.get_server_pid())
            await _prepare(conn, WRITE_STATEMENTS)

        pool: asyncpg.Pool | None = None
        try:
            pool = await asyncpg.create_pool(
                location.target,
                min_size=1,
                max_size=pool_size,
                timeout=CONNECT_TIMEOUT_S,
                server_settings=_SERVER_SETTINGS,
                reset=_end_open_transaction,
                init=opened,
            )
            # All of them opened now (min = max): a worker pays their start-up before it serves.
            write_pool = await asyncpg.create_pool(
                location.target,
                min_size=write_connections,
                max_size=write_connections,
                timeout=CONNECT_TIMEOUT_S,
                server_settings=WRITE_SETTINGS,
                reset=_end_open_transaction,
                init=opened_for_appends,
            )
        except (OSError, TimeoutError, asyncio.TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            if pool is not None:
                await pool.close()
            raise _connect_error(location, exc) from None
        search_pool = asyncpg.create_pool(
            location.target,
            min_size=0,
            max_size=SEARCH_CONNECTIONS,
            timeout=CONNECT_TIMEOUT_S,
            # Planned for each search's own words and window: a generic plan of a cached
            # statement would not know whether the window is 5,000 messages or all of them.
            server_settings={**_SERVER_SETTINGS, "plan_cache_mode": "force_custom_plan"},
            reset=_end_open_transaction,
        )
        await search_pool  # min_size 0: connects nothing yet
        store = cls(pool, search_pool, location, write_pool)
        store._pids = pids
        return store

    async def warm(self, connections: int = SERVE_CONNECTIONS) -> None:
        """Pay the start-up a served load would pay, before serving (issue 34): `connections`
        of the main pool opened (each prepares READ_STATEMENTS as it connects), and the lease's
        lock connection with its owner lock. A desk that serves calls it once, after opening."""
        conns = [await self._pool.acquire(timeout=CONNECT_TIMEOUT_S) for _ in range(min(connections, self._pool.get_max_size()))]
        try:
            for conn in conns:
                # The turn's start (migration 11's PL/pgSQL function) compiled and its queries
                # planned on this backend, by a call in a transaction rolled back (it claims a
                # lease row for no session): a backend's first call cost 20-25 ms, the next 0.8.
                warming = conn.transaction()
                await warming.start()
                try:
                    await conn.fetch(SQL_TAKE_TURN_START, "", "", 0.0, 1)
                finally:
                    await warming.rollback()
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise self._failed(exc) from None
        finally:
            for conn in conns:
                await self._pool.release(conn)
        await self._owner()

    async def close(self) -> None:
        if self._lease_conn is not None and not self._lease_conn.is_closed():
            try:
                await self._lease_conn.close(timeout=2)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError):
                self._lease_conn.terminate()
        await self._search_pool.close()
        if self._write_pool is not self._pool:
            await self._write_pool.close()
        await self._pool.close()

    # --- one turn at a time, and the change feed -----------------------------------------------

    def turn(self, session_id: str) -> PostgresLease:
        return PostgresLease(self, session_id)

    async def follow(self) -> PostgresFeed:
        return await PostgresFeed.start(self._where, self._pids)

    def _local_lease(self, session_id: str) -> asyncio.Lock:
        """The in-process lock of a session's turn, for one more lease that wants it (paired
        with `_local_done`, so the table holds only sessions some lease holds or waits for)."""
        entry = self._locals.setdefault(session_id, _LocalLease())
        entry.users += 1
        return entry.lock

    def _local_done(self, session_id: str) -> None:
        entry = self._locals[session_id]
        entry.users -= 1
        if entry.users == 0:
            del self._locals[session_id]

    async def _owner(self) -> int:
        """This store's owner number, its advisory lock held on the lock connection (opened on
        first use, and again, with the lock, after the connection was lost): no round trip
        while the connection lives."""
        conn, owner = self._lease_conn, self._owner_key
        if conn is not None and not conn.is_closed() and owner is not None:
            return owner
        async with self._lease_io:
            try:
                if self._lease_conn is None or self._lease_conn.is_closed():
                    self._lease_conn, self._owner_key = await _connect(self._where), None
                while self._owner_key is None:
                    key = random.randrange(1, 2**31 - 1)
                    if await self._lease_conn.fetchval(_TAKE_OWNER, OWNER_CLASS, key):
                        self._owner_key = key
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
                raise self._failed(exc) from None
            return self._owner_key

    async def _take_turn(self, session_id: str, holder: str, n: int | None) -> TurnStart | None:
        """Claim the lease row for `holder`, and read the turn's start after the claim (`n`
        newest items) in the same round trip; None when another holder has it."""
        try:
            if n is None:
                rows = await self._pool.fetch(_TAKE, session_id, holder, self.lease_ttl)
                return _TAKEN if rows else None
            rows = await self._pool.fetch(SQL_TAKE_TURN_START, session_id, holder, self.lease_ttl, max(0, min(int(n), _NO_LIMIT)))
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise self._failed(exc) from None
        return _turn_start_of(rows[0]) if rows else None

    async def _execute(self, sql: str, *args: Any) -> None:
        try:
            await self._pool.execute(sql, *args)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise self._failed(exc) from None


    def _failed(self, exc: BaseException) -> StoreError:
        said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return StoreError(f"{self.location}: {scrub(said, self._where.target)}")

    async def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[asyncpg.Record]:
        return await self._fetch(sql, *params)

    async def _fetch(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        try:
            rows: list[asyncpg.Record] = await self._pool.fetch(sql, *args)
            return rows
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise self._failed(exc) from None

    # --- sessions ---------------------------------------------------------------------------

    async def create_session(
        self,
        entry_agent: str,
        *,
        title: str = "",
        session_id: str | None = None,
        channel: str = "tui",
        meta: dict[str, Any] | None = None,
        first: Sequence[Item] = (),
    ) -> SessionInfo:
        """A new session; `first` items are appended in the same transaction."""
        sid = session_id or uuid.uuid4().hex[:12]
        now = self.clock()
        fresh = start(entry_agent)
        insert = f"""WITH s AS (
                    INSERT INTO sessions (id, title, created_at, updated_at, entry_agent, active_agent, channel, meta,
                                          desk_state, desk_summary)
                    VALUES ($1, $2, $3, $3, $4, $4, $5, $6, $7, $8) RETURNING {_SESSION_COLS})
                SELECT s.*, pg_notify('{CHANNEL}', '0 0 ' || s.id || $9::text) FROM s"""
        meta_json = json.dumps(meta or {}, ensure_ascii=False)
        params = (sid, title, now, entry_agent, channel, meta_json, fresh.state, fresh.to_json())
        notice = _created_notice(meta_json)
        try:
            if first:
                try:
                    async with self._pool.acquire() as conn, conn.transaction():
                        await conn.fetch(insert, *params, notice)
                        await _keep_share(conn, sid, None, figure_summary.start(entry_agent, now))
                        await self._append_on(conn, sid, first, now)
                except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
                    raise self._failed(exc) from None
                info = await self.get_session(sid)
                assert info is not None
                return info
            share = figure_summary.start(entry_agent, now)
            # One statement (issue 34: every served conversation starts here): the row with its
            # share of the figures, and the roll-up rows that share adds, where a transaction of
            # three statements (the row, the roll-up, the share) was five round trips. A
            # statement is atomic: an id taken already writes neither. A new share only adds to
            # the roll-up, so no row of it is emptied (`_keep_share`'s drop).
            figures = figure_columns(share, None)
            rollup = rollup_delta(None, share)
            assert all(row[7] > 0 for row in rollup)
            try:
                async with self._pool.acquire() as conn:
                    rows = await conn.fetch(_SQL_CREATE_SESSION, *params, *figures, *_rollup_columns(rollup), notice)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
                raise self._failed(exc) from None
        except StoreError:
            if await self.get_session(sid) is not None:
                raise StoreError(f"a session {sid!r} already exists") from None
            raise
        # What the row now holds (the kept share as the statement wrote it): its first append
        # can be the guarded statement.
        self._remember(sid, _Kept(0, params[7], entry_agent, figures[6], now, figures[7], rows[0]["status"],
                                  fresh, share, SlaProgress()))
        return session_info({k: v for k, v in dict(rows[0]).items() if k != "pg_notify"})

    async def set_status(self, session_id: str, status: str) -> None:
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                # The row's lock orders this with the session's appends; a waiting status holds
                # back the session's resolution in the figures' roll-up.
                row = await conn.fetchrow(
                    "SELECT figure_summary, sla_summary FROM sessions WHERE id = $1 FOR UPDATE", session_id
                )
                await conn.fetch(
                    f"""WITH s AS (UPDATE sessions SET status = $2 WHERE id = $1 RETURNING item_count)
                    SELECT pg_notify('{CHANNEL}', item_count || ' 0 ' || $1) FROM s""",
                    session_id,
                    status,
                )
                move = status_move(row[0], row[1], status) if row is not None else None
                if move is not None:
                    await _keep_share(conn, session_id, *move)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise self._failed(exc) from None

    async def delete_session(self, session_id: str) -> bool:
        # Items, context keys and usage totals go with it: ON DELETE CASCADE; its share of the
        # figures leaves the roll-up.
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                kept = await conn.fetchrow("SELECT figure_summary FROM sessions WHERE id = $1 FOR UPDATE", session_id)
                if kept is not None:
                    await _keep_share(conn, session_id, _share(kept[0]), None)
                rows = await conn.fetch(
                    f"""WITH d AS (DELETE FROM sessions WHERE id = $1 RETURNING id)
                    SELECT pg_notify('{CHANNEL}', '0 1 ' || id) FROM d""",
                    session_id,
                )
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise self._failed(exc) from None
        return bool(rows)

    # --- the log --------------------------------------------------------------------------------

    @staticmethod
    def _append_args(session_id: str, items: Sequence[Item], now: datetime) -> tuple[Any, ...]:
        """SQL_APPEND's parameters for these items (serialized before the statement runs)."""
        plan = plan_append(items)
        words = [_search_words(item.text) if item.kind == "message" else None for item in items]
        usage = plan.usage
        return (
            session_id,
            len(items),
            plan.handoffs,
            plan.active,
            plan.title,
            now,
            plan.kinds,
            plan.agents,
            plan.bodies,
            _column(plan.metas),
            _column(plan.keys),
            _column(words),
            *(
                ([u[0] for u in usage], _texts(u[1] for u in usage), _texts(u[2] for u in usage), _texts(u[3] for u in usage))
                if usage else _NO_USAGE
            ),
        )

    async def _append_on(
        self, conn: asyncpg.Connection, session_id: str, items: Sequence[Item], now: datetime,
        fence: str | None = None, release: bool = False, args: tuple[Any, ...] | None = None,
        stamped_out: list[Item] | None = None, at: int | None = None,
    ) -> int:
        """The append inside the caller's transaction; returns the last seq before the items.

        The session's kept state is read with its row locked and advanced over the new items
        (a fold of a few items), then SQL_APPEND writes it with the head it moves. The items are
        serialized (and so validated) first: a wrong one fails before anything is read or locked.
        `fence`: the turn lease's token, checked by that same read (`release`: its row deleted);
        `LeaseLost` when it is no longer current; `args`: `_append_args`' if already made;
        `at`: the seq the first item must get (`HeadMoved` when the locked row ends elsewhere)."""
        if args is None:
            args = self._append_args(session_id, items, now)
        if fence is None:
            before = await conn.fetchrow(SQL_DESK_BEFORE, session_id)
        else:
            sql = SQL_FENCED_DROP_DESK_BEFORE if release else SQL_FENCED_DESK_BEFORE
            row = await conn.fetchrow(sql, session_id, *((fence,) if release else ()))
            holder = row[0] if row is not None else await conn.fetchval(_FENCE_AND_DROP if release else _FENCE, session_id, *((fence,) if release else ()))
            if holder != fence:
                raise LeaseLost(
                    f"session {session_id}: another process took this turn's lease while this one was paused "
                    "past it; the turn stopped here and wrote nothing more"
                )
            before = row[1:] if row is not None else None
        if before is None:
            raise StoreError(f"no session {session_id!r}")
        count, summary, entry_agent, figures, created_at, clocks, status = before
        if at is not None and count + 1 != at:
            raise HeadMoved(f"session {session_id}: the log ends at {count}, not at {at - 1}; nothing was written")
        kept = _Kept.of_row(count, summary, entry_agent, figures, created_at, clocks, status)
        folds = kept.folds()
        if folds is None:
            folds = await _whole_log(conn, session_id, entry_agent, created_at, status)
        tail, emptied, after = kept.advanced(folds, items, now, session_id, stamped_out)
        rows = await conn.fetch(SQL_APPEND, *args, *tail, _sent_docs(args, count))
        if emptied and rows[0][2]:
            await conn.execute(SQL_ROLLUP_DROP_EMPTY, *emptied)
        self._remember(session_id, after)
        return int(rows[0][0])

    async def _append_kept(
        self, conn: asyncpg.Connection, session_id: str, items: Sequence[Item], now: datetime,
        fence: str | None, release: bool, args: tuple[Any, ...], stamped_out: list[Item] | None = None,
    ) -> int | None:
        """The append as one statement on its own, from where this process's last append left
        the session (SQL_APPEND_KEPT); the last seq before the items, or None when it wrote
        nothing (no kept state, the row moved since, the lease not the turn's): then the caller
        runs `_append_on` in a transaction, which decides.

        Roll-up rows the append empties (a session's share moving on, when it is first answered,
        out of a row no other session holds any more: the statement says so) are dropped by one
        statement after it, outside its transaction (they were BEGIN, the locked read, the append,
        the drop and COMMIT: five round trips, issue 34); a row the share left that others still
        hold is not empty and costs no statement. An empty row counts nothing in any figure, so one left for that moment, or
        for good when the drop fails, changes no figure; the drop takes a row only while it is
        still empty, under its lock (another session may have moved into it since)."""
        kept = self._kept.get(session_id)
        if kept is None:
            return None
        folds = kept.folds()
        if folds is None:
            return None
        tail, emptied, after = kept.advanced(folds, items, now, session_id, stamped_out)
        sql = SQL_APPEND_KEPT if fence is None else SQL_APPEND_KEPT_RELEASE if release else SQL_APPEND_KEPT_FENCED
        guard = (kept.count, kept.status, kept.created_at, kept.summary, kept.figures, kept.clocks)
        docs = _sent_docs(args, kept.count)
        rows = await conn.fetch(sql, *args, *tail, docs, *guard, *(() if fence is None else (fence,)))
        if not rows:
            self._kept.pop(session_id, None)
            return None
        self._remember(session_id, after)
        if emptied and rows[0][2]:
            try:  # (the items are stored: a failed drop must not say otherwise)
                await conn.execute(SQL_ROLLUP_DROP_EMPTY, *emptied)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
                log.warning("%s: dropping emptied figure roll-up rows failed (%s); they count nothing", self.location, exc)
        return int(rows[0][0])

    def _remember(self, session_id: str, after: _Kept) -> None:
        kept = self._kept
        kept.pop(session_id, None)
        kept[session_id] = after
        if len(kept) > KEPT_SESSIONS:
            del kept[next(iter(kept))]

    async def append(
        self, session_id: str, items: Sequence[Item], *, fence: str | None = None, release: TurnLease | None = None,
        at: int | None = None,
    ) -> list[Item]:
        """Append items as one transaction; returns them stamped with seq and time. `fence`:
        the turn lease's token, checked in the same transaction (`LeaseLost` if no longer current);
        `release`: the lease given back in that transaction too, its row deleted by the statement
        that checks the fence (`Store.append`); `at`: the seq the first item must get
        (`HeadMoved` otherwise). One statement and one round trip when this process's last
        append to the session is still its head (`_append_kept`, whose guard holds the head
        where `at` wants it), else a transaction that reads the session's row first."""
        if release is not None:
            fence = release_token(session_id, release)
        if not items:
            if release is not None:
                await release.release()
            return []
        external = external_ids(session_id, items)
        now = self.clock()
        # The items serialized (and so validated) first: a wrong one fails before anything is sent.
        args = self._append_args(session_id, items, now)
        made: list[Item] = []  # the items as the fold stamped them, for the head the append landed on
        try:
            async with self._write_pool.acquire() as conn:
                kept = self._kept.get(session_id)
                last = (
                    await self._append_kept(conn, session_id, items, now, fence, release is not None, args, made)
                    if at is None or (kept is not None and kept.count + 1 == at) else None
                )
                if last is None:
                    try:
                        async with conn.transaction():
                            last = await self._append_on(
                                conn, session_id, items, now, fence, release is not None, args, made, at
                            )
                    except BaseException:
                        self._kept.pop(session_id, None)
                        raise
        except asyncpg.UniqueViolationError as exc:
            # Two workers given the same delivery: the unique index refuses the second copy in
            # its own transaction, which rolled back whole.
            if exc.constraint_name != "items_by_external_id" or not external:
                raise self._failed(exc) from None
            raise duplicate_item(session_id, external[0]) from None
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise self._failed(exc) from None
        if release is not None:
            release.let_go()
        if len(made) == len(items) and made[0].seq == last + 1:
            stamped = made
        else:  # (not reached: the statement that wrote them is the one whose fold made them)
            stamped = [
                replace(item, session_id=session_id, seq=last + n, created_at=now)
                for n, item in enumerate(items, start=1)
            ]
        # The items as this process's next reads of the session will get them (the same text
        # its NOTIFY carried): kept as their parse, so the next turn's start, which reads them
        # back as documents, parses none of them (about 12 items a served message).
        docs = _sent_docs(args, last)
        if docs:
            for doc, item in zip(docs.split("\n")[1:], stamped):
                keep_parsed(doc, item)
        return stamped

    async def latest(self, session_id: str, n: int) -> list[Item]:
        """The last n items, oldest first."""
        return [_window_item(r) for r in await self._fetch(SQL_LATEST if n == 50 else sql_latest(n), session_id)]

    async def items_at(self, session_id: str, seqs: Sequence[int]) -> list[Item]:
        """The items at these seqs, in seq order, in one read; seqs with no item are skipped."""
        wanted = sorted({int(seq) for seq in seqs if -_NO_LIMIT <= int(seq) <= _NO_LIMIT})
        if not wanted:
            return []
        return [_item(r) for r in await self._fetch(SQL_ITEMS_AT, session_id, _texts(wanted))]

    async def turn_start(self, session_id: str, n: int) -> TurnStart:
        """The session's row, newest `n` items, context and holder: one statement."""
        rows = await self._fetch(sql_turn_start(n), session_id)
        return _turn_start_of(rows[0]) if rows else turn_start_of(None, (), (), None)

    async def of_kind(self, session_id: str, kind: str, *, upto: int | None = None, after: int = 0) -> list[Item]:
        """Every item of one kind (notices for pending approvals, say), oldest first."""
        upto = min(upto, _NO_LIMIT) if upto is not None else _NO_LIMIT
        # (Through the kept parses: serve's per-conversation limit reads the recent messages on every POST.)
        return [_window_item(r) for r in await self._fetch(SQL_OF_KIND, session_id, kind, min(after, _NO_LIMIT), upto)]

    async def kind_seqs(self, session_id: str, kind: str) -> list[int]:
        """The seqs of every item of one kind (the replay's handoff stops, say)."""
        return [r[0] for r in await self._fetch(SQL_KIND_SEQS, session_id, kind)]

    # --- search and fork ---------------------------------------------------------------------

    async def desk_figures(self, since: datetime | None, until: datetime) -> DeskFigures:
        try:
            async with self._pool.acquire(timeout=CONNECT_TIMEOUT_S) as conn:
                return await read_figures(conn, since, until)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as exc:
            raise self._failed(exc) from None

    async def search(self, text: str, *, limit: int = 50) -> list[SearchHit]:
        """The newest `limit` messages holding every word (words of 3+ letters as prefixes).

        Each step runs on the search pool, never on a connection the conversation's reads and
        writes need (however many searches run); cancelling the awaiting task makes asyncpg
        send the server a cancel request, so an abandoned search stops at once."""
        query = _tsquery(text)
        if not query or limit <= 0:
            return []
        rows = await self._search(SQL_SEARCH_NEWEST, query, limit, SEARCH_WINDOW)
        if len(rows) < limit:
            rows = await self._search(SQL_SEARCH_MATCHES, query, limit, SEARCH_MATCH_CAP)
            if rows and rows[0][4] > SEARCH_MATCH_CAP:
                rows = await self._search(SQL_SEARCH_NEWEST, query, limit, None)
        return [SearchHit(session_id=a, title=b, seq=c, snippet=d or "") for a, b, c, d, _ in rows]

    async def _search(self, sql: str, query: str, limit: int, bound: int | None) -> list[asyncpg.Record]:
        """One step of a search, on the search pool (never the conversation's connections)."""
        try:
            rows: list[asyncpg.Record] = await self._search_pool.fetch(sql, query, _HEADLINE, limit, bound)
            return rows
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise self._failed(exc) from None

    # --- whole sessions (supportdesk db copy and check: the StoreAdmin capability) -------------

    async def schema_version(self) -> int:
        rows = await self._fetch("SELECT value FROM supportdesk_meta WHERE key = 'schema_version'")
        return int(rows[0][0]) if rows else 0

    async def import_session(
        self, info: SessionInfo, items: Sequence[Item], usage: dict[str, dict[str, int]]
    ) -> None:
        """Write a session exactly as another store holds it, in one transaction."""
        rows = import_rows(DIALECT, info, items, usage)
        # and the words each message is found by
        item_rows = [
            (*row, _search_words(item.text) if item.kind == "message" else None) for row, item in zip(rows.items, items)
        ]
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                if await conn.fetchval(COPY.session_exists, info.id) is not None:
                    raise StoreError(f"a session {info.id!r} already exists")
                await conn.execute(insert_session_sql(DIALECT), *rows.session)
                await conn.executemany(
                    "INSERT INTO items (session_id, seq, kind, agent, created_at, body, meta, ctx_key, search) "
                    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_tsvector('simple', $9))",
                    item_rows,
                )
                await _keep_whole_log_state(conn, info.id)
                await conn.executemany(
                    "INSERT INTO context_keys (session_id, key) VALUES ($1, $2)", [(info.id, key) for key in rows.keys]
                )
                await conn.executemany(COPY.insert_usage, rows.usage)
                await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, f"{info.item_count} 0 {info.id}")
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise self._failed(exc) from None

    async def _copy_session(self, source: SessionInfo, new_id: str, upto: int, now: datetime) -> None:
        session_id = source.id
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                # The title comes from the first customer message: keep the source's only if
                # that message is among the copied items.
                first_customer = await conn.fetchval(
                    "SELECT min(seq) FROM items WHERE session_id = $1 AND kind = 'message' "
                    "AND body::json ->> 'role' = 'customer'",
                    session_id,
                )
                title = fork_title(source, first_customer, upto)
                handoffs = await conn.fetchval(
                    "SELECT count(*) FROM items WHERE session_id = $1 AND kind = 'handoff' AND seq <= $2", session_id, upto
                )
                active = await conn.fetchval(SQL_AGENT_AT, session_id, upto)
                await conn.execute(
                    COPY.fork_session,
                    new_id,
                    title,
                    now,
                    now,
                    source.entry_agent,
                    active or source.entry_agent,
                    upto,
                    handoffs,
                    session_id,
                    upto,
                )
                await conn.execute(
                    "INSERT INTO items (session_id, seq, kind, agent, created_at, body, meta, ctx_key, search) "
                    "SELECT $1, seq, kind, agent, created_at, body, meta, ctx_key, search FROM items "
                    "WHERE session_id = $2 AND seq <= $3",
                    new_id,
                    session_id,
                    upto,
                )
                await conn.execute(COPY.fork_context_keys, new_id, new_id)
                # A fork's totals are those of the items it copies, summed as the appends sum them.
                metas = await conn.fetch(
                    "SELECT agent, meta FROM items WHERE session_id = $1 AND meta IS NOT NULL", new_id
                )
                usage = usage_rows([(agent, json.loads(meta)) for agent, meta in metas])
                if usage:
                    await conn.executemany(COPY.insert_usage, [(new_id, *row) for row in usage])
                await _keep_whole_log_state(conn, new_id)
                await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, f"{upto} 0 {new_id}")
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise self._failed(exc) from None
