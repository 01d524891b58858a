"""serve's followers on PostgreSQL hear another worker's appends through LISTEN/NOTIFY, not a poll
(issue 34 item 4).

The hub of this process follows a session on a PostgreSQL store; another OS process appends to
it. The poll interval is set to an hour and the poll itself made to fail, so the event can only
arrive through the store's change feed, the NOTIFY the append's transaction sends as it commits.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from supportdesk.channels import hub as hub_module
from supportdesk.channels.hub import Hub
from supportdesk.channels.view import customer_event
from supportdesk.store import open_store
from tests.serve_harness import repo_desk

pytestmark = pytest.mark.postgres

WRITER = Path(__file__).resolve().parent / "store_writer.py"


async def test_another_process_append_reaches_a_hub_stream_through_notify_not_a_poll(pg_url, monkeypatch):
    monkeypatch.setattr(hub_module, "FOLLOW_INTERVAL", 3600.0)

    async def no_poll(self: Hub) -> None:
        raise AssertionError("the hub polled instead of following the change feed")

    monkeypatch.setattr(Hub, "_poll", no_poll)
    desk = repo_desk()
    async with await open_store(pg_url) as store:
        info = await store.create_session("triage")
        hub = Hub(store, lambda item: customer_event(item, desk))
        hub.start()
        try:
            stream = await hub.stream(info.id, 0)
            async with asyncio.timeout(30):  # fails, never hangs
                await hub.following.wait()
            writer = await asyncio.create_subprocess_exec(
                sys.executable, str(WRITER), pg_url, info.id, "7", "1",
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )
            out, err = await writer.communicate()
            assert writer.returncode == 0, err.decode()
            assert b"committed 0" in out
            async with asyncio.timeout(30):  # an hour's poll interval: only the NOTIFY can bring it
                async for batch in stream:
                    texts = [event.data.get("text", "") for event in batch]
                    if any("writer 7" in text for text in texts):
                        break
            await stream.aclose()
        finally:
            await hub.close()
