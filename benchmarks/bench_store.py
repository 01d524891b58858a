#!/usr/bin/env python
"""The session store against the OpenAI Agents SDK's SQLiteSession, same machine, same run.

    python benchmarks/bench_store.py            # full sizes (about 1 minute)
    python benchmarks/bench_store.py --quick    # smaller sizes, for a quick look

Both stores write to a file database in a fresh temporary folder (not :memory:). Rows:
single-item appends, 100-item appends, 4 writers x 1,000 items (ours: 4 OS processes into
one session; theirs: 4 asyncio tasks on one SQLiteSession, the SDK's concurrency model),
latest-50 reads at 10,000 and 1,000,000 items, and the shared context as of a seq at 100,000
items (the SDK has no such read: its peer figure is get_items() folded in Python, the only
way to get that answer from it). Each row prints both figures and how many times better
ours is; the bars from issue 2 are checked at the end and the exit status is 1 if one fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from supportdesk.items import ContextSet, Item, Message  # noqa: E402
from supportdesk.store import SessionStore  # noqa: E402

FULL = {
    "single": 3_000,
    "batches": 300,  # x 100 items
    "writers": 4,
    "per_writer": 1_000,
    "writer_rounds": 3,  # ours and theirs alternate; the median round counts (the machine is shared)
    "small": 10_000,
    "big": 1_000_000,
    "ctx": 100_000,
    "reads": 1_000,
    "ctx_reads": 300,
    "peer_ctx_reads": 5,
}
QUICK = {**FULL, "writer_rounds": 1, "single": 500, "batches": 50, "big": 100_000, "ctx": 20_000, "reads": 300, "ctx_reads": 100, "peer_ctx_reads": 3}

LOAD_BATCH = 1_000  # items per transaction when building the big sessions
CTX_KEYS = [f"key{n:02d}" for n in range(20)]


def message_text(n: int) -> str:
    # a realistic support line, different per item so FTS has work to do
    return f"Customer line {n}: my invoice #{n % 9973} shows a charge I do not recognise, please check it."


# --- what each side appends ------------------------------------------------------------------


def our_message(n: int) -> Item:
    return Message(role="customer" if n % 2 else "agent", text=message_text(n), agent="triage")


def their_message(n: int) -> dict[str, Any]:
    return {"role": "user" if n % 2 else "assistant", "content": message_text(n)}


def our_ctx_item(n: int) -> Item:
    # every 10th item writes one of 20 context keys; the rest are messages
    if n % 10 == 0:
        return ContextSet(key=CTX_KEYS[(n // 10) % len(CTX_KEYS)], value=n, writer="billing", agent="billing")
    return our_message(n)


def their_ctx_item(n: int) -> dict[str, Any]:
    if n % 10 == 0:
        return {"type": "context_set", "key": CTX_KEYS[(n // 10) % len(CTX_KEYS)], "value": n, "writer": "billing"}
    return their_message(n)


# --- measuring --------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    ours: float
    theirs: float
    unit: str
    higher_is_better: bool
    note: str = ""

    @property
    def ratio(self) -> float:
        if self.higher_is_better:
            return self.ours / self.theirs if self.theirs else float("inf")
        return self.theirs / self.ours if self.ours else float("inf")


def fmt(value: float, unit: str) -> str:
    if unit == "items/s":
        return f"{value:,.0f} items/s"
    if value >= 1000:
        return f"{value / 1000:,.1f} ms"
    return f"{value:,.0f} µs"


async def median_us(call: Callable[[], Awaitable[Any]], times: int) -> float:
    await call()  # warm caches and statement cache
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def progress(text: str) -> None:
    print(f"  … {text}", file=sys.stderr, flush=True)


# --- ours ---------------------------------------------------------------------------------------


async def ours_bulk(store: SessionStore, sid: str, count: int, make: Callable[[int], Item]) -> None:
    for start in range(1, count + 1, LOAD_BATCH):
        await store.append(sid, [make(n) for n in range(start, min(count, start + LOAD_BATCH - 1) + 1)])


async def ours_writes(folder: Path, sizes: dict[str, int]) -> dict[str, float]:
    store = await SessionStore.open(folder / "ours_writes.db")
    try:
        sid = (await store.create_session("triage")).id
        items = [our_message(n) for n in range(sizes["single"])]
        start = time.perf_counter()
        for item in items:
            await store.append(sid, [item])
        single = sizes["single"] / (time.perf_counter() - start)

        sid = (await store.create_session("triage")).id
        batches = [[our_message(n) for n in range(b * 100, b * 100 + 100)] for b in range(sizes["batches"])]
        start = time.perf_counter()
        for batch in batches:
            await store.append(sid, batch)
        hundred = sizes["batches"] * 100 / (time.perf_counter() - start)
        assert await store.last_seq(sid) == sizes["batches"] * 100
    finally:
        await store.close()
    return {"single": single, "hundred": hundred}


def ours_four_writers(folder: Path, sizes: dict[str, int]) -> tuple[float, str]:
    """4 OS processes append single items into one session; returns items/s and a verdict."""
    db = folder / "ours_writers.db"

    async def make() -> str:
        async with await SessionStore.open(db) as store:
            return (await store.create_session("triage")).id

    sid = asyncio.run(make())
    go = folder / "go"
    procs = []
    for writer in range(sizes["writers"]):
        proc = subprocess.Popen(
            [sys.executable, __file__, "--writer", str(db), sid, str(writer), str(sizes["per_writer"]), str(go)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        procs.append(proc)
    go.touch()
    spans = []
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        if proc.returncode != 0:
            raise SystemExit(f"writer process failed with exit {proc.returncode}")
        spans.append(json.loads(out.strip().splitlines()[-1]))
    elapsed = max(s["end"] for s in spans) - min(s["start"] for s in spans)
    total = sizes["writers"] * sizes["per_writer"]

    async def verify() -> str:
        async with await SessionStore.open(db) as store:
            items = await store.range(sid, 1, total + 10)
            info = await store.get_session(sid)
        seqs = [i.seq for i in items]
        if seqs != list(range(1, total + 1)) or info is None or info.item_count != total:
            return f"LOST/DUPLICATED: {len(items)} items, item_count {info.item_count if info else None}"
        for writer in range(sizes["writers"]):
            own = [i.meta["n"] for i in items if i.meta["writer"] == writer]
            if own != list(range(sizes["per_writer"])):
                return f"writer {writer} reordered"
        return f"{total:,} items, seq 1..{total:,}, each writer in order"

    return total / elapsed, asyncio.run(verify())


async def writer_process(db: str, sid: str, writer: int, count: int, go: str) -> None:
    items = [
        Message(role="agent", text=f"writer {writer} item {n} " + message_text(n), agent="triage", meta={"writer": writer, "n": n})
        for n in range(count)
    ]
    store = await SessionStore.open(db)
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.0005)
    start = time.time()
    for item in items:
        await store.append(sid, [item])
    end = time.time()
    await store.close()
    print(json.dumps({"start": start, "end": end}), flush=True)


async def ours_reads(folder: Path, sizes: dict[str, int]) -> dict[str, float]:
    store = await SessionStore.open(folder / "ours_reads.db")
    try:
        out: dict[str, float] = {}
        for label in ("small", "big"):
            sid = (await store.create_session("triage")).id
            progress(f"ours: building a {sizes[label]:,}-item session")
            start = time.perf_counter()
            await ours_bulk(store, sid, sizes[label], our_message)
            out[f"build_{label}"] = sizes[label] / (time.perf_counter() - start)
            latest = await store.latest(sid, 50)
            assert [i.seq for i in latest] == list(range(sizes[label] - 49, sizes[label] + 1))
            out[f"latest_{label}"] = await median_us(lambda: store.latest(sid, 50), sizes["reads"])

        sid = (await store.create_session("triage")).id
        progress(f"ours: building a {sizes['ctx']:,}-item session with context writes")
        await ours_bulk(store, sid, sizes["ctx"], our_ctx_item)
        rng = random.Random(7)
        points = [rng.randint(1, sizes["ctx"]) for _ in range(sizes["ctx_reads"] + 1)]
        expected = fold_context([their_ctx_item(n) for n in range(1, sizes["ctx"] + 1)], points[0])
        got = {k: e.value for k, e in (await store.context_at(sid, points[0])).items()}
        assert got == expected, "our context_at disagrees with the reference fold"
        it = iter(points)
        out["ctx"] = await median_us(lambda: store.context_at(sid, next(it)), sizes["ctx_reads"])
    finally:
        await store.close()
    return out


# --- theirs --------------------------------------------------------------------------------------


def relaxed_sync(sqlite_session: type) -> type:
    """The SDK's session with synchronous=NORMAL, as our store runs, to show what durability buys.

    Shipped, SQLiteSession keeps SQLite's default synchronous=FULL: in WAL mode every commit
    waits for an fsync. Ours uses NORMAL: a commit survives the process being killed (the
    tests SIGKILL writers), while a power cut may lose the last commits but never corrupts.
    """

    class RelaxedSync(sqlite_session):  # type: ignore[misc, valid-type]
        @staticmethod
        def _configure_connection(conn: Any) -> None:
            sqlite_session._configure_connection(conn)
            conn.execute("PRAGMA synchronous = NORMAL")

    return RelaxedSync


def fold_context(items: list[dict[str, Any]], upto: int) -> dict[str, Any]:
    """The context as of item `upto` from a plain item list: the SDK's only route to it."""
    context: dict[str, Any] = {}
    for item in items[:upto]:
        if item.get("type") == "context_set":
            if item["value"] is None:
                context.pop(item["key"], None)
            else:
                context[item["key"]] = item["value"]
    return dict(sorted(context.items()))


