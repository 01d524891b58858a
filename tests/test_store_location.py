"""--db / SUPPORTDESK_DB as typed: paths and sqlite:/// URLs are SQLite, postgresql:// never a path."""

from __future__ import annotations

from pathlib import Path

import pytest

from supportdesk.cli import main
from supportdesk.store import SessionStore, Store, StoreLocationError, open_store, parse_location, redact_url

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("typed", "kind", "target"),
    [
        ("desk.db", "sqlite", "desk.db"),
        ("/srv/desk.db", "sqlite", "/srv/desk.db"),
        ("sqlite:///desk.db", "sqlite", "desk.db"),
        ("sqlite:////srv/desk.db", "sqlite", "/srv/desk.db"),
        ("sqlite:///:memory:", "sqlite", ":memory:"),
        ("postgresql://u:pw@db.example:5432/desk", "postgresql", "postgresql://u:pw@db.example:5432/desk"),
        ("postgres://u@localhost/desk", "postgresql", "postgres://u@localhost/desk"),
    ],
)
def test_what_is_typed_selects_the_adapter(typed: str, kind: str, target: str):
    location = parse_location(typed)
    assert (location.kind, location.target) == (kind, target)


def test_the_environment_is_read_when_no_db_is_given(monkeypatch):
    monkeypatch.setenv("SUPPORTDESK_DB", "postgresql://u:secret@h/desk")
    assert parse_location(None).kind == "postgresql"
    monkeypatch.delenv("SUPPORTDESK_DB")
    assert parse_location(None).target.endswith("supportdesk/desk.db")


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://staff:s3cr%40t@db:5432/desk",
        "postgres://staff:s3cr@t@db/desk",
        "postgresql://staff@db/desk?password=s3cr",
    ],
)
def test_a_password_is_masked_for_display(url: str):
    shown = parse_location(url).display
    assert "s3cr" not in shown
    assert "***" in shown and "db" in shown
    assert "s3cr" not in repr(parse_location(url))


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("mysql://u:pw@h/desk", "unknown database URL scheme"),
        ("postgresql://u:pw@h:port/desk", "not a valid PostgreSQL URL"),
        ("postgresql://u:pw@h:5432", "names no database"),
        ("sqlite://host/desk.db", "has no host"),
    ],
)
def test_a_url_that_cannot_work_is_one_line_naming_the_problem(typed: str, says: str):
    with pytest.raises(StoreLocationError) as caught:
        parse_location(typed)
    assert says in str(caught.value)
    assert "pw" not in str(caught.value)


def test_an_unknown_scheme_exits_2_without_a_file(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["sessions", "list", "--db", "mysql://a:hunter2@h/desk"]) == 2
    err = capsys.readouterr().err
    assert "unknown database URL scheme" in err and "hunter2" not in err
    assert list(tmp_path.iterdir()) == []


async def test_open_store_gives_the_sqlite_adapter_for_a_path_and_a_sqlite_url(tmp_path: Path):
    for typed in (tmp_path / "a.db", f"sqlite:///{tmp_path}/b.db"):
        store = await open_store(typed)
        try:
            assert isinstance(store, SessionStore)
            assert isinstance(store, Store)  # the runtime-checkable contract
        finally:
            await store.close()
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db") == ["a.db", "b.db"]


def test_redact_url_keeps_everything_but_the_password():
    assert redact_url("postgresql://u:p@h:1/d?sslmode=require") == "postgresql://u:***@h:1/d?sslmode=require"
    assert redact_url("postgresql://h/d") == "postgresql://h/d"


def _open_store_cases() -> tuple[list[str], bool]:
    """The kinds open_store's `match location.kind` names, and whether it ends in assert_never."""
    import ast
    import inspect
    import textwrap

    import supportdesk.store as store_package

    tree = ast.parse(textwrap.dedent(inspect.getsource(store_package.open_store)))
    (match,) = [node for node in ast.walk(tree) if isinstance(node, ast.Match)]
    assert ast.unparse(match.subject) == "location.kind"
    kinds: list[str] = []
    for case in match.cases:
        for pattern in ast.walk(case.pattern):
            if isinstance(pattern, ast.MatchValue) and isinstance(pattern.value, ast.Constant):
                kinds.append(pattern.value.value)
    last = match.cases[-1]
    checked = (
        isinstance(last.pattern, ast.MatchAs)
        and last.pattern.pattern is None
        and "assert_never(location.kind)" in ast.unparse(last.body[-1])
    )
    return kinds, checked


def test_open_store_names_every_kind_of_location_and_ends_in_assert_never():
    # A kind added to StoreLocation.kind must get its own adapter here: with the checked match,
    # mypy (tests/test_types.py) fails until it does; this says so without running mypy.
    from typing import get_args, get_type_hints

    from supportdesk.store.location import StoreLocation

    kinds, checked = _open_store_cases()
    assert sorted(kinds) == sorted(get_args(get_type_hints(StoreLocation)["kind"]))
    assert checked, "open_store's match on location.kind must end in `case _: assert_never(location.kind)`"


async def test_open_store_refuses_a_kind_it_has_no_adapter_for():
    # Before the checked match, anything not "sqlite" went to the PostgreSQL adapter, which
    # then tried to connect; now a kind without a case stops at assert_never, connecting nowhere.
    from supportdesk.store.location import StoreLocation

    stranger = StoreLocation("mysql", "mysql://127.0.0.1:9/desk", "mysql://127.0.0.1:9/desk")  # type: ignore[arg-type]
    with pytest.raises(AssertionError):
        await open_store(stranger)
