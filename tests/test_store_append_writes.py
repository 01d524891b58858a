"""What one SQLite append writes (issue 34 item 5: the 4-writer-process bar).

Several processes appending to one file take turns at SQLite's write lock, so every row an
append writes is time the others wait. The session row is wide (the three kept summaries) and
carries several indexes: an append writes it once. The change feed's stamp (`changed`) is set
by that same UPDATE (schema migration 14), not by the feed's trigger writing the row again,
and the trigger still stamps every other change of the row (a status, a title).
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from supportdesk.items import Message
from supportdesk.store import SessionStore
from supportdesk.store.schema import CURRENT_VERSION


def _count_session_row_writes(conn: sqlite3.Connection) -> None:
    """A TEMP trigger (this connection only, gone when it closes) counting every UPDATE of a
    session row, the ones trigger programs make included."""
    conn.execute("CREATE TEMP TABLE row_writes (n INTEGER NOT NULL)")
    conn.execute("INSERT INTO row_writes VALUES (0)")
    conn.execute(
        "CREATE TEMP TRIGGER count_row_writes AFTER UPDATE ON main.sessions BEGIN "
        "UPDATE row_writes SET n = n + 1; END"
    )


async def _row_writes(store: SessionStore) -> int:
    return await store._run(lambda conn: conn.execute("SELECT n FROM temp.row_writes").fetchone()[0])


async def _changed(store: SessionStore, sid: str) -> tuple[int, int]:
    """The session's feed stamp and the feed's count."""
    return await store._run(
        lambda conn: conn.execute(
            "SELECT changed, (SELECT value FROM feed_counter) FROM sessions WHERE id = ?", (sid,)
        ).fetchone()
    )


async def test_an_append_writes_the_session_row_once_and_stamps_it_for_the_feed(tmp_path: Path) -> None:
    async with await SessionStore.open(tmp_path / "desk.db") as store:
        sid = (await store.create_session("triage")).id
        await store.append(sid, [Message(role="customer", text="hello")])
        await store._run(_count_session_row_writes)
        before, count_before = await _changed(store, sid)

        await store.append(sid, [Message(role="agent", text="hi there", agent="triage")])

        assert await _row_writes(store) == 1
        changed, count = await _changed(store, sid)
        assert count == count_before + 1 and changed == count > before
        # Several appends in one group: each moves the count and stamps its session.
        other = (await store.create_session("triage")).id
        first = await _changed(store, other)
        writes = await _row_writes(store)
        await asyncio.gather(
            store.append(sid, [Message(role="customer", text="one")]),
            store.append(other, [Message(role="customer", text="two")]),
        )
        assert await _row_writes(store) - writes == 2
        (a, count), (b, _) = await _changed(store, sid), await _changed(store, other)
        assert {a, b} == {count - 1, count} and b > first[0]


async def test_other_changes_of_the_session_row_are_still_stamped_by_the_feed_trigger(tmp_path: Path) -> None:
    async with await SessionStore.open(tmp_path / "desk.db") as store:
        sid = (await store.create_session("triage")).id
        before, count_before = await _changed(store, sid)
        await store.set_status(sid, "closed")
        changed, count = await _changed(store, sid)
        assert count == count_before + 1 and changed == count > before
        assert (await store.get_session(sid)).status == "closed"  # type: ignore[union-attr]


async def test_a_file_from_before_migration_14_gets_the_trigger_that_leaves_appends_alone(tmp_path: Path) -> None:
    db = tmp_path / "desk.db"
    async with await SessionStore.open(db) as store:
        sid = (await store.create_session("triage")).id
    # Back to version 13's trigger, as a file written by the previous supportdesk holds it.
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER sessions_feed_update")
        conn.execute(
            "CREATE TRIGGER sessions_feed_update AFTER UPDATE OF item_count, status, title ON sessions BEGIN "
            "UPDATE feed_counter SET value = value + 1; "
            "UPDATE sessions SET changed = (SELECT value FROM feed_counter) WHERE id = new.id; END"
        )
        conn.execute(f"PRAGMA user_version = {CURRENT_VERSION - 1}")
    async with await SessionStore.open(db) as store:
        assert await store.schema_version() == CURRENT_VERSION
        await store._run(_count_session_row_writes)
        await store.append(sid, [Message(role="customer", text="hello")])
        assert await _row_writes(store) == 1
        changed, count = await _changed(store, sid)
        assert changed == count
