"""A desk that fails to open closes what it had opened: the store and the business data each run
an aiosqlite connection on a non-daemon thread, and one left open kept `supportdesk run` from
exiting after the offline model failed to import (the process waited in threading's shutdown
forever instead of printing its error and ending). On a real SQLite file."""

from __future__ import annotations

import threading

import pytest

from supportdesk import wiring
from tests.conftest import REPO


def _connection_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.endswith("(_connection_worker_thread)")}


async def test_a_desk_whose_model_fails_to_load_closes_its_store_and_business_data(tmp_path, monkeypatch):
    def broken(cfg):
        raise RuntimeError("the model failed to load")

    monkeypatch.setattr(wiring, "_provider", broken)
    before = _connection_threads()
    with pytest.raises(RuntimeError, match="failed to load") as failed:
        await wiring.open_desk(tmp_path / "desk.db", REPO / "agents.toml")
    # The error is kept while the threads are looked at, as an uncaught one is at the process's
    # exit: its frames hold what was opened, so nothing is closed by being collected.
    left = _connection_threads() - before
    for thread in left:  # a closed connection's thread ends just after close() returns
        thread.join(timeout=5)
    assert [t.name for t in left if t.is_alive()] == [], failed.value
