"""The figures read from the sessions' kept shares and their roll-up (store/figure_summary.py)
equal a plain-Python fold of the log (tests/stats_fold.py) after random histories: appends of
every figure's items at times that cross hours and days, sessions created, forked, imported,
deleted and given waiting statuses, windows that begin and end on and off hour and day edges;
and after a database from before the summaries is migrated. SQLite and PostgreSQL."""

from __future__ import annotations

import random
import sqlite3
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from supportdesk.items import Confirmation, ContextSet, Decline, Handoff, Message, Notice, Offer, ToolCall, ToolResult, pending_text
from supportdesk.store import open_store
from tests.stats_fold import as_fold, drop_figure_summaries_pg, drop_figure_summaries_sqlite, fold
from tests.stats_seed import StepClock

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
AGENTS = ("triage", "billing", "technical", "senior")
START = datetime(2026, 3, 1, 22, 30, tzinfo=timezone.utc)
# Steps between appends: none, a millisecond, to a minute, across an hour, across a day.
STEPS = (0, 0.001, 1, 59, 1799, 3600, 5400, 86400, 100_000)


@pytest.fixture(params=BACKENDS)
def where(request, tmp_path: Path) -> Path | str:
    return tmp_path / "desk.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")


def _meta(rng: random.Random) -> dict:
    if rng.random() < 0.5:
        return {}
    used = {"input_tokens": rng.randint(0, 900), "output_tokens": rng.randint(0, 90), "reported": rng.random() < 0.8}
    return {"usage": used, **({"model": rng.choice(["m1", "m2"])} if rng.random() < 0.5 else {})}


def _item(rng: random.Random, calls: list[str]):
    agent = rng.choice(AGENTS)
    match rng.randrange(10):
        case 0 | 1:
            return Message(role="customer", text="help", agent=agent)
        case 2 | 3:
            return Message(role=rng.choice(["agent", "agent", "staff", "system"]), text="ok", agent=agent, meta=_meta(rng))
        case 4:
            kind = rng.choice(["route", "escalate", "return", "manual"])
            return Handoff(from_agent=agent, to_agent=rng.choice(AGENTS), reason="r", handoff_kind=kind, agent=agent, meta=_meta(rng))
        case 5:
            return Notice(notice_kind=rng.choice(["limit", "provider_error", "human_requested", "info"]), text="n", agent=agent)
        case 6:
            calls.append(call_id := f"c{rng.randrange(4)}")
            name = rng.choice(["refund_charge", "issue_credit", "search_kb"])
            return ToolCall(call_id=call_id, name=name, arguments={"amount": rng.choice([5.5, 9.99, 10, 49.0, 120.25, 600])}, agent=agent, meta=_meta(rng))
        case 8 | 9:  # issue 33: offers and their answers, counted per tool and agent
            offer_id, tool = f"o{rng.randrange(3)}", rng.choice(["refund_charge", "cancel_subscription"])
            match rng.randrange(3):
                case 0:
                    return Offer(offer_id=offer_id, tool=tool, action="refund $5.00", text="Shall I?", agent=agent)
                case 1:
                    return Confirmation(offer_id=offer_id, tool=tool, agent=agent)
                case _:
                    why = rng.choice(["no", "change_of_mind", "question", "other", "expired", "withdrawn"])
                    return Decline(offer_id=offer_id, tool=tool, why=why, agent=agent)
        case _:
            if not calls:
                return ContextSet(key="k", value=rng.randrange(9), writer=agent, agent=agent)
            # Held for approval or not is the result's data, whatever its words say (the last).
            output, held = rng.choice([('{"ok": true}', False), (pending_text("large"), True), (pending_text("words"), False)])
            return ToolResult(call_id=rng.choice(calls), name=rng.choice(["refund_charge", "issue_credit"]), output=output,
                              is_error=rng.random() < 0.2, awaits_approval=held, agent=agent)


async def _random_history(store, rng: random.Random, steps: int) -> None:
    clock = StepClock()
    clock.now = START
    store.clock = clock
    ids: list[str] = []
    calls: dict[str, list[str]] = {}
    for n in range(steps):
        clock.now += timedelta(seconds=rng.choice(STEPS))
        roll = rng.random()
        if not ids or roll < 0.15:
            sid = f"s{n}"
            first = [_item(rng, calls.setdefault(sid, []))] if rng.random() < 0.7 else []
            await store.create_session(rng.choice(AGENTS[:2]), session_id=sid, first=first)
            ids.append(sid)
        elif roll < 0.2:
            await store.set_status(rng.choice(ids), rng.choice(["awaiting_approval", "needs_human", "open"]))
        elif roll < 0.23 and len(ids) > 2:
            assert await store.delete_session(victim := rng.choice(ids))
            ids.remove(victim)
        elif roll < 0.26:
            source = await store.get_session(rng.choice(ids))
            fork = await store.fork(source.id, rng.randint(0, source.item_count))
            ids.append(fork.id)
        elif roll < 0.28:
            source = await store.get_session(rng.choice(ids))
            items = await store.range(source.id, 1, source.item_count)
            copy = replace(source, id=f"i{n}")
            await store.import_session(copy, [replace(i, session_id=copy.id) for i in items], {})
            ids.append(copy.id)
        else:
            sid = rng.choice(ids)
            await store.append(sid, [_item(rng, calls.setdefault(sid, [])) for _ in range(rng.randint(1, 3))])
    return clock.now