async def theirs_writes(sqlite_session: type, folder: Path, sizes: dict[str, int]) -> dict[str, float]:
    db = folder / "theirs_writes.db"
    session = sqlite_session("single", db)
    try:
        items = [their_message(n) for n in range(sizes["single"])]
        start = time.perf_counter()
        for item in items:
            await session.add_items([item])
        single = sizes["single"] / (time.perf_counter() - start)
    finally:
        session.close()
    session = sqlite_session("hundred", db)
    try:
        batches = [[their_message(n) for n in range(b * 100, b * 100 + 100)] for b in range(sizes["batches"])]
        start = time.perf_counter()
        for batch in batches:
            await session.add_items(batch)
        hundred = sizes["batches"] * 100 / (time.perf_counter() - start)
        assert len(await session.get_items()) == sizes["batches"] * 100
    finally:
        session.close()
    return {"single": single, "hundred": hundred}


async def theirs_four_writers(sqlite_session: type, folder: Path, sizes: dict[str, int]) -> tuple[float, str]:
    session = sqlite_session("writers", folder / "theirs_writers.db")
    try:

        async def writer(w: int) -> None:
            for n in range(sizes["per_writer"]):
                await session.add_items([{"role": "assistant", "content": f"writer {w} item {n} " + message_text(n)}])

        start = time.perf_counter()
        await asyncio.gather(*(writer(w) for w in range(sizes["writers"])))
        elapsed = time.perf_counter() - start
        items = await session.get_items()
        total = sizes["writers"] * sizes["per_writer"]
        verdict = f"{len(items):,} items" if len(items) == total else f"LOST: {len(items)} of {total}"
    finally:
        session.close()
    return total / elapsed, verdict


