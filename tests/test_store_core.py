"""The two store adapters hold only what differs between their databases (issue 36).

What both need lives once in `supportdesk/store/core.py`. These checks keep copies from coming
back: no function body (docstring aside) and no module-level statement (placeholders `?`/`$n`
aside) is written in both the SQLite and the PostgreSQL adapter. Read with `ast`, nothing run.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

STORE = Path(__file__).resolve().parent.parent / "supportdesk" / "store"
SQLITE_SIDE = ("sessions.py", "sqlite_figures.py")
POSTGRES_SIDE = ("postgres.py", "pg_figures.py")


def _bodies(sources: dict[str, str]) -> dict[str, list[str]]:
    """Each function's body (its docstring left out) as an AST dump -> where it is written."""
    found: dict[str, list[str]] = {}
    for name, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body
                if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                    body = body[1:]
                if body:
                    found.setdefault(ast.dump(ast.Module(body=body, type_ignores=[])), []).append(f"{name}:{node.name}")
    return found


def _statements(sources: dict[str, str]) -> dict[str, list[str]]:
    """Each module-level string constant (an f-string as written), placeholders made alike."""
    found: dict[str, list[str]] = {}
    for name, text in sources.items():
        for node in ast.parse(text).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Constant, ast.JoinedStr)):
                if isinstance(node.value, ast.Constant) and not isinstance(node.value.value, str):
                    continue
                written = re.sub(r"\$\d+|\?", "?", ast.unparse(node.value))
                targets = ", ".join(ast.unparse(t) for t in node.targets)
                found.setdefault(written, []).append(f"{name}:{targets}")
    return found


def written_twice(sqlite: dict[str, str], postgres: dict[str, str]) -> list[str]:
    """What the two sides both write: function bodies and statements, one line each."""
    problems = []
    for read in (_bodies, _statements):
        left, right = read(sqlite), read(postgres)
        for key in left.keys() & right.keys():
            problems.append(f"{', '.join(left[key])} = {', '.join(right[key])}: move it to store/core.py")
    return sorted(problems)


def _read(names: tuple[str, ...]) -> dict[str, str]:
    return {name: (STORE / name).read_text(encoding="utf-8") for name in names}


def test_no_function_or_statement_is_written_in_both_adapters():
    assert written_twice(_read(SQLITE_SIDE), _read(POSTGRES_SIDE)) == []


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
    problems = written_twice(sqlite, postgres)
    assert problems == [
        "sessions.py:SQL_COUNT = postgres.py:SQL_ITEMS: move it to store/core.py",
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
