"""`supportdesk serve` under load: 50 conversations, 200 event-stream clients, the offline model.

Each conversation is a customer who sends a three-message script, waiting for the desk's final
reply before the next message; each conversation is followed by four SSE clients that connect
before its first message. Measured from just before each POST:

- to the first agent event a client sees (a streamed `delta`, or the stored reply on a worker
  that did not run the turn), and
- to the final reply of that turn (the turn's last agent message; how many agent messages each
  script step produces is learned first by running the script through the runner on a scratch
  database: the offline model is deterministic),

for every (client, message) pair, plus customer messages per second over the whole run. Each
worker serves `--warm-up` conversations first (default 2, not measured: the offline model's
first-use cost is paid once per process, not per message).
Afterwards every client's list of stored event ids is compared with what the log holds for the
customer: zero lost and zero duplicated events is the bar (exit status 1 otherwise).

    python benchmarks/bench_serve.py                        # SQLite, one worker
    python benchmarks/bench_serve.py --pg URL --workers 2   # PostgreSQL, two workers
    python benchmarks/bench_serve.py --quick                # 10 conversations, 40 clients
    python benchmarks/bench_serve.py --relay                # one SQLite worker beside the relay peer
    python benchmarks/bench_serve.py --profile              # where a served message's CPU goes

`--relay` (issue 34): 50 conversations x 4 event-stream clients, each conversation's customer
sending 10 messages 50 ms apart without waiting for answers, against `benchmarks/sse_relay.py`
(a bare Starlette SSE relay: no storage, no agents; it echoes each message as the answer) and
one `serve` worker in alternating rounds, each server its own process. A message's answer is
the first agent message stored after it, timed on every stream from just before its POST;
an answer that never reaches a stream is counted. Each round also runs the same messages
through the engine headless (the runner in this process, no HTTP) for the messages/s bar.
Bars: POST -> answer p50 and p95 <= 2x the relay's, every answer delivered; serve's messages/s
>= 1/2 the headless rate. Each server's CPU a message is printed too: it hardly moves with the
machine's load, which the latencies do.

`--profile` (issue 34): one `serve` worker under the --relay load (20 conversations unless told),
after a warm-up; the same load once unprofiled (its CPU a message per thread from /proc, and the
load generator's own: it shares the machine's cores with the worker), then once with its main
thread's cProfile on the thread's own CPU clock, summed by part of a served message (the POST,
the turn, the fan-out, the SSE writes, request parsing, the feed, the lease, logging), each part
also as its share of the unprofiled main thread; the turns run and messages a turn (a turn
answers every message waiting), the main thread's CPU a turn and the rest a message.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shlex
import signal
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


# The event loop of every server this runs (`serve --loop`, `sse_relay.py --loop`): one for both
# sides, auto (uvloop's when installed) unless `--loop` says otherwise.
LOOP = ["auto"]
# `--count-statements`: where the workers write their statement counts (a path prefix), if set.
COUNT: list[str] = []


def start_worker(db: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A `serve` worker whose output goes to `log` (a pipe nobody reads after start-up would
    fill and stall the worker the first time it logs much)."""
    # $BENCH_SERVE_WRAP: a command the worker runs under, e.g. "py-spy record -o {worker}.svg --"
    # to profile a served turn under the load ({worker}: the worker's log name, one file each).
    wrap = os.environ.get("BENCH_SERVE_WRAP", "").replace("{worker}", log.stem)
    # With --count-statements: the worker's asyncpg statements counted (benchmarks/count_statements.py).
    run = [str(REPO / "benchmarks" / "count_statements.py"), COUNT[0], "supportdesk.cli"] if COUNT else ["-m", "supportdesk.cli"]
    return start_server(
        [*shlex.split(wrap), sys.executable, *run, "--db", db, "serve", "--port", "0", "--loop", LOOP[0],
         "--messages-per-minute", "100000",
         # The load generator is one client (127.0.0.1) opening every conversation.
         "--client-conversations-per-minute", "100000", "--client-messages-per-minute", "100000"],
        log,
    )


