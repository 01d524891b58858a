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


def fresh_database() -> Iterator[str]:
    """Yield the URL of a new empty database, dropped afterwards."""
    admin = server_url()
    url = create_database(admin)
    try:
        yield url
    finally:
        drop_database(admin, url)
