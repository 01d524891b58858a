"""Pages one append writes to the WAL (issue 34): the count that decides the 4-writer row of
`benchmarks/bench_store.py` (the write lock is held through the commit, whose cost is its pages),
counted from the WAL's frame headers and named by b-tree (`store/sqlite_pages.py`), so it is the
same on any machine. An index or a row added back to the append path fails here.

Also: the change feed's count (schema migration 14, the highest change stamped, no counter row)
never goes back, and a file from before migration 14 is upgraded and its feed goes on."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

from supportdesk.items import Message
from supportdesk.store.schema import APPLICATION_ID, CURRENT_VERSION, MIGRATIONS
from supportdesk.store.sessions import SessionStore
from supportdesk.store.sqlite_live import SQL_FEED_COUNT
from supportdesk.store.sqlite_pages import pages_by_btree, wal_commits

# One single-message append: the item and its (session_id, seq) key, the session row, and its
# two indexes on columns every append moves (activity, change). The search index, the figures'
# roll-up and the span's indexes are written in batches or when a figure or an hour moves:
# amortized, a few hundredths of a page. Before issue 34 it was 8.1 (feed_counter and both
# span indexes too).
PAGES_PER_APPEND = 5.3
EVERY_APPEND = {"items", "sqlite_autoindex_items_1", "sessions", "sessions_by_activity", "sessions_by_change"}


def _no_autocheckpoint(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA wal_autocheckpoint = 0").fetchall()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


async def measure_appends(db: Path, appends: int = 300) -> tuple[float, dict[str, float]]:
    """Pages per commit of `appends` single-message appends to one session that already has a
    few (its summaries kept), and the pages per commit by b-tree."""
    async with await SessionStore.open(db) as store:
        sid = (await store.create_session("triage")).id
        await store.append(sid, [Message(role="customer", text="my card was charged twice", agent="triage")])
        for n in range(20):
            await store.append(sid, [Message(role="agent", text=f"warming up {n}", agent="triage")])
        await store._run(_no_autocheckpoint)
        for n in range(appends):
            text = f"writer 1 item {n} the invoice shows a second charge"
            await store.append(sid, [Message(role="agent", text=text, agent="triage", meta={"n": n})])
        commits = wal_commits(f"{db}-wal")
        breakdown = pages_by_btree(db, commits)
    assert len(commits) == appends  # every append one commit, nothing else written
    return sum(len(c) for c in commits) / len(commits), breakdown


async def test_one_append_writes_at_most_the_pinned_pages(db_path: Path):
    per_append, breakdown = await measure_appends(db_path)
    assert per_append <= PAGES_PER_APPEND, (per_append, breakdown)
    # Each b-tree every append must write, about once; anything else only now and then.
    every = {name for name, n in breakdown.items() if n >= 0.5}
    assert every == EVERY_APPEND, breakdown
    assert all(breakdown[name] <= 1.1 for name in EVERY_APPEND), breakdown


async def test_the_pages_of_an_append_are_counted_from_the_wal(tmp_path: Path):
    """The counter itself: a write to a table with one index is two pages, named by b-tree."""
    db = tmp_path / "plain.db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
    conn.execute("CREATE INDEX t_by_b ON t (b)")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for n in range(10):
        conn.execute("INSERT INTO t (b) VALUES (?)", (f"v{n}",))
    commits = wal_commits(f"{db}-wal")
    assert [len(c) for c in commits] == [2] * 10
    assert pages_by_btree(db, commits) == {"t": 1.0, "t_by_b": 1.0}
    conn.close()


def _feed_count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute(SQL_FEED_COUNT).fetchone()[0]


async def test_the_feed_count_moves_with_every_change_and_never_goes_back(db_path: Path):
    async with await SessionStore.open(db_path) as store:
        seen = [_feed_count(db_path)]
        a = (await store.create_session("triage")).id
        seen.append(_feed_count(db_path))
        b = (await store.create_session("triage")).id
        seen.append(_feed_count(db_path))
        await store.append(b, [Message(role="customer", text="hello", agent="triage")])
        seen.append(_feed_count(db_path))
        feed = await store.follow()
        # b holds the highest stamp: deleting it must still move the count on, not back
        assert await store.delete_session(b)
        seen.append(_feed_count(db_path))
        await store.set_status(a, "resolved")
        seen.append(_feed_count(db_path))
        assert all(later > earlier for earlier, later in zip(seen, seen[1:])), seen
        changes = [await asyncio.wait_for(anext(feed), 10) for _ in range(2)]
        await feed.aclose()
    assert [(c.session_id, c.deleted) for c in changes] == [(b, True), (a, False)]


async def test_the_span_end_hour_follows_the_span_across_hours_and_the_figures_find_it(db_path: Path):
    """`span_hour` (what the figures' edge read looks up) is moved by a trigger only when the
    span's end enters another hour: it must follow the span, or a session ending later than
    its indexed hour would be left out of a window's edge."""
    hour = 3_600_000_000
    start = datetime(2026, 3, 2, 9, 50, tzinfo=timezone.utc)
    async with await SessionStore.open(db_path) as store:
        store.clock = lambda: start
        sid = (await store.create_session("triage")).id
        for minutes in (0, 5, 20, 75, 200):
            store.clock = lambda m=minutes: start + timedelta(minutes=m)  # type: ignore[misc]
            await store.append(sid, [Message(role="customer", text=f"at {minutes}", agent="triage")])
            with sqlite3.connect(db_path) as conn:
                span_last, span_hour = conn.execute("SELECT span_last, span_hour FROM sessions").fetchone()
            assert span_hour == span_last // hour
        # A window whose whole hours end before the session does: the session crosses its end edge.
        until = start + timedelta(minutes=130)
        with sqlite3.connect(db_path) as conn:
            from supportdesk.store.figures import window_params
            from supportdesk.store.sqlite_figures import SQL

            params = window_params(start - timedelta(minutes=30), until)
            params["since_h"] = params["since_us"] // hour
            params = {k: v for k, v in params.items() if k not in ("since", "until")}
            found = [r[0] for r in conn.execute(SQL.edges_from_start, params)]
        assert found == [sid]


def build_version_13(path: Path) -> None:
    """A database as supportdesk left it before migration 14: the feed's counter row, its
    triggers and the span-start index over (span_first, span_last); two sessions stamped."""
    conn = sqlite3.connect(path)
    for version, script in enumerate(MIGRATIONS[:13], start=1):
        conn.executescript(script)
        conn.execute(f"PRAGMA user_version = {version}")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    now = "2026-01-01T00:00:00+00:00"
    for sid in ("old1", "old2"):
        conn.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at, entry_agent, active_agent) "
            "VALUES (?, 'old', ?, ?, 'triage', 'triage')",
            (sid, now, now),
        )
    conn.execute("DELETE FROM sessions WHERE id = 'old2'")
    conn.commit()
    assert conn.execute("SELECT value FROM feed_counter").fetchone()[0] == 3
    conn.close()


