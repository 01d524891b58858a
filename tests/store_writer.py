"""A separate OS process that appends to one session; the multi-process store tests run it.

    python tests/store_writer.py DB_PATH_OR_URL SESSION WRITER_ID BATCHES [--sizes 1,2,3] [--start FILE]

SESSION `-` makes a session of its own.
Appends BATCHES batches (batch b has sizes[b % len(sizes)] items) in order. Every item
carries its writer id, its batch number, its place in the batch and the batch's size (in
the text and in meta), plus a per-writer counter, so the parent can check each writer's
order and that no batch is partial. After each commit it prints `committed <batch>` and
flushes: a line on stdout means the batch is durable in the database.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from supportdesk.items import Message  # noqa: E402
from supportdesk.store import open_store  # noqa: E402


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("session")
    parser.add_argument("writer", type=int)
    parser.add_argument("batches", type=int)
    parser.add_argument("--sizes", default="1")
    parser.add_argument("--start", help="wait until this file exists, so writers start together")
    parser.add_argument("--open-after-start", action="store_true", help="open the database only after the start")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    def wait_for_start() -> None:
        if args.start:
            while not Path(args.start).exists():
                time.sleep(0.001)

    if args.open_after_start:  # several processes opening (and migrating) one new file at once
        print("ready", flush=True)
        wait_for_start()
        store = await open_store(args.db)
    else:
        store = await open_store(args.db)
        print("ready", flush=True)
        wait_for_start()
    if args.session == "-":
        args.session = (await store.create_session("triage")).id
    counter = 0
    try:
        for batch in range(args.batches):
            size = sizes[batch % len(sizes)]
            items = []
            for part in range(size):
                counter += 1
                meta = {"writer": args.writer, "batch": batch, "part": part, "size": size, "n": counter}
                text = f"writer {args.writer} batch {batch} part {part}/{size} n {counter}"
                items.append(Message(role="agent", text=text, agent=f"w{args.writer}", meta=meta))
            await store.append(args.session, items)
            print(f"committed {batch}", flush=True)
    finally:
        await store.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