async def theirs_reads(sqlite_session: type, folder: Path, sizes: dict[str, int]) -> dict[str, float]:
    db = folder / "theirs_reads.db"
    out: dict[str, float] = {}
    for label in ("small", "big"):
        session = sqlite_session(label, db)
        try:
            progress(f"theirs: building a {sizes[label]:,}-item session")
            start = time.perf_counter()
            for first in range(1, sizes[label] + 1, LOAD_BATCH):
                await session.add_items([their_message(n) for n in range(first, min(sizes[label], first + LOAD_BATCH - 1) + 1)])
            out[f"build_{label}"] = sizes[label] / (time.perf_counter() - start)
            assert len(await session.get_items(limit=50)) == 50
            out[f"latest_{label}"] = await median_us(lambda: session.get_items(limit=50), sizes["reads"])
        finally:
            session.close()

    session = sqlite_session("ctx", db)
    try:
        progress(f"theirs: building a {sizes['ctx']:,}-item session with context writes")
        for first in range(1, sizes["ctx"] + 1, LOAD_BATCH):
            await session.add_items([their_ctx_item(n) for n in range(first, min(sizes["ctx"], first + LOAD_BATCH - 1) + 1)])
        rng = random.Random(7)

        async def context_as_of() -> dict[str, Any]:
            return fold_context(await session.get_items(), rng.randint(1, sizes["ctx"]))

        out["ctx"] = await median_us(context_as_of, sizes["peer_ctx_reads"])
    finally:
        session.close()
    return out



