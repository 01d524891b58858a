"""The SQLite adapter's turn lease and change feed (schema migration 6).

A turn lease is a row of `turn_leases` taken in the same `BEGIN IMMEDIATE` discipline as an
append: one upsert that succeeds only when the row is free, expired, or already ours. While
the turn runs, the holder renews it every third of its lifetime, so a holder that died
(SIGKILL, a frozen machine) loses it within `LEASE_TTL` seconds and the session goes on.

A turn takes the lease and reads its start in that same write transaction (`try_start`: one
hop to the connection's thread), and gives it back in its last append's transaction
(`SessionStore.append(release=)`).

The holder's name is its fencing token and says where it runs (`uuid:host:pid:start`): every
append of the turn carries it and is refused unless the row still names it (a holder that was
stopped past its lease finds another's name there), and a waiter on the same machine takes
the lease at once from a holder whose process is gone (the TTL stays for holders elsewhere).

The change feed polls a count that triggers move on every change to a session row (the highest
change stamped, schema migration 14); when it moved, one index range read (`sessions.changed >
last count`, plus delete tombstones) says which sessions changed and their heads. Cheap enough to run every POLL seconds.
"""

from __future__ import annotations

import asyncio
import collections
import os
import random
import socket
import sqlite3
import time
import uuid
from functools import lru_cache
from typing import TYPE_CHECKING

from supportdesk.store.protocol import Change, LeaseLost, StoreError, TurnStart

if TYPE_CHECKING:
    from supportdesk.store.sessions import SessionStore

# How long a lease lives without renewal; holders renew it every LEASE_TTL / 3.
LEASE_TTL = 15.0
# Waiting for a lease: first retry after this, doubling up to the ceiling (with jitter).
_WAIT_FIRST, _WAIT_MAX = 0.01, 0.2
# How often a feed checks the counter (seconds).
POLL = 0.1

SQL_TAKE_LEASE = """
    INSERT INTO turn_leases (session_id, holder, expires_at) VALUES (:sid, :holder, :until)
    ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
    WHERE turn_leases.expires_at <= :now OR turn_leases.holder = excluded.holder
"""
SQL_RENEW_LEASE = "UPDATE turn_leases SET expires_at = ? WHERE session_id = ? AND holder = ?"
SQL_LEASE_HOLDER = "SELECT holder FROM turn_leases WHERE session_id = ?"
# Taking the lease from a holder found dead: only if the row still names that holder.
SQL_TAKE_FROM = "UPDATE turn_leases SET holder = :holder, expires_at = :until WHERE session_id = :sid AND holder = :dead"
SQL_DROP_LEASE = "DELETE FROM turn_leases WHERE session_id = ? AND holder = ?"
# The feed's count: the highest change stamped on a session row or on a delete's tombstone
# (schema migration 14), two index probes.
SQL_FEED_COUNT = (
    "SELECT max((SELECT coalesce(max(changed), 0) FROM sessions), "
    "(SELECT coalesce(max(changed), 0) FROM deleted_sessions))"
)
SQL_CHANGES_SINCE = """
    SELECT id, item_count, 0, changed FROM sessions WHERE changed > ?1
    UNION ALL
    SELECT session_id, 0, 1, changed FROM deleted_sessions WHERE changed > ?1
    ORDER BY 4
"""


def _process_start(pid: int) -> str:
    """When the process started (clock ticks since boot, from /proc), or "" where unknown:
    with the pid it names one process, not a later one that reused the pid."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


def holder_name() -> str:
    """A new lease holder's name and fencing token: unique, and where its process runs."""
    return f"{uuid.uuid4().hex}:{_this_process(os.getpid())}"


@lru_cache(maxsize=4)
def _this_process(pid: int) -> str:
    """host:pid:start of the process `pid` (this one): read from /proc once per process, not per
    turn (keyed by pid, so a forked child reads its own)."""
    return f"{socket.gethostname()}:{pid}:{_process_start(pid)}"


def holder_is_dead(holder: str) -> bool:
    """Whether a holder named by `holder_name` ran on this machine in a process that is gone
    (killed, crashed, or a zombie its parent has not reaped). Elsewhere, or unsure: False."""
    parts = holder.split(":")
    if len(parts) != 4 or parts[1] != socket.gethostname() or not parts[2].isdigit():
        return False
    pid = int(parts[2])
    if pid == os.getpid():
        return False  # another turn of this very process: alive
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # another user's live process
    started = _process_start(pid)
    return _zombie(pid) or bool(parts[3] and started and started != parts[3])


