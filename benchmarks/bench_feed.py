#!/usr/bin/env python
"""PostgreSQL: an append on worker A -> the event on a stream of worker B (issue 34 item 4).

    python benchmarks/bench_feed.py --postgres URL            # an admin URL; a scratch database is made
    python benchmarks/bench_feed.py --postgres URL --appends 100

Worker A is this process: it appends customer messages to a session through its own store, as a
`serve` worker's turn does. Worker B is another OS process with its own store and the hub `serve`
uses (supportdesk/channels/hub.py), holding one event stream on that session, which is what its
SSE clients read; it prints the time each stored event reaches the stream. Two ways for B to hear
A, alternating round by round in the same run:

- `notify`: the hub follows the store's change feed (LISTEN/NOTIFY, sent by the append's own
  transaction as it commits): what `serve` does.
- `poll`: the hub without a change feed, asking for a page of recent sessions every 0.25 s
  (`FOLLOW_INTERVAL`): the follower `benchmarks/README.md` described.

The appends are spaced 20-60 ms apart at random, so they fall anywhere in a poll interval. The
bar: notify p50 <= 50 ms. Both processes run on one machine, so their clocks are one clock.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from supportdesk.items import Message  # noqa: E402
from supportdesk.store import open_store  # noqa: E402

BAR_P50_MS = 50.0


class WithoutFeed:
    """A store whose change feed is hidden: the hub falls back to its poll."""

    def __init__(self, store: Any):
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name in ("follow", "data_version"):
            raise AttributeError(name)
        return getattr(self._store, name)


async def worker_b(url: str, session_id: str, mode: str) -> None:
    """The other worker: a hub with one stream on the session; one line per stored event heard."""
    from supportdesk.channels.hub import Hub
    from supportdesk.channels.view import CustomerEvent

    async with await open_store(url) as store:
        hub = Hub(store if mode == "notify" else WithoutFeed(store), lambda item: CustomerEvent("message", {}, item.seq))
        hub.start()
        try:
            stream = await hub.stream(session_id, await store.last_seq(session_id))
            if mode == "notify":
                await hub.following.wait()
            print("ready", flush=True)
            async for batch in stream:
                heard = time.time()
                for event in batch:
                    print(f"{heard:.6f} {event.seq}", flush=True)
        finally:
            await hub.close()


async def one_round(url: str, mode: str, appends: int) -> list[float]:
    """Milliseconds from each append's start on A to its event on B's stream."""
    async with await open_store(url) as store:
        sid = (await store.create_session("triage")).id
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--worker-b", url, sid, mode, stdout=asyncio.subprocess.PIPE
        )
        assert proc.stdout is not None
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), 60)
            assert line.strip() == b"ready", line
            latencies = []
            for n in range(appends):
                sent = time.time()
                [stored] = await store.append(sid, [Message(role="customer", text=f"message {n}", agent="triage")])
                while True:
                    heard, seq = (await asyncio.wait_for(proc.stdout.readline(), 30)).split()
                    if int(seq) == stored.seq:
                        break
                latencies.append((float(heard) - sent) * 1000)
                await asyncio.sleep(random.uniform(0.02, 0.06))
        finally:
            proc.terminate()
            await proc.wait()
    return latencies


def scratch_database(url: str) -> tuple[str, str]:
    import asyncpg

    name = f"bench_feed_{uuid.uuid4().hex[:8]}"

    async def create() -> None:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()

    asyncio.run(create())
    parts = urlsplit(url)
    return name, urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def drop_database(url: str, name: str) -> None:
    import asyncpg

    async def drop() -> None:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()

    asyncio.run(drop())


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", metavar="URL", help="an admin URL of the server (a scratch database is made)")
    parser.add_argument("--appends", type=int, default=60, help="appends per round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of each way, alternating")
    parser.add_argument("--worker-b", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker_b:
        url, sid, mode = args.worker_b
        asyncio.run(worker_b(url, sid, mode))
        return 0
    admin = args.postgres or os.environ.get("SUPPORTDESK_TEST_PG_URL")
    if not admin:
        parser.error("give --postgres URL (or set SUPPORTDESK_TEST_PG_URL)")
    name, url = scratch_database(admin)
    results: dict[str, list[float]] = {"notify": [], "poll": []}
    try:
        asyncio.run(one_round(url, "notify", 3))  # the schema and the server's caches, before timing
        for round_ in range(args.rounds):
            for mode in ("notify", "poll") if round_ % 2 == 0 else ("poll", "notify"):
                results[mode] += asyncio.run(one_round(url, mode, args.appends))
    finally:
        drop_database(admin, name)
    print(
        f"append on worker A -> event on a stream of worker B, PostgreSQL; {args.rounds} alternating rounds x "
        f"{args.appends} appends each way; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'':26}{'p50':>10}{'p95':>10}{'max':>10}")
    for mode, label in (("notify", "LISTEN/NOTIFY (serve)"), ("poll", "0.25 s poll (before)")):
        values = results[mode]
        print(f"{label:26}{statistics.median(values):>8.1f}ms{pct(values, 0.95):>8.1f}ms{max(values):>8.1f}ms")
    p50 = statistics.median(results["notify"])
    ok = p50 <= BAR_P50_MS
    print(f"\nbar:\n  [{'PASS' if ok else 'FAIL'}] LISTEN/NOTIFY p50 <= {BAR_P50_MS:.0f} ms "
          f"({statistics.median(results['poll']) / p50:.1f}x faster than the poll)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