# --- PostgreSQL: ours against the Agents SDK's SQLAlchemySession, on one server ------------------
#
#     python benchmarks/bench_store.py --postgres postgresql://user:pw@127.0.0.1/postgres [--big]
#
# Each side gets a fresh database on the same server in the same run. Rows: appends of 1 and 100
# items per commit, 8 writer processes into one session, latest-50 at 100,000 items (1,000,000
# with --big), search over 100,000 messages (the SDK has none), and the time a change takes to
# reach a second process through the feed (the SDK has none). Then the desk's own scale: turns
# per second with 1, 4 and 8 worker processes each running the offline desk on its own session,
# SQLite against PostgreSQL, and the p95 time a turn waited for its lease.

PG = {"single": 400, "batches": 40, "pg_writers": 8, "pg_per_writer": 250, "latest": 100_000, "reads": 300,
      "searches": 30, "feed": 40, "turn_workers": (1, 4, 8), "turns_each": 6}


def _pg_admin_url(url: str, database: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + database, parts.query, parts.fragment))


async def _pg_create(url: str, name: str) -> str:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return _pg_admin_url(url, name)


def _sdk_session(url: str, sid: str, create: bool = False):
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

    return SQLAlchemySession.from_url(sid, url=url.replace("postgresql://", "postgresql+asyncpg://", 1), create_tables=create)


async def pg_ours_writes(url: str, sizes: dict[str, Any]) -> dict[str, float]:
    from supportdesk.store import open_store

    async with await open_store(url) as store:
        one = (await store.create_session("triage")).id
        many = (await store.create_session("triage")).id
        n = iter(range(10**9))
        single = await median_us(lambda: store.append(one, [our_message(next(n))]), sizes["single"])
        batch = await median_us(lambda: store.append(many, [our_message(next(n)) for _ in range(100)]), sizes["batches"])
    return {"single": single, "batch": batch}


async def pg_theirs_writes(url: str, sizes: dict[str, Any]) -> dict[str, float]:
    one = _sdk_session(url, "one", create=True)
    many = _sdk_session(url, "many", create=True)
    n = iter(range(10**9))
    single = await median_us(lambda: one.add_items([their_message(next(n))]), sizes["single"])
    batch = await median_us(lambda: many.add_items([their_message(next(n)) for _ in range(100)]), sizes["batches"])
    await one.engine.dispose()
    await many.engine.dispose()
    return {"single": single, "batch": batch}


async def pg_writer_process(side: str, url: str, sid: str, count: int, go: str) -> None:
    if side == "ours":
        from supportdesk.store import open_store

        store = await open_store(url)
        print("ready", flush=True)
        while not Path(go).exists():
            await asyncio.sleep(0.001)
        for i in range(count):
            await store.append(sid, [our_message(i)])
        await store.close()
    else:
        session = _sdk_session(url, sid)
        await session.get_items(limit=1)  # connect before the start
        print("ready", flush=True)
        while not Path(go).exists():
            await asyncio.sleep(0.001)
        for i in range(count):
            await session.add_items([their_message(i)])
        await session.engine.dispose()