def check_fence(conn: sqlite3.Connection, session_id: str, fence: str | None) -> None:
    """Inside an append's transaction: refuse it unless `fence` is the session's current lease."""
    if fence is None:
        return
    row = conn.execute(SQL_LEASE_HOLDER, (session_id,)).fetchone()
    if row is None or row[0] != fence:
        raise LeaseLost(
            f"session {session_id}: another process took this turn's lease while this one was paused past it; "
            "the turn stopped here and wrote nothing more"
        )


class SqliteLease:
    """The turn lease of one session on a SQLite store (see the module's docstring)."""

    def __init__(self, store: SessionStore, session_id: str, ttl: float = LEASE_TTL):
        self._store = store
        self.session_id = session_id
        self.ttl = ttl
        self.holder = holder_name()
        self.waited = 0.0
        self.held = False
        self._renewing: asyncio.Task[None] | None = None

    @property
    def token(self) -> str | None:
        return self.holder if self.held else None

    def _take(self, conn: sqlite3.Connection) -> bool:
        """Inside a write transaction: take the lease if it is free, expired, already this
        holder's, or its holder's process on this machine is gone."""
        now = time.time()
        args = {"sid": self.session_id, "holder": self.holder, "until": now + self.ttl, "now": now}
        if conn.execute(SQL_TAKE_LEASE, args).rowcount > 0:
            return True
        current = conn.execute(SQL_LEASE_HOLDER, (self.session_id,)).fetchone()
        if current is None or not holder_is_dead(current[0]):
            return False
        return conn.execute(SQL_TAKE_FROM, {**args, "dead": current[0]}).rowcount > 0

    def _taken(self) -> None:
        self.held = True
        self._renewing = asyncio.create_task(self._renew(), name=f"lease {self.session_id}")

    async def try_acquire(self) -> bool:
        if self.held:
            return True
        taken = await self._store._write(self._take)
        if taken:
            self._taken()
        return taken

    async def try_start(self, n: int) -> TurnStart | None:
        """The lease and the turn's start reads in one write transaction (one thread hop)."""
        if self.held:
            return await self._store.turn_start(self.session_id, n)
        start = await self._store._take_turn(self.session_id, n, self._take)
        if start is not None:
            self._taken()
        return start

    async def acquire(self) -> None:
        started = time.monotonic()
        pause = _WAIT_FIRST
        while not await self.try_acquire():
            await asyncio.sleep(pause * (0.5 + random.random()))
            pause = min(pause * 2, _WAIT_MAX)
        self.waited = time.monotonic() - started

    async def start(self, n: int) -> TurnStart:
        started = time.monotonic()
        pause = _WAIT_FIRST
        while (read := await self.try_start(n)) is None:
            await asyncio.sleep(pause * (0.5 + random.random()))
            pause = min(pause * 2, _WAIT_MAX)
        self.waited = time.monotonic() - started
        return read

    def let_go(self) -> None:
        self.held = False
        if self._renewing is not None:
            self._renewing.cancel()
            self._renewing = None

    async def release(self) -> None:
        if not self.held:
            return
        self.let_go()
        try:
            await self._store._write(lambda conn: conn.execute(SQL_DROP_LEASE, (self.session_id, self.holder)))
        except (StoreError, ValueError):
            pass  # the store is closing or locked: the lease expires on its own

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:
                await self._store._write(
                    lambda conn: conn.execute(SQL_RENEW_LEASE, (time.time() + self.ttl, self.session_id, self.holder))
                )
            except (StoreError, ValueError):
                pass  # a busy moment: the next renewal comes well before the lease runs out

    async def __aenter__(self) -> SqliteLease:
        await self.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.release()


class SqliteFeed:
    """Changes to the sessions of a SQLite store, by any connection, from its start on."""

    def __init__(self, store: SessionStore, mark: int):
        self._store = store
        self._mark = mark
        self._pending: collections.deque[Change] = collections.deque()
        self._closed = False

    @classmethod
    async def start(cls, store: SessionStore) -> SqliteFeed:
        rows = await store._fetch(SQL_FEED_COUNT)
        return cls(store, rows[0][0])

    def __aiter__(self) -> SqliteFeed:
        return self

    async def __anext__(self) -> Change:
        while not self._pending:
            if self._closed:
                raise StopAsyncIteration
            await asyncio.sleep(POLL)
            try:
                count = (await self._store._fetch(SQL_FEED_COUNT))[0][0]
                if count == self._mark:
                    continue
                rows = await self._store._fetch(SQL_CHANGES_SINCE, (self._mark,))
            except (StoreError, ValueError, sqlite3.ProgrammingError):
                if self._closed or self._store.closed:
                    raise StopAsyncIteration from None
                continue  # a busy moment: ask again at the next tick
            self._mark = count
            for session_id, head, deleted, _ in rows:
                self._pending.append(Change(session_id, head, bool(deleted)))
        return self._pending.popleft()

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> SqliteFeed:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