def _windows(rng: random.Random, end: datetime) -> list[tuple[datetime | None, datetime]]:
    """All time, windows on hour and day edges, and windows off them, over the history."""
    span = (end - START).total_seconds()
    windows: list[tuple[datetime | None, datetime]] = [(None, end + timedelta(seconds=1)), (None, end)]
    for _ in range(6):
        since = START + timedelta(seconds=rng.uniform(-3600, span))
        until = since + timedelta(seconds=rng.choice([1, 1800, 3600, 86400, 3 * 86400, span]) * rng.uniform(0.2, 1.5))
        windows.append((since, until))
        on_hour = since.replace(minute=0, second=0, microsecond=0)
        windows.append((on_hour, on_hour + timedelta(hours=rng.randint(1, 80))))
        on_day = since.replace(hour=0, minute=0, second=0, microsecond=0)
        windows.append((on_day, on_day + timedelta(days=rng.randint(1, 4))))
    return windows


async def _assert_figures_equal_the_fold(store, windows) -> None:
    for since, until in windows:
        assert as_fold(await store.desk_figures(since, until)) == await fold(store, since, until), (since, until)


@pytest.mark.parametrize("seed", [1, 2])
async def test_the_kept_shares_equal_a_fold_after_random_histories(where, seed):
    rng = random.Random(seed)
    async with await open_store(where) as store:
        end = await _random_history(store, rng, 70)
        await _assert_figures_equal_the_fold(store, _windows(rng, end))
        assert (await store.desk_figures(None, end + timedelta(seconds=1))).conversations > 10


async def test_a_database_from_before_the_summaries_is_folded_once_when_migrated(where):
    rng = random.Random(7)
    async with await open_store(where) as store:
        end = await _random_history(store, rng, 40)
        windows = _windows(rng, end)
        before = [as_fold(await store.desk_figures(since, until)) for since, until in windows]
        if isinstance(where, str):
            async with store._pool.acquire() as conn:
                await drop_figure_summaries_pg(conn)  # (migration 5 added them)
                await conn.execute(
                    "UPDATE supportdesk_meta SET value = $1 WHERE key = 'schema_version'", "4"
                )
    if not isinstance(where, str):
        with sqlite3.connect(where) as conn:
            drop_figure_summaries_sqlite(conn)
            conn.execute("PRAGMA user_version = 9")  # before migration 10 added the shares
        conn.close()
    async with await open_store(where) as migrated:
        after = [as_fold(await migrated.desk_figures(since, until)) for since, until in windows]
        assert after == before
        await _assert_figures_equal_the_fold(migrated, windows)
        # and the kept shares go on from there
        migrated.clock = StepClock()
        migrated.clock.now = end + timedelta(hours=2)
        [info] = await migrated.list_sessions(limit=1)
        await migrated.append(info.id, [Message(role="agent", text="later", agent="billing")])
        await _assert_figures_equal_the_fold(migrated, windows + [(None, end + timedelta(hours=3))])


async def test_a_call_whose_amount_is_not_a_number_is_stored_and_counts_no_money(where):
    """Arguments are the model's data: an amount of "lots", NaN or a list is stored like any call
    (the append must not fail) and no money is counted at it."""
    async with await open_store(where) as store:
        await store.create_session("billing", session_id="odd")
        for n, amount in enumerate(["lots", float("nan"), [5], "12.5"]):
            call = ToolCall(call_id=f"c{n}", name="refund_charge", arguments={"amount": amount}, agent="billing")
            await store.append("odd", [call, ToolResult(call_id=f"c{n}", name="refund_charge", output="{}", agent="billing")])
        figures = await store.desk_figures(None, datetime(2100, 1, 1, tzinfo=timezone.utc))
        assert {tool: (m.count, m.total) for tool, m in figures.money.items()} == {"refund_charge": (1, 12.5)}


@pytest.mark.parametrize("seed", [3, 4])
async def test_the_sqlite_columns_and_roll_up_are_what_the_kept_shares_say(tmp_path: Path, seed: int) -> None:
    """An append sets the figures' columns only when they moved and moves only the roll-up rows
    whose tallies changed: after random histories every session's columns equal its kept share,
    the share equals a fold of its log, and the roll-up is the sum of every session's rows."""
    from supportdesk.store import figure_summary
    from supportdesk.folds.desk_state import start as desk_start
    from supportdesk.folds.sla import SlaProgress
    from supportdesk.store.figure_summary import FigureSummary
    from supportdesk.store.kept_folds import advance_all

    rng = random.Random(seed)
    path = tmp_path / "desk.db"
    async with await open_store(path) as store:
        await _random_history(store, rng, 120)
        logs = {info.id: (info, await store.range(info.id, 1, info.item_count)) for info in await store.list_sessions(limit=500)}
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT id, span_first, span_last, asked_us, answer_ms, resolved_us, resolution_ms, figure_summary, status FROM sessions"
        ).fetchall()
        rollup = {tuple(r[:7]): tuple(r[7:]) for r in conn.execute("SELECT grain, lo, hi, what, a, b, c, n, x, y, z FROM figure_rollup")}
    conn.close()
    expected: dict[tuple, list[int]] = {}
    for sid, *columns, text, status in rows:
        share = FigureSummary.from_json(text)
        assert columns == [share.first_us, share.last_us, share.asked_us, share.answer_ms, share.resolved_us, share.resolution_ms]
        info, items = logs[sid]
        start = figure_summary.start(info.entry_agent, info.created_at, status, info.forked_at or 0)
        folded = advance_all(desk_start(info.entry_agent), start, SlaProgress(), items)[1]
        assert folded == share
        for key, value in share.rollup().items():
            total = expected.setdefault(key, [0, 0, 0, 0])
            for i, v in enumerate(value):
                total[i] += v
    assert rollup == {key: tuple(value) for key, value in expected.items() if any(value)}