def pg_writers(side: str, url: str, sid: str, sizes: dict[str, Any], folder: Path) -> float:
    """Items per second with N OS processes appending to one session, one item per commit."""
    go = folder / f"go-{side}"
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--pg-writer", side, url, sid, str(sizes["pg_per_writer"]), str(go)],
            stdout=subprocess.PIPE, text=True,
        )
        for _ in range(sizes["pg_writers"])
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    go.touch()
    for proc in procs:
        proc.wait(timeout=600)
        assert proc.returncode == 0
    return sizes["pg_writers"] * sizes["pg_per_writer"] / (time.perf_counter() - started)


async def pg_ours_reads(url: str, sizes: dict[str, Any], count: int) -> tuple[float, float, str]:
    """latest-50 at `count` items, and search over those `count` messages."""
    from supportdesk.store import open_store

    async with await open_store(url) as store:
        sid = (await store.create_session("triage")).id
        for start in range(0, count, LOAD_BATCH):
            await store.append(sid, [our_message(n) for n in range(start, min(count, start + LOAD_BATCH))])
            progress(f"ours: {start + LOAD_BATCH:,} / {count:,} items")
        latest = await median_us(lambda: store.latest(sid, 50), sizes["reads"])
        # a rare word pair (a few hits), a word in every message, a prefix of one: as staff type
        queries = ["invoice 4711", "recognise", "charg", "line 9999"]
        words = iter(random.Random(7).choices(queries, k=10**6))
        search = await median_us(lambda: store.search(next(words), limit=50), sizes["searches"])
        hits = [len(await store.search(q, limit=50)) for q in queries]
    return latest, search, "hits (limit 50): " + ", ".join(f"{q!r} {n}" for q, n in zip(queries, hits))


async def pg_theirs_latest(url: str, sizes: dict[str, Any], count: int) -> float:
    session = _sdk_session(url, f"big{count}", create=True)
    for start in range(0, count, LOAD_BATCH):
        await session.add_items([their_message(n) for n in range(start, min(count, start + LOAD_BATCH))])
        progress(f"theirs: {start + LOAD_BATCH:,} / {count:,} items")
    latest = await median_us(lambda: session.get_items(limit=50), sizes["reads"])
    await session.engine.dispose()
    return latest


async def pg_feed_follower(url: str) -> None:
    from supportdesk.store import open_store

    async with await open_store(url) as store, await store.follow() as feed:
        print("ready", flush=True)
        async for change in feed:
            print(f"{time.time():.6f} {change.head}", flush=True)


async def pg_feed_latency(url: str, sizes: dict[str, Any]) -> list[float]:
    """Seconds from an append's start in this process to another process hearing of it."""
    from supportdesk.store import open_store

    async with await open_store(url) as store:
        sid = (await store.create_session("triage")).id
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--pg-follower", url, stdout=asyncio.subprocess.PIPE
        )
        assert proc.stdout is not None
        assert (await proc.stdout.readline()).strip() == b"ready"
        latencies = []
        for n in range(sizes["feed"]):
            sent = time.time()
            await store.append(sid, [our_message(n)])
            while True:
                heard, head = (await proc.stdout.readline()).split()
                if int(head) == n + 1:
                    break
            latencies.append(float(heard) - sent)
            await asyncio.sleep(0.02)
        proc.terminate()
        await proc.wait()
    return latencies


