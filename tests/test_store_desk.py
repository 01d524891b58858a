"""The per-session summary (where each conversation stands), on both adapters: kept by every
append equal to a fold of the whole log, listed for the inbox in one query, counted for the badge,
right after forks, imports, appends from another process and the migration of an older database."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import datetime, timedelta, timezone
import subprocess
import sys
from pathlib import Path

import pytest

from supportdesk.folds.desk_state import fold, start
from supportdesk.items import ContextSet, Handoff, Message, Notice, ToolCall, ToolResult
from supportdesk.store import SessionStore, Store, open_store
from supportdesk.store import sessions as store_sql
from supportdesk.store.schema import DESK_FOLD_VERSION, DESK_SUMMARY_VERSION, MIGRATIONS
from tests.test_store import StepClock, pytest_generate_tests, store, where  # noqa: F401  (the contract's fixtures)
from tests.stats_fold import drop_figure_summaries_pg, drop_figure_summaries_sqlite

REPO = Path(__file__).resolve().parents[1]
LATER = datetime(2030, 1, 1, tzinfo=timezone.utc)  # after every time the tests write


def approval(approval_id: str = "ap1") -> Notice:
    return Notice(notice_kind="approval_requested", text="Billing asks staff to approve refund", agent="billing",
                  data={"approval_id": approval_id, "tool": "refund", "arguments": {"charge_id": "CH-26"}})


CONVERSATION = [
    [Message(role="customer", text="I was charged twice", agent="triage")],
    [ContextSet(key="customer_email", value="dana@example.com", writer="triage", agent="triage"),
     Handoff(from_agent="triage", to_agent="billing", reason="duplicate charge", agent="triage")],
    [ToolCall(call_id="c1", name="refund", arguments={"charge_id": "CH-26"}, agent="billing"),
     ToolResult(call_id="c1", name="refund", output="waiting for staff approval", agent="billing", awaits_approval=True), approval()],
    [Message(role="agent", text="I've asked a colleague to approve the refund.", agent="billing")],
    [Notice(notice_kind="approval_granted", text="Staff granted refund.", agent="billing", data={"approval_id": "ap1"}),
     Message(role="agent", text="Refunded $29.00.", agent="billing")],
]


async def test_every_append_keeps_the_state_equal_to_a_fold_of_the_whole_log(store: Store) -> None:
    info = await store.create_session("triage", session_id="s1")
    [row] = await store.desk()
    assert row.session.id == "s1" and row.state == start("triage")
    for batch in CONVERSATION:
        await store.append(info.id, batch)
        whole = await store.range(info.id, 1, await store.last_seq(info.id))
        [row] = await store.desk()
        assert row.state == fold(whole, start("triage"))
        assert row.session.item_count == len(whole)
    assert (row.state.state, row.state.detail, row.state.holder) == ("ai", "waiting_customer", "billing")
    assert row.state.customer == "dana@example.com" and row.state.last_line == "Refunded $29.00."


async def test_the_desk_lists_newest_first_with_states_and_counts_those_needing_staff(store: Store) -> None:
    for sid in ("a", "b", "c"):
        await store.create_session("triage", session_id=sid, first=[Message(role="customer", text=f"hi {sid}", agent="triage")])
    await store.append("a", [approval()])
    await store.append("c", [Notice(notice_kind="human_requested", text="asked for a person", agent="triage")])
    rows = await store.desk()
    assert [r.session.id for r in rows] == ["c", "a", "b"]
    assert [(r.state.state, r.state.detail) for r in rows] == [
        ("needs_staff", "human_requested"), ("needs_staff", "approval"), ("ai", "working")]
    assert rows[0].state.since == rows[0].session.updated_at  # began with the notice's append
    assert await store.count_needing_staff(LATER) == 2
    assert [r.session.id for r in await store.desk(limit=1)] == ["c"]
    await store.append("a", [Notice(notice_kind="approval_denied", text="denied", agent="billing",
                                    data={"approval_id": "ap1"})])
    assert await store.count_needing_staff(LATER) == 2  # a denial needs staff too, until a person acts
    await store.append("a", [Message(role="staff", text="I'll call them.", agent="billing")])
    assert await store.count_needing_staff(LATER) == 1
    await store.delete_session("c")
    assert await store.count_needing_staff(LATER) == 0


async def test_a_fork_and_an_import_keep_the_state_of_the_items_they_hold(store: Store) -> None:
    info = await store.create_session("triage", session_id="src")
    for batch in CONVERSATION:
        await store.append(info.id, batch)
    fork = await store.fork(info.id, 6)  # up to the approval request
    by_id = {r.session.id: r.state for r in await store.desk()}
    assert by_id[fork.id] == fold(await store.range(fork.id, 1, 6), start("triage"))
    assert by_id[fork.id].detail == "approval"
    assert await store.count_needing_staff(LATER) == 1
    # Appending to the fork goes on from its kept state.
    await store.append(fork.id, [Notice(notice_kind="approval_granted", text="ok", agent="billing",
                                        data={"approval_id": "ap1"})])
    assert await store.count_needing_staff(LATER) == 0
    items = await store.range(info.id, 1, 99)
    usage = await store.usage_totals(info.id)
    source = await store.get_session(info.id)
    assert source is not None
    await store.delete_session(info.id)
    await store.import_session(source, items, usage)  # type: ignore[attr-defined]
    by_id = {r.session.id: r.state for r in await store.desk()}
    assert by_id[info.id] == fold(items, start("triage"))


WRITER = """
import asyncio, sys
from supportdesk.items import Message, Notice
from supportdesk.store import open_store

