"""The session database schema and its forward migrations (`PRAGMA user_version`).

Migration N takes a database at version N-1 to N. A database with a higher version than
`CURRENT_VERSION` comes from a newer supportdesk and is refused before anything is written.
"""

from __future__ import annotations

# 'SDSK': marks a SQLite file as ours, so a stranger's database is refused, not adopted.
APPLICATION_ID = 0x5344534B

MIGRATIONS: list[str] = [
    # 1: sessions and their append-only item log.
    """
    CREATE TABLE sessions (
        id            TEXT PRIMARY KEY,
        title         TEXT NOT NULL DEFAULT '',
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL,
        entry_agent   TEXT NOT NULL,
        active_agent  TEXT NOT NULL,
        status        TEXT NOT NULL DEFAULT 'open',
        item_count    INTEGER NOT NULL DEFAULT 0,
        handoff_count INTEGER NOT NULL DEFAULT 0,
        forked_from   TEXT,
        forked_at     INTEGER
    );
    CREATE INDEX sessions_by_activity ON sessions (updated_at DESC, id);

    CREATE TABLE items (
        id         INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        kind       TEXT NOT NULL,
        agent      TEXT NOT NULL,
        created_at TEXT NOT NULL,
        body       TEXT NOT NULL,
        meta       TEXT,
        -- the key of a context_set item, so "context as of seq k" is one index probe per key
        ctx_key    TEXT,
        UNIQUE (session_id, seq)
    );
    CREATE INDEX items_by_kind ON items (session_id, kind, seq);
    CREATE INDEX items_by_ctx_key ON items (session_id, ctx_key, seq) WHERE ctx_key IS NOT NULL;

    CREATE TABLE context_keys (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        key        TEXT NOT NULL,
        PRIMARY KEY (session_id, key)
    ) WITHOUT ROWID;
    """,
    # 2: full-text search over message text, backfilled from the log.
    """
    CREATE VIRTUAL TABLE message_fts USING fts5 (text, tokenize = 'unicode61 remove_diacritics 2');
    INSERT INTO message_fts (rowid, text)
        SELECT id, json_extract(body, '$.text') FROM items WHERE kind = 'message';
    CREATE TRIGGER items_fts_delete AFTER DELETE ON items WHEN old.kind = 'message' BEGIN
        DELETE FROM message_fts WHERE rowid = old.id;
    END;
    """,
    # 3: search indexing in batches. Indexing one message costs an FTS5 segment flush inside
    # the append's write lock; now messages past `indexed_upto` (an items.id) are indexed
    # together, when a search runs or when the backlog reaches a batch. Everything up to
    # here was indexed by migration 2 and the appends before this one.
    """
    CREATE TABLE search_progress (indexed_upto INTEGER NOT NULL);
    INSERT INTO search_progress (indexed_upto) SELECT coalesce(max(id), 0) FROM items;
    """,
    # 4: token usage per session and agent, kept by the appends, so reading a session's totals
    # at the end of every turn is one index probe instead of a pass over all its items. The
    # back-fill sums the usage the runner wrote into item meta so far, as that pass did.
    """
    CREATE TABLE usage_totals (
        session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        agent         TEXT NOT NULL,
        input_tokens  INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        -- 0 once any of the agent's counts was estimated rather than reported by the server
        reported      INTEGER NOT NULL,
        PRIMARY KEY (session_id, agent)
    ) WITHOUT ROWID;
    INSERT INTO usage_totals (session_id, agent, input_tokens, output_tokens, reported)
        SELECT session_id, agent,
               sum(coalesce(json_extract(meta, '$.usage.input_tokens'), 0)),
               sum(coalesce(json_extract(meta, '$.usage.output_tokens'), 0)),
               min(coalesce(json_extract(meta, '$.usage.reported'), 1))
        FROM items WHERE meta IS NOT NULL AND json_extract(meta, '$.usage') IS NOT NULL
        GROUP BY session_id, agent;
    """,
    # 5: where a session's customer came from (tui, cli, web, chatwoot, bench, import) and a
    # JSON object of facts about the session that are not conversation (a benchmark task's
    # id and reward, a channel's conversation id). Sessions before this came from the TUI or CLI.
    """
    ALTER TABLE sessions ADD COLUMN channel TEXT NOT NULL DEFAULT 'tui';
    ALTER TABLE sessions ADD COLUMN meta TEXT NOT NULL DEFAULT '{}';
    """,
    # 6: one turn at a time per session, and the change feed.
    # `turn_leases`: who runs a turn on a session and until when (renewed while it runs), so
    # a dead holder's lease expires. `feed_counter` counts every change to a session row;
    # triggers stamp the changed row (`sessions.changed`) or, for a delete, leave a tombstone,
    # so a follower reads only what changed since its last count: an index range, not the table.
    """
    CREATE TABLE turn_leases (
        session_id TEXT PRIMARY KEY,
        holder     TEXT NOT NULL,
        expires_at REAL NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE feed_counter (value INTEGER NOT NULL);
    INSERT INTO feed_counter (value) VALUES (0);
    ALTER TABLE sessions ADD COLUMN changed INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX sessions_by_change ON sessions (changed);
    CREATE TABLE deleted_sessions (changed INTEGER PRIMARY KEY, session_id TEXT NOT NULL);
    CREATE TRIGGER sessions_feed_insert AFTER INSERT ON sessions BEGIN
        UPDATE feed_counter SET value = value + 1;
        UPDATE sessions SET changed = (SELECT value FROM feed_counter) WHERE id = new.id;
    END;
    CREATE TRIGGER sessions_feed_update AFTER UPDATE OF item_count, status, title ON sessions BEGIN
        UPDATE feed_counter SET value = value + 1;
        UPDATE sessions SET changed = (SELECT value FROM feed_counter) WHERE id = new.id;
    END;
    CREATE TRIGGER sessions_feed_delete AFTER DELETE ON sessions BEGIN
        UPDATE feed_counter SET value = value + 1;
        INSERT INTO deleted_sessions (changed, session_id) SELECT value, old.id FROM feed_counter;
    END;
    """,
    # 7: where each conversation stands (desk_state.py's fold), kept by the appends as
    # item_count is, so the inbox lists a desk in one query and counts the sessions needing
    # staff with one index probe. `desk_state` is the state alone (indexed, for the count);
    # `desk_summary` the whole ConversationState as JSON. Sessions already in the file are
    # folded once right after this migration (`sessions.backfill_summaries`).
    """
    ALTER TABLE sessions ADD COLUMN desk_state TEXT;
    ALTER TABLE sessions ADD COLUMN desk_summary TEXT;
    CREATE INDEX sessions_by_desk_state ON sessions (desk_state);
    """,
    # 8: a denied approval needs staff until a person acts (desk_state.py; before, a denial was
    # staff acting): the kept summaries of sessions with a denial are dropped here and folded
    # again from their logs right after (`sessions.backfill_summaries`).
    """
    UPDATE sessions SET desk_state = NULL, desk_summary = NULL WHERE id IN (
        SELECT session_id FROM items WHERE kind = 'notice' AND json_extract(body, '$.notice_kind') = 'approval_denied'
    );
    """,
    # 9: a leaner store (issue 16; benchmarks/bench_store.py measures the sizes). The search
    # index read its text from a copy of every message (FTS5's own content table, about a
    # quarter of the file) and kept each word's positions, which no search uses (every term is
    # one word, asked for anywhere in the message); it now reads the text from the items
    # through a view, keeps only which messages hold a word (`detail=none`) and no per-message
    # sizes (`columnsize=0`: nothing ranks by bm25). What was indexed before is indexed again,
    # up to the same mark. An external-content index is told what it drops: the trigger hands
    # it the deleted message's text, only for messages it has indexed. `items_by_kind` leaves
    # messages out: the kind reads ask for sparse kinds, and messages are most of every log.
    # (It rebuilds what it replaces from scratch, so a file that already has some of it, one a
    # test took back to an older version, say, comes out the same.)
    """
    DROP TRIGGER IF EXISTS items_fts_delete;
    DROP TABLE IF EXISTS message_fts;
    DROP VIEW IF EXISTS message_text;
    CREATE VIEW message_text (id, text) AS
        SELECT id, json_extract(body, '$.text') FROM items WHERE kind = 'message';
    CREATE VIRTUAL TABLE message_fts USING fts5 (
        text, content = 'message_text', content_rowid = 'id', detail = none, columnsize = 0,
        tokenize = 'unicode61 remove_diacritics 2');
    INSERT INTO message_fts (rowid, text)
        SELECT id, text FROM message_text WHERE id <= (SELECT indexed_upto FROM search_progress);
    CREATE TRIGGER items_fts_delete AFTER DELETE ON items
        WHEN old.kind = 'message' AND old.id <= (SELECT indexed_upto FROM search_progress) BEGIN
        INSERT INTO message_fts (message_fts, rowid, text) VALUES ('delete', old.id, json_extract(old.body, '$.text'));
    END;
    DROP INDEX IF EXISTS items_by_kind;
    CREATE INDEX items_by_kind ON items (session_id, kind, seq) WHERE kind <> 'message';
    """,
    # 10: each session's share of the desk's figures (store/figure_summary.py), kept by the
    # appends: its span (creation and item times, in microseconds since the epoch) and its
    # durations as indexed columns, the whole share as JSON, and the share added to a roll-up by
    # the day and by the hour in which its span begins and ends, so the figures of any window
    # read a few hundred roll-up rows plus the sessions crossing its edges (store/figures.py).
    # Sessions already in the file are folded once right after this migration
    # (`sessions.backfill_figures`).
    """
    ALTER TABLE sessions ADD COLUMN span_first INTEGER;
    ALTER TABLE sessions ADD COLUMN span_last INTEGER;
    ALTER TABLE sessions ADD COLUMN asked_us INTEGER;
    ALTER TABLE sessions ADD COLUMN answer_ms INTEGER;
    ALTER TABLE sessions ADD COLUMN resolved_us INTEGER;
    ALTER TABLE sessions ADD COLUMN resolution_ms INTEGER;
    ALTER TABLE sessions ADD COLUMN figure_summary TEXT;
    ALTER TABLE sessions ADD COLUMN sla_summary TEXT;
    CREATE INDEX sessions_by_span_end ON sessions (span_last, span_first);
    CREATE INDEX sessions_by_span_start ON sessions (span_first, span_last);
    CREATE INDEX sessions_by_asked ON sessions (asked_us, answer_ms);
    CREATE INDEX sessions_by_answer ON sessions (answer_ms, asked_us) WHERE answer_ms IS NOT NULL;
    CREATE INDEX sessions_by_resolved ON sessions (resolved_us, resolution_ms, status);
    CREATE INDEX sessions_by_resolution ON sessions (resolution_ms, resolved_us, status) WHERE resolution_ms IS NOT NULL;
    -- the SLA figures read the conversations started in a window
    CREATE INDEX sessions_by_creation ON sessions (created_at);
    CREATE TABLE figure_rollup (
        grain TEXT NOT NULL,  -- 'd' or 'h': lo and hi count days or hours since the epoch
        lo    INTEGER NOT NULL,
        hi    INTEGER NOT NULL,
        what  TEXT NOT NULL,
        a     TEXT NOT NULL,
        b     TEXT NOT NULL,
        c     TEXT NOT NULL,
        n     INTEGER NOT NULL,
        x     INTEGER NOT NULL,
        y     INTEGER NOT NULL,
        z     INTEGER NOT NULL,
        PRIMARY KEY (grain, lo, hi, what, a, b, c)
    ) WITHOUT ROWID;
    CREATE INDEX figure_rollup_by_end ON figure_rollup (grain, hi, lo);
    """,
    # A channel's id of a customer message (Chatwoot's message id, `meta.external_id`) is kept
    # once per session: two workers given the same delivery race to store it, and the second
    # append is refused in its own transaction (the store checks under the write lock; this
    # index makes that check one probe and refuses a copy whatever writes it). IF NOT EXISTS: a
    # database rolled back to an older version (the migration tests do) may already have it.
    """
    CREATE UNIQUE INDEX IF NOT EXISTS items_by_external_id
        ON items (session_id, json_extract(meta, '$.external_id'))
        WHERE kind = 'message' AND json_extract(meta, '$.external_id') IS NOT NULL;
    """,
    # 12: the figures' shares are folded again (issue 39): a fork's copied items count in no
    # figure (they are its source's events), and a resolution is the conversation's state becoming
    # `resolved` (as the SLA clocks say), not an agent's last message. Every share is dropped and
    # the roll-up emptied; opening the database folds each log again (FIGURES_VERSION).
    """
    UPDATE sessions SET figure_summary = NULL;
    DELETE FROM figure_rollup;
    """,
    # 13: the entry agent takes a session with its first own item, not at its creation (issue
    # 39: the dashboard counted an empty session for triage beside fewer active ones). The shares
    # kept before said otherwise: dropped and folded again, as in 12.
    """
    UPDATE sessions SET figure_summary = NULL;
    DELETE FROM figure_rollup;
    """,
    # 14: fewer pages per append (issue 34: with 4 writer processes on one session the write lock
    # is held for the commit, whose cost is its WAL pages; `store/sqlite_pages.py` counts them and
    # tests/test_store_pages.py pins them). The change feed's count was a one-row table every
    # append rewrote (a page of its own); it is now the highest `changed` stamped, on a session
    # row or on a delete's tombstone, which the feed's triggers read by two index probes from
    # pages the append writes anyway (`sessions_by_change`'s last leaf). No stamp is ever removed,
    # so that highest stamp is the counter's value and never goes back. `sessions_by_span_start`
    # held the span's end too, which moves at every append: it is the span's start alone now,
    # which the figures' edge read is all that asks for, and the append sets `span_first` only
    # when it moved (a session's first own item), so the index is left alone otherwise. The
    # figures' other edge read (sessions whose span ends at or after an hour) read an index on the
    # span's end, which moves at every append too: it reads `span_hour` now, the hour the span
    # ends in (span_last // one hour in microseconds, the roll-up's grain), which a trigger moves
    # only when that hour changes, so most appends leave its index alone; the exact end is
    # checked on the rows found (store/sqlite_figures.py). (IF EXISTS: a database a test took back
    # to an older version may have some of this already; an ADD COLUMN of a column already there
    # is skipped, `sessions._check_and_migrate`.)
    """
    DROP TRIGGER IF EXISTS sessions_feed_insert;
    DROP TRIGGER IF EXISTS sessions_feed_update;
    DROP TRIGGER IF EXISTS sessions_feed_delete;
    DROP TABLE IF EXISTS feed_counter;
    CREATE TRIGGER sessions_feed_insert AFTER INSERT ON sessions BEGIN
        UPDATE sessions SET changed = (
            SELECT max((SELECT coalesce(max(changed), 0) FROM sessions),
                       (SELECT coalesce(max(changed), 0) FROM deleted_sessions)) + 1)
        WHERE id = new.id;
    END;
    CREATE TRIGGER sessions_feed_update AFTER UPDATE OF item_count, status, title ON sessions BEGIN
        UPDATE sessions SET changed = (
            SELECT max((SELECT coalesce(max(changed), 0) FROM sessions),
                       (SELECT coalesce(max(changed), 0) FROM deleted_sessions)) + 1)
        WHERE id = new.id;
    END;
    CREATE TRIGGER sessions_feed_delete AFTER DELETE ON sessions BEGIN
        INSERT INTO deleted_sessions (changed, session_id) SELECT max(
            (SELECT coalesce(max(changed), 0) FROM sessions),
            (SELECT coalesce(max(changed), 0) FROM deleted_sessions), old.changed) + 1, old.id;
    END;
    DROP INDEX IF EXISTS sessions_by_span_start;
    CREATE INDEX sessions_by_span_start ON sessions (span_first);
    ALTER TABLE sessions ADD COLUMN span_hour INTEGER;
    UPDATE sessions SET span_hour = span_last / 3600000000;
    DROP INDEX IF EXISTS sessions_by_span_end;
    CREATE INDEX sessions_by_span_end ON sessions (span_hour, span_first);
    DROP TRIGGER IF EXISTS sessions_span_hour;
    CREATE TRIGGER sessions_span_hour AFTER UPDATE OF span_last ON sessions
        WHEN new.span_last / 3600000000 IS NOT old.span_hour BEGIN
        UPDATE sessions SET span_hour = new.span_last / 3600000000 WHERE id = new.id;
    END;
    """,
]

CURRENT_VERSION = len(MIGRATIONS)
# The migration that added the per-session summary.
DESK_SUMMARY_VERSION = 7
# The last migration that changed what the summary holds: opening a file older than this folds
# the logs of the sessions it left without one.
DESK_FOLD_VERSION = 8
# The last migration that changed what each session's share of the figures means: an older file folds its logs.
FIGURES_VERSION = 13
