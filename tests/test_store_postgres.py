"""What only the PostgreSQL adapter has: its schema version, its refusals, its connection errors."""

from __future__ import annotations

import asyncio
import builtins
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from supportdesk.cli import main
from supportdesk.items import ContextSet, Message
from supportdesk.store import StoreError, StoreLocationError, open_store
from supportdesk.store import postgres as pg_sql
from supportdesk.store.pg_schema import CURRENT_VERSION

pytestmark = pytest.mark.postgres


def with_password(url: str, password: str) -> str:
    parts = urlsplit(url)
    netloc = f"{parts.username}:{password}@{parts.hostname}:{parts.port or 5432}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


async def raw(url: str, sql: str, *args) -> list:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetch(sql, *args)
    finally:
        await conn.close()


async def test_a_new_database_gets_the_current_schema_version(pg_url: str):
    async with await open_store(pg_url) as store:
        info = await store.create_session("triage")
    rows = await raw(pg_url, "SELECT value FROM supportdesk_meta WHERE key = 'schema_version'")
    assert rows[0][0] == str(CURRENT_VERSION)
    async with await open_store(pg_url) as store:  # reopening migrates nothing and keeps everything
        assert (await store.get_session(info.id)) is not None


async def test_a_newer_schema_is_refused_untouched(pg_url: str):
    async with await open_store(pg_url):
        pass
    await raw(pg_url, "UPDATE supportdesk_meta SET value = $1 WHERE key = 'schema_version'", str(CURRENT_VERSION + 1))
    before = await raw(pg_url, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")
    with pytest.raises(StoreError, match=f"newer supportdesk .*v{CURRENT_VERSION + 1}"):
        await open_store(pg_url)
    after = await raw(pg_url, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")
    assert before == after
    assert (await raw(pg_url, "SELECT value FROM supportdesk_meta"))[0][0] == str(CURRENT_VERSION + 1)


async def test_a_database_of_another_program_is_refused_untouched(pg_url: str):
    await raw(pg_url, "CREATE TABLE sessions (their_column int)")
    with pytest.raises(StoreError, match="not a supportdesk database"):
        await open_store(pg_url)
    tables = await raw(pg_url, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")
    assert [t[0] for t in tables] == ["sessions"]


async def test_an_older_schema_migrates_forward(pg_url: str, monkeypatch):
    # a database at v1 of a schema whose v2 adds a column: opening it migrates, once
    async with await open_store(pg_url) as store:
        info = await store.create_session("triage")
    monkeypatch.setattr(
        pg_sql, "MIGRATIONS", [*pg_sql.MIGRATIONS, "ALTER TABLE sessions ADD COLUMN later text NOT NULL DEFAULT 'x'"]
    )
    monkeypatch.setattr(pg_sql, "CURRENT_VERSION", CURRENT_VERSION + 1)
    async with await open_store(pg_url) as store:
        assert (await store.get_session(info.id)) is not None
    assert (await raw(pg_url, "SELECT value FROM supportdesk_meta"))[0][0] == str(CURRENT_VERSION + 1)
    assert (await raw(pg_url, "SELECT later FROM sessions"))[0][0] == "x"


async def test_many_first_opens_at_once_migrate_once(pg_url: str):
    stores = await asyncio.gather(*(open_store(pg_url) for _ in range(6)))
    try:
        ids = await asyncio.gather(*(s.create_session("triage") for s in stores))
        assert await stores[0].count_sessions() == 6 == len({i.id for i in ids})
    finally:
        await asyncio.gather(*(s.close() for s in stores))


async def test_delete_cascades_and_fork_sums_only_the_copied_usage(pg_url: str):
    async with await open_store(pg_url) as store:
        src = await store.create_session("triage")
        usage = [{"usage": {"input_tokens": n, "output_tokens": 1, "reported": n != 3}} for n in range(1, 6)]
        await store.append(src.id, [Message(role="agent", text=f"m{n}", agent="billing", meta=usage[n]) for n in range(5)])
        await store.append(src.id, [ContextSet(key="k", value=1, writer="billing", agent="billing")])
        fork = await store.fork(src.id, 3)
        assert await store.usage_totals(fork.id) == {"billing": {"input_tokens": 6, "output_tokens": 3, "reported": 0}}
        assert await store.usage_totals(src.id) == {"billing": {"input_tokens": 15, "output_tokens": 5, "reported": 0}}
        assert await store.delete_session(src.id) is True
    for table in ("items", "context_keys", "usage_totals"):
        assert (await raw(pg_url, f"SELECT count(*) FROM {table} WHERE session_id = $1", src.id))[0][0] == 0


@pytest.mark.parametrize("name", ["SQL_LATEST", "SQL_RANGE", "SQL_ITEM", "SQL_ITEMS_AT", "SQL_OF_KIND", "SQL_AGENT_AT", "SQL_CONTEXT_AT", "SQL_KIND_SEQS"])
async def test_the_pane_reads_are_index_lookups(pg_url: str, name: str):
    async with await open_store(pg_url) as store:
        sid = (await store.create_session("triage")).id
        for start in range(0, 3000, 500):
            await store.append(sid, [Message(role="agent", text=f"line {n}", agent="triage") for n in range(start, start + 500)])
        await store.append(sid, [ContextSet(key="k", value=1, writer="triage", agent="triage")])
    args = {
        "SQL_LATEST": (sid,),
        "SQL_RANGE": (sid, 10, 60),
        "SQL_ITEM": (sid, 7),
        "SQL_ITEMS_AT": (sid, ["1", "2", "3"]),  # (sent as text[], cast by the server)
        "SQL_OF_KIND": (sid, "handoff", 0, 2**31 - 1),
        "SQL_AGENT_AT": (sid, 100),
        "SQL_CONTEXT_AT": (100, sid),
        "SQL_KIND_SEQS": (sid, "handoff"),
    }[name]
    await raw(pg_url, "ANALYZE")
    plan = "\n".join(r[0] for r in await raw(pg_url, "EXPLAIN " + getattr(pg_sql, name), *args))
    assert "Seq Scan on items" not in plan, plan
    if name == "SQL_LATEST":
        # the planner knows the read returns n rows, however long the session (a guess of a
        # share of the session's rows turns into a sequential scan once it is long)
        estimated = int(plan.split("rows=", 1)[1].split()[0])
        assert estimated <= 50, plan


async def test_the_latest_read_keeps_its_cached_plan(pg_url: str):
    """latest-50 is planned once per connection, not on every read (with `LIMIT $2` the generic
    plan looked ten times dearer than a custom one, and each read was planned afresh)."""
    from supportdesk.store.location import parse_location

    async with await open_store(pg_url) as store:
        sid = (await store.create_session("triage")).id
        for start in range(0, 3000, 500):  # long enough that a tenth of it is more than 50
            await store.append(sid, [Message(role="agent", text=f"line {n}", agent="triage") for n in range(start, start + 500)])
    await raw(pg_url, "ANALYZE")
    # one pooled connection, so every read and the check below run on it
    store = await pg_sql.PostgresStore.open(parse_location(pg_url), pool_size=1)
    try:
        for _ in range(8):
            assert [i.seq for i in await store.latest(sid, 50)] == list(range(2951, 3001))
        [(generic, custom)] = await store._fetch(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1", pg_sql.SQL_LATEST
        )
    finally:
        await store.close()
    assert generic >= 3 and custom <= 5, (generic, custom)


# --- connecting: one line naming what to fix, exit 2, never the password --------------------


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    return code, err


def test_a_wrong_password_is_one_line_exit_2(pg_url: str, capsys):
    bad = with_password(pg_url, "not-the-password-xyz")
    code, err = run_cli(capsys, "sessions", "list", "--db", bad)
    assert code == 2
    assert "refused the password" in err and "not-the-password-xyz" not in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_missing_database_is_one_line_exit_2(pg_url: str, capsys):
    parts = urlsplit(pg_url)
    missing = urlunsplit((parts.scheme, parts.netloc, "/no_such_desk_db", "", ""))
    code, err = run_cli(capsys, "sessions", "list", "--db", missing)
    assert code == 2
    assert "no such database" in err and f":{parts.password}@" not in err and ":***@" in err
    assert err.count("\n") == 1


def test_a_host_nobody_listens_on_is_one_line_exit_2_and_no_file(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, err = run_cli(capsys, "sessions", "list", "--db", "postgresql://staff:hunter2@127.0.0.1:1/desk")
    assert code == 2
    assert "cannot reach the server" in err and "hunter2" not in err
    assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # a URL is never taken for a path


def test_an_unknown_host_is_one_line_exit_2(capsys):
    code, err = run_cli(capsys, "sessions", "list", "--db", "postgresql://staff:hunter2@no-such-host.invalid/desk")
    assert code == 2
    assert "cannot reach the server" in err and "hunter2" not in err


def test_without_the_postgres_extra_the_line_says_what_to_install(monkeypatch, capsys):
    real_import = builtins.__import__

    def no_asyncpg(name, *args, **kwargs):
        if name == "asyncpg" or name.startswith("asyncpg."):
            raise ImportError("No module named 'asyncpg'", name="asyncpg")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "supportdesk.store.postgres", raising=False)
    monkeypatch.delitem(sys.modules, "asyncpg", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_asyncpg)
    code, err = run_cli(capsys, "sessions", "list", "--db", "postgresql://staff:hunter2@127.0.0.1/desk")
    assert code == 2
    assert "pip install 'supportdesk[postgres]'" in err and "hunter2" not in err


async def test_open_store_errors_are_location_errors(pg_url: str):
    with pytest.raises(StoreLocationError):
        await open_store(with_password(pg_url, "wrong"))