async def main(where, sid):
    store = await open_store(where)
    await store.create_session("triage", session_id=sid, first=[Message(role="customer", text="from afar", agent="triage")])
    await store.append(sid, [Notice(notice_kind="approval_requested", text="refund?", agent="billing",
                                    data={"approval_id": "x1", "tool": "refund"})])
    await store.close()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def test_sessions_written_by_another_process_are_listed_with_their_state(store: Store, where) -> None:
    subprocess.run([sys.executable, "-c", WRITER, str(where), "far"], check=True, cwd=REPO, timeout=120)
    [row] = await store.desk()
    assert row.session.id == "far" and row.state.reason == "approval pending: refund"
    assert await store.count_needing_staff(LATER) == 1


@pytest.mark.sqlite_only
async def test_opening_an_older_file_folds_every_session_once(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    async with await SessionStore.open(path) as fresh:
        await fresh.create_session("triage", session_id="old1")
        for batch in CONVERSATION[:3]:
            await fresh.append("old1", batch)
        expected = fold(await fresh.range("old1", 1, 99), start("triage"))
    # Take the file back to before the summary existed.
    with sqlite3.connect(path) as conn:
        drop_figure_summaries_sqlite(conn)
        conn.execute("DROP INDEX sessions_by_desk_state")
        conn.execute("ALTER TABLE sessions DROP COLUMN desk_summary")
        conn.execute("ALTER TABLE sessions DROP COLUMN desk_state")
        conn.execute(f"PRAGMA user_version = {DESK_SUMMARY_VERSION - 1}")
    async with await SessionStore.open(path) as reopened:
        [row] = await reopened.desk()
        assert row.state == expected and row.state.detail == "approval"
        assert await reopened.count_needing_staff(LATER) == 1
    assert len(MIGRATIONS) >= DESK_SUMMARY_VERSION


DENIED = [
    [Message(role="customer", text="refund my $400", agent="triage")],
    [approval("d1")],
    [Notice(notice_kind="approval_denied", text="Staff denied refund.", agent="billing", data={"approval_id": "d1", "tool": "refund"}),
     Message(role="agent", text="Sorry, that refund was declined.", agent="billing")],
]


async def _two_sessions_kept_by_the_old_rule(store: Store) -> tuple[str, str]:
    """A session with a denial and one without, their kept summaries as the fold before the
    denied rule left them (ai after a decision; the other marked so a refold would show)."""
    await store.create_session("triage", session_id="denied")
    for batch in DENIED:
        await store.append("denied", batch)
    await store.create_session("triage", session_id="plain", first=[Message(role="customer", text="hi", agent="triage")])
    rows = {r.session.id: r.state for r in await store.desk()}
    assert rows["denied"].detail == "denied"
    old = replace(rows["denied"], state="ai", detail="waiting_customer", unanswered_denial=False)
    untouched = replace(rows["plain"], last_line="kept as it was")
    return old.to_json(), untouched.to_json()


@pytest.mark.sqlite_only
async def test_opening_a_file_from_before_the_denied_rule_folds_the_sessions_with_a_denial(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    async with await SessionStore.open(path) as fresh:
        old, untouched = await _two_sessions_kept_by_the_old_rule(fresh)
    with sqlite3.connect(path) as conn:
        drop_figure_summaries_sqlite(conn)
        conn.execute("UPDATE sessions SET desk_state = 'ai', desk_summary = ? WHERE id = 'denied'", (old,))
        conn.execute("UPDATE sessions SET desk_summary = ? WHERE id = 'plain'", (untouched,))
        conn.execute(f"PRAGMA user_version = {DESK_FOLD_VERSION - 1}")
    async with await SessionStore.open(path) as reopened:
        rows = {r.session.id: r.state for r in await reopened.desk()}
        assert (rows["denied"].state, rows["denied"].detail) == ("needs_staff", "denied")
        assert rows["denied"] == fold(await reopened.range("denied", 1, 99), start("triage"))
        assert rows["plain"].last_line == "kept as it was"  # only sessions with a denial are folded again
        assert await reopened.count_needing_staff(LATER) == 1


@pytest.mark.postgres
async def test_opening_a_postgresql_database_from_before_the_denied_rule_folds_the_sessions_with_a_denial(pg_url) -> None:
    from supportdesk.store import pg_schema
    from supportdesk.store.postgres import PostgresStore

    async with await open_store(pg_url) as fresh:
        assert isinstance(fresh, PostgresStore)
        old, untouched = await _two_sessions_kept_by_the_old_rule(fresh)
        async with fresh._pool.acquire() as conn:
            await drop_figure_summaries_pg(conn)
            await conn.execute("UPDATE sessions SET desk_state = 'ai', desk_summary = $1 WHERE id = 'denied'", old)
            await conn.execute("UPDATE sessions SET desk_summary = $1 WHERE id = 'plain'", untouched)
            await conn.execute("UPDATE supportdesk_meta SET value = $1 WHERE key = 'schema_version'",
                               str(pg_schema.DESK_FOLD_VERSION - 1))
    async with await open_store(pg_url) as reopened:
        rows = {r.session.id: r.state for r in await reopened.desk()}
        assert (rows["denied"].state, rows["denied"].detail) == ("needs_staff", "denied")
        assert rows["denied"] == fold(await reopened.range("denied", 1, 99), start("triage"))
        assert rows["plain"].last_line == "kept as it was"
        assert await reopened.count_needing_staff(LATER) == 1


@pytest.mark.sqlite_only
async def test_the_desk_reads_are_index_searches(tmp_path: Path) -> None:
    async with await SessionStore.open(tmp_path / "d.db"):
        pass
    with sqlite3.connect(tmp_path / "d.db") as conn:
        for sql, params in ((store_sql.SQL_DESK, (50,)), (store_sql.SQL_COUNT_NEEDING_STAFF, ("2030-01-01",))):
            plan = " ".join(str(r[-1]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
            assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, plan


async def test_a_snooze_whose_time_has_passed_counts_as_needing_staff(store: Store) -> None:
    from supportdesk.items import StateChange

    await store.create_session("triage", session_id="z", first=[Message(role="customer", text="hi", agent="triage")])
    until = datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc)
    await store.append("z", [StateChange(state="snoozed", until=until, person="sam", agent="triage")])
    [row] = await store.desk()
    assert row.state.state == "snoozed" and row.state.snoozed_until == until
    assert await store.count_needing_staff(until - timedelta(seconds=1)) == 0
    assert await store.count_needing_staff(until) == 1


@pytest.mark.postgres
async def test_opening_an_older_postgresql_database_folds_every_session_once(pg_url) -> None:
    from supportdesk.store import pg_schema
    from supportdesk.store.postgres import PostgresStore

    async with await open_store(pg_url) as fresh:
        assert isinstance(fresh, PostgresStore)
        fresh.clock = StepClock()
        await fresh.create_session("triage", session_id="old1")
        for batch in CONVERSATION[:3]:
            await fresh.append("old1", batch)
        expected = fold(await fresh.range("old1", 1, 99), start("triage"))
        # Take the database back to before the summary existed.
        async with fresh._pool.acquire() as conn:
            await drop_figure_summaries_pg(conn)
            await conn.execute("DROP INDEX sessions_by_desk_state")
            await conn.execute("ALTER TABLE sessions DROP COLUMN desk_summary, DROP COLUMN desk_state")
            await conn.execute("UPDATE supportdesk_meta SET value = $1 WHERE key = 'schema_version'",
                               str(pg_schema.DESK_SUMMARY_VERSION - 1))
    async with await open_store(pg_url) as reopened:
        [row] = await reopened.desk()
        assert row.state == expected and row.state.detail == "approval"
        assert await reopened.count_needing_staff(LATER) == 1


@pytest.mark.sqlite_only
async def test_the_state_column_follows_the_summary_when_an_append_leaves_it_and_when_it_moves(tmp_path: Path) -> None:
    # An append that leaves the state as stored does not write `desk_state` (a page less per
    # commit): the column must still say what the summary says after every kind of append.
    path = tmp_path / "d.db"
    async with await SessionStore.open(path) as store:
        await store.create_session("triage", session_id="s1")
        seen = []
        for batch in CONVERSATION:
            await store.append("s1", batch)
            whole = fold(await store.range("s1", 1, 99), start("triage"))
            with sqlite3.connect(path) as conn:
                column, summary = conn.execute("SELECT desk_state, desk_summary FROM sessions WHERE id = 's1'").fetchone()
            assert column == whole.state and summary == whole.to_json()
            assert await store.count_needing_staff(LATER) == (whole.state == "needs_staff")
            seen.append(column)
    assert seen == ["ai", "ai", "needs_staff", "needs_staff", "ai"]  # kept twice, moved twice


@pytest.mark.sqlite_only
async def test_two_connections_appending_in_turn_each_advance_the_other_s_state(tmp_path: Path) -> None:
    # Each store keeps the summaries it parsed, by their text: the other's append leaves a
    # text this one never saw, which it must read, not replace with its own older state.
    path = tmp_path / "d.db"
    a, b = await SessionStore.open(path), await SessionStore.open(path)
    try:
        await a.create_session("triage", session_id="s1")
        for n, batch in enumerate(CONVERSATION):
            await (a if n % 2 == 0 else b).append("s1", batch)
            for reader in (a, b):
                [row] = await reader.desk()
                assert row.state == fold(await reader.range("s1", 1, 99), start("triage"))
    finally:
        await a.close()
        await b.close()


async def test_the_desk_filters_by_state_group_tag_and_priority_as_the_fold_judges(store: Store) -> None:
    """The browser's query: every filter keeps exactly the rows `DeskFilter.matches` keeps, in the
    desk's order, paged, with a count; a snooze that has ended counts as needing staff."""
    from supportdesk.folds.desk_state import STATE_GROUPS, DeskFilter
    from supportdesk.items import StateChange, TagChange

    now = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
    said = {
        "working": [Message(role="customer", text="hello", agent="triage")],
        "waiting": [Message(role="customer", text="hi", agent="triage"), Message(role="agent", text="Hi!", agent="triage")],
        "approval": [Message(role="customer", text="refund", agent="triage"), approval()],
        "resolved": [Message(role="customer", text="thanks", agent="triage"),
                     StateChange(state="resolved", person="ana", agent="triage")],
        "snoozing": [StateChange(state="snoozed", until=now + timedelta(hours=1), person="ana", agent="triage")],
        "woken": [StateChange(state="snoozed", until=now - timedelta(hours=1), person="ana", agent="triage")],
        "parked": [StateChange(state="snoozed", person="ana", agent="triage")],  # no end: stays snoozed
    }
    tagged = {
        "working": TagChange(added=["vip"], priority="high", person="ana", agent="triage"),
        "approval": TagChange(added=["vip", "refund"], person="bo", agent="triage"),
        "woken": TagChange(added=["refund"], priority="urgent", person="bo", agent="triage"),
        "resolved": TagChange(added=["gone"], removed=[], person="bo", agent="triage"),
    }
    for sid, items in said.items():
        await store.create_session("triage", session_id=sid, first=items[:1])
        await store.append(sid, [*items[1:], *([tagged[sid]] if sid in tagged else [])])
    await store.append("resolved", [TagChange(removed=["gone"], person="bo", agent="triage")])
    every = await store.desk()
    assert len(every) == len(said)
    filters = [DeskFilter(group) for group in STATE_GROUPS] + [
        DeskFilter(tag="vip"), DeskFilter(tag="refund"), DeskFilter(tag="gone"), DeskFilter(priority="high"),
        DeskFilter("needs_staff", tag="refund"), DeskFilter("needs_staff", priority="urgent"),
        DeskFilter("working", tag="vip", priority="high"), DeskFilter("idle", tag="vip"),
    ]
    for where in filters:
        expected = [r.session.id for r in every if where.matches(r.state, now)]
        assert [r.session.id for r in await store.desk(where=where, now=now)] == expected, where
        assert await store.count_desk(where, now) == len(expected), where
        # Paged: two at a time, the same rows in the same order.
        paged = [r.session.id for n in range(0, len(said), 2) for r in await store.desk(limit=2, offset=n, where=where, now=now)]
        assert paged == expected, where
    ids = lambda where: {r.session.id for r in every if where.matches(r.state, now)}  # noqa: E731
    assert ids(DeskFilter("needs_staff")) == {"approval", "woken"}
    assert ids(DeskFilter("idle")) == {"resolved", "snoozing", "parked"}
    assert ids(DeskFilter(tag="refund")) == {"approval", "woken"} and not ids(DeskFilter(tag="gone"))
    assert await store.desk_tags() == (["refund", "vip"], ["high", "urgent"])
