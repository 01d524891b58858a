"""The SQLite session store: an append-only item log per session.

Every read the panes need (latest N, a seq range, one item, the handoffs, the context
as of seq k) is an index lookup whose cost does not grow with the session's length.
Appends take the next seq inside one `BEGIN IMMEDIATE` transaction, so several OS
processes writing one session never lose, duplicate or reorder an item. What it shares with
the PostgreSQL adapter (the session reads, the summaries' fold, the append's plan) is
`store/core.py`; this module holds SQLite's statements, its driver and its file handling.
"""

from __future__ import annotations

import json
import os
import asyncio
import collections
import contextlib
import functools
import random
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar, cast

import aiosqlite
from supportdesk.folds.desk_state import ConversationState, start
from supportdesk.items import Item, item_from_json, utcnow
from supportdesk.store.location import default_db_path, parse_location
from supportdesk.store.protocol import (
    MATCH_END,
    MATCH_START,
    ContextEntry,
    HeadMoved,
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
    session_info,
)
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
    window_item_of_row as _window_item,
    newer_schema,
    plan_append,
    session_of_row as _session,
    share_of as _share,
    status_move,
    turn_start_of,
)
from supportdesk.store.figure_summary import FigureSummary, rollup_delta
from supportdesk.folds.sla import SlaProgress
from supportdesk.store.schema import APPLICATION_ID, CURRENT_VERSION, DESK_FOLD_VERSION, FIGURES_VERSION, MIGRATIONS
from supportdesk.store.figures import DeskFigures
from supportdesk.store.sqlite_figures import read_figures
from supportdesk.store.kept_folds import advance_all
from supportdesk.store.sqlite_tx import write_transaction
from supportdesk.store.sqlite_live import LEASE_TTL, SQL_DROP_LEASE, SqliteFeed, SqliteLease, check_fence

T = TypeVar("T")


# An item row as one JSON object (envelope columns merged into the body), so reading it
# back is a single pydantic-core parse: about half the cost of json.loads + validation.
_ITEM_COLS = (
    "json_set(body, '$.session_id', session_id, '$.seq', seq, '$.kind', kind, '$.agent', agent, "
    "'$.created_at', created_at, '$.meta', json(coalesce(meta, '{}')))"
)

# The reads the panes make on every refresh. They are module constants so the tests can
# run `EXPLAIN QUERY PLAN` on the exact strings and prove each one is an index search
# (SEARCH ... USING INDEX), never a scan of the items table.
SQL_LATEST = (
    f"SELECT {_ITEM_COLS} FROM items WHERE session_id = ? AND seq > "
    "(SELECT item_count FROM sessions WHERE id = ?) - ? ORDER BY seq"
)
# Larger than any seq: "no upper bound" for the reads that take one.
_NO_LIMIT = 2**62
SQL_RANGE = f"SELECT {_ITEM_COLS} FROM items WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq"
SQL_ITEM = f"SELECT {_ITEM_COLS} FROM items WHERE session_id = ? AND seq = ?"
# Many items by seq in one statement: the seqs travel as one JSON array, so the SQL text is
# the same whatever their number (one probe of (session_id, seq) per listed seq).
SQL_ITEMS_AT = (
    f"SELECT {_ITEM_COLS} FROM items WHERE session_id = ? AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq"
)
# `items_by_kind` holds every kind but messages (schema migration 9): the kind reads ask for
# sparse kinds (handoffs, notices, take-overs), and indexing the messages, most of every log,
# cost more room than anything else on `items`. The `kind <> 'message'` term is what lets
# SQLite use that partial index (it cannot prove it from a bound `kind = ?`). Messages are
# read along (session_id, seq) instead: they are most of the items that range walks anyway.
SQL_OF_KIND = (
    f"SELECT {_ITEM_COLS} FROM items "
    "WHERE session_id = ? AND kind = ? AND kind <> 'message' AND seq > ? AND seq <= ? ORDER BY seq"
)
SQL_OF_KIND_MESSAGE = (
    f"SELECT {_ITEM_COLS} FROM items WHERE session_id = ? AND seq > ? AND seq <= ? AND kind = 'message' ORDER BY seq"
)
SQL_KIND_SEQS = "SELECT seq FROM items WHERE session_id = ? AND kind = ? AND kind <> 'message' ORDER BY seq"
SQL_KIND_SEQS_MESSAGE = "SELECT seq FROM items WHERE session_id = ? AND kind = 'message' ORDER BY seq"
SQL_AGENT_AT = (
    "SELECT json_extract(body, '$.to_agent') FROM items "
    "WHERE session_id = ? AND kind = 'handoff' AND kind <> 'message' AND seq <= ? ORDER BY seq DESC LIMIT 1"
)
# One probe per context key: the newest write to that key at or before seq k.
SQL_CONTEXT_AT = """
    SELECT k.key, i.body, i.seq, i.created_at
    FROM context_keys AS k
    JOIN items AS i ON i.session_id = k.session_id AND i.seq = (
        SELECT seq FROM items
        WHERE session_id = k.session_id AND ctx_key = k.key AND seq <= ?
        ORDER BY seq DESC LIMIT 1)
    WHERE k.session_id = ?
    ORDER BY k.key
"""
# Who holds the conversation: the person of a take-over no release came after (two index probes).
SQL_HELD_BY = (
    "SELECT json_extract(body, '$.person') FROM items WHERE session_id = ? AND kind = 'takeover' AND kind <> 'message' "
    "AND seq > coalesce((SELECT max(seq) FROM items WHERE session_id = ? AND kind = 'release' AND kind <> 'message'), 0) "
    "ORDER BY seq DESC LIMIT 1"
)
# The append transaction reads the session row (the head, the kept summaries and the search
# backlog), folds the new items, then writes the row once (the head, the three summaries and the
# figures' columns) and inserts the items. Few statements, because the write lock is held
# meanwhile and other processes wait for it.
SQL_DESK_BEFORE = (
    "SELECT item_count, desk_summary, entry_agent, desk_state, figure_summary, created_at, sla_summary, status, "
    "(SELECT coalesce(max(id), 0) FROM items) - (SELECT indexed_upto FROM search_progress) "
    "FROM sessions WHERE id = ?"
)


@functools.cache
def append_head_sql(state: bool = True, asked: bool = True, resolved: bool = True, first: bool = True) -> str:
    """The append's UPDATE of the session row, setting `desk_state`, the span's start, the first
    answer's columns and the resolution's only when they moved: a column in SET rewrites the
    entries of every index holding it (one more page written to the WAL per index at each
    commit), even when the value is the same, and most appends move none of them."""
    moved = [
        "desk_state = :state" if state else "",
        "span_first = :span_first" if first else "",
        "asked_us = :asked_us, answer_ms = :answer_ms" if asked else "",
        "resolved_us = :resolved_us, resolution_ms = :resolution_ms" if resolved else "",
    ]
    return (
        "UPDATE sessions SET item_count = :count + :n, handoff_count = handoff_count + :handoffs, "
        "active_agent = coalesce(:active, active_agent), "
        "title = CASE WHEN title = '' AND :title IS NOT NULL THEN :title ELSE title END, "
        "updated_at = :now, desk_summary = :summary, span_last = :span_last, "
        + "".join(f"{part}, " for part in moved if part)
        + "figure_summary = :figures, sla_summary = :clocks WHERE id = :sid"
    )


SQL_APPEND_HEAD = append_head_sql()
SQL_APPEND_HEAD_SAME_STATE = append_head_sql(state=False)
# The session's share of the figures (schema migration 10): its columns (SUMMARY_SQL), and the
# roll-up rows it moves (store/figure_summary.py). A roll-up row emptied by a session moving on is dropped.
SQL_ROLLUP_ADD = """
    INSERT INTO figure_rollup (grain, lo, hi, what, a, b, c, n, x, y, z) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (grain, lo, hi, what, a, b, c) DO UPDATE SET
        n = n + excluded.n, x = x + excluded.x, y = y + excluded.y, z = z + excluded.z
    RETURNING n
"""
SQL_ROLLUP_DROP_EMPTY = (
    "DELETE FROM figure_rollup WHERE grain = ? AND lo = ? AND hi = ? AND what = ? AND a = ? AND b = ? AND c = ? AND n = 0"
)
SQL_DESK_TAGS = "SELECT DISTINCT value FROM sessions, json_each(sessions.desk_summary, '$.tags') ORDER BY value"
SQL_DESK_PRIORITIES = (
    "SELECT DISTINCT json_extract(desk_summary, '$.priority') AS p FROM sessions "
    "WHERE json_extract(desk_summary, '$.priority') NOT IN ('', 'none') ORDER BY p"
)
# (a snooze whose time has passed is back with staff: desk_state.at)
SQL_COUNT_NEEDING_STAFF = (
    "SELECT count(*) FROM sessions WHERE desk_state = 'needs_staff' OR (desk_state = 'snoozed' "
    "AND julianday(json_extract(desk_summary, '$.snoozed_until')) <= julianday(?))"
)


