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
