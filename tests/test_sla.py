"""SLA clocks (`supportdesk/folds/sla.py`): waits split AI / staff / customer, response and resolution
times, breaches against `[desk.sla]`, AI containment; and the same figures in `supportdesk stats
--json`, checked against the fold of the stored logs with a fixed clock, on SQLite and PostgreSQL."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from supportdesk.config import SlaSettings, load_desk
from supportdesk.items import Message, StaffReply, StateChange, Takeover
from supportdesk.folds.sla import clock, figures, figures_json
from supportdesk.reports.stats import desk_stats, stats_json
from supportdesk.store import open_store
from tests.conftest import REPO

T0 = datetime(2026, 3, 3, 9, 0, tzinfo=timezone.utc)
SLA = SlaSettings(first_response=60, next_response=120, resolution=1000)
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


# (seconds after T0, item): two conversations whose figures are worked out by hand below.
CONTAINED = [
    (0, Message(role="customer", text="charged twice", agent="triage")),
    (30, Message(role="agent", text="Refunded.", agent="triage")),
    (100, Message(role="customer", text="and the receipt?", agent="triage")),
    (160, Message(role="agent", text="Sent.", agent="triage")),
    (200, StateChange(person="dana", state="resolved", agent="triage")),
]
TAKEN = [
    (0, Message(role="customer", text="my data is gone", agent="triage")),
    (10, Message(role="agent", text="Let me look.", agent="triage")),
    (20, Message(role="customer", text="please hurry", agent="triage")),
    (30, Takeover(person="dana", reason="VIP", agent="triage")),
    (330, StaffReply(person="dana", text="Dana here, restoring it.", agent="triage")),
]
NOW = at(2000)


def _stamped(rows):
    return [replace(item, seq=n, created_at=at(t)) for n, (t, item) in enumerate(rows, 1)]


def test_the_clocks_of_one_conversation_by_hand() -> None:
    done = clock(_stamped(CONTAINED), SLA, NOW)
    assert (done.first_response, done.next_responses, done.resolution) == (30.0, (60.0,), 200.0)
    assert done.waits == {"ai": 90.0, "customer": 110.0}  # resolved time is nobody's
    assert done.breaches == {} and done.resolved and done.contained and done.waiting_since is None

    held = clock(_stamped(TAKEN), SLA, NOW)
    assert (held.first_response, held.next_responses, held.resolution) == (10.0, (310.0,), None)
    # 0-10 and 20-30 on the agents; 30-330 on dana (the customer waited for her); then the customer's
    assert held.waits == {"ai": 20.0, "customer": 1680.0, "staff": 300.0}
    assert held.breaches == {"next_response": 1, "resolution": 1}
    assert not held.contained and held.takeover_reasons == ("VIP",)

    # a running wait: the customer writes again at 2100, nobody answers by 2300
    waiting = clock(_stamped([*TAKEN, (2100, Message(role="customer", text="?", agent="triage"))]), SLA, at(2300))
    assert waiting.waiting_since == at(2100) and waiting.waiting_for == "next_response"
    assert waiting.running(at(2300)) == 200.0 and waiting.remaining(SLA, at(2300)) == -80.0
    assert waiting.breaches == {"next_response": 2, "resolution": 1}
    assert waiting.waits["staff"] == 300.0 + 200.0  # dana holds it and the customer waits for her


@pytest.fixture(params=BACKENDS)
def where(request, tmp_path):
    return tmp_path / "desk.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")


async def _store_logs(where) -> list[str]:
    """The two conversations in a real store, each item stamped at its time by the store's clock."""
    ids = []
    async with await open_store(where) as store:
        now = [T0]
        store.clock = lambda: now[0]
        for rows in (CONTAINED, TAKEN):
            info = await store.create_session("triage")
            ids.append(info.id)
            for seconds, item in rows:
                now[0] = at(seconds)
                await store.append(info.id, [item])
    return ids


async def test_stats_json_sla_figures_equal_the_fold_of_the_log_with_a_fixed_clock(where) -> None:
    await _store_logs(where)
    config = copy.deepcopy(load_desk(REPO / "agents.toml"))
    config.desk.sla = SLA
    async with await open_store(where) as store:
        stats = await desk_stats(store, config, "all", NOW)
        infos = await store.list_sessions()
        logs = [await store.range(i.id, 1, i.item_count) for i in infos]
    sla = stats_json(stats)["sla"]
    # against the fold of the stored logs ...
    assert sla == figures_json(figures([clock(log, SLA, NOW) for log in logs], SLA))
    # ... and against the figures worked out by hand
    assert sla["conversations"] == 2
    assert sla["breaches"] == {"first_response": 0, "next_response": 1, "resolution": 1}
    assert sla["breached_conversations"] == 1
    assert sla["waits_s"] == {"ai": 110.0, "staff": 300.0, "customer": 1790.0}
    assert sla["first_response"] == {"count": 2, "mean_s": 20.0, "median_s": 20.0, "max_s": 30.0}
    assert sla["next_response"] == {"count": 2, "mean_s": 185.0, "median_s": 185.0, "max_s": 310.0}
    assert sla["resolution"]["count"] == 1 and sla["resolution"]["max_s"] == 200.0
    assert sla["ai_containment"] == {"contained": 1, "conversations": 2, "rate": 0.5}
    assert sla["takeovers"] == 1 and sla["takeover_reasons"] == {"VIP": 1}
    assert sla["targets_s"] == {"first_response": 60, "next_response": 120, "resolution": 1000}


