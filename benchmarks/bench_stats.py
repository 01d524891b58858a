#!/usr/bin/env python
"""The desk's figures (`supportdesk stats`, the dashboard) on 100,000 sessions, per range.

    python benchmarks/bench_stats.py                        # SQLite, 100,000 sessions
    python benchmarks/bench_stats.py --postgres URL         # and PostgreSQL on the same history
    python benchmarks/bench_stats.py --sessions 20000       # a smaller desk, for a quick look

The history: sessions spread evenly over the last 90 days, about 12 items each (a customer
message, triage's answer and handoff, context writes, a specialist's tool call and result, its
answer; every fifth escalates to senior, one in four refunds or credits, some hit a limit or a
provider error, items carry token usage). It is written through the store's contract
(`import_session`, one transaction per session, with each item's own time), and kept in
`--keep DIR` (default: the system's temp folder) so later runs reuse it.

Measured: `Store.desk_figures` for each range (median of --runs), and beside it the peer: the same
figures as a plain-Python fold of the log (`tests/stats_fold.py`, what a dashboard without SQL
aggregates costs), for today and 7 days (the fold of 30 days and all time reads every item into
Python: minutes). The two must agree exactly.

Bars (exit status 1 if one is missed), on the full 100,000 sessions, on each database:
- every range ≤ 1 s, all time included (the median of --runs): the figures are read from the
  sessions' shares kept with the appends and their roll-up (store/figure_summary.py), so the
  cost is a few hundred roll-up rows plus the sessions crossing the window's edges;
- SQL and fold agree exactly.
The fold's time is printed beside the SQL's for today and 7 days, without a bar.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from supportdesk.items import (  # noqa: E402
    APPROVAL_PENDING,
    ContextSet,
    Handoff,
    Message,
    Notice,
    ToolCall,
    ToolResult,
)
from supportdesk.reports.stats import RANGES, window  # noqa: E402
from supportdesk.store import SessionInfo, open_store  # noqa: E402
from tests.stats_fold import as_fold, fold  # noqa: E402

# "Now" of the benchmark: fixed, so a kept history is measured the same way every run.
NOW = datetime(2026, 3, 20, 12, 0, tzinfo=timezone.utc)
DAYS = 90
RANGE_BAR_S = 1.0
FOLD_RANGES = ("today", "7d")


def _usage(rng: random.Random) -> dict:
    return {"usage": {"input_tokens": rng.randint(300, 2000), "output_tokens": rng.randint(20, 200), "reported": True}}


def make_session(i: int, rng: random.Random) -> tuple[SessionInfo, list]:
    """One session of the history, with its items' own times (seconds apart, like a turn)."""
    sid = f"bench{i:07d}"
    start = NOW - timedelta(seconds=rng.uniform(60, DAYS * 86400))
    specialist = "billing" if rng.random() < 0.6 else "technical"
    t = start
    items: list = []

    def add(item, seconds: float) -> None:
        nonlocal t
        t += timedelta(seconds=seconds)
        items.append(item.model_copy(update={"session_id": sid, "seq": len(items) + 1, "created_at": t}))

    add(Message(role="customer", text=f"Help with my account, case {i}", agent="triage"), 0)
    if rng.random() < 0.02:
        add(Notice(notice_kind="provider_error", text="the model server did not answer", agent="triage"), 1)
    else:
        add(ContextSet(key="category", value=specialist, writer="triage", agent="triage"), rng.uniform(0.5, 4))
        add(ContextSet(key="customer_email", value=f"c{i}@example.com", writer="triage", agent="triage"), 0)
        add(Message(role="agent", text="Passing you on", agent="triage", meta=_usage(rng)), 0)
        add(Handoff(from_agent="triage", to_agent=specialist, reason="routed", agent="triage"), 0)
        holder = specialist
        if rng.random() < 0.25:  # money moves
            tool = "refund_charge" if specialist == "billing" else "issue_credit"
            amount = round(rng.choice([9.99, 29.99, 49.0, 120.0, 300.0]), 2)
            add(ToolCall(call_id=f"c{i}", name=tool, arguments={"amount": amount}, agent=holder, meta=_usage(rng)), rng.uniform(2, 30))
            output = f"{APPROVAL_PENDING}: large" if amount >= 250 else f'{{"amount": {amount}}}'
            add(ToolResult(call_id=f"c{i}", name=tool, output=output, agent=holder), 0.2)
        else:
            add(ToolCall(call_id=f"k{i}", name="search_kb", arguments={"query": "account"}, agent=holder, meta=_usage(rng)), rng.uniform(2, 30))
            add(ToolResult(call_id=f"k{i}", name="search_kb", output="[]", agent=holder), 0.2)
        if rng.random() < 0.2:
            add(Handoff(from_agent=holder, to_agent="senior", reason="policy", handoff_kind="escalate", agent=holder), 5)
            holder = "senior"
        if rng.random() < 0.03:
            add(Notice(notice_kind="limit", text="steps per message", agent=holder), 1)
        add(Message(role="agent", text="Here is what I found", agent=holder, meta=_usage(rng)), rng.uniform(1, 600))
        add(ContextSet(key="resolved", value=True, writer=holder, agent=holder), 0)
    info = SessionInfo(
        id=sid,
        title=f"case {i}",
        created_at=start,
        updated_at=t,
        entry_agent="triage",
        active_agent=next((x.to_agent for x in reversed(items) if x.kind == "handoff"), "triage"),
        status="open",
        item_count=len(items),
        handoff_count=sum(x.kind == "handoff" for x in items),
    )
    return info, items


