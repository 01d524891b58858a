"""The PostgreSQL schema and its forward migrations, versioned in `supportdesk_meta`.

Migration N takes a database at version N-1 to N. A database whose `supportdesk_meta` says a
higher version than `CURRENT_VERSION` comes from a newer supportdesk and is refused before
anything is written. It holds the same log as the SQLite schema (`schema.py`), in
PostgreSQL's own terms: timestamps as timestamptz, ids in the "C" collation (so an id prefix
is an index range, as in SQLite), and message search as a tsvector with a GIN index.
"""

from __future__ import annotations

# Our tables; a database that has one of them but no supportdesk_meta belongs to someone else.
TABLES = ("sessions", "items", "context_keys", "usage_totals")

# A turn lease's claim inside a PL/pgSQL function taking (sid, who, ttl): the row taken when free,
# expired, already ours, or held by an owner whose lock is gone (migration 9); the function returns
# nothing when it is not. One text, put into migrations 9 and 11 alike.
_CLAIM_TURN = """        INSERT INTO turn_leases (session_id, holder, expires_at, server_started, locked)
        VALUES (sid, who, clock_timestamp() + make_interval(secs => ttl), pg_postmaster_start_time(), false)
        ON CONFLICT (session_id) DO UPDATE
            SET holder = excluded.holder, expires_at = excluded.expires_at,
                server_started = excluded.server_started, locked = excluded.locked
            WHERE turn_leases.expires_at <= clock_timestamp() OR turn_leases.holder = excluded.holder
               OR (turn_leases.server_started = excluded.server_started AND supportdesk_owner_gone(turn_leases.holder));
        IF NOT FOUND THEN
            RETURN;
        END IF;
"""

