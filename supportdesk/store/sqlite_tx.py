"""One SQLite write transaction: `BEGIN IMMEDIATE` ... `COMMIT`, rolled back on any error.

The session store (`store/sessions.py`) and the business data's SQLite adapter
(`business/sqlite.py`) both write this way; this is their one copy. `BEGIN IMMEDIATE` takes the
write lock up front, so what the transaction reads before it writes is final (no other writer
can move it in between, and no upgrade from a read lock can fail half-way). Waiting for another
process's lock is SQLite's busy handler's (the connection's `busy_timeout`): nothing here retries,
and a lock held past that timeout surfaces as the `sqlite3.OperationalError` SQLite raises, for
the caller to put in its own words.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def write_transaction(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run `fn(conn)` inside `BEGIN IMMEDIATE` ... `COMMIT` on a connection in autocommit mode
    (`isolation_level=None`); any error (or an interrupt) rolls back and is raised as it came."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = fn(conn)
        conn.execute("COMMIT")
        return result
    except BaseException:
        # Some errors (disk full, I/O) already rolled back; a second ROLLBACK would raise and
        # hide the real error.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
