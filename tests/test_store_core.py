"""The two store adapters hold only what differs between their databases (issue 36).

What both need lives once in `supportdesk/store/core.py`. These checks keep copies from coming
back: no function body and no SQL statement is written in both the SQLite and the PostgreSQL
adapter (`tests/copies.py` says what counts as a copy).
"""

from __future__ import annotations

from pathlib import Path

from tests.copies import written_twice

STORE = Path(__file__).resolve().parent.parent / "supportdesk" / "store"
SQLITE_SIDE = ("sessions.py", "sqlite_figures.py")
POSTGRES_SIDE = ("postgres.py", "pg_figures.py")


def _read(names: tuple[str, ...]) -> dict[str, str]:
    return {name: (STORE / name).read_text(encoding="utf-8") for name in names}


def test_no_function_or_statement_is_written_in_both_adapters():
    assert written_twice(_read(SQLITE_SIDE), _read(POSTGRES_SIDE), "store/core.py") == []


def test_the_check_sees_a_copied_helper_and_a_copied_statement():
    # The same helper in both (a docstring of its own does not hide it), and one statement
    # that differs only in its placeholders.
    sqlite = {
        "sessions.py": (
            'SQL_COUNT = "SELECT count(*) FROM items WHERE session_id = ?"\n'
            "def _share(text):\n    '''SQLite's.'''\n    return FigureSummary.from_json(text) if text else None\n"
        )
    }
    postgres = {
        "postgres.py": (
            'SQL_ITEMS = "SELECT count(*) FROM items WHERE session_id = $1"\n'
            "def _share(text):\n    return FigureSummary.from_json(text) if text else None\n"
            "def _other(text):\n    return text\n"
        )
    }
    problems = written_twice(sqlite, postgres, "store/core.py")
    assert problems == [
        "sessions.py:1 = postgres.py:1: move it to store/core.py",
        "sessions.py:_share = postgres.py:_share: move it to store/core.py",
    ], problems


def test_the_adapters_stand_on_the_core():
    # The shared pieces are the core's, not look-alikes: both adapters' classes read sessions
    # through core.StoreCore and build the inbox filter from their dialect.
    from supportdesk.store import core, postgres, sessions

    for module, store in ((sessions, sessions.SessionStore), (postgres, postgres.PostgresStore)):
        assert issubclass(store, core.StoreCore)
        assert store.dialect is module.DIALECT and store.reads is module.READS
        assert "get_session" not in vars(store) and "desk" not in vars(store)
    assert sessions.DIALECT.param(3) == "?" and postgres.DIALECT.param(3) == "$3"
