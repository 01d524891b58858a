"""What a single-item append runs while it holds SQLite's write lock (issue 34, the 4-writer row
of `benchmarks/bench_store.py`): five statements (BEGIN IMMEDIATE, the session row's read, its
update, the item's insert, COMMIT) and, inside the update, the change feed's trigger and the span
hour's, counted with a trace callback on the store's own connection. A statement or a trigger added
to the append's path (a separate seq read, a roll-up upsert at every append, a counter row) fails
here; the search index and the figures' roll-up are written only in batches or when a figure
moves, which these appends never reach."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from supportdesk.items import Message
from supportdesk.store.sessions import SEARCH_BATCH, SessionStore

APPENDS = 60
# The statements one append runs, in order (consecutive repeats folded: SQLite's trace reports
# each trigger program's statements under the text of the statement that fired them).
STATEMENTS = ["BEGIN IMMEDIATE", "SELECT item_count", "UPDATE sessions", "INSERT INTO items", "COMMIT"]
# Trace events per append: the five, plus the update's trigger statements (sessions_feed_update's
# UPDATE and what it fires). Measured 8 on SQLite 3.40.
EVENTS_PER_APPEND = 8


async def test_a_single_item_append_runs_five_statements(db_path: Path) -> None:
    events: list[str] = []
    async with await SessionStore.open(db_path) as store:
        sid = (await store.create_session("triage")).id
        await store.append(sid, [Message(role="customer", text="my card was charged twice", agent="triage")])
        for n in range(10):  # the summaries kept, the roll-up's rows in place
            await store.append(sid, [Message(role="agent", text=f"warming up {n}", agent="triage")])

        def trace(conn: sqlite3.Connection) -> None:
            conn.set_trace_callback(events.append)

        await store._run(trace)
        per_append: list[list[str]] = []
        for n in range(APPENDS):
            events.clear()
            await store.append(sid, [Message(role="agent", text=f"answer {n}", agent="triage", meta={"n": n})])
            per_append.append(list(events))
        assert await store.last_seq(sid) == 11 + APPENDS < SEARCH_BATCH  # no search batch ran
    for seen in per_append:
        begin, commit = seen.index("BEGIN IMMEDIATE"), seen.index("COMMIT")
        # Outside the lock only the set-up of the one try on the caller's thread (`_write_now`:
        # `data_version`; after a hop also the sync level and the busy timeout switched off).
        assert all(s.startswith("PRAGMA") for s in seen[:begin] + seen[commit + 1 :]), seen
        locked = seen[begin : commit + 1]
        folded = [s for i, s in enumerate(locked) if i == 0 or s != locked[i - 1]]
        assert [next((p for p in STATEMENTS if s.lstrip().startswith(p)), s[:60]) for s in folded] == STATEMENTS
        assert len(locked) <= EVENTS_PER_APPEND, locked
