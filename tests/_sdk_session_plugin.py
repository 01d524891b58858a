"""A pytest plugin that runs the Agents SDK's own session tests against `DeskSession`.

Loaded with `-p _sdk_session_plugin` by tests/test_integrations_sdk_suite.py inside the
`openai-agents` sdist it downloads: their test modules run as they ship, and only the name
`SQLiteSession` in their module namespace is pointed at our class. Tests that cannot apply to
another implementation are deselected here, each with its reason.
"""

from __future__ import annotations

import pytest

from supportdesk.integrations.openai_agents import DeskSession

# The SDK's tests written against SQLiteSession's behaviour (ordering, limit, pop_item,
# clear_session, settings precedence, runs through Runner.run / run_sync / run_streamed).
SUBSTITUTED_FILES = ("memory/test_session.py", "memory/test_session_limit.py")

# Test name prefix -> why it cannot apply to DeskSession.
NOT_APPLICABLE: dict[str, str] = {
    "test_await_mutation_cancellation_hides_later_failure_without_loop_error": (
        "tests the SDK's private _await_mutation helper, not a session"
    ),
    "test_sqlite_session_close_closes_worker_thread_connections": (
        "inspects SQLiteSession's per-thread sqlite3 connections; DeskSession keeps no connection between calls"
    ),
    "test_sqlite_session_reaps_connections_from_exited_worker_threads": "SQLiteSession's connection pool internals",
    "test_sqlite_session_closes_retired_connections_before_the_next_allocation": "SQLiteSession's connection pool internals",
    "test_sqlite_session_keeps_connections_of_live_worker_threads": "SQLiteSession's connection pool internals",
    "test_sqlite_session_closed_rejects_empty_add_items": (
        "matches the error text 'SQLiteSession is closed'; DeskSession raises RuntimeError('DeskSession is closed')"
    ),
    "test_sqlite_session_pop_item_skips_corrupt_most_recent": (
        "writes corrupt JSON rows into SQLiteSession's agent_messages table with raw SQL; our store has no such table"
    ),
    "test_sqlite_session_pop_item_returns_none_after_dropping_only_corrupt_rows": "raw SQL into agent_messages",
    "test_sqlite_session_get_items_limit_skips_corrupt_newest_rows": "raw SQL into agent_messages",
    "test_sqlite_session_get_items_session_settings_limit_skips_corrupt_rows": "raw SQL into agent_messages",
    "test_sqlite_session_file_lock_is_shared_across_instances": "SQLiteSession's class-level file lock table",
    "test_sqlite_session_failed_add_items_releases_write_lock": (
        "patches SQLiteSession's private _insert_items to fail mid-transaction"
    ),
    "test_sqlite_session_failed_clear_session_rolls_back": "patches SQLiteSession's private connection methods",
    "test_sqlite_session_failed_pop_item_releases_write_lock": "patches SQLiteSession's private connection methods",
    "test_sqlite_session_rollback_failure_evicts_connection": "patches SQLiteSession's private connection methods",
    "test_sqlite_session_close_retries_quarantined_connection": "SQLiteSession's connection quarantine internals",
    "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome": (
        "patches SQLiteSession's private sync workers to cancel after commit"
    ),
}

made: list[str] = []


class CountedDeskSession(DeskSession):
    """DeskSession unchanged, counting instances so the run proves our class was the one used."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        made.append(self.session_id)


@pytest.fixture(autouse=True)
def _desk_database(tmp_path, monkeypatch):
    # `SQLiteSession("id")` with no path is a private in-memory database; ours is the default
    # database, so each test gets a fresh one.
    monkeypatch.setenv("SUPPORTDESK_DB", str(tmp_path / "desk.db"))


def _reason(name: str) -> str | None:
    base = name.split("[", 1)[0]
    return NOT_APPLICABLE.get(base)


def pytest_collection_modifyitems(config, items):
    kept, dropped = [], []
    for item in items:
        path = str(item.path).replace("\\", "/")
        if not path.endswith(SUBSTITUTED_FILES):
            dropped.append(item)
            continue
        if _reason(item.name) is not None:
            dropped.append(item)
            continue
        item.module.SQLiteSession = CountedDeskSession
        kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"desk-sessions-made: {len(made)}")
    for name, reason in NOT_APPLICABLE.items():
        terminalreporter.write_line(f"not-applicable: {name}: {reason}")