def test_the_stats_command_prints_the_sla_figures(tmp_path) -> None:
    import asyncio

    db = tmp_path / "desk.db"
    asyncio.run(_store_logs(db))
    done = subprocess.run(
        [sys.executable, "-m", "supportdesk.cli", "stats", "--json", "--range", "all", "--db", str(db),
         "--config", str(REPO / "agents.toml")],
        capture_output=True, text=True, timeout=120, env={**os.environ},
    )
    assert done.returncode == 0, done.stderr
    sla = json.loads(done.stdout)["sla"]
    # resolved or answered long ago: these do not depend on today's date
    assert sla["conversations"] == 2 and sla["takeover_reasons"] == {"VIP": 1}
    assert sla["first_response"]["count"] == 2 and sla["ai_containment"]["contained"] == 1
    assert sla["targets_s"] == {"first_response": 300.0, "next_response": 900.0, "resolution": 86400.0}


def _random_item(rng, step: int):
    from supportdesk.items import Handoff, Notice, Release, TagChange

    agent = rng.choice(["triage", "billing"])
    match rng.randrange(9):
        case 0 | 1:
            return Message(role="customer", text="?", agent=agent)
        case 2 | 3:
            return Message(role=rng.choice(["agent", "agent", "staff"]), text="ok", agent=agent)
        case 4:
            return Notice(notice_kind=rng.choice(["limit", "human_requested", "provider_error", "info"]), text="n", agent=agent)
        case 5:
            return rng.choice([
                Takeover(person="dana", reason=rng.choice(["", "VIP", "angry"]), agent=agent),
                Release(person="dana", to_agent="billing", agent=agent),
            ])
        case 6:
            return StaffReply(person="dana", text="here", agent=agent)
        case 7:
            state = rng.choice(["resolved", "snoozed", "needs_staff", "ai"])
            until = at(step * 50 + 500) if state == "snoozed" else None
            return StateChange(person="dana", state=state, until=until, agent=agent)
        case _:
            return rng.choice([
                Handoff(from_agent=agent, to_agent="senior", reason="r", handoff_kind="escalate", agent=agent),
                TagChange(person="dana", added=["vip"], agent=agent),
            ])


@pytest.mark.parametrize("seed", [1, 2])
async def test_the_kept_clocks_equal_the_fold_of_the_log_after_random_appends(where, seed) -> None:
    """The stores advance the SLA clocks with every append (`sla.advance`, in the same pass as the
    desk state); read at a fixed `now` they equal `sla.clock` over the stored log, and so do the
    figures `supportdesk stats` prints."""
    import random
    from dataclasses import replace

    from supportdesk.folds.sla import finish

    rng = random.Random(seed)
    async with await open_store(where) as store:
        now = [T0]
        store.clock = lambda: now[0]
        ids: list[str] = []
        for step in range(60):
            now[0] = at(step * 37 + rng.choice([0, 0.5, 90]))
            if not ids or rng.random() < 0.2:
                ids.append((await store.create_session("triage", first=[_random_item(rng, step)])).id)
            else:
                await store.append(rng.choice(ids), [_random_item(rng, step) for _ in range(rng.randint(1, 3))])
        for when in (at(100), NOW, at(99_999)):
            kept = await store.sla_progress(None, when)
            infos = sorted((i for i in await store.list_sessions(limit=100) if i.item_count), key=lambda i: (i.created_at, i.id))
            infos = [i for i in infos if i.created_at <= when]
            logs = [await store.range(i.id, 1, i.item_count) for i in infos]
            assert len(kept) == len(logs) and (len(logs) > 3 or when == at(100))
            for (state, progress), log in zip(kept, logs):
                expected = clock(log, SLA, when)
                got = finish(progress, state, SLA, when)
                assert (got.state.state, got.state.detail) == (expected.state.state, expected.state.detail)
                assert replace(got, state=expected.state) == expected
            stats = await desk_stats(store, _config(), "all", when)
            assert stats.sla == figures([clock(log, SLA, when) for log in logs], SLA)


def _config():
    config = copy.deepcopy(load_desk(REPO / "agents.toml"))
    config.desk.sla = SLA
    return config


def test_the_kept_clocks_text_extends_as_a_fresh_encoding_would() -> None:
    """An append extends the answered waits' JSON text by its own waits (`Waits`), not by
    encoding them all again: after many folds of one to three items the text is the one a fresh
    encoding of the same clocks gives, and it reads back equal."""
    import random

    from supportdesk.folds import desk_state
    from supportdesk.folds.sla import SlaProgress, Waits, advance_many

    rng = random.Random(5)
    state, progress, n = desk_state.ConversationState(), SlaProgress(), 0
    for _ in range(300):
        steps = []
        for _ in range(rng.randint(1, 3)):
            n += 1
            role = rng.choice(["customer", "agent", "agent"])
            item = Message(role=role, text="x", agent="triage", seq=n, created_at=at(n * rng.uniform(0.1, 30)))
            after = desk_state.advance(state, item)
            steps.append((state, after, item))
            state = after
        progress = SlaProgress.from_json(advance_many(progress, steps).to_json()) if rng.random() < 0.2 else advance_many(progress, steps)
    text = progress.to_json()
    fresh = SlaProgress(**{**progress.__dict__, "answered": tuple(progress.answered)})
    assert not isinstance(fresh.answered, Waits)
    assert text == fresh.to_json()
    assert json.loads(text)["answered"] == list(progress.answered) and len(progress.answered) > 100
    assert SlaProgress.from_json(text) == progress
