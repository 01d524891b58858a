"""The one SQLite write transaction frame (`store/sqlite_tx.py`) the session store and the
business data's SQLite adapter share: commits what it ran, rolls back on any error and raises
that error (not a second one from a rollback SQLite already did), and leaves waiting for another
writer's lock to SQLite's busy handler (no retry of its own). Real files, real locks."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from supportdesk.store.sqlite_tx import write_transaction


def _connect(path: Path, busy_ms: int) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
    conn.execute("PRAGMA journal_mode = WAL")
    return conn


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "tx.db"
    conn = _connect(path, 0)
    conn.execute("CREATE TABLE t (v INTEGER)")
    conn.close()
    return path


def _values(path: Path) -> list[int]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT v FROM t ORDER BY v")]


def test_it_commits_and_returns_what_the_body_returned(db: Path):
    conn = _connect(db, 1000)
    assert write_transaction(conn, lambda c: c.execute("INSERT INTO t VALUES (1)").lastrowid) == 1
    assert not conn.in_transaction
    assert _values(db) == [1]  # seen by another connection: committed


def test_an_error_rolls_everything_back_and_is_raised_as_it_came(db: Path):
    conn = _connect(db, 1000)

    def body(c: sqlite3.Connection) -> None:
        c.execute("INSERT INTO t VALUES (1)")
        raise KeyError("the body's own error")

    with pytest.raises(KeyError, match="the body's own error"):
        write_transaction(conn, body)
    assert not conn.in_transaction and _values(db) == []
    write_transaction(conn, lambda c: c.execute("INSERT INTO t VALUES (2)"))  # usable again
    assert _values(db) == [2]


def test_an_error_after_sqlite_rolled_back_itself_is_not_hidden_by_a_second_rollback(db: Path):
    """A full disk or an I/O error ends the transaction inside SQLite; the frame must then raise
    that error, not 'cannot rollback - no transaction is active'."""
    conn = _connect(db, 1000)

    def body(c: sqlite3.Connection) -> None:
        c.execute("INSERT INTO t VALUES (1)")
        c.execute("ROLLBACK")  # as SQLite does on SQLITE_FULL
        raise sqlite3.OperationalError("database or disk is full")

    with pytest.raises(sqlite3.OperationalError, match="disk is full"):
        write_transaction(conn, body)
    assert _values(db) == []


def test_a_lock_held_past_the_busy_timeout_raises_busy_without_running_the_body(db: Path):
    holder = _connect(db, 0)
    holder.execute("BEGIN IMMEDIATE")
    waiter = _connect(db, 50)
    ran = []
    try:
        started = time.monotonic()
        with pytest.raises(sqlite3.OperationalError) as caught:
            write_transaction(waiter, lambda c: ran.append(1))
        waited = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
    assert caught.value.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY
    assert ran == [] and not waiter.in_transaction
    assert waited >= 0.04  # SQLite's busy handler waited out the timeout before giving up


def test_a_writer_waits_for_the_lock_through_the_busy_handler_and_then_writes(db: Path):
    holder = _connect(db, 0)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO t VALUES (1)")
    waiter = _connect(db, 20_000)
    outcome: list[object] = []

    def write() -> None:
        try:
            outcome.append(write_transaction(waiter, lambda c: c.execute("SELECT count(*) FROM t").fetchone()[0]))
        except Exception as exc:  # reported below, not lost in the thread
            outcome.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    thread.join(0.2)
    assert thread.is_alive() and outcome == []  # still waiting on the holder's lock
    holder.execute("COMMIT")
    thread.join(20)
    # It ran after the holder's commit, under the lock: it saw the holder's row.
    assert outcome == [1]
