"""A real PostgreSQL server for the tests, found through SUPPORTDESK_TEST_PG_URL.

`.ci/run` starts one (`.ci/pg.sh`) and sets the variable. Without it a PostgreSQL test skips,
except under CI=true, where a skipped PostgreSQL test fails the run: CI must prove both stores.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
import warnings
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest

ENV = "SUPPORTDESK_TEST_PG_URL"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def server_url() -> str:
    """The admin URL of the test server, or skip (fail under CI) when there is none."""
    url = os.environ.get(ENV, "").strip()
    if url:
        return url
    message = f"no PostgreSQL server: set {ENV} (bash .ci/pg.sh starts one and prints its URL)"
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


async def _admin(url: str, sql: str) -> None:
    import asyncpg  # the test extra installs it; imported here so SQLite-only runs never need it

    conn = await asyncpg.connect(url, timeout=10)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def create_database(url: str) -> str:
    name = f"sd_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        asyncio.run(_admin(url, f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # unreachable server, wrong password: say so, as skip or failure
        message = f"PostgreSQL at {ENV} is not usable: {exc}"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    return with_database(url, name)


def drop_database(url: str, test_url: str) -> None:
    import asyncpg

    name = urlsplit(test_url).path.lstrip("/")
    # FORCE ends the test's own leftover connections, but not an autovacuum worker that the
    # server started on the new database (the test role may not signal it): it finishes in a
    # moment, so wait for it instead of failing the test's teardown.
    for attempt in range(100):
        try:
            asyncio.run(_admin(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            return
        except (asyncpg.InsufficientPrivilegeError, asyncpg.ObjectInUseError):
            if attempt == 99:
                # A database left behind on the throwaway test server harms no later test
                # (each gets a fresh one); failing a passed test for it would be a flake.
                warnings.warn(f"test database {name} could not be dropped; it stays on the test server")
                return
            time.sleep(0.1)


# Objects a database created from template1 does not have: every catalog row past the built-in
# ones (the first OID a user object can get), except the per-backend temp schemas, which the
# server keeps once made and which are empty once their sessions end.
_USER_OBJECTS = """
SELECT (SELECT count(*) FROM pg_class WHERE oid >= 16384)
     + (SELECT count(*) FROM pg_type WHERE oid >= 16384)
     + (SELECT count(*) FROM pg_proc WHERE oid >= 16384)
     + (SELECT count(*) FROM pg_extension WHERE oid >= 16384)
     + (SELECT count(*) FROM pg_namespace WHERE oid >= 16384
          AND nspname NOT LIKE 'pg\\_temp\\_%' AND nspname NOT LIKE 'pg\\_toast\\_temp\\_%')
     + (SELECT count(*) FROM pg_db_role_setting WHERE setdatabase = (
          SELECT oid FROM pg_database WHERE datname = current_database()))
"""
# Databases of this process emptied after their test, each as good as a new one: creating and
# dropping a database costs the server a copy of template1 and a checkpoint's worth of syncing
# (about half a second each, most of the PostgreSQL tests' time), emptying one a few milliseconds.
# One pool per process, so xdist workers never share a database.
_spare: list[str] = []


async def _emptied(test_url: str) -> bool:
    """End the test's leftover connections and drop everything the test role made in the
    database; whether it is now indistinguishable from a new one (else it is dropped instead)."""
    import asyncpg

    conn = await asyncpg.connect(test_url, timeout=10)
    try:
        ended = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND usename = current_user"
        await conn.execute(f"SELECT pg_terminate_backend(pid) FROM ({ended}) AS left_open")
        for _ in range(100):  # a terminated backend leaves pg_stat_activity a moment later
            if not await conn.fetch(ended):
                break
            await asyncio.sleep(0.05)
        else:
            return False
        await conn.execute("DROP OWNED BY CURRENT_USER CASCADE")
        await conn.execute(f'ALTER DATABASE "{await conn.fetchval("SELECT current_database()")}" RESET ALL')
        return await conn.fetchval(_USER_OBJECTS) == 0
    finally:
        await conn.close()


def fresh_database() -> Iterator[str]:
    """Yield the URL of a new empty database: a spare one of this process emptied after its last
    test (checked to hold no object at all), or a newly created one."""
    admin = server_url()
    url = _spare.pop() if _spare else create_database(admin)
    try:
        yield url
    finally:
        try:
            reusable = asyncio.run(_emptied(url))
        except Exception:  # a database the test broke in a way we cannot empty: never reuse it
            reusable = False
        if reusable:
            _spare.append(url)
        else:
            drop_database(admin, url)


def drop_spare_databases() -> None:
    """At the end of the run: drop this process's databases (tests/conftest.py calls it)."""
    admin = os.environ.get(ENV, "").strip()
    while _spare:
        test_url = _spare.pop()
        try:
            drop_database(admin, test_url)
        except Exception as exc:  # the server went away: its throwaway databases harm no later run
            warnings.warn(f"test database {test_url.rsplit('/', 1)[-1]} could not be dropped: {exc}")