def start_server(command: list[str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A server process (a `serve` worker or the relay peer) and the URL it says it listens on."""
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    while proc.poll() is None:
        found = LISTENING.search(log.read_text(errors="replace"))
        if found:
            return proc, found.group(1)
        time.sleep(0.05)
    raise SystemExit(f"{command[1]} did not start ({proc.returncode}):\n{log.read_text(errors='replace')}")


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


async def run(db: str, workers: int, conversations: int, clients_per: int, logs: Path, warm_up: int = 2) -> int:
    expected_agent = await agent_messages_per_step()
    procs = [start_worker(db, logs / f"worker-{n}.log") for n in range(workers)]
    # Each worker first serves `warm_up` conversations of the script, one message a second, not
    # measured: the offline model compiles its patterns and reads its readers' data on first use
    # (about 0.2 s of CPU in each process), which would otherwise be charged to the load's
    # messages once per worker (twice with two workers: it was about 1.2 ms of a PostgreSQL
    # run's 12.5-13 ms a message).
    for _, url in procs:
        if warm_up > 0:
            await stream_load(url, warm_up, 1, SCRIPT, 1.0)
    for proc, _ in procs:
        if COUNT:
            proc.send_signal(signal.SIGUSR2)  # counted from here: the load's conversations, streams and messages
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

        if os.environ.get("BENCH_SERVE_MARK_LOAD"):
            # Told to a profiler wrapping the workers ($BENCH_SERVE_WRAP): the load starts now
            # (what came before, start-up and the streams' connects, is left out of its profile).
            for proc, _ in procs:
                proc.send_signal(signal.SIGUSR1)
        cpu = sum(_cpu_seconds(proc.pid) for proc, _ in procs)
        server = await _pg_server(db, settle=1.5) if db.startswith("postgres") else None
        started = time.perf_counter()
        await asyncio.gather(*(customer(i) for i in range(conversations)))
        elapsed = time.perf_counter() - started
        cpu = sum(_cpu_seconds(proc.pid) for proc, _ in procs) - cpu
        server_after = await _pg_server(db, settle=1.5) if db.startswith("postgres") else None
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

        lost, duplicated = await check_log(db, clients, made)

        messages = conversations * len(SCRIPT)
        kind = "PostgreSQL" if db.startswith("postgres") else "SQLite"
        print(f"supportdesk serve, offline model, {kind}, {workers} worker(s): {conversations} conversations x {len(SCRIPT)} messages, {len(clients)} SSE clients"
              f" (after {warm_up} warm-up conversation(s) a worker)")
        print(f"  customer messages/s               {messages / elapsed:8.1f}   ({messages} in {elapsed:.2f} s; load average {_loadavg()})")
        print(f"  workers' CPU a message            {1000 * cpu / messages:8.1f} ms  (all workers, all threads)")
        if server is not None and server_after is not None:
            # The backends that served this database (the workers' pools, their feeds), from /proc
            # on this machine, those opened during the run whole; one that ended during it is missed.
            backend_cpu = sum(cpu - server.cpu.get(pid, 0.0) for pid, cpu in server_after.cpu.items())
            print(f"  server's CPU a message            {1000 * backend_cpu / messages:8.1f} ms  "
                  f"({len(server.cpu)} backends of this database, {len(server_after.cpu)} after; transactions a message "
                  f"{(server_after.transactions - server.transactions) / messages:.1f})")
        print(f"  POST -> first agent event   p50 {_ms(first, 50):8.1f} ms   p95 {_ms(first, 95):8.1f} ms   ({len(first)} client x message samples)")
        print(f"  POST -> final reply         p50 {_ms(final, 50):8.1f} ms   p95 {_ms(final, 95):8.1f} ms")
        print(f"  events lost {lost}, duplicated {duplicated} (bar: 0 and 0)")
        return 0 if lost == duplicated == 0 else 1
    finally:
        for http in https:
            await http.aclose()
        for proc, _ in procs:
            proc.send_signal(signal.SIGINT)  # (what a profiler wrapping the worker writes its profile on)
            proc.wait(timeout=30)
        if COUNT:
            _print_statements([proc.pid for proc, _ in procs], conversations * len(SCRIPT))
        # Whatever a worker logged (a failed turn, a lost feed) is part of the result.
        for n in range(workers):
            said = (logs / f"worker-{n}.log").read_text(errors="replace").splitlines()
            trouble = [line for line in said if "Traceback" in line or "ERROR" in line or "WARNING" in line]
            if trouble:
                print(f"worker {n} logged {len(trouble)} error/warning line(s); its last lines:", file=sys.stderr)
                print("\n".join(said[-40:]), file=sys.stderr)


# --- `--relay`: serve beside a bare SSE relay under one open-loop load (issue 34) -----------------

# Each conversation's customer sends these, one every `--gap` seconds, without waiting for answers.
STREAM_SCRIPT = [
    "I was charged twice for my subscription this month, dana@example.com",
    "How do I reset my password?",
    "Where can I download my invoice?",
    "Can I change my plan to annual billing?",
    "My app keeps crashing when I log in",
    "I was charged twice again, dana@example.com",
    "How do I reset my password?",
    "Where can I download my invoice?",
    "My app keeps crashing when I log in",
    "thanks, that's all",
]
# How long after its last message a conversation's answers may still arrive.
ANSWER_DEADLINE = 60.0


@dataclass
class Load:
    """One run of the stream load against one server: POST -> answer per (client, message), the
    pairs whose answer never arrived, messages/s from the first POST to the last answer seen."""

    answers: list[float]
    undelivered: int
    rate: float
    lost: int = 0
    duplicated: int = 0
    cpu: float = float("nan")  # the server process's CPU seconds (all its threads) under the load
    generator: float = float("nan")  # the load generator's (this process's) CPU seconds: it shares the cores


async def stream_load(url: str, conversations: int, clients_per: int, texts: list[str], gap: float) -> tuple[Load, list[Client], list[tuple[str, str]]]:
    """`conversations` customers, each followed by `clients_per` event streams, each sending `texts`
    one every `gap` seconds (a POST waits for the one before). A message's answer is the first
    agent message stored after it (its seq is larger), timed on every stream from just before its
    POST; a conversation is done when every stream has an answer to its last message."""
    limits = httpx.Limits(max_connections=conversations * (clients_per + 1) + 100, max_keepalive_connections=conversations + 100)
    stop = asyncio.Event()
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as http:
        made = [(body["conversation_id"], body["token"]) for body in [
            (await http.post("/api/conversations")).json() for _ in range(conversations)
        ]]
        clients = [Client(i, 0) for i in range(conversations) for _ in range(clients_per)]
        readers = [asyncio.create_task(follow(http, *made[c.conversation], c, stop)) for c in clients]
        await asyncio.gather(*(c.ready.wait() for c in clients))
        by_conversation: dict[int, list[Client]] = {}
        for c in clients:
            by_conversation.setdefault(c.conversation, []).append(c)
        sent: list[tuple[int, float, int]] = []  # (conversation, t0, customer seq)
        finished: list[float] = []

        async def customer(i: int) -> None:
            cid, token = made[i]
            begin = time.perf_counter()
            seq = 0
            for k, text in enumerate(texts):
                await asyncio.sleep(max(0.0, begin + k * gap - time.perf_counter()))
                t0 = time.perf_counter()
                response = await http.post(
                    f"/api/conversations/{cid}/messages", json={"text": text}, headers={"Authorization": f"Bearer {token}"}
                )
                assert response.status_code == 202, response.text
                seq = response.json()["seq"]
                sent.append((i, t0, seq))
            for c in by_conversation[i]:
                async with c.replied:
                    with contextlib.suppress(TimeoutError):  # counted as undelivered below
                        await asyncio.wait_for(c.replied.wait_for(lambda c=c: bool(c.agent_seqs) and c.agent_seqs[-1] > seq), ANSWER_DEADLINE)
            finished.append(time.perf_counter())

        started = time.perf_counter()
        await asyncio.gather(*(customer(i) for i in range(conversations)))
        elapsed = max(finished) - started
        stop.set()
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)

    answers: list[float] = []
    undelivered = 0
    for i, t0, seq in sent:
        for c in by_conversation[i]:
            answer = next((t for kind, s, t, who in c.events if kind == "message" and who == "agent" and s is not None and s > seq), None)
            if answer is None:
                undelivered += 1
            else:
                answers.append(answer - t0)
    return Load(answers, undelivered, len(sent) / elapsed), clients, made


async def headless_rate(texts: list[str], conversations: int) -> float:
    """The engine's own rate in this process: every conversation's messages sent one after another
    through the runner (the same desk, offline model and SQLite store `serve` opens), no HTTP."""
    from supportdesk.wiring import open_desk

    with tempfile.TemporaryDirectory() as scratch:
        async with await open_desk(Path(scratch) / "headless.db") as desk:
            sessions = [await desk.runner.new_session() for _ in range(conversations)]
            started = time.perf_counter()
            for session in sessions:
                for text in texts:
                    async for _ in desk.runner.send(session, text):
                        pass
            return conversations * len(texts) / (time.perf_counter() - started)


async def check_log(db: str, clients: list[Client], made: list[tuple[str, str]], *, seen_only: bool = False) -> tuple[int, int]:
    """(events lost, events duplicated): each client's stored event ids against the log.
    `seen_only`: only up to the last id the client got (its stream was closed while a turn
    could still be writing; an answer that never arrived is counted as undelivered instead)."""
    from supportdesk.channels.view import customer_event
    from supportdesk.config import load_desk
    from supportdesk.store import open_store

    lost = duplicated = 0
    config = load_desk(REPO / "agents.toml")
    async with await open_store(db) as store:
        for c in clients:
            cid = made[c.conversation][0]
            items = await store.range(cid, 1, await store.last_seq(cid))
            visible = [item.seq for item in items if customer_event(item, config) is not None]
            if seen_only:
                visible = [seq for seq in visible if seq <= max(c.stored, default=0)]
            duplicated += len(c.stored) - len(set(c.stored))
            lost += len(set(visible) - set(c.stored))
    return lost, duplicated


async def run_relay(conversations: int, clients_per: int, messages: int, gap: float, rounds: int, folder: Path, logs: Path) -> int:
    """Rounds of: the relay peer, the engine headless, one `serve` worker on a fresh SQLite file,
    each under the same load; then our figures beside the peer's and the bars' verdicts."""
    texts = [STREAM_SCRIPT[k % len(STREAM_SCRIPT)] for k in range(messages)]
    relay_dir = Path(__file__).resolve().parent
    ours: list[Load] = []
    peers: list[Load] = []
    engine: list[float] = []
    print(f"{conversations} conversations x {clients_per} event-stream clients x {messages} messages {gap * 1000:.0f} ms apart; "
          f"{rounds} alternating rounds; load average {_loadavg()}")
    for n in range(rounds):
        for side in ("relay", "serve"):
            if side == "relay":
                proc, url = start_server(
                    [sys.executable, str(relay_dir / "sse_relay.py"), "--port", "0", "--loop", LOOP[0]], logs / f"relay-{n}.log"
                )
            else:
                engine.append(await headless_rate(texts, conversations))
                print(f"  round {n + 1} engine headless     {engine[-1]:8.1f} messages/s")
                db = str(folder / f"serve-{n}.db")
                proc, url = start_worker(db, logs / f"serve-{n}.log")
            try:
                cpu, mine = _cpu_seconds(proc.pid), time.process_time()
                load, clients, made = await stream_load(url, conversations, clients_per, texts, gap)
                load.cpu = _cpu_seconds(proc.pid) - cpu
                load.generator = time.process_time() - mine
            finally:
                proc.send_signal(signal.SIGINT)  # (what a profiler wrapping the worker writes its profile on)
                proc.wait(timeout=30)
            if side == "serve":
                load.lost, load.duplicated = await check_log(db, clients, made, seen_only=True)
                _trouble(logs / f"serve-{n}.log", "serve")
            (ours if side == "serve" else peers).append(load)
            print(f"  round {n + 1} {side:5}  POST -> answer p50 {_ms(load.answers, 50):8.1f} ms  p95 {_ms(load.answers, 95):8.1f} ms"
                  f"  {load.rate:7.1f} messages/s  CPU {1000 * load.cpu / (len(load.answers) / clients_per or 1):5.2f} ms a message"
                  f" (load generator {1000 * load.generator / (len(load.answers) / clients_per or 1):5.2f})  undelivered {load.undelivered}"
                  + (f"  events lost {load.lost}, duplicated {load.duplicated}" if side == "serve" else ""))
    mine = [a for load in ours for a in load.answers]
    theirs = [a for load in peers for a in load.answers]
    p50, p95 = _ms(mine, 50) / _ms(theirs, 50), _ms(mine, 95) / _ms(theirs, 95)
    undelivered = sum(load.undelivered for load in ours)
    rate = sorted(load.rate for load in ours)[len(ours) // 2]
    headless = sorted(engine)[len(engine) // 2]
    bad = sum(load.lost + load.duplicated for load in ours)
    met = {"answer": p50 <= 2 and p95 <= 2 and undelivered == 0, "rate": rate >= headless / 2}
    print(f"load average after: {_loadavg()}")
    print(f"serve (SQLite, 1 worker) vs the bare Starlette SSE relay, {len(mine)} / {len(theirs)} answers:")
    print(f"  POST -> answer p50  {_ms(mine, 50):8.1f} ms vs {_ms(theirs, 50):8.1f} ms  {p50:5.2f}x  (bar <= 2x)")
    print(f"  POST -> answer p95  {_ms(mine, 95):8.1f} ms vs {_ms(theirs, 95):8.1f} ms  {p95:5.2f}x  (bar <= 2x)")
    print(f"  answers never delivered {undelivered} of {len(mine) + undelivered} (bar: 0); events lost {sum(l.lost for l in ours)}, duplicated {sum(l.duplicated for l in ours)}")
    print(f"  -> {'met' if met['answer'] else 'MISSED'}")
    cpu = {side: sorted(1000 * load.cpu * clients_per / (len(load.answers) or 1) for load in loads)
           for side, loads in (("serve", ours), ("relay", peers))}
    print(f"  CPU a message (information; it moves less with the machine's load than the times): serve "
          f"{cpu['serve'][0]:.2f}-{cpu['serve'][-1]:.2f} ms vs relay {cpu['relay'][0]:.2f}-{cpu['relay'][-1]:.2f} ms "
          f"({cpu['serve'][0] / cpu['relay'][-1]:.1f}-{cpu['serve'][-1] / cpu['relay'][0]:.1f}x)")
    print(f"serve messages/s under that load (median) vs the engine headless (median): {rate:.1f} vs {headless:.1f}  "
          f"{rate / headless:.2f}x  (bar >= 0.5x) -> {'met' if met['rate'] else 'MISSED'}")
    return 0 if all(met.values()) and bad == 0 else 1


# --- `--profile`: where a served message's CPU goes (issue 34) --------------------------------------

# Run in the worker: `supportdesk.cli` with a cProfile on the main thread's CPU clock (time.thread_time,
# so waiting for the GIL or the machine's other work is not counted), on at SIGUSR1, written at SIGUSR2.
PROFILED_CLI = """
import cProfile, os, runpy, signal, sys, time
profile = cProfile.Profile(time.thread_time)
signal.signal(signal.SIGUSR1, lambda *_: profile.enable())
def written(*_):
    profile.disable()
    profile.dump_stats(os.environ["BENCH_SERVE_PROFILE"])
signal.signal(signal.SIGUSR2, written)
sys.argv = ["supportdesk", *sys.argv[1:]]
runpy.run_module("supportdesk.cli", run_name="__main__")
"""

# The parts of a served message, each the main thread's CPU under these functions (cumulative: a
# part's children are in it, and the rows overlap where one part calls another); a file is matched
# by its path's end, a uvicorn protocol by its folder (h11, or httptools when installed).
PROFILE_PARTS = [
    ("the engine's turn (Runner.resume)", "supportdesk/engine/runner.py", "resume"),
    ("turn fan-out of stored items (Hub.stored)", "supportdesk/channels/hub.py", "stored"),
    ("turn deltas (Hub.publish_delta)", "supportdesk/channels/hub.py", "publish_delta"),
    ("reads for the streams (Hub.poke)", "supportdesk/channels/hub.py", "poke"),
    ("POST handler (web post_message)", "supportdesk/channels/web.py", "post_message"),
    ("  its token check (Conversations.authorize)", "supportdesk/channels/conversations.py", "authorize"),
    ("  its body (web _read_body)", "supportdesk/channels/web.py", "_read_body"),
    ("  store + limit + hand-out (Conversations.post)", "supportdesk/channels/conversations.py", "post"),
    ("SSE writes, all streams (StreamingResponse.stream_response)", "starlette/responses.py", "stream_response"),
    ("  the streams' queues and batches (EventStream._run)", "supportdesk/channels/hub.py", "_run"),
    ("  JSON encoding of events (web _sse)", "supportdesk/channels/web.py", "_sse"),
    ("  the HTTP writes, POST answers too (uvicorn send)", "uvicorn/protocols/http/", "send"),
    ("request parsing (uvicorn data_received)", "uvicorn/protocols/http/", "data_received"),
    ("ASGI app calls incl. POST handler (uvicorn run_asgi)", "uvicorn/protocols/http/", "run_asgi"),
    ("change feed (Hub._follow, _catch_up)", "supportdesk/channels/hub.py", "_follow"),
    ("", "supportdesk/channels/hub.py", "_catch_up"),
    ("turn lease renewal (SqliteLease._renew)", "supportdesk/store/sqlite_live.py", "_renew"),
    ("logging (Logger.handle)", "logging/__init__.py", "handle"),
]


async def run_profile(conversations: int, clients_per: int, messages: int, gap: float, folder: Path, logs: Path, keep: Path | None) -> int:
    """One `serve` worker on a fresh SQLite file under the --relay load (after a warm-up load of 5
    conversations: the offline model compiles its patterns on first use), its CPU a message per
    thread from /proc, and the main thread's profile by part of a served message."""
    import pstats

    texts = [STREAM_SCRIPT[k % len(STREAM_SCRIPT)] for k in range(messages)]
    out = keep or folder / "serve.prof"
    db = str(folder / "profile.db")
    os.environ["BENCH_SERVE_PROFILE"] = str(out)
    proc, url = start_server(
        [sys.executable, "-c", PROFILED_CLI, "--db", db, "serve", "--port", "0", "--loop", LOOP[0], "--messages-per-minute", "100000",
         "--client-conversations-per-minute", "100000", "--client-messages-per-minute", "100000"],
        logs / "profile.log",
    )
    try:
        await stream_load(url, 5, clients_per, texts, gap)
        # The same load unprofiled first: the CPU a message each part stands for (`~ ms` below) is
        # its share of the profiled main thread times this run's unprofiled main thread.
        plain = _thread_cpu(proc.pid)
        bench = time.process_time()
        await stream_load(url, conversations, clients_per, texts, gap)
        bench = time.process_time() - bench
        unprofiled = _thread_cpu(proc.pid)
        before = _thread_cpu(proc.pid)
        proc.send_signal(signal.SIGUSR1)
        load, clients, made = await stream_load(url, conversations, clients_per, texts, gap)
        proc.send_signal(signal.SIGUSR2)
        after = _thread_cpu(proc.pid)
        while not out.exists():
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # (written by now: a small file)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    lost, duplicated = await check_log(db, clients, made, seen_only=True)
    _trouble(logs / "profile.log", "serve")
    sent = conversations * messages
    plain_main = (unprofiled.get(proc.pid, 0.0) - plain.get(proc.pid, 0.0)) / sent
    plain_all = sum(cpu - plain.get(tid, 0.0) for tid, cpu in unprofiled.items()) / sent
    used = {tid: cpu - before.get(tid, 0.0) for tid, cpu in after.items()}
    main = used.pop(proc.pid, 0.0)
    print(f"serve under the --relay load: {conversations} conversations x {clients_per} streams x {messages} messages "
          f"{gap * 1000:.0f} ms apart; load average {_loadavg()}")
    print(f"  unprofiled: CPU a message, all threads {1000 * plain_all:6.2f} ms, main thread (event loop) {1000 * plain_main:6.2f} ms; "
          f"the load generator (this process: 200 streams' reads, the POSTs) {1000 * bench / sent:6.2f} ms")
    print(f"  profiled: CPU a message, all threads   {1000 * (main + sum(used.values())) / sent:6.2f} ms   (the main thread profiled: "
          f"it runs slower than unprofiled)")
    print(f"    main thread (event loop)   {1000 * main / sent:6.2f} ms")
    for tid, cpu in sorted(used.items(), key=lambda t: -t[1])[:4]:
        if cpu > 0:
            print(f"    thread {tid:<10}          {1000 * cpu / sent:6.2f} ms   (the SQLite connection's, or a worker thread's)")
    others = sorted(((cpu - plain.get(tid, 0.0), tid) for tid, cpu in unprofiled.items() if tid != proc.pid), reverse=True)
    print("  unprofiled, the other threads: " + ", ".join(f"{tid} {1000 * cpu / sent:.2f} ms" for cpu, tid in others[:4] if cpu > 0))
    print(f"  answers undelivered {load.undelivered}; events lost {lost}, duplicated {duplicated}")
    stats = pstats.Stats(str(out))
    total = stats.total_tt  # type: ignore[attr-defined]
    entries = stats.stats  # type: ignore[attr-defined]

    def spent_in(file: str, function: str, column: int = 3) -> float:
        return sum(
            row[column] for (path, _, func), row in entries.items()
            if func == function and (path.endswith(file) or (file.endswith("/") and file in path))
        )

    scale = plain_main / (total / sent) if total else float("nan")  # unprofiled CPU per profiled second
    calls = sum(row[1] for row in entries.values())
    print(f"  the main thread's profiled CPU: {1000 * total / sent:.2f} ms a message ({calls / sent:,.0f} Python calls); by part "
          f"(cumulative; ~ ms: the share of the unprofiled main thread):")
    label = ""
    for name, file, function in PROFILE_PARTS:
        label = name or label
        spent = spent_in(file, function)
        if name:
            print(f"    {1000 * spent / sent:6.2f} ms  {100 * spent / total:5.1f} %  ~ {1000 * spent * scale / sent:5.2f} ms  {label}")
        else:
            print(f"    {1000 * spent / sent:6.2f} ms  {100 * spent / total:5.1f} %  ~ {1000 * spent * scale / sent:5.2f} ms    (and {function})")
    # The turns run (each takes the session's lease once: `SessionStore.turn`, a plain function
    # cProfile counts once a call) and the ASGI messages sent (each HTTP write's `send`).
    turns = spent_in("supportdesk/store/sessions.py", "turn", 1)
    turn_cpu = spent_in("supportdesk/engine/runner.py", "resume") * scale
    writes = spent_in("uvicorn/protocols/http/", "send", 1)
    print(f"  turns: {turns:.0f} for {sent} messages ({sent / turns if turns else float('nan'):.1f} messages a turn: a turn answers every "
          f"message waiting), ~ {1000 * turn_cpu / turns if turns else float('nan'):.2f} ms of the main thread a turn")
    print(f"  the rest of the main thread (HTTP, the POSTs' store hops, fan-out, SSE writes, the loop): "
          f"~ {1000 * (plain_main - turn_cpu / sent):.2f} ms a message; ASGI sends {writes / sent:.1f} a message")
    print(f"  profile in {out}" if keep else "  (--profile-out FILE keeps the profile for pstats)")
    return 0 if lost == duplicated == load.undelivered == 0 else 1


def _thread_cpu(pid: int) -> dict[int, float]:
    """Each thread's CPU seconds so far, user + system (Linux)."""
    found: dict[int, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            found[int(task.name)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return found


def _trouble(log: Path, name: str) -> None:
    said = log.read_text(errors="replace").splitlines()
    trouble = [line for line in said if "Traceback" in line or "ERROR" in line or "WARNING" in line]
    if trouble:
        print(f"{name} logged {len(trouble)} error/warning line(s); its last lines:", file=sys.stderr)
        print("\n".join(said[-40:]), file=sys.stderr)


@dataclass
class _PgServer:
    cpu: dict[int, float]  # backend pid -> CPU seconds so far
    transactions: int  # committed + rolled back in the database (a statement outside a transaction is one)


async def _pg_server(url: str, *, settle: float = 0.0) -> _PgServer:
    """The database's backends' CPU (those on this machine) and its transaction count so far
    (`settle`: seconds to let the backends report their counts first, at most a second stale)."""
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        pids = [r["pid"] for r in await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")]
        cpu = {pid: _cpu_seconds(pid) for pid in pids}
        await asyncio.sleep(settle)
        await conn.execute("SELECT pg_stat_clear_snapshot()")
        row = await conn.fetchrow(
            "SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()")
        return _PgServer(cpu, int(row["n"]) if row else 0)
    finally:
        await conn.close()


def _cpu_seconds(pid: int) -> float:
    """A process's CPU time so far, user + system, all threads (Linux; NaN elsewhere). Unlike the
    latencies it hardly moves with what else the machine runs."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def _print_statements(pids: list[int], messages: int) -> None:
    """The workers' statements from the load's start (`--count-statements`), by kind."""
    counts: dict[str, int] = {}
    for pid in pids:
        path = Path(f"{COUNT[0]}.{pid}")
        if path.exists():
            for text, n in json.loads(path.read_text()):
                counts[text] = counts.get(text, 0) + n
    total = sum(counts.values())
    print(f"  statements (all workers, from the load's start)  {total}, {total / messages:.2f} a message")
    for text, n in sorted(counts.items(), key=lambda kv: -kv[1])[:15]:
        print(f"    {n:6d}  {text}")


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def _ms(values: list[float], pct: int) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pg", metavar="URL", help="a PostgreSQL database URL (default: a fresh SQLite file)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--conversations", type=int, help="default 50 (--profile: 20)")
    parser.add_argument("--clients-per-conversation", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="10 conversations, 40 clients")
    parser.add_argument("--logs", metavar="DIR", type=Path, help="keep the workers' logs in DIR (default: a temporary folder)")
    parser.add_argument("--relay", action="store_true", help="one SQLite worker beside the bare SSE relay peer, alternating, "
                        "each conversation's customer sending --messages messages --gap seconds apart")
    parser.add_argument("--messages", type=int, default=10, help="with --relay: messages per conversation (default 10)")
    parser.add_argument("--gap", type=float, default=0.05, help="with --relay: seconds between a customer's messages (default 0.05)")
    parser.add_argument("--rounds", type=int, default=2, help="with --relay: alternating rounds of relay, engine, serve (default 2)")
    parser.add_argument("--profile", action="store_true", help="one `serve` worker under the --relay load (default 20 "
                        "conversations), its CPU a message per thread and its main thread's profile by part")
    parser.add_argument("--profile-out", metavar="FILE", type=Path, help="with --profile: keep the pstats file")
    parser.add_argument("--warm-up", type=int, default=2, help="conversations each worker serves before the measured "
                        "load, not measured (default 2; 0: workers measured cold, as before issue 34's round 9)")
    parser.add_argument("--loop", choices=("auto", "uvloop", "asyncio"), default="auto",
                        help="the servers' event loop, serve's and the relay's alike (default auto: uvloop's when installed)")
    parser.add_argument("--count-statements", action="store_true", help="with --pg: count the workers' statements "
                        "from the load's start (after the warm-up), by kind (benchmarks/count_statements.py)")
    args = parser.parse_args()
    LOOP[0] = args.loop
    conversations = 10 if args.quick else (args.conversations or 50)
    if args.relay and (args.pg or args.workers != 1):
        parser.error("--relay measures one SQLite worker; leave out --pg and --workers")
    with tempfile.TemporaryDirectory() as folder:
        db = args.pg or str(Path(folder) / "bench.db")
        logs = args.logs or Path(folder)
        logs.mkdir(parents=True, exist_ok=True)
        if args.count_statements:
            COUNT.append(str(Path(folder) / "statements"))
        if args.profile:
            return asyncio.run(run_profile(
                10 if args.quick else (args.conversations or 20), args.clients_per_conversation, args.messages, args.gap,
                Path(folder), logs, args.profile_out,
            ))
        if args.relay:
            return asyncio.run(run_relay(
                conversations, args.clients_per_conversation, args.messages, args.gap, args.rounds, Path(folder), logs
            ))
        return asyncio.run(run(db, args.workers, conversations, args.clients_per_conversation, logs, args.warm_up))

if __name__ == "__main__":
    sys.exit(main())
