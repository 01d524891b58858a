"""The PostgreSQL test fixture itself: a fresh database per test, really on the server."""

from __future__ import annotations

import asyncio

import pytest

pytestmark = pytest.mark.postgres


def test_pg_url_is_a_fresh_empty_database(pg_url: str):
    import asyncpg

    async def probe() -> tuple[str, int]:
        conn = await asyncpg.connect(pg_url)
        try:
            name = await conn.fetchval("select current_database()")
            tables = await conn.fetchval("select count(*) from pg_tables where schemaname = 'public'")
            return name, tables
        finally:
            await conn.close()

    name, tables = asyncio.run(probe())
    assert name.startswith("sd_test_")
    assert tables == 0


def test_a_database_handed_on_holds_nothing_its_last_test_made():
    """pg_url hands an emptied database to the next test: everything a test can leave behind
    (tables, rows, sequences, types, functions, views, schemas, database settings, and a
    connection still open holding a lock and a LISTEN) is gone, as in a new database."""
    import asyncpg

    from tests import pg

    async def litter(url: str) -> asyncpg.Connection:
        conn = await asyncpg.connect(url)
        await conn.execute(
            """
            CREATE SCHEMA extra;
            CREATE TABLE extra.t (id int);
            CREATE TYPE mood AS ENUM ('ok', 'bad');
            CREATE SEQUENCE counter;
            CREATE TABLE notes (id serial PRIMARY KEY, body text, m mood);
            INSERT INTO notes (body) VALUES ('left behind');
            CREATE VIEW note_bodies AS SELECT body FROM notes;
            CREATE INDEX notes_body ON notes (body);
            CREATE FUNCTION one() RETURNS int LANGUAGE sql AS 'SELECT 1';
            CREATE TEMP TABLE scratch (id int);
            LISTEN somewhere;
            """
        )
        await conn.execute(f'ALTER DATABASE "{await conn.fetchval("SELECT current_database()")}" SET work_mem = \'8MB\'')
        await conn.execute("BEGIN; LOCK TABLE notes IN ACCESS EXCLUSIVE MODE")  # left open on purpose
        return conn

    async def probe(url: str) -> tuple[int, int, str]:
        conn = await asyncpg.connect(url)
        try:
            return (
                await conn.fetchval(pg._USER_OBJECTS),
                await conn.fetchval("SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"),
                await conn.fetchval("SHOW work_mem"),
            )
        finally:
            await conn.close()

    async def new_database_figures() -> tuple[int, int, str]:
        created = await asyncio.to_thread(pg.create_database, pg.server_url())
        try:
            return await probe(created)
        finally:
            await asyncio.to_thread(pg.drop_database, pg.server_url(), created)

    async def run() -> None:
        first = pg.fresh_database()
        url = await asyncio.to_thread(next, first)
        leftover = await litter(url)
        try:
            await asyncio.to_thread(first.close)  # the test ends: its database is emptied and kept
        finally:
            leftover.terminate()  # already ended by the server; this only frees the client side
        second = pg.fresh_database()
        try:
            assert await asyncio.to_thread(next, second) == url  # the same database, handed on
            handed_on, new = await probe(url), await new_database_figures()
            assert handed_on == new and handed_on[:2] == (0, 0), (handed_on, new)
        finally:
            await asyncio.to_thread(second.close)

    asyncio.run(run())
