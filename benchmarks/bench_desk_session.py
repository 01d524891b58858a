"""DeskSession (the Agents SDK's Session protocol on our store) against the SDK's SQLiteSession.

    python benchmarks/bench_desk_session.py [--rounds 200]

Each round adds two items (a user message and an assistant reply) and reads the latest 50, as
an SDK run does per turn. Medians in milliseconds, both peers in the same run on the same machine,
file databases in a fresh temporary folder. DeskSession is measured both ways it can be used: with
a path (a store opened and closed around each call) and with a Store the caller holds open.
Informational: the issue sets no bar, so this never exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


async def rounds(session: Any, count: int) -> tuple[float, float]:
    adds, gets = [], []
    for n in range(count):
        started = time.perf_counter()
        await session.add_items([{"role": "user", "content": f"message {n}"}, {"role": "assistant", "content": f"reply {n}"}])
        adds.append(time.perf_counter() - started)
        started = time.perf_counter()
        await session.get_items(50)
        gets.append(time.perf_counter() - started)
    return statistics.median(adds) * 1000, statistics.median(gets) * 1000


async def main(count: int) -> None:
    from agents import SQLiteSession

    from supportdesk.integrations.openai_agents import DeskSession
    from supportdesk.store import open_store

    folder = Path(tempfile.mkdtemp(prefix="bench-desk-session-"))
    peer = SQLiteSession("bench", folder / "sdk.db")
    rows = [("SQLiteSession (file)", await rounds(peer, count))]
    peer.close()
    rows.append(("DeskSession (path)", await rounds(DeskSession("bench", folder / "desk.db"), count)))
    async with await open_store(folder / "held.db") as store:
        rows.append(("DeskSession (held Store)", await rounds(DeskSession("bench", store), count)))
    print(f"{count} rounds; medians in ms")
    print(f"{'':26} {'add 2 items':>12} {'get latest 50':>14}")
    for name, (add, get) in rows:
        print(f"{name:26} {add:12.2f} {get:14.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    asyncio.run(main(parser.parse_args().rounds))
