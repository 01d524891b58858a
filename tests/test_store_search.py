"""Search with a bounded cost, off the conversation's path (issue 16), on both adapters.

The page is the newest matches up to the limit; words shorter than three letters match whole
words only; a search runs on a connection of its own, so the conversation's reads do not wait
for it; and cancelling a search stops its statement in the database. Behaviour only: the
timings are in benchmarks/bench_store.py."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from supportdesk.items import Message
from supportdesk.store import SessionStore, Store, open_store
from supportdesk.store.protocol import search_terms
from tests.tui_seed import WAIT_LIMIT

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


class StepClock:
    """One second per call, so 'newest' is certain on both adapters."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture(params=BACKENDS)
def where(request, tmp_path: Path) -> Path | str:
    return tmp_path / "desk.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")


@pytest.fixture
async def store(where: Path | str):
    s = await open_store(where)
    s.clock = StepClock()
    yield s
    await s.close()


def customer(text: str) -> Message:
    return Message(role="customer", text=text, agent="triage")


async def until(condition: Callable[[], Awaitable[bool]]) -> None:
    """Wait for a state (bounded generously for loaded machines), never for a time."""
    deadline = time.monotonic() + WAIT_LIMIT
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError("the expected state never came")
        await asyncio.sleep(0.02)


# --- the contract, both adapters ------------------------------------------------------------


async def test_a_page_is_the_newest_matches_up_to_the_limit(store: Store):
    a = await store.create_session("triage")
    b = await store.create_session("triage")
    for n in range(12):
        await store.append(a.id if n % 2 else b.id, [customer(f"walrus number {n}")])
    await store.append(a.id, [customer("no such animal here")])
    hits = await store.search("walrus", limit=5)
    # newest message first, whichever session holds it
    assert [(h.session_id, h.seq) for h in hits] == [(a.id, 6), (b.id, 6), (a.id, 5), (b.id, 5), (a.id, 4)]
    assert all("walrus" in h.snippet for h in hits)
    assert len(await store.search("walrus", limit=100)) == 12
    assert [h.seq for h in await store.search("walrus number", limit=1)] == [6]


async def test_short_words_match_whole_words_only(store: Store):
    s = await store.create_session("triage")
    await store.append(
        s.id,
        [customer("re: my order"), customer("please retry the refund"), customer("I want a refund"), customer("an apple")],
    )
    # two letters: the word itself, not every word it starts
    assert [h.seq for h in await store.search("re")] == [1]
    assert [h.seq for h in await store.search("a")] == [3]
    assert [h.seq for h in await store.search("an")] == [4]
    # three letters and more: a prefix
    assert [h.seq for h in await store.search("ref")] == [3, 2]
    assert [h.seq for h in await store.search("ret")] == [2]
    assert [h.seq for h in await store.search("re refund")] == []
    assert [h.seq for h in await store.search("a refu")] == [3]


def test_search_terms_say_which_words_are_prefixes():
    assert search_terms("re: a refund!") == [("re", False), ("a", False), ("refund", True)]
    assert search_terms("") == []


# --- SQLite: a second connection, and interrupt() --------------------------------------------


