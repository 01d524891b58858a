"""A separate OS process that runs customer turns with the offline desk; the turn tests run it.

    python tests/turn_worker.py DB_PATH_OR_URL SESSION WORKER_ID TURNS [--start FILE] [--lease-ttl S]

SESSION `-` makes a session of its own (printed as `session ID`). Turn t sends the customer
message `worker W turn t: <a support question>` and prints `turn t done <waited>` once the
turn has ended (`<waited>` is the seconds it waited for the session's turn lease), flushed: a
line on stdout means the whole turn is in the database. A turn that had to wait also prints
`waiting` before it starts.

With `--receive` a turn is what a web worker does instead (channels/conversations.py): the
message is stored on its own (`Runner.receive`, printing `received` once stored; `lease asked`
each time the runner asks for the turn lease), then the turn of an unanswered message runs
(`Runner.resume`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from supportdesk.wiring import open_desk  # noqa: E402
from supportdesk.engine.events import TurnWaiting  # noqa: E402
from supportdesk.store import LeaseLost  # noqa: E402

QUESTIONS = [
    "I was charged twice for my subscription this month",
    "My app crashes when I open it",
    "How do I reset my password?",
    "Can I get a refund for the duplicate charge of $12?",
    "The sync keeps failing on my laptop",
    "What plans do you have?",
]


class Stalled:
    """A model that never answers: the turn holds its lease until the process is killed."""

    name = "stalled"

    def __init__(self, model):
        self.model = model

    async def stream(self, request):
        print("stalled", flush=True)
        await asyncio.Event().wait()
        yield  # never reached; makes this an async generator

    async def aclose(self) -> None:
        await self.model.aclose()


class PausedAfterFirstStep:
    """A model that, on a turn's second step (the first step's items are in the log), says
    `paused` and waits for the gate file: a turn in progress, holding its lease, for as long as
    the test needs."""

    name = "paused"

    def __init__(self, model, gate: Path):
        self.model = model
        self.gate = gate
        self.steps = 0

    async def stream(self, request):
        self.steps += 1
        if self.steps == 2:
            print("paused", flush=True)
            while not self.gate.exists():
                await asyncio.sleep(0.01)
        async for out in self.model.stream(request):
            yield out

    async def aclose(self) -> None:
        await self.model.aclose()


def announce_leases(store) -> None:
    """Print `lease asked` each time the runner asks for a session's turn lease (the test
    knows then that the lease decides what happens next, not the processes' timing)."""
    turn = store.turn

    def announced(session_id: str):
        print("lease asked", flush=True)
        return turn(session_id)

    store.turn = announced


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("session")
    parser.add_argument("worker", type=int)
    parser.add_argument("turns", type=int)
    parser.add_argument("--start", help="wait until this file exists, so workers start together")
    parser.add_argument("--lease-ttl", type=float, help="a lease's lifetime without renewal")
    parser.add_argument("--stall-turn", type=int, help="on this turn the model never answers (a turn in progress to kill)")
    parser.add_argument("--receive", action="store_true", help="store each message as the web channel does, then run the turn")
    parser.add_argument("--pause-turn", type=int, help="on this turn the model pauses after the first step until --gate exists")
    parser.add_argument("--gate", type=Path, help="the file --pause-turn waits for")
    parser.add_argument("--config", default=str(Path(__file__).resolve().parent.parent / "agents.toml"))
    args = parser.parse_args()

    desk = await open_desk(args.db, args.config)
    try:
        if args.lease_ttl is not None and hasattr(desk.store, "lease_ttl"):
            desk.store.lease_ttl = args.lease_ttl
        session = args.session
        if session == "-":
            session = await desk.runner.new_session()
            print(f"session {session}", flush=True)
        print("ready", flush=True)
        if args.start:
            while not Path(args.start).exists():
                time.sleep(0.001)
        model = desk.runner.provider
        if args.receive:
            announce_leases(desk.store)
        for turn in range(args.turns):
            if turn == args.stall_turn:
                desk.runner.provider = Stalled(model)
            elif turn == args.pause_turn:
                desk.runner.provider = PausedAfterFirstStep(model, args.gate)
            elif args.pause_turn is not None:
                desk.runner.provider = model
            question = QUESTIONS[(args.worker + turn) % len(QUESTIONS)]
            waiting_since = None
            waited = 0.0
            text = f"worker {args.worker} turn {turn}: {question}"
            if args.receive:
                await desk.runner.receive(session, text)
                print("received", flush=True)
                events = desk.runner.resume(session)
            else:
                events = desk.runner.send(session, text)
            try:
                async for event in events:
                    if isinstance(event, TurnWaiting):
                        waiting_since = time.monotonic()
                        print("waiting", flush=True)
                    elif waiting_since is not None:  # the first event after the wait: the lease is ours
                        waited, waiting_since = time.monotonic() - waiting_since, None
            except LeaseLost as lost:  # paused past the lease: fenced off, the turn stops here
                print(f"lease lost: {lost}", flush=True)
                continue
            print(f"turn {turn} done {waited:.4f}", flush=True)
    finally:
        await desk.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