async def turn_worker_process(db: str, turns: int, go: str) -> None:
    """One offline desk on a session of its own: run `turns` turns, print each lease wait."""
    from supportdesk.engine.desk import open_desk

    desk = await open_desk(db, str(REPO / "agents.toml"))
    waits: list[float] = []
    plain_turn = desk.store.turn

    def timed_turn(session_id: str) -> Any:
        lease = plain_turn(session_id)
        asked = time.perf_counter()
        try_plain, acquire_plain = lease.try_acquire, lease.acquire
        done = False

        def record() -> None:
            nonlocal done
            if not done:
                done = True
                waits.append(time.perf_counter() - asked)

        async def try_acquire() -> bool:
            taken = await try_plain()
            if taken:
                record()
            return taken

        async def acquire() -> None:
            await acquire_plain()
            record()

        lease.try_acquire, lease.acquire = try_acquire, acquire
        return lease

    desk.store.turn = timed_turn  # type: ignore[method-assign]
    session = await desk.runner.new_session()
    print("ready", flush=True)
    while not Path(go).exists():
        await asyncio.sleep(0.001)
    questions = ["I was charged twice this month", "My app crashes on start", "How do I reset my password?"]
    for n in range(turns):
        async for _ in desk.runner.send(session, questions[n % len(questions)]):
            pass
    print("waits " + " ".join(f"{w:.6f}" for w in waits), flush=True)
    await desk.close()


def turns_per_second(db: str, workers: int, turns: int, folder: Path) -> tuple[float, list[float]]:
    go = folder / f"go-turns-{workers}-{random.random()}"
    procs = [
        subprocess.Popen([sys.executable, __file__, "--turn-worker", db, str(turns), str(go)], stdout=subprocess.PIPE, text=True)
        for _ in range(workers)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    go.touch()
    waits: list[float] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=900)
        assert proc.returncode == 0
        waits += [float(w) for w in out.split()[1:]]
    return workers * turns / (time.perf_counter() - started), waits


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def postgres_main(url: str, big: bool) -> int:
    try:
        import agents.extensions.memory.sqlalchemy_session  # noqa: F401
    except ImportError:
        print("the peer is missing: pip install -e '.[bench]' (openai-agents[sqlalchemy])", file=sys.stderr)
        return 2
    from importlib.metadata import version

    sizes = PG
    count = 1_000_000 if big else sizes["latest"]
    began = time.perf_counter()
    ours_url = asyncio.run(_pg_create(url, "sd_bench_ours"))
    theirs_url = asyncio.run(_pg_create(url, "sd_bench_theirs"))
    print(f"supportdesk PostgresStore vs openai-agents {version('openai-agents')} SQLAlchemySession "
          f"(asyncpg {version('asyncpg')}), one PostgreSQL server, fresh databases")
    ours_w = asyncio.run(pg_ours_writes(ours_url, sizes))
    theirs_w = asyncio.run(pg_theirs_writes(theirs_url, sizes))

    async def ours_session() -> str:
        from supportdesk.store import open_store

        async with await open_store(ours_url) as store:
            return (await store.create_session("triage")).id

    with tempfile.TemporaryDirectory(prefix="bench-pg-") as tmp:
        folder = Path(tmp)
        ours_rate = pg_writers("ours", ours_url, asyncio.run(ours_session()), sizes, folder)
        asyncio.run(_sdk_session(theirs_url, "writers", create=True).get_items(limit=1))
        theirs_rate = pg_writers("theirs", theirs_url, "writers", sizes, folder)
        ours_latest, ours_search, hits = asyncio.run(pg_ours_reads(ours_url, sizes, count))
        theirs_latest = asyncio.run(pg_theirs_latest(theirs_url, sizes, count))
        feed = asyncio.run(pg_feed_latency(ours_url, sizes))

        writers = f"{sizes['pg_writers']} writer processes x {sizes['pg_per_writer']}"
        rows = [
            Row("append 1 item / commit", ours_w["single"], theirs_w["single"], "us", False),
            Row("append 100 items / commit", ours_w["batch"], theirs_w["batch"], "us", False),
            Row(f"{writers}, one session", ours_rate, theirs_rate, "items/s", higher_is_better=True),
            Row(f"latest 50 at {count:,} items", ours_latest, theirs_latest, "us", False),
        ]
        name_w = max(len(r.name) for r in rows) + 2
        print(f"\n{'':{name_w}}  {'ours':>18}  {'SQLAlchemySession':>18}  {'ours better':>11}")
        for r in rows:
            print(f"{r.name:{name_w}}  {fmt(r.ours, r.unit):>18}  {fmt(r.theirs, r.unit):>18}  {r.ratio:>10.1f}x")
        print(f"{'search over ' + format(count, ',') + ' messages':{name_w}}  {fmt(ours_search, 'us'):>18}  {'(none)':>18}  ({hits})")
        print(f"{'a change reaching a 2nd process':{name_w}}  median {statistics.median(feed) * 1000:.1f} ms, "
              f"p95 {p95(feed) * 1000:.1f} ms over {len(feed)} appends (LISTEN/NOTIFY); the SDK has no feed")

        print(f"\nturns/s, offline desk, each worker process on its own session ({sizes['turns_each']} turns each):")
        print(f"{'workers':>8}  {'SQLite':>10}  {'PostgreSQL':>10}  {'p95 lease wait SQLite':>22}  {'PostgreSQL':>10}")
        for workers in sizes["turn_workers"]:
            lite, lite_waits = turns_per_second(str(folder / f"turns-{workers}.db"), workers, sizes["turns_each"], folder)
            pg, pg_waits = turns_per_second(ours_url, workers, sizes["turns_each"], folder)
            print(f"{workers:>8}  {lite:>10.1f}  {pg:>10.1f}  {p95(lite_waits) * 1000:>19.1f} ms  {p95(pg_waits) * 1000:>7.1f} ms")
    print(f"\nwhole run: {time.perf_counter() - began:.0f} s")
    return 0


