"""The desk's figures (`Store.desk_figures`, `supportdesk.reports.stats`) against a plain-Python fold of
the log, on SQLite and PostgreSQL, over seeded data at a fixed clock, for every range."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest

from supportdesk.config import Price, load_desk
from supportdesk.reports.stats import RANGES, StatsError, desk_stats, parse_range, stats_json, window
from supportdesk.store import open_store
from tests.conftest import REPO
from tests.stats_fold import as_fold, fold
from tests.stats_seed import NOW, seed_desk_history

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def where(request, tmp_path: Path) -> Path | str:
    return tmp_path / "desk.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")


@pytest.fixture
async def seeded(where: Path | str):
    async with await open_store(where) as store:
        await seed_desk_history(store)
        yield store


# --- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("range_name", RANGES)
async def test_figures_match_a_fold_of_the_log(seeded, range_name):
    since, until = window(range_name, NOW, timezone.utc)
    expected = await fold(seeded, since, until)
    assert as_fold(await seeded.desk_figures(since, until)) == expected


async def test_the_seed_exercises_every_figure(seeded):
    """The fold over all time sees each case the seed was written for (else the match proves little)."""
    everything = await fold(seeded, None, NOW)
    assert everything["conversations"] == 6 and everything["started"] == 7
    # The empty session is started but taken by nobody (issue 39: "Triage 3" beside "2 active").
    assert everything["taken"] == {"billing": 3, "senior": 2, "technical": 2, "triage": 6}
    assert everything["escalated"] == {"billing": 1, "technical": 1}
    assert everything["unanswered"] == 1
    assert everything["money"] == {
        "issue_credit": {"count": 1, "total": 5.5, "buckets": (1, 0, 0, 0, 0, 0, 0)},
        "refund_charge": {"count": 2, "total": 329.0, "buckets": (0, 0, 1, 0, 0, 1, 0)},
    }
    assert everything["notices"] == {"approval_requested": 1, "human_requested": 1, "limit": 1, "provider_error": 1}
    # (tool, agent, made, accepted, declined, expired)
    assert everything["offers"] == [
        ("cancel_subscription", "billing", 1, 0, 1, 0),
        ("issue_credit", "billing", 2, 1, 0, 1),
        ("refund_charge", "billing", 1, 1, 0, 0),
    ]
    assert everything["first_answer"]["count"] == 5
    assert everything["first_answer"]["percentiles"] == {50: 12.0, 90: 90.0}
    # resolved: today's refund (40 s), the senior's refund (5 h later, at the thanks) and the
    # session that crossed midnight (its last answer, 11 h 1 s after it began)
    assert (everything["resolution"]["count"], everything["resolution"]["total"]) == (3, 40.0 + 18000.0 + 39601.0)
    assert everything["resolution"]["largest"] == 39601.0
    today = await fold(seeded, *window("today", NOW, timezone.utc))
    assert today["conversations"] == 2 and today["started"] == 2 and today["unanswered"] == 0
    assert today["notices"] == {"limit": 1}


async def test_stats_price_tokens_and_rate_escalations(seeded):
    config = load_desk(REPO / "agents.toml")
    priced = replace(
        config, model=replace(config.model, model="gpt-test", prices={"gpt-test": Price(input_per_million=1.0, output_per_million=2.0)})
    )
    stats = await desk_stats(seeded, priced, "all", NOW, timezone.utc)
    out = stats_json(stats)
    rows = {row["agent"]: row for row in out["agents"]}
    assert [row["agent"] for row in out["agents"]] == ["triage", "billing", "technical", "senior"]
    assert rows["billing"]["escalation_rate"] == round(1 / 3, 4) and rows["billing"]["specialist"]
    assert rows["technical"]["escalation_rate"] == 0.5 and rows["technical"]["specialist"]
    assert not rows["triage"]["specialist"] and not rows["senior"]["specialist"]
    tokens = out["tokens"]
    assert (tokens["input"], tokens["output"], tokens["reported"]) == (1960, 200, False)
    # every item without a model in its meta is priced at the desk's model here
    assert tokens["cost"] == pytest.approx((1960 * 1.0 + 200 * 2.0) / 1_000_000)
    assert json.loads(json.dumps(out)) == out  # plain JSON
    assert out["first_answer"]["unanswered"] == 1 and out["first_answer"]["p50_s"] == 12.0
    unpriced = stats_json(await desk_stats(seeded, config, "all", NOW, timezone.utc))
    assert unpriced["tokens"]["cost"] is None


def test_ranges_and_windows():
    assert parse_range("7d") == "7d"
    with pytest.raises(StatsError, match="use one of today, 7d, 30d, all"):
        parse_range("week")
    assert window("today", NOW, timezone.utc) == (datetime(2026, 3, 20, tzinfo=timezone.utc), NOW)
    assert window("all", NOW) == (None, NOW)
    assert (NOW - window("30d", NOW)[0]).days == 30


# --- the command -------------------------------------------------------------------------------


def _run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    from supportdesk.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_stats_json_prints_the_figures(where, capsys):
    import asyncio

    async def seed_and_expect() -> dict:
        async with await open_store(where) as store:
            await seed_desk_history(store)
            return stats_json(await desk_stats(store, load_desk(REPO / "agents.toml"), "all", NOW))

    expected = asyncio.run(seed_and_expect())
    code, out, err = _run_cli(capsys, "--db", str(where), "--config", str(REPO / "agents.toml"), "stats", "--range", "all", "--json")
    assert (code, err) == (0, "")
    printed = json.loads(out)
    assert printed.pop("until") > expected.pop("until")  # the command's now is the real clock
    # Running SLA clocks read "now" too (tests/test_sla.py checks them with a fixed clock); the
    # parts that do not are the same.
    printed_sla, expected_sla = printed.pop("sla"), expected.pop("sla")
    for key in ("conversations", "first_response", "ai_containment", "takeover_reasons", "targets_s"):
        assert printed_sla[key] == expected_sla[key]
    assert printed == expected
    assert printed["conversations"] == 6 and printed["money"]["refund_charge"]["total"] == 329.0


@pytest.mark.parametrize(
    "argv, says",
    [
        (["stats", "--range", "week"], "unknown range 'week': use one of today, 7d, 30d, all"),
        (["--db", "{tmp}/missing.db", "stats", "--json"], "missing.db: no such database"),
        (["--db", "{tmp}/notes.txt", "stats", "--json"], "notes.txt: not a supportdesk database"),
        (["--db", "mysql://localhost/desk", "stats", "--json"], "mysql"),
    ],
)
def test_a_bad_range_or_database_is_one_line_and_exit_2(tmp_path, capsys, argv, says):
    (tmp_path / "notes.txt").write_text("not a database, just notes\n" * 50)
    code, out, err = _run_cli(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and says in err
    assert "Traceback" not in err


async def test_durations_are_exact_to_the_millisecond_at_a_second_s_edge(where):
    """A reply 2.9997 s after the question is 2.999 s on both databases (SQLite's own time
    functions keep milliseconds and would round the later stamp up to the next second)."""
    from datetime import timedelta

    from tests.stats_seed import StepClock, answer, customer, resolve

    async with await open_store(where) as store:
        clock = StepClock()
        store.clock = clock
        clock.now = NOW - timedelta(hours=1)
        await store.create_session("triage", session_id="edge", first=[customer("Hello")])
        clock.now = NOW - timedelta(hours=1) + timedelta(microseconds=2_999_700)
        await store.append("edge", [answer("triage", "Hi"), resolve()])
        figures = await store.desk_figures(None, NOW)
        assert (figures.first_answer.count, figures.first_answer.largest) == (1, 2.999)
        assert figures.resolution.largest == 2.999


# --- issue 39 §4: a fork's copies are not new events; resolution means one thing --------------


async def test_a_refund_copied_into_a_fork_counts_once(where):
    """A session refunds 29.00 after a handoff, then is forked after the refund and the fork goes
    on: the copied call, result, handoff and messages are the source's events, so the figures hold
    one refund, one handoff and one first answer, whether the fork is read from the roll-up (the
    window holds its whole hour) or from its items (it ends in the window's last part-hour)."""
    from datetime import timedelta

    from tests.stats_seed import StepClock, answer, call, customer, result, route

    async with await open_store(where) as store:
        clock = StepClock()
        store.clock = clock
        clock.now = NOW - timedelta(hours=3)
        await store.create_session("triage", session_id="src", first=[customer("I was charged twice")])
        clock.now += timedelta(seconds=2)
        await store.append("src", [answer("triage", "Passing you to Billing"), route("triage", "billing")])
        clock.now += timedelta(seconds=20)
        await store.append(
            "src",
            [
                call("billing", "c1", "refund_charge", charge_id="CH-1", amount=29.0, reason="duplicate charge"),
                result("billing", "c1", "refund_charge", '{"refund_id": "RF-1", "amount": 29.0}'),
                answer("billing", "Refunded 29.00"),
            ],
        )
        source = await store.get_session("src")
        assert source is not None
        clock.now = NOW - timedelta(minutes=10)
        fork = await store.fork("src", source.item_count)
        clock.now += timedelta(seconds=5)
        await store.append(fork.id, [customer("And the other charge?"), answer("billing", "Only one was doubled")])
        # NOW is on the hour: a window ending a minute before it leaves the fork in its last
        # part-hour (read from its items); one ending at NOW holds its whole hour (the roll-up).
        for until in (NOW - timedelta(minutes=1), NOW):
            figures = await store.desk_figures(None, until)
            assert {tool: (m.count, m.total) for tool, m in figures.money.items()} == {"refund_charge": (1, 29.0)}
            assert [(h.from_agent, h.to_agent, h.count) for h in figures.handoffs] == [("triage", "billing", 1)]
            assert figures.first_answer.count == 2  # the source's, and the fork's own question
            assert figures.conversations == 2 and figures.started == 2
            assert as_fold(figures) == await fold(store, None, until)


async def test_an_empty_session_is_taken_by_nobody_until_its_first_item(where):
    """Issue 39: the dashboard showed "Triage 3" per agent beside "2 active": a session opened with
    nothing in it counted for its entry agent. It is started, but the entry agent takes it with its
    first item; read from the roll-up (the window holds the whole hour) and from the items (the
    window ends in the sessions' last part-hour) alike."""
    from datetime import timedelta

    from tests.stats_seed import StepClock, answer, customer

    async with await open_store(where) as store:
        clock = StepClock()
        store.clock = clock
        clock.now = NOW - timedelta(minutes=30)
        await store.create_session("triage", session_id="talk", first=[customer("I was charged twice")])
        await store.append("talk", [answer("triage", "Let me look")])
        clock.now += timedelta(seconds=5)
        await store.create_session("triage", session_id="quiet")
        ends = (NOW - timedelta(minutes=1), NOW)
        for until in ends:
            figures = await store.desk_figures(NOW - timedelta(hours=2), until)
            assert (figures.conversations, figures.started) == (1, 2)
            assert figures.taken == {"triage": 1}, until
        clock.now += timedelta(seconds=5)
        await store.append("quiet", [customer("hello?")])
        for until in ends:
            figures = await store.desk_figures(NOW - timedelta(hours=2), until)
            assert figures.conversations == 2 and figures.taken == {"triage": 2}, until


async def test_an_offer_copied_into_a_fork_counts_once(where):
    """Issue 33 §6 with 39 §4: the offer and the yes copied into a fork are the source's; the
    fork's own offer (which lapses) is new. Read from the roll-up and from the items alike."""
    from datetime import timedelta

    from tests.stats_seed import StepClock, accepted, customer, declined, offer

    async with await open_store(where) as store:
        clock = StepClock()
        store.clock = clock
        clock.now = NOW - timedelta(hours=3)
        await store.create_session("billing", session_id="src", first=[customer("Refund the duplicate")])
        clock.now += timedelta(seconds=2)
        await store.append("src", [offer("billing", "o1", "refund_charge", "refund 29.00", amount=29.0)])
        clock.now += timedelta(seconds=20)
        await store.append("src", [customer("yes"), accepted("billing", "o1", "refund_charge", amount=29.0)])
        source = await store.get_session("src")
        assert source is not None
        clock.now = NOW - timedelta(minutes=10)
        fork = await store.fork("src", source.item_count)
        clock.now += timedelta(seconds=5)
        await store.append(fork.id, [offer("senior", "o2", "cancel_subscription", "cancel the plan")])
        clock.now += timedelta(seconds=5)
        await store.append(fork.id, [declined("senior", "o2", "cancel_subscription", "expired")])
        for until in (NOW - timedelta(minutes=1), NOW):
            figures = await store.desk_figures(None, until)
            assert [(o.tool, o.agent, o.made, o.accepted, o.declined, o.expired) for o in figures.offers] == [
                ("cancel_subscription", "senior", 1, 0, 0, 1),
                ("refund_charge", "billing", 1, 1, 0, 0),
            ]
            assert as_fold(figures) == await fold(store, None, until)


async def test_a_resolution_counts_the_same_in_the_figures_and_the_sla(where):
    """Three conversations: one staff resolved, one whose agent had the last word (not resolved),
    and a fork of the resolved one, copied resolved. Time-to-resolution and `sla.resolved` both
    count the one conversation that became resolved, timed alike."""
    from datetime import timedelta

    from supportdesk.config import load_desk
    from tests.stats_seed import StepClock, answer, customer, resolve

    async with await open_store(where) as store:
        clock = StepClock()
        store.clock = clock
        clock.now = NOW - timedelta(hours=2)
        await store.create_session("triage", session_id="done", first=[customer("How do I export?")])
        clock.now += timedelta(seconds=4)
        await store.append("done", [answer("triage", "Settings, then Export")])
        clock.now += timedelta(seconds=30)
        await store.append("done", [resolve()])
        clock.now += timedelta(seconds=30)
        await store.create_session("triage", session_id="talked", first=[customer("Is there a dark mode?")])
        clock.now += timedelta(seconds=3)
        await store.append("talked", [answer("triage", "Yes, under Appearance")])
        clock.now += timedelta(seconds=60)
        await store.fork("done", 3)
        stats = await desk_stats(store, load_desk(REPO / "agents.toml"), "all", NOW, timezone.utc)
        assert stats.sla is not None
        assert stats.figures.resolution.count == stats.sla.resolved == len(stats.sla.resolutions) == 1
        assert stats.figures.resolution.total == stats.sla.resolutions[0] == 34.0


async def test_a_database_folded_under_the_old_meanings_is_folded_again(tmp_path: Path):
    """Shares kept before migration 11 counted a fork's copies: opening such a file folds every
    share and the roll-up again (here the roll-up's refund row is doubled as the old fold left it)."""
    import sqlite3
    from datetime import timedelta

    from supportdesk.store.schema import FIGURES_VERSION
    from tests.stats_seed import StepClock, call, customer, result

    path = tmp_path / "desk.db"
    async with await open_store(path) as store:
        clock = StepClock()
        store.clock = clock
        clock.now = NOW - timedelta(hours=3)
        refund = [call("billing", "c1", "refund_charge", charge_id="CH-1", amount=29.0), result("billing", "c1", "refund_charge", "{}")]
        await store.create_session("billing", session_id="src", first=[customer("Refund please"), *refund])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE figure_rollup SET n = 2 * n, x = 2 * x WHERE what = 'money'")
        conn.execute(f"PRAGMA user_version = {FIGURES_VERSION - 1}")
    conn.close()
    async with await open_store(path) as store:
        figures = await store.desk_figures(None, NOW)
        assert {tool: (m.count, m.total) for tool, m in figures.money.items()} == {"refund_charge": (1, 29.0)}