def _snooze_over(p: str) -> str:
    return f"coalesce(julianday(json_extract(desk_summary, '$.snoozed_until')) <= julianday({p}), 0)"


DIALECT = StoreDialect(
    param=lambda n: "?",
    time=lambda at: at.isoformat(),
    summary_field=lambda key: f"json_extract(desk_summary, '$.{key}')",
    snooze_over=_snooze_over,
    has_tag=lambda p: f"EXISTS (SELECT 1 FROM json_each(sessions.desk_summary, '$.tags') WHERE value = {p})",
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
# The reads the tests EXPLAIN, by their old names.
SQL_LAST_SEQ, SQL_DESK, SQL_USAGE_TOTALS = READS.last_seq, READS.desk, READS.usage_totals
SQL_INSERT_ITEM = (
    "INSERT INTO items (session_id, seq, kind, agent, created_at, body, meta, ctx_key) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
# Search indexing runs in batches (schema migration 3). A new item gets max(items.id) + 1, so
# the messages not yet indexed are those past a high-water mark, found by a rowid range.
SEARCH_BATCH = 256
SQL_SEARCH_BACKLOG = "SELECT (SELECT coalesce(max(id), 0) FROM items) - indexed_upto FROM search_progress"
SQL_INDEX_NEW_MESSAGES = (
    "INSERT INTO message_fts (rowid, text) SELECT id, json_extract(body, '$.text') FROM items "
    "WHERE id > (SELECT indexed_upto FROM search_progress) AND kind = 'message'"
)
SQL_MARK_INDEXED = "UPDATE search_progress SET indexed_upto = (SELECT coalesce(max(id), 0) FROM items)"
# After a delete the highest ids may be gone, and SQLite hands them out again: pull the
# mark down so the reused ids count as new.
SQL_LOWER_MARK = (
    "UPDATE search_progress SET indexed_upto = min(indexed_upto, (SELECT coalesce(max(id), 0) FROM items))"
)
SQL_ADD_CONTEXT_KEY = "INSERT OR IGNORE INTO context_keys (session_id, key) VALUES (?, ?)"
# Token usage per session and agent (schema migration 4), added to by the append that
# stores the items carrying it. `reported` drops to 0 once any count was an estimate.
SQL_ADD_USAGE = """
    INSERT INTO usage_totals (session_id, agent, input_tokens, output_tokens, reported) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (session_id, agent) DO UPDATE SET
        input_tokens = input_tokens + excluded.input_tokens,
        output_tokens = output_tokens + excluded.output_tokens,
        reported = min(reported, excluded.reported)
"""
# A fork's totals are those of the items it copies (1..k), not the source's whole session.
SQL_FORK_USAGE = """
    INSERT INTO usage_totals (session_id, agent, input_tokens, output_tokens, reported)
    SELECT ?, agent,
           sum(coalesce(json_extract(meta, '$.usage.input_tokens'), 0)),
           sum(coalesce(json_extract(meta, '$.usage.output_tokens'), 0)),
           min(coalesce(json_extract(meta, '$.usage.reported'), 1))
    FROM items WHERE session_id = ? AND seq <= ? AND meta IS NOT NULL AND json_extract(meta, '$.usage') IS NOT NULL
    GROUP BY agent
"""
# Newest matching message first: FTS5 walks its index backwards by rowid (= items.id, which
# grows with every append) and stops at the limit, so a page costs the same whether a word is
# in ten messages or in a hundred thousand, and only the page's rows get a snippet. (Ordering
# by bm25 or by the session's activity would score or join every match before the limit.)
SQL_SEARCH = f"""
    SELECT i.session_id, s.title, i.seq,
           snippet(message_fts, 0, '{MATCH_START}', '{MATCH_END}', '…', 12)
    FROM message_fts
    JOIN items AS i ON i.id = message_fts.rowid
    JOIN sessions AS s ON s.id = i.session_id
    WHERE message_fts MATCH ?
    ORDER BY message_fts.rowid DESC
    LIMIT ?
"""
# The messages past the search mark (fewer than SEARCH_BATCH), for a read-only database's search.
SQL_UNINDEXED_MESSAGES = """
    SELECT i.session_id, s.title, i.seq, json_extract(i.body, '$.text')
    FROM items AS i JOIN sessions AS s ON s.id = i.session_id
    WHERE i.id > (SELECT indexed_upto FROM search_progress) AND i.kind = 'message'
    ORDER BY i.id DESC
"""


def _whole_log(
    conn: sqlite3.Connection, session_id: str, entry_agent: str, created_at: str, status: str
) -> tuple[ConversationState, FigureSummary, SlaProgress]:
    """The state and the figures' share folded from the whole log (a session without kept
    summaries: a fork, an import, a file from before migration 10). Inside the caller's transaction."""
    (copied,) = conn.execute(SUMMARY_SQL.forked_at, (session_id,)).fetchone()
    rows = conn.execute(f"SELECT {_ITEM_COLS} FROM items WHERE session_id = ? ORDER BY seq", (session_id,))
    return fold_whole_log(entry_agent, datetime.fromisoformat(created_at), status, copied, (_item(r) for r in rows))


class _KeptStates:
    """Summaries this store wrote or read, parsed, by their exact JSON text.

    Every append reads the session's kept summaries under the write lock; parsing them again each
    time cost more than the rest of a one-item append's Python work. The text read back is the
    key, so another process's append (a different text) is parsed, never mistaken for ours.
    (The parsed summaries are shared: the folds copy what they change, never mutate them.)"""

    SIZE = 256

    def __init__(self) -> None:
        self.states: dict[str, ConversationState] = {}
        self.shares: dict[str, FigureSummary] = {}
        self.clocks: dict[str, SlaProgress] = {}

    def parse(self, text: str) -> ConversationState:
        return self._parsed(self.states, text, ConversationState.from_json)

    def share(self, text: str) -> FigureSummary:
        return self._parsed(self.shares, text, FigureSummary.from_json)

    def progress(self, text: str) -> SlaProgress:
        return self._parsed(self.clocks, text, SlaProgress.from_json)

    def _parsed(self, cache: dict[str, T], text: str, parse: Callable[[str], T]) -> T:
        value = cache.get(text)
        if value is None:
            value = parse(text)
            self._put(cache, text, value)
        return value

    def keep(self, text: str, state: ConversationState) -> None:
        self._put(self.states, text, state)

    def keep_all(self, texts: tuple[str, str, str], state: ConversationState, share: FigureSummary, progress: SlaProgress) -> None:
        self._put(self.states, texts[0], state)
        self._put(self.shares, texts[1], share)
        self._put(self.clocks, texts[2], progress)

    def _put(self, cache: dict[str, Any], text: str, value: Any) -> None:
        if len(cache) >= self.SIZE:
            cache.clear()
        cache[text] = value


def _state_before(
    conn: sqlite3.Connection, session_id: str, kept_states: _KeptStates
) -> tuple[int, ConversationState, str | None, FigureSummary | None, FigureSummary, SlaProgress, int]:
    """The session's head, its state as kept (or folded, if none was kept or it lags), the
    `desk_state` column as stored, the figures' share the roll-up holds now (None: none yet), the
    share and SLA clocks to advance (folded from the log if either lags), and the search backlog."""
    row = conn.execute(SQL_DESK_BEFORE, (session_id,)).fetchone()
    if row is None:
        raise StoreError(f"no session {session_id!r}")
    count, summary, entry_agent, stored, figures, created_at, clocks, status, backlog = row
    state = kept_states.parse(summary) if summary else start(entry_agent)
    kept = share = kept_states.share(figures) if figures else None
    progress = kept_states.progress(clocks) if clocks else None
    state, share, progress = current(count, state, share, progress) or _whole_log(
        conn, session_id, entry_agent, created_at, status
    )
    return count, state, stored, kept, share, progress, backlog


def _keep_share(
    conn: sqlite3.Connection,
    session_id: str,
    kept: FigureSummary | None,
    share: FigureSummary | None,
    progress: SlaProgress | None = None,
) -> None:
    """Move the session's share of the figures from `kept` (what the roll-up holds) to `share`
    (None: the session is going away), and keep its SLA clocks' progress."""
    _move_rollup(conn, kept, share)
    if share is not None:
        conn.execute(SUMMARY_SQL.set_figures, (*figure_columns(share, progress), session_id))


def _move_rollup(conn: sqlite3.Connection, kept: FigureSummary | None, share: FigureSummary | None) -> None:
    """Move a session's share in the roll-up from `kept` to `share`: one upsert per changed row,
    and a row it empties dropped (the upsert returns the row's count: no delete tried in vain)."""
    for row in rollup_delta(kept, share):
        ((left,),) = conn.execute(SQL_ROLLUP_ADD, row).fetchall()
        if left == 0:
            conn.execute(SQL_ROLLUP_DROP_EMPTY, row[:7])


def _keep_whole_log_state(conn: sqlite3.Connection, session_id: str, desk: bool = True) -> None:
    """Fold a session's log and keep the results as its summaries (inside a write transaction);
    `desk` False keeps its desk state as it is (only the figures' share and the clocks were missing)."""
    entry_agent, created_at, figures, status = conn.execute(SUMMARY_SQL.fold_start, (session_id,)).fetchone()
    state, share, progress = _whole_log(conn, session_id, entry_agent, created_at, status)
    if desk:
        conn.execute(SUMMARY_SQL.set_summary, (state.state, state.to_json(), session_id))
    _keep_share(conn, session_id, _share(figures), share, progress)


def backfill_summaries(conn: sqlite3.Connection) -> None:
    """Keep the summaries of every session that lacks one (once, after migration 7, 8 or 9)."""
    for session_id, lacks_desk in conn.execute(SummarySql.LACKING).fetchall():
        _keep_whole_log_state(conn, session_id, desk=bool(lacks_desk))




def _match_snippet(text: str, terms: Sequence[tuple[str, bool]], width: int = 12) -> str | None:
    """Like FTS5's snippet(): about `width` words around the first match, matches marked;
    None unless every term matches some word of the text as the index matches it (a prefix
    term starts the word, a short term is the whole word)."""
    tokens = list(re.finditer(r"[^\W_]+", text, flags=re.UNICODE))  # words as FTS5 cuts them
    folded = [t.group().casefold() for t in tokens]
    wanted = [(w.casefold(), prefix) for w, prefix in terms]

    def matches(word: str, term: tuple[str, bool]) -> bool:
        return word.startswith(term[0]) if term[1] else word == term[0]

    if not wanted or not all(any(matches(f, t) for f in folded) for t in wanted):
        return None
    hits = [i for i, f in enumerate(folded) if any(matches(f, t) for t in wanted)]
    first = max(0, min(hits[0] - width // 4, len(tokens) - width))
    last = min(len(tokens), first + width)
    out = "…" if first > 0 else ""
    cursor = tokens[first].start()
    for i in range(first, last):
        token = tokens[i]
        out += text[cursor : token.start()]
        out += f"{MATCH_START}{token.group()}{MATCH_END}" if i in hits else token.group()
        cursor = token.end()
    return out + ("…" if last < len(tokens) else text[cursor:])


def _index_terms(text: str) -> list[tuple[str, bool]]:
    """The search box as the index's terms: `search_terms`, with words cut where FTS5's tokenizer
    cuts them (at `_`, which `\\w` keeps), so every term is one token. The index keeps no word
    positions (`detail=none`, schema migration 9), so a term of two tokens, a phrase, cannot
    be asked for; `foo_bar` finds the messages holding both `foo` and `bar`."""
    return search_terms(text.replace("_", " "))


def _fts_query(text: str) -> str:
    """User words -> an FTS5 query of quoted terms, long ones as prefixes (no operators from user text)."""
    return " ".join(f'"{w}"*' if prefix else f'"{w}"' for w, prefix in _index_terms(text))


class _SearchRun:
    """One search on the search connection, so a cancelled search can stop its statement.

    `sqlite3.Connection.interrupt()` stops whatever statement runs on the connection at that
    moment; the lock and the flags make sure that is this search's statement, never the next
    search's (which the same connection runs next)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = False
        self.cancelled = False

    def enter(self) -> None:
        with self.lock:
            if self.cancelled:
                raise sqlite3.OperationalError("interrupted")
            self.running = True

    def leave(self) -> None:
        with self.lock:
            self.running = False

    def cancel(self, conn: sqlite3.Connection) -> None:
        with self.lock:
            self.cancelled = True
            if self.running:
                conn.interrupt()


def _check_existing_file(target: Path) -> bool:
    """Look at an existing file before SQLite touches it; True when it must open read-only.

    An existing empty file is adopted as a new desk only when this user owns it (they made
    it with `touch` or `mktemp`, or a first start stopped before writing the schema): an
    empty file of another user's is not ours to turn into a database."""
    try:
        info = target.stat()
    except FileNotFoundError:
        if target.parent.is_dir() and not os.access(target.parent, os.W_OK):
            raise StoreError(
                f"{target}: cannot create it: the folder {target.parent} is read-only for this user; "
                "pick a path in a folder you can write"
            ) from None
        return False
    except OSError as exc:
        raise StoreError(f"{target}: cannot read it: {exc.strerror or exc}") from None
    if not os.access(target, os.R_OK):
        raise StoreError(f"{target}: permission denied (this user cannot read it); check the file's permissions")
    if info.st_size == 0 and info.st_uid != os.geteuid():
        raise StoreError(
            f"{target}: an empty file owned by another user, not a supportdesk database; refusing to make it "
            "one (pass a new path to --db, or remove the file)"
        )
    # Writing needs the file and, for the -wal/-shm files WAL mode keeps, its folder.
    return not (os.access(target, os.W_OK) and os.access(target.parent, os.W_OK))


def _readonly_uri(target: Path) -> str:
    """A read-only SQLite URI that creates no -wal/-shm files.

    With both files present (a desk has it open, or a crash left them) a plain read-only
    open reads the recent commits kept in them. Without them, `immutable=1` opens the main
    file alone, which SQLite's WAL mode could not otherwise do without creating them."""
    from urllib.parse import quote

    uri = f"file:{quote(str(target.resolve()))}?mode=ro"
    wal, shm = Path(f"{target}-wal"), Path(f"{target}-shm")
    if not (wal.exists() and shm.exists()):
        uri += "&immutable=1"
    return uri


def _identity(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """(application_id, user_version, number of schema objects), read in one transaction.

    Three separate reads could straddle another process's first migration (no id yet, but
    tables already) and take our own new file for a stranger's."""
    conn.execute("BEGIN")
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")
    return app_id, version, tables


def _refuse_strangers(identity: tuple[int, int, int], path: str) -> int:
    """The schema version, once the file is ours (or blank); else one line saying why not."""
    app_id, version, tables = identity
    # Ours, or a blank SQLite file (no tables, no version, no other program's id) to adopt.
    if app_id != APPLICATION_ID and (app_id or tables or version):
        raise StoreError(
            f"{path}: a SQLite database of another program, not supportdesk's; refusing to touch it"
        )
    refusal = newer_schema(path, version, CURRENT_VERSION)
    if refusal is not None:
        raise refusal
    return version


def _check_and_migrate(conn: sqlite3.Connection, path: str, readonly: bool = False) -> None:
    """Refuse foreign or newer databases before writing anything; then migrate forward."""
    try:
        version = _refuse_strangers(_identity(conn), path)
    except sqlite3.OperationalError as exc:
        if _is_busy(exc):
            raise  # another process is creating or migrating the file: the caller retries
        if _error_line(exc, path, 0) is not None:
            raise  # a full disk, a permission, a failing disk: the caller says which
        raise StoreError(f"{path}: not a supportdesk database (not SQLite at all); refusing to touch it") from None
    except sqlite3.DatabaseError:
        raise StoreError(f"{path}: not a supportdesk database (not SQLite at all); refusing to touch it") from None
    if readonly:
        if version != CURRENT_VERSION:
            raise StoreError(
                f"{path}: "
                + ("an empty file" if version == 0 else f"made by an older supportdesk (schema v{version})")
                + " that this user cannot write, so it cannot be set up; use a database you can write"
            )
        return
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    if version == CURRENT_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Re-read under the write lock: another process may have migrated meanwhile.
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        version = _refuse_strangers((app_id, version, tables), path)
        for number in range(version + 1, CURRENT_VERSION + 1):
            for statement in _split_script(MIGRATIONS[number - 1]):
                if not _column_already_there(conn, statement):
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
        if version < DESK_FOLD_VERSION or version < FIGURES_VERSION:
            backfill_summaries(conn)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


_ADD_COLUMN = re.compile(r"ALTER TABLE (\w+) ADD COLUMN (\w+)", re.IGNORECASE)


def _column_already_there(conn: sqlite3.Connection, statement: str) -> bool:
    """An ADD COLUMN of a column the table has (SQLite has no IF NOT EXISTS for it): a database
    taken back to an older version keeps the columns a later migration added."""
    added = _ADD_COLUMN.match(statement.strip())
    if added is None:
        return False
    table, column = added.groups()
    return any(row[1] == column for row in conn.execute(f"PRAGMA table_info({table})"))


# Waiting for another process's lock is left to SQLite's busy handler (busy_timeout). We
# measured our own retry of BEGIN IMMEDIATE (busy_timeout 0, random sleeps from 50 µs
# doubling to 2 ms, and other steps) against it with 4 writer processes on 2 CPUs: ours was
# 10-20% slower, because waiters that wake often burn the CPU the lock holder needs, while
# SQLite's sleeps (1, 2, 5, 10 ... ms) leave it to the writer that holds the lock.
# Queueing our writers on an OS lock instead (an exclusive flock on a `<db>-wlock` sidecar taken
# before BEGIN IMMEDIATE and given back after COMMIT, so a waiter wakes the moment the holder
# lets go) was slower too (issue 34, 4 writer processes, `bench_store --only writers`, load
# 7, median of 4 alternating rounds): 1,522 items/s with the wait bounded on a helper thread,
# 1,164 with a plain blocking flock, against 2,003 with the busy handler alone. A fair hand-over
# wakes a sleeping process for every commit, which then reloads the pages and summaries the
# last writer changed; the busy handler lets one process run many appends in a row meanwhile.
# Where the 4 writers' time goes: the lock is held nearly all the time, for the append's SQL and
# fold (~200 us, more when another process wrote the summaries last: they are parsed again) and
# its COMMIT (~170-330 us under load), which wrote 8 WAL pages (the session row, its indexes by
# activity, change and span start and end, feed_counter, the item and its (session_id, seq) key)
# against the plain SDK's 3.1 (the equal-feature peer writes 7.3); since schema migration 14 it
# writes 5.1 (no feed_counter; the span indexes moved only when the span's start or end hour
# does: tests/test_store_pages.py pins it, bench_store prints it). Letting the append stamp `sessions.changed` itself instead
# of the feed's trigger was measured too (median 2,388 against 2,396 items/s): the trigger's
# second UPDATE dirties no page the append has not.
# What the append does under the lock (issue 34, measured on a loaded 2-CPU machine, 2,000
# single-item appends; tests/test_store_append_lock.py pins the statements): BEGIN IMMEDIATE, the
# row read (SQL_DESK_BEFORE), the row update (its two trigger programs: the feed's stamp and the span
# hour's), the item insert, COMMIT; no roll-up row and no search batch at most appends. Between
# BEGIN and COMMIT one process alone spends 107-156 us median (SQL ~50: the read ~10, the update and
# insert; Python ~80: the fold ~20, the three summaries' JSON ~25, the roll-up's delta ~3, the
# stamped copies), and 170-220 us when another connection wrote the row last (its three summaries
# parsed again, ~30, and SQLite's page cache reloaded). The COMMIT is ~30 us.
# Folding ahead of the lock was measured and dropped: the append read `PRAGMA data_version` just
# before BEGIN and, when no other connection had committed since its own last append, folded from
# the row it had left (used only if the row read under the lock was still that one). Under the
# lock an append after its own fell from 128-144 to 47-59 us median, but the 4-writer rate fell
# (1,870 against 2,190 items/s, 8 alternating runs, /tmp driver; bench_store 0.82x): the writers'
# loop is serial (the others sleep in the busy handler), so work moved out of the lock lands in the
# gap before the next BEGIN, where a waking writer takes the lock instead; writer switches rose
# from 772-1,606 to 1,650-2,685 of 4,000, and an append after another process's costs 220-290 us
# under the lock against 130-145. What helps that row is less work per append in all (the thread
# hop, the fold, the JSON), not work moved out of the lock.
# Less work in all, then (issue 34, counted with callgrind, deterministic): the share built and
# parsed without the frozen dataclasses' __init__, its durations moved in place, an unchanged
# share's roll-up delta empty at once, the summaries' JSON through encoders made once, the stamped
# copies made before the lock (only their seqs set under it). The fold, JSON, roll-up delta and
# stamping of a single-item append fell from ~529k to ~413k instructions, parsing the three
# summaries another process wrote from ~312k to ~232k, a whole one-process append from ~1,360k to
# ~1,233k. The store counts its own hold of the lock (`lock_held_ns`, `lock_holds`; bench_store
# prints it per append): at load 5-11 it was 370-1,160 us per append against ~100 us of work
# alone, so on a loaded machine the holder's preemptions, not its Python, set the 4-writer row.
# benchmarks/bench_store.py measures the result.


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def _error_line(exc: sqlite3.Error, path: str, timeout_s: float) -> str | None:
    """What a failed read or write means for the user, as one line naming the file; None for a bug.

    SQLite says *what* went wrong in its primary result code (disk full, read-only, locked,
    I/O); the message text is only a fallback for errors raised without a code."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if code is not None else None
    said = str(exc).lower()
    if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or (primary is None and ("locked" in said or "busy" in said)):
        return f"{path}: the database stayed locked by another process for over {timeout_s:g} s; try again"
    if (
        primary == sqlite3.SQLITE_FULL
        or (primary is None and "disk is full" in said)
        # A full disk met while growing the WAL index (-shm) or a file surfaces as an I/O
        # error: the free space says which it was.
        or (primary in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, None) and _disk_nearly_full(path))
    ):
        return f"{path}: the disk is full, so nothing more could be saved; free some space and try again"
    if primary == sqlite3.SQLITE_READONLY or (primary is None and "readonly" in said):
        return (
            f"{path}: the database is read-only for this user, so nothing can be saved to it; "
            "use a database you can write (--db) or fix its permissions"
        )
    if primary in (sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_AUTH):
        return f"{path}: permission denied ({exc}); check the file's and its folder's permissions"
    if primary == sqlite3.SQLITE_IOERR or (primary is None and "disk i/o" in said):
        return f"{path}: the disk failed to read or write ({exc}); check the disk and try again"
    if primary in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return f"{path}: the database file is damaged ({exc}); restore it from a backup"
    return None


def _disk_nearly_full(path: str) -> bool:
    import shutil

    try:
        return shutil.disk_usage(Path(path).parent).free < 64 * 1024
    except OSError:
        return False


def _explained(action: Callable[[], T], path: str, timeout_s: float) -> T:
    """Run action; a lock held past the busy timeout, a full disk, a read-only file or a
    failing disk becomes a one-line StoreError naming the file."""
    try:
        return action()
    except sqlite3.Error as exc:
        line = _error_line(exc, path, timeout_s)
        if line is None:
            raise
        raise StoreError(line) from None
    except OSError as exc:  # the file system itself (a vanished folder)
        raise StoreError(f"{path}: {exc.strerror or exc}; check the disk and the file's permissions") from None


def _fetch(conn: sqlite3.Connection, sql: str, params: Sequence[Any], path: str, timeout_s: float) -> list[Any]:
    return _explained(lambda: conn.execute(sql, params).fetchall(), path, timeout_s)


def _turn_start_rows(conn: sqlite3.Connection, session_id: str, n: int) -> Any:
    """A turn's start reads, inside a transaction the caller opened (a read one, or the write
    transaction that takes the turn lease): the rows `_turn_start_of` makes a `TurnStart` of."""
    row = conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        return None
    items = conn.execute(SQL_LATEST, (session_id, session_id, n)).fetchall()
    context = conn.execute(SQL_CONTEXT_AT, (_NO_LIMIT, session_id)).fetchall()
    held = conn.execute(SQL_HELD_BY, (session_id, session_id)).fetchone()
    return row, items, context, held


def _turn_start_of(read: Any) -> TurnStart:
    if read is None:
        return turn_start_of(None, (), (), None)
    row, items, context, held = read
    return turn_start_of(row, (r[0] for r in items), context, held[0] if held else None)


def _turn_start(conn: sqlite3.Connection, session_id: str, n: int, path: str, timeout_s: float) -> Any:
    """A turn's start reads (`SessionStore.turn_start`) in one read transaction, so they see one
    moment of the log."""

    def run() -> Any:
        conn.execute("BEGIN")
        try:
            return _turn_start_rows(conn, session_id, n)
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    return _explained(run, path, timeout_s)


def _write_transaction(
    conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T], path: str, timeout_s: float
) -> T:
    """BEGIN IMMEDIATE takes the write lock up front, so the seq read inside is final."""

    return _explained(lambda: write_transaction(conn, fn), path, timeout_s)


def _entry_error(exc: Exception, path: str, timeout_s: float) -> Exception:
    """One grouped write's own failure, as `_explained` and `SessionStore._run` would put it."""
    if isinstance(exc, sqlite3.Error):
        return StoreError(_error_line(exc, path, timeout_s) or f"{path}: {exc}")
    if isinstance(exc, OSError):
        return StoreError(f"{path}: {exc.strerror or exc}; check the disk and the file's permissions")
    return exc


def _group_transaction(
    conn: sqlite3.Connection, fns: Sequence[Callable[[sqlite3.Connection], Any]], path: str, timeout_s: float
) -> list[tuple[Exception | None, Any]]:
    """Several writers' transactions as one (group commit): each runs in a savepoint of one
    BEGIN IMMEDIATE ... COMMIT, in the order given. One that fails (a fenced append whose lease
    was lost, a duplicate) is rolled back to its savepoint and fails alone: its error is its
    outcome. An error that ends the whole transaction (SQLite rolled it back: a full disk, an
    I/O error) or a failed COMMIT is raised: then nothing of the group was stored."""

    def run() -> list[tuple[Exception | None, Any]]:
        conn.execute("BEGIN IMMEDIATE")
        outcomes: list[tuple[Exception | None, Any]] = []
        try:
            for fn in fns:
                conn.execute("SAVEPOINT grouped_write")
                try:
                    value = fn(conn)
                except Exception as exc:
                    if not conn.in_transaction:
                        raise
                    conn.execute("ROLLBACK TO grouped_write")
                    conn.execute("RELEASE grouped_write")
                    outcomes.append((_entry_error(exc, path, timeout_s), None))
                else:
                    conn.execute("RELEASE grouped_write")
                    outcomes.append((None, value))
            conn.execute("COMMIT")
            return outcomes
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    return _explained(run, path, timeout_s)


class _QueuedWrite:
    """One write waiting for its group (`SessionStore._write`); settled on the connection's thread."""

    __slots__ = ("fn", "done", "error", "value")

    def __init__(self, fn: Callable[[sqlite3.Connection], Any]):
        self.fn = fn
        self.done = False
        self.error: Exception | None = None
        self.value: Any = None

    def settle(self, error: Exception | None, value: Any) -> None:
        self.error, self.value, self.done = error, value, True


def _index_new_messages(conn: sqlite3.Connection) -> None:
    """Bring the search index up to date (inside a write transaction)."""
    conn.execute(SQL_INDEX_NEW_MESSAGES)
    conn.execute(SQL_MARK_INDEXED)


def _split_script(script: str) -> list[str]:
    """Split a migration into statements (executescript would commit our transaction)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


async def _open_when_free(db: aiosqlite.Connection, path: str, timeout_s: float, readonly: bool = False) -> None:
    """Check and migrate the file, waiting while other processes create or migrate it.

    Switching a new file to WAL and reading it while another process does so can fail with
    SQLITE_BUSY without SQLite's busy handler ever waiting, so several processes opening one
    new file at once retry here, with jittered sleeps, up to the busy timeout."""
    deadline = time.monotonic() + timeout_s
    pause = 0.005
    while True:
        try:
            await db._execute(_check_and_migrate, db._conn, path, readonly)  # type: ignore[no-untyped-call]
            return
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() + pause > deadline:
                raise
        await asyncio.sleep(pause * (0.5 + random.random()))
        pause = min(pause * 2, 0.2)


SQL_EXTERNAL_ID_SEEN = """
    SELECT 1 FROM items
    WHERE session_id = ? AND json_extract(meta, '$.external_id') = ?
      AND kind = 'message' AND json_extract(meta, '$.external_id') IS NOT NULL
    LIMIT 1
"""


def _copied(item: Item, session_id: str, when: datetime) -> Item:
    """A copy of `item` in `session_id` at `when` (seq 0 until the append's `run` sets it):
    `dataclasses.replace` without the frozen __init__ (items have no __post_init__ and no
    init=False fields), made before the write lock is taken."""
    copy = object.__new__(type(item))
    object.__setattr__(copy, "__dict__", {**item.__dict__, "session_id": session_id, "seq": 0, "created_at": when})
    return copy


class _PreparedAppend:
    """An append's rows, serialized before the write lock is taken.

    Everything that costs Python time happens here: other processes wait for the lock,
    so it is held only for the SQL itself (`run`, inside the transaction)."""

    def __init__(self, session_id: str, items: Sequence[Item], when: datetime, kept: _KeptStates):
        self.kept = kept
        self.session_id = session_id
        self.items = items
        self.when = when
        # The items as stored (session, time, seq), copied here before the lock; `run` sets their
        # seqs under it. The copies are this append's own until `append` returns them.
        self.stamped: list[Item] = [_copied(item, session_id, when) for item in items]
        stamp = when.isoformat()
        plan = plan_append(items)
        self.rows = list(zip(plan.kinds, plan.agents, [stamp] * len(items), plan.bodies, plan.metas, plan.keys))
        self.usage = plan.usage
        self.new_keys = plan.new_keys
        self.head = {
            "sid": session_id,
            "n": len(self.rows),
            "handoffs": plan.handoffs,
            "active": plan.active,
            "title": plan.title,
            "now": stamp,
        }

    def run(self, conn: sqlite3.Connection) -> int:
        """Fold the items into the session's summaries, write its row once and insert the rows;
        returns the last seq before them.

        The session's state advances over the new items here, under the write lock: a read of
        the kept summaries by primary key and a fold of a few items, so two processes appending
        to one session can never both advance from the same state."""
        session_id, when = self.session_id, self.when
        count, state, stored, kept, share, progress, backlog = _state_before(conn, session_id, self.kept)
        # The copies made before the lock get their seqs (the only part that needs the row read).
        for n, item in enumerate(self.stamped, start=1):
            object.__setattr__(item, "seq", count + n)
        state, share, progress = advance_all(state, share, progress, self.stamped)
        texts = (state.to_json(), share.to_json(), progress.to_json())
        head = append_head_sql(
            state=state.state != stored,
            asked=kept is None or (kept.asked_us, kept.answer_ms) != (share.asked_us, share.answer_ms),
            resolved=kept is None or (kept.resolved_us, kept.resolution_ms) != (share.resolved_us, share.resolution_ms),
            first=kept is None or kept.first_us != share.first_us,
        )
        conn.execute(
            head,
            {
                **self.head,
                "count": count,
                "state": state.state,
                "summary": texts[0],
                "span_first": share.first_us,
                "span_last": share.last_us,
                "asked_us": share.asked_us,
                "answer_ms": share.answer_ms,
                "resolved_us": share.resolved_us,
                "resolution_ms": share.resolution_ms,
                "figures": texts[1],
                "clocks": texts[2],
            },
        )
        self.kept.keep_all(texts, state, share, progress)
        conn.executemany(
            SQL_INSERT_ITEM, [(session_id, count + n, *fields) for n, fields in enumerate(self.rows, start=1)]
        )
        if self.new_keys:
            conn.executemany(SQL_ADD_CONTEXT_KEY, [(session_id, key) for key in self.new_keys])
        if self.usage:
            conn.executemany(SQL_ADD_USAGE, [(session_id, *row) for row in self.usage])
        _move_rollup(conn, kept, share)
        if backlog + len(self.rows) >= SEARCH_BATCH:
            _index_new_messages(conn)
        return count


# The most items an append commits on the caller's thread when it can (`SessionStore._write_now`):
# a turn's step writes a few; a bigger append (an import, a bulk load) takes the hop, so the event
# loop is never held for its whole transaction.
APPEND_NOW_MOST = 16


class SessionStore(StoreCore):
    """One connection to a session database. Open with `await SessionStore.open(path)`."""

    dialect = DIALECT
    reads = READS

    def __init__(self, db: aiosqlite.Connection, path: str, busy_timeout_s: float = 10.0):
        self._db = db
        self.path = path
        self.location = path
        # How long a read or write waits for another process's lock before giving up.
        self._busy_timeout_s = busy_timeout_s
        # Parsed session summaries, used only on the connection's thread (inside appends).
        self._kept_states = _KeptStates()
        # The clock that stamps appended items; tests fix it for stable snapshots.
        self.clock: Callable[[], datetime] = utcnow
        # Opened without write access (another user's file, a read-only folder): reads only.
        self.readonly = False
        # Searches run on a second connection, opened by the first search (`search`).
        self._search_db: aiosqlite.Connection | None = None
        # The opening of that connection, shielded from the search that asked for it: a search
        # cancelled mid-open (the browser cancels at each key) must not drop a half-opened
        # connection, whose worker thread would keep the process alive at exit.
        self._search_db_opening: asyncio.Task[aiosqlite.Connection] | None = None
        # Group commit (`_write`): the writes not yet taken by a hop to the connection's
        # thread, and how many groups of two or more that thread committed.
        self._queued: collections.deque[_QueuedWrite] = collections.deque()
        self.groups_committed = 0
        # Hops sent to the connection's thread and hops it finished (each counter written by one
        # thread only): equal when that thread is idle, so the caller may use the connection itself.
        self._hops_sent = 0
        self._hops_done = 0
        # Small appends committed on the caller's thread (`_write_now`), for the tests and benchmarks.
        self.writes_now = 0
        # The write lock held by this connection's committed writes: nanoseconds from inside
        # BEGIN IMMEDIATE through COMMIT, and how many (`bench_store --only writers` prints it per append).
        self.lock_held_ns = 0
        self.lock_holds = 0
        # `PRAGMA data_version` when this connection last tried a write on the caller's thread
        # (None: never): unchanged at the next try means no other connection wrote in between.
        self._now_version: int | None = None
        # `PRAGMA synchronous` as `_write_now` last read it (None: read it again). Only a statement
        # run on this connection changes it, and every other use of the connection is a hop, which
        # forgets it (`_counted_hop`): consecutive small appends read it once, not at every append.
        self._now_sync: int | None = None
        # The busy timeout is off (0) since `_write_now`'s last try: left so between tries on the
        # caller's thread, and put back by the next hop before it runs anything (`_counted_hop`).
        # Two PRAGMAs less per small append; nothing on the connection's thread ever runs without it.
        self._busy_off = False

    @classmethod
    async def open(
        cls, path: str | os.PathLike[str] | None = None, *, busy_timeout_ms: int = 10_000, read_only: bool = False
    ) -> SessionStore:
        """Open (creating when new) a session database; every problem is a one-line StoreError.

        A file this user cannot write (another user's, mode 444, a read-only folder) opens
        read-only, without creating `-wal`/`-shm` files beside it: sessions can be listed,
        shown, exported and replayed, and any write is refused with one line. `read_only`
        asks for that mode on a file this user could write."""
        location = parse_location(path)
        if location.kind != "sqlite":
            raise StoreLocationError(f"{location}: not a SQLite database; open it with supportdesk.store.open_store")
        target = location.path
        readonly = False
        if str(target) != ":memory:":
            if target.is_dir():
                raise StoreError(f"{target}: is a folder, not a database file")
            readonly = _check_existing_file(target) or read_only
            if read_only and not target.exists():
                raise StoreError(f"{target}: no such database")
            if not readonly:
                try:
                    target.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StoreError(f"{target}: cannot create its folder: {exc.strerror or exc}") from None
        timeout_s = busy_timeout_ms / 1000
        try:
            if readonly:
                db = await aiosqlite.connect(_readonly_uri(target), uri=True, isolation_level=None)
            else:
                # check_same_thread off: a small append runs on the caller's thread when the
                # connection's own thread is idle (`SessionStore._write_now`).
                db = await aiosqlite.connect(str(target), isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(_error_line(exc, str(target), timeout_s) or f"{target}: cannot open database: {exc}") from None
        try:
            await db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            await _open_when_free(db, str(target), timeout_s, readonly)
        except sqlite3.Error as exc:
            await db.close()
            raise StoreError(_error_line(exc, str(target), timeout_s) or f"{target}: cannot open database: {exc}") from None
        except BaseException:
            await db.close()
            raise
        store = cls(db, str(target), timeout_s)
        store.readonly = readonly
        return store

    async def close(self) -> None:
        self._closed = True
        if self._search_db_opening is not None and not self._search_db_opening.done():
            with contextlib.suppress(StoreError, sqlite3.Error):
                await self._search_db_opening  # it closes what it opened, seeing the store closed
        if self._search_db is not None:
            await self._search_db.close()
        await self._db.close()

    @property
    def closed(self) -> bool:
        return getattr(self, "_closed", False)

    async def _write(self, fn: Callable[[sqlite3.Connection], T], now: bool = False) -> T:
        """Run fn inside one BEGIN IMMEDIATE transaction, in one hop to the connection thread.

        Group commit: every write joins a queue and sends a hop to the connection's thread; the
        first of those hops to run takes every write queued by then and commits them together,
        each in a savepoint of one transaction (`_group_transaction`), and the later hops find
        theirs done. So writes from many turns at once cost one commit per group, not one each,
        and the thread never waits on the event loop between groups. Writes keep their order of
        arrival (one session's appends are never reordered), each returns only once its own
        transaction is committed, and one that fails (a lost lease, a duplicate) fails alone."""
        if self.readonly:
            raise StoreError(
                f"{self.path}: the database is read-only for this user, so nothing can be saved to it; "
                "use a database you can write (--db) or fix its permissions"
            )
        if now and not self._queued and self._hops_sent == self._hops_done:
            done, value = self._write_now(fn)
            if done:
                return cast(T, value)
        entry = _QueuedWrite(fn)
        self._queued.append(entry)  # a deque: appended here, taken on the connection's thread
        return cast(T, await self._run(self._commit_queued, entry))

    def _commit_queued(self, conn: sqlite3.Connection, mine: _QueuedWrite) -> Any:
        """On the connection's thread: `mine`'s outcome, committing every queued write with it
        unless an earlier hop already did."""
        if not mine.done:
            group: list[_QueuedWrite] = []
            with contextlib.suppress(IndexError):
                while True:
                    group.append(self._queued.popleft())
            try:
                held_from = [0]

                def first(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], Any] = group[0].fn) -> Any:
                    held_from[0] = time.perf_counter_ns()  # BEGIN IMMEDIATE returned: the lock is ours
                    return fn(conn)

                if len(group) == 1:
                    try:
                        group[0].settle(None, _write_transaction(conn, first, self.path, self._busy_timeout_s))
                        self._held(held_from[0])
                    except Exception as exc:
                        group[0].settle(exc, None)
                elif group:
                    self.groups_committed += 1
                    try:
                        outcomes = _group_transaction(conn, [first, *(w.fn for w in group[1:])], self.path, self._busy_timeout_s)
                        self._held(held_from[0])
                    except Exception as exc:  # nothing of the group was stored
                        outcomes = [(exc, None)] * len(group)
                    for write, (error, value) in zip(group, outcomes):
                        write.settle(error, value)
            except BaseException as exc:  # (an interrupt): no write of the group is left unanswered
                for write in group:
                    if not write.done:
                        write.settle(StoreError(f"{self.path}: the write was interrupted ({type(exc).__name__})"), None)
                raise
        if not mine.done:  # never: a write is queued before its hop, and hops run in order
            raise StoreError(f"{self.path}: a write was lost before it reached the database")
        if mine.error is not None:
            raise mine.error
        return mine.value

    def _write_now(self, fn: Callable[[sqlite3.Connection], T]) -> tuple[bool, T | None]:
        """Commit `fn` on the caller's thread if the write lock is free this instant: (True, its
        value); (False, None) when another connection holds the lock, or the file syncs at every
        commit (`synchronous` FULL or more), and the write goes the usual way (`_write`).

        Only while the connection's own thread is idle (no hop in flight, none queued), so the
        connection is never used from two threads at once. It saves the two thread switches of a
        hop (most of a one-item append's time outside SQLite, and CPU the other writers of a
        shared file want), and takes the lock without SQLite's busy handler: a writer that finds
        the lock free commits at once; one that finds it held waits as before."""
        conn = self._db._conn
        try:
            if self._now_sync is None:
                self._now_sync = conn.execute("PRAGMA synchronous").fetchone()[0]
            if self._now_sync > 1:
                return False, None  # a commit syncs: never on the caller's (event loop's) thread
            # Another connection wrote since this one's last write here: writers share the file,
            # and this one goes the usual way, waiting in SQLite's busy handler like the others.
            # (A writer that skips the hop's gap between its appends keeps the lock from the
            # others' handlers, which then sleep longer: 4 writer processes ran slower.)
            version = conn.execute("PRAGMA data_version").fetchone()[0]
            if self._now_version is not None and version != self._now_version:
                self._now_version = version
                return False, None
            # No busy handler for this try (inside the transaction nothing waits for a lock: the
            # write lock is held). The timeout stays off until the next hop puts it back
            # (`_counted_hop`), so back-to-back small appends do not switch it at each one.
            if not self._busy_off:
                conn.execute("PRAGMA busy_timeout = 0")
                self._busy_off = True
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if _is_busy(exc):
                    self._now_version = version
                    return False, None
                raise
            held_from = time.perf_counter_ns()
            try:
                value = fn(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            self._held(held_from)
        except sqlite3.Error as exc:
            raise StoreError(_error_line(exc, self.path, self._busy_timeout_s) or f"{self.path}: {exc}") from None
        except OSError as exc:
            raise StoreError(f"{self.path}: {exc.strerror or exc}; check the disk and the file's permissions") from None
        self.writes_now += 1
        self._now_version = version
        return True, value

    def _held(self, since_ns: int) -> None:
        """Count one committed write's hold of the write lock, from `since_ns` until now."""
        if since_ns:
            self.lock_held_ns += time.perf_counter_ns() - since_ns
            self.lock_holds += 1

    async def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return await self._fetch(sql, params)

    async def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Rows of one read, in one hop; a read that meets a lock waits like a write does."""
        return await self._run(_fetch, sql, params, self.path, self._busy_timeout_s)

    async def _run(self, fn: Callable[..., T], *args: Any, db: aiosqlite.Connection | None = None) -> T:
        # A whole transaction runs in one hop to the connection's thread: with one hop per
        # statement, an append would pay six thread round trips instead of one.
        db = db or self._db
        if db is self._db:
            fn = functools.partial(self._counted_hop, fn)
            self._hops_sent += 1
        try:
            # aiosqlite's one-hop call is private and untyped: it returns what `fn` returns.
            return cast(T, await db._execute(fn, db._conn, *args))  # type: ignore[no-untyped-call]
        except sqlite3.Error as exc:
            # The contract's callers know StoreError only, never this adapter's driver.
            raise StoreError(_error_line(exc, self.path, self._busy_timeout_s) or f"{self.path}: {exc}") from None

    # --- sessions ---------------------------------------------------------------------------

    def _counted_hop(self, fn: Callable[..., T], conn: sqlite3.Connection, *args: Any) -> T:
        """On the connection's thread: `fn`, then the hop counted done (`_write_now` waits for it).

        First the busy timeout `_write_now` left off is put back, so whatever the hop runs waits for
        another process's lock as usual; and the sync level it read is forgotten (`fn` may set it)."""
        try:
            if self._busy_off:
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_s * 1000)}")
                self._busy_off = False
            self._now_sync = None
            return fn(conn, *args)
        finally:
            self._hops_done += 1

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
        """A new session; `first` items (the customer's first message) are appended in the same
        transaction, so a failed first append never leaves an empty session behind."""
        sid = session_id or uuid.uuid4().hex[:12]
        when = self.clock()
        now = when.isoformat()
        meta_json = json.dumps(meta or {}, ensure_ascii=False)
        append = _PreparedAppend(sid, first, when, self._kept_states) if first else None
        fresh = start(entry_agent)

        def tx(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO sessions (id, title, created_at, updated_at, entry_agent, active_agent, channel, meta, "
                "desk_state, desk_summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (sid, title, now, now, entry_agent, entry_agent, channel, meta_json, fresh.state, fresh.to_json()),
            )
            _keep_share(conn, sid, None, figure_summary.start(entry_agent, when))
            if append is not None:
                append.run(conn)

        await self._write(tx)
        info = await self.get_session(sid)
        assert info is not None
        return info

    async def set_status(self, session_id: str, status: str) -> None:
        def tx(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE sessions SET status = ? WHERE id = ?", (status, session_id))
            # A waiting status holds back the session's resolution in the figures' roll-up.
            row = conn.execute("SELECT figure_summary, sla_summary FROM sessions WHERE id = ?", (session_id,)).fetchone()
            move = status_move(row[0], row[1], status) if row is not None else None
            if move is not None:
                _keep_share(conn, session_id, *move)

        await self._write(tx)

    async def delete_session(self, session_id: str) -> bool:
        def tx(conn: sqlite3.Connection) -> bool:
            # Items, context keys and (by trigger) search rows go with it: ON DELETE CASCADE;
            # its share of the figures leaves the roll-up.
            kept = conn.execute("SELECT figure_summary FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if kept is not None:
                _keep_share(conn, session_id, _share(kept[0]), None)
            deleted = conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0
            conn.execute(SQL_LOWER_MARK)
            return deleted

        return await self._write(tx)

    # --- the log --------------------------------------------------------------------------------

    async def append(
        self, session_id: str, items: Sequence[Item], *, fence: str | None = None, release: TurnLease | None = None,
        at: int | None = None,
    ) -> list[Item]:
        """Append items as one transaction; returns them stamped with seq and time. `fence`:
        the turn lease's token, checked in the same transaction (`LeaseLost` if no longer current);
        `release`: the lease given back in that transaction too; `at`: the seq the first item
        must get (`HeadMoved` otherwise; `Store.append`)."""
        if release is not None:
            fence = release_token(session_id, release)
        if not items:
            if release is not None:
                await release.release()
            return []
        prepared = _PreparedAppend(session_id, items, self.clock(), self._kept_states)

        external = external_ids(session_id, items)

        def run(conn: sqlite3.Connection) -> int:
            check_fence(conn, session_id, fence)
            if at is not None:
                head = conn.execute(SQL_LAST_SEQ, (session_id,)).fetchone()
                if head is not None and head[0] + 1 != at:
                    raise HeadMoved(f"session {session_id}: the log ends at {head[0]}, not at {at - 1}; nothing was written")
            if release is not None:
                conn.execute(SQL_DROP_LEASE, (session_id, fence))
            # Under the write lock (BEGIN IMMEDIATE): a copy another process stored a moment ago
            # is seen here, so the check and the insert are one step; the unique index backs it.
            for external_id in external:
                if conn.execute(SQL_EXTERNAL_ID_SEEN, (session_id, external_id)).fetchone() is not None:
                    raise duplicate_item(session_id, external_id)
            return prepared.run(conn)

        await self._write(run, now=len(items) <= APPEND_NOW_MOST)
        if release is not None:
            release.let_go()
        return prepared.stamped

    async def latest(self, session_id: str, n: int) -> list[Item]:
        """The last n items, oldest first."""
        rows = await self._fetch(SQL_LATEST, (session_id, session_id, n))
        return [_window_item(r) for r in rows]

    async def items_at(self, session_id: str, seqs: Sequence[int]) -> list[Item]:
        """The items at these seqs, in seq order, in one read; seqs with no item are skipped."""
        wanted = sorted({int(seq) for seq in seqs})
        if not wanted:
            return []
        rows = await self._fetch(SQL_ITEMS_AT, (session_id, json.dumps(wanted)))
        return [_item(r) for r in rows]

    async def turn_start(self, session_id: str, n: int) -> TurnStart:
        """The session's row, newest `n` items, context and holder: one hop, one read transaction."""
        return _turn_start_of(await self._run(_turn_start, session_id, max(0, int(n)), self.path, self._busy_timeout_s))

    async def _take_turn(
        self, session_id: str, n: int, take: Callable[[sqlite3.Connection], bool]
    ) -> TurnStart | None:
        """The turn lease's `try_start`: `take` (the lease's upsert) and, when it took the
        lease, the turn's start reads, in one write transaction and one hop."""
        n = max(0, int(n))

        def run(conn: sqlite3.Connection) -> tuple[bool, Any]:
            if not take(conn):
                return False, None
            return True, _turn_start_rows(conn, session_id, n)

        taken, read = await self._write(run)
        return _turn_start_of(read) if taken else None

    async def of_kind(self, session_id: str, kind: str, *, upto: int | None = None, after: int = 0) -> list[Item]:
        """Every item of one kind (notices for pending approvals, say), oldest first."""
        upto = upto if upto is not None else _NO_LIMIT
        if kind == "message":
            rows = await self._fetch(SQL_OF_KIND_MESSAGE, (session_id, after, upto))
        else:
            rows = await self._fetch(SQL_OF_KIND, (session_id, kind, after, upto))
        # (Through the kept parses: serve's per-conversation limit reads the recent messages on every POST.)
        return [_window_item(r) for r in rows]

    async def kind_seqs(self, session_id: str, kind: str) -> list[int]:
        """The seqs of every item of one kind (the replay's handoff stops, say)."""
        if kind == "message":
            rows = await self._fetch(SQL_KIND_SEQS_MESSAGE, (session_id,))
        else:
            rows = await self._fetch(SQL_KIND_SEQS, (session_id, kind))
        return [r[0] for r in rows]

    # --- search and fork ---------------------------------------------------------------------

    async def desk_figures(self, since: datetime | None, until: datetime) -> DeskFigures:
        path, timeout_s = self.path, self._busy_timeout_s
        return await self._run(lambda conn: _explained(lambda: read_figures(conn, since, until), path, timeout_s))

    async def search(self, text: str, *, limit: int = 50) -> list[SearchHit]:
        """The newest `limit` messages holding every word (words of 3+ letters as prefixes).

        It runs on a connection of its own, so the conversation's reads and writes never queue
        behind it; cancelling the awaiting task stops the statement (`interrupt()`), so a search
        abandoned for a newer query stops costing at once."""
        query = _fts_query(text)
        if not query:
            return []
        timeout, path, readonly = self._busy_timeout_s, self.path, self.readonly
        terms = _index_terms(text)
        db = await self._search_connection()
        job = _SearchRun()

        def step(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[Any]:
            job.enter()
            try:
                return _fetch(conn, sql, params, path, timeout)
            finally:
                job.leave()

        def run(conn: sqlite3.Connection) -> list[Any]:
            # Index what the appends left for later first, so every stored message is found.
            # A read-only database cannot: its few unindexed messages (fewer than a batch) are
            # matched here instead; they are newer than every indexed one, so they come first.
            pending: list[Any] = []
            if step(conn, SQL_SEARCH_BACKLOG, ())[0][0] > 0:
                if readonly:
                    pending = [
                        (sid, title, seq, snippet)
                        for sid, title, seq, body in step(conn, SQL_UNINDEXED_MESSAGES, ())
                        if (snippet := _match_snippet(body or "", terms)) is not None
                    ][:limit]
                else:
                    job.enter()
                    try:
                        _write_transaction(conn, _index_new_messages, path, timeout)
                    finally:
                        job.leave()
            if len(pending) >= limit:
                return pending
            return pending + step(conn, SQL_SEARCH, (query, limit - len(pending)))

        try:
            rows = await self._run(run, db=db)
        except asyncio.CancelledError:
            job.cancel(db._conn)
            raise
        return [SearchHit(session_id=a, title=b, seq=c, snippet=d) for a, b, c, d in rows]

    async def _search_connection(self) -> aiosqlite.Connection:
        """The connection searches run on, opened at the first search (an in-memory database
        has no second connection: there searches share the store's)."""
        if self._search_db is not None:
            return self._search_db
        if self.path == ":memory:":
            return self._db
        if self._search_db_opening is None:
            self._search_db_opening = asyncio.create_task(self._open_search_connection())
        return await asyncio.shield(self._search_db_opening)

    async def _open_search_connection(self) -> aiosqlite.Connection:
        target = Path(self.path)
        try:
            if self.readonly:
                db = await aiosqlite.connect(_readonly_uri(target), uri=True, isolation_level=None)
            else:
                db = await aiosqlite.connect(self.path, isolation_level=None)
        except sqlite3.Error as exc:
            self._search_db_opening = None  # the next search tries again
            raise StoreError(_error_line(exc, self.path, self._busy_timeout_s) or f"{self.path}: {exc}") from None
        try:
            await db.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_s * 1000)}")
        except sqlite3.Error as exc:
            await db.close()
            self._search_db_opening = None
            raise StoreError(_error_line(exc, self.path, self._busy_timeout_s) or f"{self.path}: {exc}") from None
        if self.closed:  # the store closed while this opened: nobody else will close it
            await db.close()
            raise StoreError(f"{self.path}: the store is closed")
        self._search_db = db
        return db

    async def _copy_session(self, source: SessionInfo, new_id: str, upto: int, when: datetime) -> None:
        session_id, now = source.id, when.isoformat()

        def tx(conn: sqlite3.Connection) -> None:
            first_customer = conn.execute(
                "SELECT min(seq) FROM items WHERE session_id = ? AND kind = 'message' "
                "AND json_extract(body, '$.role') = 'customer'",
                (session_id,),
            ).fetchone()[0]
            title = fork_title(source, first_customer, upto)
            handoffs, active = conn.execute(
                "SELECT count(*), (SELECT json_extract(body, '$.to_agent') FROM items WHERE session_id = ?1 "
                "AND kind = 'handoff' AND kind <> 'message' AND seq <= ?2 ORDER BY seq DESC LIMIT 1) "
                "FROM items WHERE session_id = ?1 AND kind = 'handoff' AND kind <> 'message' AND seq <= ?2",
                (session_id, upto),
            ).fetchone()
            conn.execute(
                COPY.fork_session,
                (
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
                ),
            )
            conn.execute(
                "INSERT INTO items (session_id, seq, kind, agent, created_at, body, meta, ctx_key) "
                "SELECT ?, seq, kind, agent, created_at, body, meta, ctx_key FROM items "
                "WHERE session_id = ? AND seq <= ? ORDER BY seq",
                (new_id, session_id, upto),
            )
            conn.execute(COPY.fork_context_keys, (new_id, new_id))
            conn.execute(SQL_FORK_USAGE, (new_id, session_id, upto))
            _keep_whole_log_state(conn, new_id)
            # (the copies are new ids past the search mark: the next search indexes them)

        await self._write(tx)

    # --- whole sessions (supportdesk db copy and check: the StoreAdmin capability) -------------

    async def schema_version(self) -> int:
        rows = await self._fetch("PRAGMA user_version")
        return int(rows[0][0])

    async def import_session(
        self, info: SessionInfo, items: Sequence[Item], usage: dict[str, dict[str, int]]
    ) -> None:
        """Write a session exactly as another store holds it, in one transaction."""
        rows = import_rows(DIALECT, info, items, usage)

        def tx(conn: sqlite3.Connection) -> None:
            if conn.execute(COPY.session_exists, (info.id,)).fetchone() is not None:
                raise StoreError(f"a session {info.id!r} already exists")
            conn.execute(insert_session_sql(DIALECT), rows.session)
            conn.executemany(SQL_INSERT_ITEM, rows.items)
            _keep_whole_log_state(conn, info.id)
            conn.executemany(SQL_ADD_CONTEXT_KEY, [(info.id, key) for key in rows.keys])
            conn.executemany(COPY.insert_usage, rows.usage)
            if conn.execute(SQL_SEARCH_BACKLOG).fetchone()[0] >= SEARCH_BATCH:
                _index_new_messages(conn)

        await self._write(tx)
    # --- one turn at a time, and the change feed (store/sqlite_live.py) -------------------------

    # How long a turn lease outlives its holder's last renewal (seconds).
    lease_ttl: float = LEASE_TTL

    def turn(self, session_id: str) -> SqliteLease:
        return SqliteLease(self, session_id, self.lease_ttl)

    async def follow(self) -> SqliteFeed:
        return await SqliteFeed.start(self)

    async def data_version(self) -> int:
        """Changes whenever another connection commits: a cheap 'anything new?' probe."""
        rows = await self._fetch("PRAGMA data_version")
        return int(rows[0][0])


__all__ = [
    "ContextEntry",
    "SearchHit",
    "SessionInfo",
    "SessionStore",
    "StoreError",
    "StoreLocationError",
    "default_db_path",
    "MATCH_START",
    "MATCH_END",
]