# --- the run -----------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (the bars are still checked)")
    parser.add_argument("--writer", nargs=5, metavar=("DB", "SESSION", "ID", "COUNT", "GO"), help=argparse.SUPPRESS)
    parser.add_argument("--postgres", metavar="URL", help="the PostgreSQL section, on this server (an admin URL)")
    parser.add_argument("--big", action="store_true", help="with --postgres: latest-50 and search at 1,000,000 items")
    parser.add_argument("--pg-writer", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--pg-follower", help=argparse.SUPPRESS)
    parser.add_argument("--turn-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pg_writer:
        side, url, sid, count, go = args.pg_writer
        asyncio.run(pg_writer_process(side, url, sid, int(count), go))
        return 0
    if args.pg_follower:
        asyncio.run(pg_feed_follower(args.pg_follower))
        return 0
    if args.turn_worker:
        db, turns, go = args.turn_worker
        asyncio.run(turn_worker_process(db, int(turns), go))
        return 0
    if args.postgres:
        return postgres_main(args.postgres, args.big)
    if args.writer:
        db, sid, writer, count, go = args.writer
        asyncio.run(writer_process(db, sid, int(writer), int(count), go))
        return 0

    try:
        from agents.memory.sqlite_session import SQLiteSession
    except ImportError:
        print("the peer is missing: pip install -e '.[bench]' (PyPI openai-agents)", file=sys.stderr)
        return 2
    from importlib.metadata import version

    sizes = QUICK if args.quick else FULL
    began = time.perf_counter()
    import sqlite3

    print(
        f"supportdesk SessionStore vs openai-agents {version('openai-agents')} SQLiteSession  "
        f"(SQLite {sqlite3.sqlite_version}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
        f"{', --quick sizes' if args.quick else ''})"
    )
    with tempfile.TemporaryDirectory(prefix="bench_store_") as tmp:
        folder = Path(tmp)
        progress("single and 100-item appends")
        ours_w = asyncio.run(ours_writes(folder, sizes))
        theirs_w = asyncio.run(theirs_writes(SQLiteSession, folder, sizes))
        ours_rates, theirs_rates, relaxed_rates = [], [], []
        for round_ in range(sizes["writer_rounds"]):
            progress(f"4 writers, round {round_ + 1} of {sizes['writer_rounds']}")
            sub = folder / f"writers{round_}"
            sub.mkdir()
            rate, ours_verdict = ours_four_writers(sub, sizes)
            ours_rates.append(rate)
            rate, theirs_verdict = asyncio.run(theirs_four_writers(SQLiteSession, sub, sizes))
            theirs_rates.append(rate)
            (sub / "relaxed").mkdir()
            rate, _ = asyncio.run(theirs_four_writers(relaxed_sync(SQLiteSession), sub / "relaxed", sizes))
            relaxed_rates.append(rate)
            if not ours_verdict.startswith(f"{sizes['writers'] * sizes['per_writer']:,} items"):
                break  # a lost item fails the bar; no need for more rounds
        ours_rate, theirs_rate, relaxed_rate = (statistics.median(r) for r in (ours_rates, theirs_rates, relaxed_rates))
        ours_r = asyncio.run(ours_reads(folder, sizes))
        theirs_r = asyncio.run(theirs_reads(SQLiteSession, folder, sizes))

    small, big, ctx = (f"{sizes[k]:,}" for k in ("small", "big", "ctx"))
    writers = f"{sizes['writers']} writers x {sizes['per_writer']:,} items"
    rows = [
        Row("single-item appends", ours_w["single"], theirs_w["single"], "items/s", True),
        Row("100-item appends", ours_w["hundred"], theirs_w["hundred"], "items/s", True),
        Row(writers, ours_rate, theirs_rate, "items/s", True,
            f"ours: 4 OS processes; theirs: 4 asyncio tasks (median of {len(ours_rates)} alternating rounds)"),
        Row(f"  same, SDK at synchronous=NORMAL", ours_rate, relaxed_rate, "items/s", True,
            "for information: the SDK without its per-commit fsync, as ours runs"),
        Row(f"build {big} items (1,000/append)", ours_r["build_big"], theirs_r["build_big"], "items/s", True),
        Row(f"latest-50 read at {small} items", ours_r["latest_small"], theirs_r["latest_small"], "µs", False, "median"),
        Row(f"latest-50 read at {big} items", ours_r["latest_big"], theirs_r["latest_big"], "µs", False, "median"),
        Row(
            f"context as of seq k at {ctx} items", ours_r["ctx"], theirs_r["ctx"], "µs", False,
            "theirs: no such read; get_items() folded in Python",
        ),
    ]
    name_w = max(len(r.name) for r in rows)
    print(f"\n{'':{name_w}}  {'ours':>18}  {'SQLiteSession':>18}  {'ours better':>11}")
    for r in rows:
        print(f"{r.name:{name_w}}  {fmt(r.ours, r.unit):>18}  {fmt(r.theirs, r.unit):>18}  {r.ratio:>10.1f}x  {r.note}")
    print(f"\n4 writers, after the run: ours {ours_verdict}; theirs {theirs_verdict}")

    print(
        "4 writers, every round (items/s): ours "
        + ", ".join(f"{r:,.0f}" for r in ours_rates)
        + "; theirs "
        + ", ".join(f"{r:,.0f}" for r in theirs_rates)
        + "; theirs at NORMAL "
        + ", ".join(f"{r:,.0f}" for r in relaxed_rates)
    )

    bars = [
        (f"{writers}: ours >= 2x the SDK's rate", rows[2].ratio >= 2.0),
        (f"{writers}: nothing lost (ours)", ours_verdict.startswith(f"{sizes['writers'] * sizes['per_writer']:,} items")),
        (f"latest-50 read at {big} items <= 1 ms (ours)", ours_r["latest_big"] <= 1000),
    ]
    print("\nbars:")
    for text, ok in bars:
        print(f"  [{'PASS' if ok else 'FAIL'}] {text}")
    print(f"\nwhole run: {time.perf_counter() - began:.0f} s")
    return 0 if all(ok for _, ok in bars) else 1


if __name__ == "__main__":
    sys.exit(main())
