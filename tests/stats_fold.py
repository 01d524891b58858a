"""The desk's figures as a plain-Python fold of the log: the definitions of `store/figures.py`
applied item by item to every session. The oracle of `tests/test_stats.py` and the peer of
`benchmarks/bench_stats.py` (what the dashboard would cost without SQL aggregates)."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timedelta

from supportdesk.folds import desk_state
from supportdesk.store.figures import (
    AMOUNT_EDGES,
    DURATION_EDGES,
    MONEY_TOOLS,
    PERCENTILES,
    bucket_of,
    nearest_rank,
)


def _in(t: datetime, since: datetime | None, until: datetime) -> bool:
    return (since is None or t >= since) and t < until


def _millis(later: datetime, earlier: datetime) -> int:
    return (later - earlier) // timedelta(milliseconds=1)


def _distribution(values: list[int]) -> dict:
    """Durations in whole milliseconds, reported in seconds."""
    ordered = sorted(values)
    n = len(ordered)
    buckets = [0] * (len(DURATION_EDGES) + 1)
    for v in ordered:
        buckets[bucket_of(v / 1000, DURATION_EDGES)] += 1
    return {
        "count": n,
        "total": sum(ordered) / 1000 if n else 0.0,
        "largest": ordered[-1] / 1000 if ordered else None,
        "percentiles": {p: ordered[nearest_rank(p, n) - 1] / 1000 for p in PERCENTILES} if n else {},
        "buckets": tuple(buckets),
    }


async def fold(store, since: datetime | None, until: datetime) -> dict:
    """Every figure of the window, from every session's items (sessions untouched since the
    window opened are skipped: none of their items can be in it)."""
    sessions = []
    offset = 0
    while page := await store.list_sessions(limit=500, offset=offset):
        sessions += page
        offset += len(page)
        if since is not None and page[-1].updated_at < since:
            break  # newest activity first: the rest were last touched before the window
    conversations = started = unanswered = 0
    taken: dict[str, set] = defaultdict(set)
    escalated: dict[str, set] = defaultdict(set)
    edges: Counter = Counter()
    first_answers: list[int] = []
    resolutions: list[int] = []
    money: dict[str, list[float]] = defaultdict(list)
    notices: Counter = Counter()
    offers: dict[tuple[str, str], Counter] = defaultdict(Counter)
    usage: dict[tuple[str, str], list] = {}
    for info in sessions:
        if since is not None and info.updated_at < since:
            continue
        log = await store.range(info.id, 1, info.item_count)
        # A fork's copied items are its source's events: only what happened in the fork counts.
        items = [i for i in log if i.seq > (info.forked_at or 0)]
        if any(_in(i.created_at, since, until) for i in items):
            conversations += 1
        if _in(info.created_at, since, until):
            started += 1
        if items and items[0].seq == (info.forked_at or 0) + 1 and _in(items[0].created_at, since, until):
            taken[info.entry_agent].add(info.id)  # with its first own item: an empty session is taken by nobody
        messages = [i for i in items if i.kind == "message"]
        asked = next((m for m in messages if m.role == "customer"), None)
        if asked is not None and _in(asked.created_at, since, until):
            reply = next((m for m in messages if m.role == "agent" and m.seq > asked.seq), None)
            if reply is None:
                unanswered += 1
            else:
                first_answers.append(_millis(reply.created_at, asked.created_at))
        # A resolution: the conversation's state became `resolved` (the last time, at a new
        # item) and still is, timed from the first new customer message (the SLA clocks' start).
        started_at = next((i.created_at for i in items if i.kind == "message" and i.role == "customer"), None)
        state, became = desk_state.start(info.entry_agent), None
        for item in log:
            after = desk_state.advance(state, item)
            if after.state == "resolved" and state.state != "resolved":
                became = item
            state = after
        if state.state == "resolved" and became is not None and started_at is not None:
            if became.seq > (info.forked_at or 0) and _in(became.created_at, since, until):
                resolutions.append(_millis(became.created_at, started_at))
        for item in items:
            if not _in(item.created_at, since, until):
                continue
            if item.kind == "handoff":
                taken[item.to_agent].add(info.id)
                edges[(item.from_agent, item.to_agent, item.handoff_kind)] += 1
                if item.handoff_kind == "escalate":
                    escalated[item.from_agent].add(info.id)
            elif item.kind == "notice":
                notices[item.notice_kind] += 1
            elif item.kind in ("offer", "confirmation", "decline"):
                outcome = {"offer": "made", "confirmation": "accepted"}.get(item.kind) or (
                    "expired" if item.why in ("expired", "withdrawn") else "declined"
                )
                offers[(item.tool, item.agent)][outcome] += 1
            elif (
                item.kind == "tool_result"
                and item.name in MONEY_TOOLS
                and not item.is_error
                and not item.awaits_approval
            ):
                calls = [c for c in items if c.kind == "tool_call" and c.call_id == item.call_id and c.seq < item.seq]
                money[item.name].append(float(calls[-1].arguments["amount"]))
            used = item.meta.get("usage")
            if used is not None:
                key = (item.agent, str(item.meta.get("model") or ""))
                row = usage.setdefault(key, [0, 0, True])
                row[0] += int(used.get("input_tokens") or 0)
                row[1] += int(used.get("output_tokens") or 0)
                row[2] = row[2] and bool(used.get("reported", True))
    money_figures = {}
    for tool, amounts in sorted(money.items()):
        buckets = [0] * (len(AMOUNT_EDGES) + 1)
        for amount in amounts:
            buckets[bucket_of(amount, AMOUNT_EDGES)] += 1
        money_figures[tool] = {"count": len(amounts), "total": round(sum(amounts), 2), "buckets": tuple(buckets)}
    return {
        "conversations": conversations,
        "started": started,
        "taken": {agent: len(ids) for agent, ids in sorted(taken.items())},
        "escalated": {agent: len(ids) for agent, ids in sorted(escalated.items())},
        "handoffs": sorted((*key, n) for key, n in edges.items()),
        "first_answer": _distribution(first_answers),
        "unanswered": unanswered,
        "resolution": _distribution(resolutions),
        "money": money_figures,
        "notices": dict(sorted(notices.items())),
        "usage": sorted((agent, model, *row) for (agent, model), row in usage.items()),
        "offers": sorted(
            (tool, agent, *(n[o] for o in ("made", "accepted", "declined", "expired"))) for (tool, agent), n in offers.items()
        ),
    }


def as_fold(figures) -> dict:
    def dist(d) -> dict:
        return {"count": d.count, "total": d.total, "largest": d.largest, "percentiles": d.percentiles, "buckets": d.buckets}

    return {
        "conversations": figures.conversations,
        "started": figures.started,
        "taken": dict(sorted(figures.taken.items())),
        "escalated": dict(sorted(figures.escalated.items())),
        "handoffs": sorted((e.from_agent, e.to_agent, e.handoff_kind, e.count) for e in figures.handoffs),
        "first_answer": dist(figures.first_answer),
        "unanswered": figures.unanswered,
        "resolution": dist(figures.resolution),
        "money": {t: {"count": m.count, "total": m.total, "buckets": m.buckets} for t, m in sorted(figures.money.items())},
        "notices": dict(sorted(figures.notices.items())),
        "usage": sorted((u.agent, u.model, u.input_tokens, u.output_tokens, u.reported) for u in figures.usage),
        "offers": sorted((o.tool, o.agent, o.made, o.accepted, o.declined, o.expired) for o in figures.offers),
    }


# --- taking a database back to before the figures' summaries (schema migration 10 / PostgreSQL 5) ---

FIGURE_INDEXES = (
    "sessions_by_span_end",
    "sessions_by_span_start",
    "sessions_by_asked",
    "sessions_by_answer",
    "sessions_by_resolved",
    "sessions_by_resolution",
    "sessions_by_creation",
)
FIGURE_COLUMNS = (
    "span_first",
    "span_last",
    "asked_us",
    "answer_ms",
    "resolved_us",
    "resolution_ms",
    "figure_summary",
    "sla_summary",
)


def drop_figure_summaries_sqlite(conn) -> None:
    """Undo SQLite's migration 10 on an open sqlite3 connection (the caller sets user_version),
    with what migration 14 built on its columns (the span's end hour, its trigger)."""
    conn.execute("DROP TRIGGER sessions_span_hour")
    for index in FIGURE_INDEXES:
        conn.execute(f"DROP INDEX {index}")
    conn.execute("DROP TABLE figure_rollup")
    for column in (*FIGURE_COLUMNS, "span_hour"):
        conn.execute(f"ALTER TABLE sessions DROP COLUMN {column}")


async def drop_figure_summaries_pg(conn) -> None:
    """Undo PostgreSQL's migration 5 on an asyncpg connection (the caller sets the version)."""
    await conn.execute("DROP TABLE figure_rollup")
    await conn.execute("DROP INDEX sessions_by_creation")
    await conn.execute("ALTER TABLE sessions " + ", ".join(f"DROP COLUMN {c}" for c in FIGURE_COLUMNS))
