"""Issue 32: after PostgreSQL is gone for a while, a `serve` worker's live follow listens again
and its streams catch up from the last seq they saw: a staff reply written by another process
after the outage reaches the customer's open stream.

The outage is real for the worker's database, without restarting the shared test server: every
connection of it is ended and new ones are refused (CONNECTION LIMIT 0) for a moment."""

from __future__ import annotations

import asyncio

import pytest

from supportdesk.channels.hub import Hub
from supportdesk.items import Message
from supportdesk.store import open_store

pytestmark = pytest.mark.postgres

OUTAGE_S = 2.5  # longer than the follower's pause between attempts: it fails more than once


async def _outage(admin, database: str) -> None:
    await admin.execute(f'ALTER DATABASE "{database}" CONNECTION LIMIT 0')
    try:
        others = "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()"
        await admin.execute(f"SELECT pg_terminate_backend(pid) FROM ({others}) AS ours", database)
        await asyncio.sleep(OUTAGE_S)  # the outage itself, not a synchronisation
    finally:
        await admin.execute(f'ALTER DATABASE "{database}" CONNECTION LIMIT -1')


async def test_live_follow_listens_again_after_an_outage_and_catches_up(pg_url: str) -> None:
    import asyncpg

    database = pg_url.rsplit("/", 1)[1]
    async with await open_store(pg_url) as worker_store:
        sid = (await worker_store.create_session("triage")).id
        await worker_store.append(sid, [Message(role="customer", text="hello")])
        hub = Hub(worker_store, lambda item: item)  # type: ignore[arg-type,return-value]
        queue = await hub.subscribe(sid)
        hub.start()
        try:
            admin = await asyncpg.connect(pg_url.rsplit("/", 1)[0] + "/postgres")
            try:
                await _outage(admin, database)
            finally:
                await admin.close()
            async with await open_store(pg_url) as staff_store:  # another process's writer
                await staff_store.append(sid, [Message(role="staff", text="A person here.", agent="triage")])
            got = await asyncio.wait_for(queue.get(), 20)
            assert getattr(got, "text", None) == "A person here."
            assert hub._follower is not None and not hub._follower.done()
        finally:
            await hub.close()