class HeldSearch:
    """Watches the statements on the store's search connection (SQLite's trace callback) and
    can hold the search statement (the one building snippets) inside SQLite's progress
    handler until released.

    FTS5 reads a message's text from its content (the `message_text` view over the items) to
    build its snippet, one traced
    statement per snippet, so `snippets` counts the snippets a search built; after a release
    it counts those the held statement still built before the next search statement began."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.hold = False
        self.in_search = False
        self.snippets = 0
        self.snippets_after_release = 0

    def install(self, conn: sqlite3.Connection) -> None:
        conn.set_trace_callback(self._statement)
        conn.set_progress_handler(self._handler, 1)

    def _statement(self, sql: str) -> None:
        if sql.startswith("-- "):  # a statement FTS5 runs inside the search statement
            if self.in_search and "message_text" in sql:
                self.snippets += 1
                self.snippets_after_release += self.release.is_set()
            return
        self.in_search = "snippet(" in sql

    def _handler(self) -> int:
        if self.hold and self.in_search and not self.release.is_set():
            self.started.set()
            self.release.wait(30)
        return 0


async def search_store(tmp_path: Path) -> tuple[SessionStore, str, HeldSearch]:
    store = await SessionStore.open(tmp_path / "desk.db")
    sid = (await store.create_session("triage")).id
    await store.append(sid, [customer(f"refund request {n} for order {n}") for n in range(400)])
    assert len(await store.search("refund", limit=5)) == 5  # opens the search connection, indexes all
    assert store._search_db is not None and store._search_db is not store._db
    held = HeldSearch()
    # on the connection's own thread (sqlite3 objects refuse others, interrupt() aside)
    await store._search_db._execute(held.install, store._search_db._conn)
    return store, sid, held


async def test_snippets_are_built_for_the_page_only(tmp_path: Path):
    store, sid, held = await search_store(tmp_path)
    try:
        assert len(await store.search("refund", limit=5)) == 5  # 400 messages match
        assert held.snippets == 5
    finally:
        await store.close()


async def test_a_conversation_read_does_not_wait_for_a_running_search(tmp_path: Path):
    store, sid, held = await search_store(tmp_path)
    held.hold = True
    try:
        search = asyncio.create_task(store.search("refund", limit=300))
        await until(lambda: asyncio.sleep(0, held.started.is_set()))
        latest = await store.latest(sid, 50)  # the search is held: this read must not queue behind it
        assert [i.seq for i in latest] == list(range(351, 401))
        await store.append(sid, [customer("a write while the search runs")])
        assert not search.done()
        held.release.set()
        assert len(await search) == 300
    finally:
        held.release.set()
        await store.close()


async def test_cancelling_a_search_interrupts_its_statement(tmp_path: Path):
    store, sid, held = await search_store(tmp_path)
    held.hold = True
    try:
        search = asyncio.create_task(store.search("refund", limit=400))
        await until(lambda: asyncio.sleep(0, held.started.is_set()))
        search.cancel()
        with pytest.raises(asyncio.CancelledError):
            await search
        held.release.set()
        # The next search on that connection runs after the cancelled statement ends; had that
        # not been interrupted, it would have built its 400 snippets first.
        hits = await store.search("order 7")
        assert [h.seq for h in hits] == [8]
        assert held.snippets_after_release <= 1, held.snippets_after_release
    finally:
        held.release.set()
        await store.close()


async def test_a_cancel_after_the_search_ended_does_not_touch_the_next_one(tmp_path: Path):
    store, sid, held = await search_store(tmp_path)
    held.release.set()
    try:
        first = asyncio.create_task(store.search("refund", limit=3))
        assert len(await first) == 3
        first.cancel()  # too late: nothing runs for it any more
        assert len(await store.search("refund", limit=400)) == 400
    finally:
        await store.close()


# --- PostgreSQL: a pool connection each, and the server's cancel --------------------------------


async def _backends(admin, query_part: str) -> list[tuple[int, str]]:
    rows = await admin.fetch(
        "SELECT pid, coalesce(wait_event_type, '') FROM pg_stat_activity "
        "WHERE datname = current_database() AND state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()",
        f"%{query_part}%",
    )
    return [(r[0], r[1]) for r in rows]


@pytest.mark.postgres
async def test_postgres_search_runs_beside_reads_and_a_cancel_stops_it_on_the_server(pg_url: str):
    import asyncpg

    store = await open_store(pg_url)
    admin = await asyncpg.connect(pg_url)
    locker = await asyncpg.connect(pg_url)
    try:
        sid = (await store.create_session("triage")).id
        await store.append(sid, [customer(f"refund request {n}") for n in range(20)])
        # Hold the sessions table, so the search (which joins it for titles) waits on the
        # server: running, but not finishing, until we say. (latest-N reads items only.)
        lock = locker.transaction()
        await lock.start()
        await locker.execute("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE")
        search = asyncio.create_task(store.search("refund"))
        await until(lambda: _has(admin, "ts_headline", 1))
        # the conversation's read goes on beside it, on another connection
        assert [i.seq for i in await store.latest(sid, 5)] == [16, 17, 18, 19, 20]
        assert not search.done()
        search.cancel()
        with pytest.raises(asyncio.CancelledError):
            await search
        # The lock is still held: only the server-side cancel can have ended the statement.
        await until(lambda: _has(admin, "ts_headline", 0))
        await lock.rollback()
        assert len(await store.search("refund")) == 20
    finally:
        await locker.close()
        await admin.close()
        await store.close()


async def _has(admin, query_part: str, count: int) -> bool:
    return len(await _backends(admin, query_part)) == count


async def test_the_search_page_is_read_in_index_order_without_sorting_the_matches(tmp_path: Path):
    from supportdesk.store import sessions as store_sql

    store = await SessionStore.open(tmp_path / "desk.db")
    await store.close()
    with sqlite3.connect(tmp_path / "desk.db") as conn:
        plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + store_sql.SQL_SEARCH, ('"refund"*', 50))]
    assert plan[0].startswith("SCAN message_fts VIRTUAL TABLE")
    assert not any("TEMP B-TREE" in step for step in plan), plan  # no sort of every match


# --- PostgreSQL: the three steps of a search, their plans, and the search pool ------------------


async def _pg_store(pg_url: str):
    from supportdesk.store.postgres import PostgresStore

    store = await open_store(pg_url)
    assert isinstance(store, PostgresStore)
    store.clock = StepClock()
    return store


@pytest.mark.postgres
async def test_postgres_every_search_step_finds_the_same_newest_page(pg_url: str, monkeypatch):
    from supportdesk.store import postgres as pg

    store = await _pg_store(pg_url)
    steps: list[tuple[str, int | None]] = []
    search_step = store._search

    async def recorded(sql: str, query: str, limit: int, bound: int | None):
        steps.append(("newest" if sql is pg.SQL_SEARCH_NEWEST else "matches", bound))
        return await search_step(sql, query, limit, bound)

    monkeypatch.setattr(store, "_search", recorded)
    try:
        a = await store.create_session("triage")
        b = await store.create_session("triage")
        # A word common long ago and rare lately: 30 old walruses, then 20 messages without one.
        for n in range(30):
            await store.append(a.id if n % 2 else b.id, [customer(f"walrus number {n}")])
        for n in range(20):
            await store.append(a.id, [customer(f"nothing to see {n}")])
        newest_five = [(a.id, 15), (b.id, 15), (a.id, 14), (b.id, 14), (a.id, 13)]

        # The default window holds every message: step 1 alone fills the page.
        assert [(h.session_id, h.seq) for h in await store.search("walrus", limit=5)] == newest_five
        assert steps == [("newest", pg.SEARCH_WINDOW)]

        # A window of the 10 newest (no walrus): the GIN index, all 30 matches under the cap.
        monkeypatch.setattr(pg, "SEARCH_WINDOW", 10)
        steps.clear()
        hits = await store.search("walrus", limit=5)
        assert [(h.session_id, h.seq) for h in hits] == newest_five
        assert all(f"{pg.MATCH_START}walrus{pg.MATCH_END}" in h.snippet for h in hits)
        assert steps == [("newest", 10), ("matches", pg.SEARCH_MATCH_CAP)]

        # More matches than the cap: the walk with no window.
        monkeypatch.setattr(pg, "SEARCH_MATCH_CAP", 29)
        steps.clear()
        assert [(h.session_id, h.seq) for h in await store.search("walrus", limit=5)] == newest_five
        assert steps == [("newest", 10), ("matches", 29), ("newest", None)]

        # Exactly at the cap the GIN index's answer stands; no match at all needs no walk.
        monkeypatch.setattr(pg, "SEARCH_MATCH_CAP", 30)
        steps.clear()
        assert len(await store.search("walrus", limit=100)) == 30
        assert steps == [("newest", 10), ("matches", 30)]
        steps.clear()
        assert await store.search("narwhal") == []
        assert steps == [("newest", 10), ("matches", 30)]
    finally:
        await store.close()


@pytest.mark.postgres
async def test_postgres_search_steps_read_the_indexes_in_order(pg_url: str):
    """Step 1 walks items_messages_by_time backwards (no sort of the messages it walks); step 2
    reads the GIN index. On a test-sized table other scans are cheaper, so they are priced out
    for the look: the question is whether the indexes can serve the statements as written (the
    plans at 1,000,000 messages: bench_pg_search.py --plans prints them)."""
    import asyncpg

    from supportdesk.store import postgres as pg

    store = await _pg_store(pg_url)
    conn = await asyncpg.connect(pg_url)
    try:
        sid = (await store.create_session("triage")).id
        # refund in 1 message of 100, as a word rare enough for step 2 is
        await store.append(sid, [customer(f"refund request {n}" if n % 100 == 0 else f"note {n}") for n in range(400)])
        await conn.execute("ANALYZE items")
        await conn.execute("SET enable_seqscan = off")
        query = pg._tsquery("refund")

        async def plan(sql: str, bound: int | None) -> str:
            rows = await conn.fetch("EXPLAIN " + sql, query, pg._HEADLINE, 50, bound)
            return "\n".join(r[0] for r in rows)

        newest = await plan(pg.SQL_SEARCH_NEWEST, pg.SEARCH_WINDOW)
        assert "Index Scan Backward using items_messages_by_time on items" in newest, newest
        assert newest.count("Sort") == 2, newest  # the page's sort (its node and its key) only
        assert "Index Scan Backward using items_messages_by_time" in await plan(pg.SQL_SEARCH_NEWEST, None)
        # (and a whole-index scan of 200 rows filtered is cheaper than a bitmap: priced out too)
        await conn.execute("SET enable_indexscan = off")
        assert "Bitmap Index Scan on items_search" in await plan(pg.SQL_SEARCH_MATCHES, pg.SEARCH_MATCH_CAP)
    finally:
        await conn.close()
        await store.close()


@pytest.mark.postgres
async def test_postgres_searches_never_take_the_conversations_connections(pg_url: str):
    """More searches at once than the store's pool has connections, all held on the server:
    a conversation read still runs at once, and cancelling them ends every one on the server."""
    import asyncpg

    from supportdesk.store.postgres import SEARCH_CONNECTIONS

    store = await _pg_store(pg_url)
    admin = await asyncpg.connect(pg_url)
    locker = await asyncpg.connect(pg_url)
    try:
        sid = (await store.create_session("triage")).id
        await store.append(sid, [customer(f"refund request {n}") for n in range(20)])
        lock = locker.transaction()
        await lock.start()
        await locker.execute("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE")
        searches = [asyncio.create_task(store.search(f"refund {n}")) for n in range(12)]  # pool: 8
        await until(lambda: _has(admin, "ts_headline", SEARCH_CONNECTIONS))
        assert [i.seq for i in await store.latest(sid, 3)] == [18, 19, 20]
        assert await _has(admin, "ts_headline", SEARCH_CONNECTIONS)  # the rest wait for the search pool
        for search in searches:
            search.cancel()
        for search in searches:
            with pytest.raises(asyncio.CancelledError):
                await search
        await until(lambda: _has(admin, "ts_headline", 0))
        await lock.rollback()
        assert [h.seq for h in await store.search("refund 7")] == [8]
    finally:
        await locker.close()
        await admin.close()
        await store.close()