async def build(where: str | Path, sessions: int) -> None:
    async with await open_store(where) as store:
        have = await store.count_sessions()
        if have == sessions:
            print(f"reusing the history in {store.location} ({sessions:,} sessions)")
            return
        if have:
            raise SystemExit(f"{store.location} holds {have:,} sessions, not {sessions:,}: remove it or use another --keep")
        print(f"writing {sessions:,} sessions to {store.location} …", flush=True)
        rng = random.Random(16)
        started = time.perf_counter()
        pending = []
        for i in range(sessions):
            info, items = make_session(i, rng)
            pending.append(store.import_session(info, items, {}))
            if len(pending) == 16:  # PostgreSQL writes these on several pooled connections
                await asyncio.gather(*pending)
                pending = []
            if (i + 1) % 20000 == 0:
                print(f"  {i + 1:,} in {time.perf_counter() - started:.0f} s", flush=True)
        await asyncio.gather(*pending)
        print(f"  done in {time.perf_counter() - started:.0f} s")


async def measure(where: str | Path, label: str, runs: int, full: bool) -> list[str]:
    missed = []
    async with await open_store(where) as store:
        print(f"\n{label}: {await store.count_sessions():,} sessions")
        print(f"{'range':<6} {'sessions':>9} {'SQL median':>11} {'ms/session':>11} {'fold':>9} {'fold/SQL':>9}")
        for name in RANGES:
            since, until = window(name, NOW, timezone.utc)
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                figures = await store.desk_figures(since, until)
                times.append(time.perf_counter() - started)
            sql = statistics.median(times)
            fold_cell = ratio_cell = ""
            if name in FOLD_RANGES:
                started = time.perf_counter()
                expected = await fold(store, since, until)
                folded = time.perf_counter() - started
                fold_cell, ratio_cell = f"{folded:8.2f}s", f"{folded / sql:6.1f}x"
                if as_fold(figures) != expected:
                    missed.append(f"{label} {name}: the SQL figures differ from the fold")
            per_session_ms = 1000 * sql / max(1, figures.conversations)
            print(f"{name:<6} {figures.conversations:>9,} {sql:10.3f}s {per_session_ms:10.3f} {fold_cell:>9} {ratio_cell:>9}")
            if full and sql > RANGE_BAR_S:
                missed.append(f"{label} {name}: {sql:.3f} s > {RANGE_BAR_S} s")
    return missed


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--postgres", metavar="URL", help="also measure PostgreSQL (a database the benchmark may fill)")
    parser.add_argument("--keep", metavar="DIR", default=tempfile.gettempdir(), help="where the SQLite history is kept")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    full = args.sessions >= 100_000
    db = Path(args.keep) / f"supportdesk-bench-stats-{args.sessions}.db"
    print(f"{os.cpu_count()} CPUs; history of {args.sessions:,} sessions over {DAYS} days; now = {NOW:%Y-%m-%d %H:%M} UTC")
    await build(db, args.sessions)
    missed = await measure(db, "SQLite", args.runs, full)
    if args.postgres:
        await build(args.postgres, args.sessions)
        missed += await measure(args.postgres, "PostgreSQL", args.runs, full)
    if not full:
        print("\n(bars are checked on 100,000 sessions only)")
    for line in missed:
        print(f"MISSED: {line}")
    print("\nall bars held" if full and not missed else "")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
