"""Sessions record where their customer came from and facts that are not conversation."""

from __future__ import annotations

import json
import sqlite3

from supportdesk.store import SessionStore
from supportdesk.store.schema import MIGRATIONS


async def test_channel_and_meta_are_stored_and_read_back(db_path):
    async with await SessionStore.open(db_path) as store:
        web = await store.create_session("triage", channel="web", meta={"task": "retail/3", "reward": 1.0})
        local = await store.create_session("triage")
        assert (web.channel, web.meta) == ("web", {"task": "retail/3", "reward": 1.0})
        assert (local.channel, local.meta) == ("tui", {})
        listed = {s.id: s for s in await store.list_sessions()}
        assert listed[web.id].channel == "web" and listed[web.id].meta["task"] == "retail/3"
    async with await SessionStore.open(db_path) as store:  # and after reopening the file
        again = await store.get_session(web.id)
        assert again is not None and again.channel == "web" and again.meta["reward"] == 1.0


async def test_sessions_from_before_the_channel_column_read_as_tui(db_path):
    conn = sqlite3.connect(db_path)
    for version, script in enumerate(MIGRATIONS[:4], start=1):
        conn.executescript(script)
        conn.execute(f"PRAGMA user_version = {version}")
    conn.execute("PRAGMA application_id = 0x5344534B")
    conn.execute(
        "INSERT INTO sessions (id, title, created_at, updated_at, entry_agent, active_agent) "
        "VALUES ('old1', 'old', '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00', 'triage', 'triage')"
    )
    conn.commit()
    conn.close()
    async with await SessionStore.open(db_path) as store:
        old = await store.get_session("old1")
        assert old is not None and (old.channel, old.meta) == ("tui", {})


def test_sessions_started_by_run_are_from_the_cli(db_path, capsys):
    import asyncio

    from supportdesk.cli import main

    assert main(["--db", str(db_path), "run", "--json", "hello"]) == 0
    session_id = json.loads(capsys.readouterr().out.splitlines()[0])["session"]

    async def channel() -> str:
        async with await SessionStore.open(db_path) as store:
            info = await store.get_session(session_id)
            assert info is not None
            return info.channel

    assert asyncio.run(channel()) == "cli"