async def test_a_file_from_before_migration_14_is_upgraded_and_its_feed_goes_on(tmp_path: Path):
    path = tmp_path / "v13.db"
    build_version_13(path)
    assert _feed_count_old(path) == 3
    async with await SessionStore.open(path) as store:
        assert _feed_count(path) == 3  # the count carries over: a follower's mark stays valid
        feed = await store.follow()
        await store.append("old1", [Message(role="customer", text="still there?", agent="triage")])
        change = await asyncio.wait_for(anext(feed), 10)
        await feed.aclose()
        assert (change.session_id, change.head, change.deleted) == ("old1", 1, False)
        assert [i.seq for i in await store.range("old1", 1, 5)] == [1]
    assert _feed_count(path) == 4
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'feed_counter'").fetchone() is None
        columns = [r[2] for r in conn.execute("PRAGMA index_info(sessions_by_span_start)")]
        assert columns == ["span_first"]
        columns = [r[2] for r in conn.execute("PRAGMA index_info(sessions_by_span_end)")]
        assert columns == ["span_hour", "span_first"]
        span_last, span_hour = conn.execute("SELECT span_last, span_hour FROM sessions WHERE id = 'old1'").fetchone()
        assert span_hour == span_last // 3_600_000_000


def _feed_count_old(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT value FROM feed_counter").fetchone()[0]