MIGRATIONS: list[str] = [
    # 1: the session log as the SQLite schema has it at its v5 (sessions with channel and meta,
    # items, context keys, usage totals), with full-text search over message text.
    """
    CREATE TABLE sessions (
        id            text COLLATE "C" PRIMARY KEY,
        title         text NOT NULL DEFAULT '',
        created_at    timestamptz NOT NULL,
        updated_at    timestamptz NOT NULL,
        entry_agent   text NOT NULL,
        active_agent  text NOT NULL,
        status        text NOT NULL DEFAULT 'open',
        item_count    integer NOT NULL DEFAULT 0,
        handoff_count integer NOT NULL DEFAULT 0,
        forked_from   text,
        forked_at     integer,
        channel       text NOT NULL DEFAULT 'tui',
        meta          text NOT NULL DEFAULT '{}'
    );
    CREATE INDEX sessions_by_activity ON sessions (updated_at DESC, id);

    CREATE TABLE items (
        session_id text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq        integer NOT NULL,
        kind       text NOT NULL,
        agent      text NOT NULL,
        created_at timestamptz NOT NULL,
        -- the item's JSON without its envelope (session, seq, kind, agent, time, meta)
        body       text NOT NULL,
        meta       text,
        -- the key of a context_set item, so "context as of seq k" is one index probe per key
        ctx_key    text,
        -- a message's words, folded as the search box folds them (lower case, no accents)
        search     tsvector,
        PRIMARY KEY (session_id, seq)
    );
    CREATE INDEX items_by_kind ON items (session_id, kind, seq);
    CREATE INDEX items_by_ctx_key ON items (session_id, ctx_key, seq) WHERE ctx_key IS NOT NULL;
    CREATE INDEX items_search ON items USING gin (search);

    CREATE TABLE context_keys (
        session_id text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        key        text NOT NULL,
        PRIMARY KEY (session_id, key)
    );

    CREATE TABLE usage_totals (
        session_id    text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        agent         text NOT NULL,
        input_tokens  bigint NOT NULL,
        output_tokens bigint NOT NULL,
        reported      integer NOT NULL,
        PRIMARY KEY (session_id, agent)
    );
    """,
    # 2: where each conversation stands, kept by the appends (SQLite's migration 7): the
    # state alone, indexed for the inbox's "needs staff" count, and the whole ConversationState
    # as JSON. Sessions already here are folded once after this migration (`_migrate`).
    """
    ALTER TABLE sessions ADD COLUMN desk_state text;
    ALTER TABLE sessions ADD COLUMN desk_summary text;
    CREATE INDEX sessions_by_desk_state ON sessions (desk_state);
    """,
    # 3: a denied approval needs staff until a person acts (SQLite's migration 8): the kept
    # summaries of sessions with a denial are dropped and folded again right after (`_migrate`).
    """
    UPDATE sessions SET desk_state = NULL, desk_summary = NULL WHERE id IN (
        SELECT session_id FROM items WHERE kind = 'notice' AND body::json ->> 'notice_kind' = 'approval_denied'
    );
    """,
    # 4: messages in time order (only messages have a search vector), so a search for a common
    # word walks the newest messages backwards and stops at the page, instead of fetching every
    # match from the GIN index to sort them. session_id last makes the order total: a page is
    # the same page however the rows lie on disk. (IF NOT EXISTS: a test takes a database back
    # to v1 by undoing v2 alone, and this migration then runs on a table that has the index.)
    """
    CREATE INDEX IF NOT EXISTS items_messages_by_time ON items (created_at, seq, session_id) WHERE search IS NOT NULL;
    """,
    # 5: each session's share of the desk's figures, kept by the appends, and the roll-up of
    # those shares by the day and hour their spans begin and end (SQLite's migration 9).
    # Sessions already here are folded once after this migration (`_migrate`).
    """
    ALTER TABLE sessions ADD COLUMN span_first bigint;
    ALTER TABLE sessions ADD COLUMN span_last bigint;
    ALTER TABLE sessions ADD COLUMN asked_us bigint;
    ALTER TABLE sessions ADD COLUMN answer_ms bigint;
    ALTER TABLE sessions ADD COLUMN resolved_us bigint;
    ALTER TABLE sessions ADD COLUMN resolution_ms bigint;
    ALTER TABLE sessions ADD COLUMN figure_summary text;
    ALTER TABLE sessions ADD COLUMN sla_summary text;
    CREATE INDEX sessions_by_span_end ON sessions (span_last, span_first);
    CREATE INDEX sessions_by_span_start ON sessions (span_first, span_last);
    CREATE INDEX sessions_by_asked ON sessions (asked_us, answer_ms);
    CREATE INDEX sessions_by_answer ON sessions (answer_ms, asked_us) WHERE answer_ms IS NOT NULL;
    CREATE INDEX sessions_by_resolved ON sessions (resolved_us, resolution_ms, status);
    CREATE INDEX sessions_by_resolution ON sessions (resolution_ms, resolved_us, status) WHERE resolution_ms IS NOT NULL;
    -- the SLA figures read the conversations started in a window
    CREATE INDEX sessions_by_creation ON sessions (created_at);
    CREATE TABLE figure_rollup (
        grain text NOT NULL,
        lo    bigint NOT NULL,
        hi    bigint NOT NULL,
        what  text COLLATE "C" NOT NULL,
        a     text COLLATE "C" NOT NULL,
        b     text COLLATE "C" NOT NULL,
        c     text COLLATE "C" NOT NULL,
        n     bigint NOT NULL,
        x     bigint NOT NULL,
        y     bigint NOT NULL,
        z     bigint NOT NULL,
        PRIMARY KEY (grain, lo, hi, what, a, b, c)
    );
    CREATE INDEX figure_rollup_by_end ON figure_rollup (grain, hi, lo);
    """,
    # 6: the turn lease as a fenced row beside the advisory lock (issue 32). The lock says
    # whose connection is alive; the row says whose turn it is and fences every append of the
    # turn (`holder` is its token), and survives a server restart, which the lock does not:
    # a holder that lost its lock to a restart keeps its turn until the row's lifetime ends
    # (it renews it), so a waiter never starts a turn beside it. `locked` and `server_started`
    # tell a holder that had the lock and whose connection ended without a restart (gone: its
    # turn is taken at once by the lock's next holder). IF NOT EXISTS: a database rolled back to
    # an older version (the migration tests do) already has the table, empty or not.
    """
    CREATE TABLE IF NOT EXISTS turn_leases (
        session_id     text COLLATE "C" PRIMARY KEY,
        holder         text NOT NULL,
        expires_at     timestamptz NOT NULL,
        server_started timestamptz NOT NULL,
        locked         boolean NOT NULL
    );
    """,
    # 7: a channel's id of a customer message (Chatwoot's message id, `meta.external_id`) is kept
    # once per session: two workers given the same delivery race to store it, and the unique
    # index refuses the second append in its own transaction (`DuplicateItem`). IF NOT EXISTS:
    # a database rolled back to an older version (the migration tests do) may already have it.
    """
    -- Only a meta that names the key is read as jsonb (the CASE): jsonb refuses an escaped NUL that
    -- text keeps, so any other item's meta stays as storable as before.
    CREATE UNIQUE INDEX IF NOT EXISTS items_by_external_id
        ON items (session_id, (CASE WHEN strpos(meta, '"external_id"') > 0 THEN (meta::jsonb) ->> 'external_id' END))
        WHERE kind = 'message' AND strpos(meta, '"external_id"') > 0;
    """,
    # 8: the figures' shares are folded again (issue 39): a fork's copied items count in no
    # figure (they are its source's events), and a resolution is the conversation's state becoming
    # `resolved` (as the SLA clocks say), not an agent's last message. Every share is dropped and
    # the roll-up emptied; opening the database folds each log again (FIGURES_VERSION).
    """
    UPDATE sessions SET figure_summary = NULL;
    DELETE FROM figure_rollup;
    """,
    # 9: a turn takes its lease and reads its start in one round trip (issue 34): the function
    # claims the lease row, then runs the caller's read in a statement of its own, so the read
    # sees what the previous holder stored in the very transaction that gave the lease back (a
    # read in the claim's own statement would see the log as of before it waited for that
    # transaction). Whether a holder is alive is no longer a lock per session but one advisory
    # lock per store's lock connection (`owner`, the number after the holder's ':'): a holder
    # whose owner lock is gone while the server kept running is dead, and its row is taken at
    # once. Rows of this kind say `locked = false`, so a supportdesk from before never takes them
    # early; a row without an owner number (one from before) is waited out.
    """
    CREATE OR REPLACE FUNCTION supportdesk_owner_gone(who text) RETURNS boolean
    LANGUAGE sql VOLATILE AS $fn$
        SELECT split_part(who, ':', 2) ~ '^[0-9]{1,10}$' AND NOT EXISTS (
            SELECT 1 FROM pg_locks
            WHERE locktype = 'advisory' AND objsubid = 2 AND granted
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND classid = 1396986960::oid AND objid = split_part(who, ':', 2)::bigint::oid)
    $fn$;
    CREATE OR REPLACE FUNCTION supportdesk_take_turn(sid text, who text, ttl double precision, read_sql text)
    RETURNS SETOF record LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
""" + _CLAIM_TURN + """        RETURN QUERY EXECUTE read_sql USING sid;
    END
    $fn$;
    """,
    # 10: the entry agent takes a session with its first own item, not at its creation (issue
    # 39: the dashboard counted an empty session for triage beside fewer active ones). The shares
    # kept before said otherwise: dropped and folded again, as in 8.
    """
    UPDATE sessions SET figure_summary = NULL;
    DELETE FROM figure_rollup;
    """,
    # 11: the turn's start read of migration 9, written into a function of its own as a static
    # query (issue 34): `EXECUTE read_sql` parsed and planned the read on every turn (0.6-0.9 ms
    # of the server's CPU a turn, more than running it); a static query's plan is kept by the
    # connection, generic (its shape, a walk back of the primary key, is right for any n). The
    # claim is 9's; the read still runs in a statement of its own after it.
    """
    CREATE OR REPLACE FUNCTION supportdesk_take_turn_start(sid text, who text, ttl double precision, n integer)
    RETURNS TABLE (
        id text, title text, created_at timestamptz, updated_at timestamptz, entry_agent text, active_agent text,
        status text, item_count integer, handoff_count integer, forked_from text, forked_at integer, channel text,
        meta text, tail text[], context text[], held_by text)
    LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $fn$
    #variable_conflict use_column
    BEGIN
""" + _CLAIM_TURN + """        -- one row, NULLs when there is no such session
        RETURN QUERY SELECT t.* FROM (SELECT 1) AS one LEFT JOIN (
            SELECT s.id, s.title, s.created_at, s.updated_at, s.entry_agent, s.active_agent, s.status, s.item_count, s.handoff_count, s.forked_from, s.forked_at, s.channel, s.meta,
            ARRAY(SELECT doc FROM (SELECT '{"session_id":' || to_json(session_id)::text || ',"seq":' || seq || ',"kind":' || to_json(kind)::text || ',"agent":' || to_json(agent)::text || ',"created_at":' || to_json(created_at)::text || ',"meta":' || coalesce(meta, '{}') || CASE WHEN body = '{}' THEN '}' ELSE ',' || substr(body, 2) END AS doc, seq FROM items WHERE session_id = sid
            ORDER BY seq DESC LIMIT n) AS newest ORDER BY seq) AS tail,
            ARRAY(SELECT json_build_array(k.key, i.body, i.seq, i.created_at)::text
            FROM context_keys AS k
            CROSS JOIN LATERAL (
            SELECT body, seq, created_at FROM items
            WHERE session_id = k.session_id AND ctx_key = k.key ORDER BY seq DESC LIMIT 1) AS i
            WHERE k.session_id = sid ORDER BY k.key) AS context,
            (SELECT body::json ->> 'person' FROM items WHERE session_id = sid AND kind = 'takeover'
            AND seq > coalesce((SELECT max(seq) FROM items WHERE session_id = sid AND kind = 'release'), 0)
            ORDER BY seq DESC LIMIT 1) AS held_by
            FROM sessions AS s WHERE s.id = sid
        ) AS t ON true;
    END
    $fn$;
    """,
]

CURRENT_VERSION = len(MIGRATIONS)
# The migration that added the per-session summary.
DESK_SUMMARY_VERSION = 2
# The last migration that changed what the summary holds: a database older than this folds the
# logs of the sessions it left without one.
DESK_FOLD_VERSION = 3
# The last migration that changed what each session's share of the figures means: an older database folds its logs.
FIGURES_VERSION = 10
