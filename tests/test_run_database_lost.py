"""`supportdesk run` when PostgreSQL goes away mid-turn: one line naming the database (password
masked), exit 2, and whether the customer's message is stored; never a traceback.

The database's own trigger ends the writing connection at a chosen moment (PostgreSQL's
pg_terminate_backend, as when the server stops), so the cut falls inside the turn every time."""

from __future__ import annotations

import subprocess
import sys

import pytest

from supportdesk.store import open_store

pytestmark = pytest.mark.postgres

CHARGED_TWICE = "I was charged twice for my subscription, dana@example.com"


async def _cut_connection_when(pg_url: str, condition: str) -> None:
    import asyncpg

    async with await open_store(pg_url):
        pass  # the schema, so the trigger has its table
    conn = await asyncpg.connect(pg_url)
    try:
        await conn.execute(f"""
            CREATE FUNCTION cut_connection() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF {condition} THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF; RETURN NEW; END $$;
            CREATE TRIGGER cut_connection AFTER INSERT ON items FOR EACH ROW EXECUTE FUNCTION cut_connection();
        """)
    finally:
        await conn.close()


def _run(pg_url: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "supportdesk.cli", "--db", pg_url, "run", CHARGED_TWICE],
        capture_output=True, text=True, timeout=120,
    )


@pytest.mark.parametrize(
    "condition, fate",
    [
        ("NEW.kind <> 'message'", "the customer's message is stored; finish its turn with `supportdesk run --session "),
        ("NEW.kind = 'message'", "the customer's message was not stored; send it again"),
    ],
    ids=["after-the-message", "at-the-message"],
)
async def test_the_database_lost_mid_turn_is_one_line_exit_2_saying_if_the_message_is_stored(pg_url, condition, fate):
    await _cut_connection_when(pg_url, condition)
    done = _run(pg_url)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    [line] = lines
    database = pg_url.rsplit("/", 1)[1]
    assert database in line and "the database stopped answering during the turn" in line and fate in line
    assert ":***@" in line and "supportdesk_test:supportdesk_test" not in line  # the password masked
