"""`supportdesk serve` under load: 50 conversations, 200 event-stream clients, the offline model.

Each conversation is a customer who sends a three-message script, waiting for the desk's final
reply before the next message; each conversation is followed by four SSE clients that connect
before its first message. Measured from just before each POST:

- to the first agent event a client sees (a streamed `delta`, or the stored reply on a worker
  that did not run the turn), and
- to the final reply of that turn (the turn's last agent message; how many agent messages each
  script step produces is learned first by running the script through the runner on a scratch
  database: the offline model is deterministic),

for every (client, message) pair, plus customer messages per second over the whole run.
Afterwards every client's list of stored event ids is compared with what the log holds for the
customer: zero lost and zero duplicated events is the bar (exit status 1 otherwise).

    python benchmarks/bench_serve.py                        # SQLite, one worker
    python benchmarks/bench_serve.py --pg URL --workers 2   # PostgreSQL, two workers
    python benchmarks/bench_serve.py --quick                # 10 conversations, 40 clients
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
SCRIPT = [
    "I was charged twice for my subscription this month, dana@example.com",
    "How do I reset my password?",
    "thanks, that's all",
]
LISTENING = re.compile(r"on (http://\S+?)/ ")


@dataclass
class Client:
    conversation: int
    worker: int
    stored: list[int] = field(default_factory=list)
    # (kind, seq or None, arrival time, from) for every event
    events: list[tuple[str, int | None, float, str | None]] = field(default_factory=list)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    # seqs of the stored agent messages seen, and a condition notified on each (the customer waits on it)
    agent_seqs: list[int] = field(default_factory=list)
    replied: asyncio.Condition = field(default_factory=asyncio.Condition)


def start_worker(db: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A `serve` worker whose output goes to `log` (a pipe nobody reads after start-up would
    fill and stall the worker the first time it logs much)."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "supportdesk.cli", "--db", db, "serve", "--port", "0", "--messages-per-minute", "100000",
             # The load generator is one client (127.0.0.1) opening every conversation.
             "--client-conversations-per-minute", "100000", "--client-messages-per-minute", "100000"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    while proc.poll() is None:
        found = LISTENING.search(log.read_text(errors="replace"))
        if found:
            return proc, found.group(1)
        time.sleep(0.05)
    raise SystemExit(f"serve did not start ({proc.returncode}):\n{log.read_text(errors='replace')}")


async def agent_messages_per_step() -> list[int]:
    """How many agent messages each script step produces (offline, deterministic)."""
    from supportdesk.wiring import open_desk
    from supportdesk.engine.events import Appended

    with tempfile.TemporaryDirectory() as scratch:
        async with await open_desk(Path(scratch) / "calibrate.db") as desk:
            session = await desk.runner.new_session()
            counts = []
            for text in SCRIPT:
                n = 0
                async for event in desk.runner.send(session, text):
                    if isinstance(event, Appended) and event.item.kind == "message" and event.item.role == "agent":
                        n += 1
                counts.append(n)
            return counts


async def follow(http: httpx.AsyncClient, cid: str, token: str, client: Client, stop: asyncio.Event) -> None:
    fields: dict[str, str] = {}
    async with http.stream("GET", f"/api/conversations/{cid}/events", params={"token": token}) as response:
        assert response.status_code == 200, response.status_code
        client.ready.set()
        async for line in response.aiter_lines():
            if line == "":
                if "data" in fields:
                    data = json.loads(fields["data"])
                    seq = int(fields["id"]) if "id" in fields else None
                    client.events.append((fields.get("event", ""), seq, time.perf_counter(), data.get("from")))
                    if seq is not None:
                        client.stored.append(seq)
                        if data.get("from") == "agent":
                            client.agent_seqs.append(seq)
                            async with client.replied:
                                client.replied.notify_all()
                fields = {}
                if stop.is_set():
                    return
            elif not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value[1:] if value.startswith(" ") else value


async def run(db: str, workers: int, conversations: int, clients_per: int, logs: Path) -> int:
    expected_agent = await agent_messages_per_step()
    procs = [start_worker(db, logs / f"worker-{n}.log") for n in range(workers)]
    limits = httpx.Limits(max_connections=conversations * clients_per + 100, max_keepalive_connections=100)
    https = [httpx.AsyncClient(base_url=url, timeout=120, limits=limits) for _, url in procs]
    stop = asyncio.Event()
    try:
        made = []
        for i in range(conversations):
            body = (await https[i % workers].post("/api/conversations")).json()
            made.append((body["conversation_id"], body["token"]))
        clients = [Client(i, (i + k) % workers) for i in range(conversations) for k in range(clients_per)]
        readers = [
            asyncio.create_task(follow(https[c.worker], *made[c.conversation], c, stop)) for c in clients
        ]
        await asyncio.gather(*(c.ready.wait() for c in clients))
        by_conversation: dict[int, list[Client]] = {}
        for c in clients:
            by_conversation.setdefault(c.conversation, []).append(c)

        sent: dict[tuple[int, int], tuple[float, int]] = {}  # (conversation, step) -> (t0, customer seq)

        async def customer(i: int) -> None:
            cid, token = made[i]
            http = https[i % workers]
            for step, text in enumerate(SCRIPT):
                t0 = time.perf_counter()
                response = await http.post(
                    f"/api/conversations/{cid}/messages", json={"text": text}, headers={"Authorization": f"Bearer {token}"}
                )
                assert response.status_code == 202, response.text
                seq = response.json()["seq"]
                sent[(i, step)] = (t0, seq)
                want = expected_agent[step]
                # The turn is over for this customer once every client saw its final reply.
                for c in by_conversation[i]:
                    async with c.replied:
                        try:
                            await asyncio.wait_for(
                                c.replied.wait_for(lambda c=c: sum(1 for s in c.agent_seqs if s > seq) >= want), 120
                            )
                        except TimeoutError:
                            raise SystemExit(f"conversation {i}, message {step + 1}: the final reply never reached every client") from None

        started = time.perf_counter()
        await asyncio.gather(*(customer(i) for i in range(conversations)))
        elapsed = time.perf_counter() - started
        stop.set()
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)

        first, final = [], []
        for (i, step), (t0, seq) in sent.items():
            want = expected_agent[step]
            for c in by_conversation[i]:
                after = [(kind, s, t, who) for kind, s, t, who in c.events if t >= t0]
                agent_events = [t for kind, s, t, who in after if kind == "delta" or (kind == "message" and who == "agent" and s > seq)]
                replies = [t for kind, s, t, who in after if kind == "message" and who == "agent" and s > seq]
                first.append(agent_events[0] - t0)
                final.append(replies[want - 1] - t0)

        lost = duplicated = 0
        from supportdesk.channels.view import customer_event
        from supportdesk.config import load_desk
        from supportdesk.store import open_store

        config = load_desk(REPO / "agents.toml")
        async with await open_store(db) as store:
            for c in clients:
                cid = made[c.conversation][0]
                items = await store.range(cid, 1, await store.last_seq(cid))
                visible = [item.seq for item in items if customer_event(item, config) is not None]
                duplicated += len(c.stored) - len(set(c.stored))
                lost += len(set(visible) - set(c.stored))

        messages = conversations * len(SCRIPT)
        kind = "PostgreSQL" if db.startswith("postgres") else "SQLite"
        print(f"supportdesk serve, offline model, {kind}, {workers} worker(s): {conversations} conversations x {len(SCRIPT)} messages, {len(clients)} SSE clients")
        print(f"  customer messages/s               {messages / elapsed:8.1f}   ({messages} in {elapsed:.2f} s)")
        print(f"  POST -> first agent event   p50 {_ms(first, 50):8.1f} ms   p95 {_ms(first, 95):8.1f} ms   ({len(first)} client x message samples)")
        print(f"  POST -> final reply         p50 {_ms(final, 50):8.1f} ms   p95 {_ms(final, 95):8.1f} ms")
        print(f"  events lost {lost}, duplicated {duplicated} (bar: 0 and 0)")
        return 0 if lost == duplicated == 0 else 1
    finally:
        for http in https:
            await http.aclose()
        for proc, _ in procs:
            proc.terminate()
            proc.wait(timeout=30)
        # Whatever a worker logged (a failed turn, a lost feed) is part of the result.
        for n in range(workers):
            said = (logs / f"worker-{n}.log").read_text(errors="replace").splitlines()
            trouble = [line for line in said if "Traceback" in line or "ERROR" in line or "WARNING" in line]
            if trouble:
                print(f"worker {n} logged {len(trouble)} error/warning line(s); its last lines:", file=sys.stderr)
                print("\n".join(said[-40:]), file=sys.stderr)


def _ms(values: list[float], pct: int) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pg", metavar="URL", help="a PostgreSQL database URL (default: a fresh SQLite file)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--clients-per-conversation", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="10 conversations, 40 clients")
    parser.add_argument("--logs", metavar="DIR", type=Path, help="keep the workers' logs in DIR (default: a temporary folder)")
    args = parser.parse_args()
    conversations = 10 if args.quick else args.conversations
    with tempfile.TemporaryDirectory() as folder:
        db = args.pg or str(Path(folder) / "bench.db")
        logs = args.logs or Path(folder)
        logs.mkdir(parents=True, exist_ok=True)
        return asyncio.run(run(db, args.workers, conversations, args.clients_per_conversation, logs))


if __name__ == "__main__":
    sys.exit(main())
