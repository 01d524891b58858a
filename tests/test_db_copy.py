"""`supportdesk db copy` and `db check` on real databases: SQLite files and a real PostgreSQL
server, the copy interrupted by SIGKILL in a real process and resumed."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from supportdesk import records
from supportdesk.business import open_business
from supportdesk.cli import main
from supportdesk.config import load_desk
from supportdesk.dbtools.copy import all_sessions, session_items
from supportdesk.wiring import open_desk
from supportdesk.reports.export import session_json
from supportdesk.items import ContextSet, Handoff, Message, Notice, ToolCall, ToolResult
from supportdesk.store import open_store
from tests.conftest import REPO

TARGETS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=TARGETS)
def other(request, tmp_path) -> str:
    """A second, empty database: a SQLite file or a fresh PostgreSQL database."""
    if request.param == "postgres":
        return request.getfixturevalue("pg_url")
    return str(tmp_path / "other.db")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 4, 9, 30, 0, 123456, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1, microseconds=7)
        return self.now


async def build_desk(path) -> None:
    """A desk with everything a copy must keep: a conversation the offline desk had (tools,
    handoffs, context, a refund), usage totals, a fork, a status, a channel and meta, an
    empty session, and business writes."""
    async with await open_desk(path, load_desk(REPO / "agents.toml")) as desk:
        sid = await desk.runner.new_session()
        for text in ("Hi, I was charged twice for my subscription this month.",
                     "Yes, I can see two charges of $29.99 on March 1st and March 3rd. My email is dana@example.com.",
                     "I'd like a refund for the duplicate charge.", "yes"):  # (the refund is offered; the yes runs it)
            async for _ in desk.runner.send(sid, text):
                pass
        await desk.services.customers.credit(
            key="manual/1", session_id=sid, customer_id="CUS-1002", amount=12.5, reason="goodwill", agent="senior"
        )
    async with await open_store(path) as store:
        store.clock = Clock()
        info = await store.create_session(
            "triage", title="Ünïcode · résumé", channel="web", meta={"conversation": 7, "tags": ["vip"]}
        )
        await store.append(info.id, [
            Message(role="customer", text="My app crashes — ça plante", agent="triage"),
            Handoff(from_agent="triage", to_agent="technical", reason="crash", agent="triage"),
            ContextSet(key="device", value={"os": "android", "version": 14}, writer="triage", agent="technical"),
            ToolCall(call_id="c1", name="search_kb", arguments={"query": "crash"}, agent="technical",
                     meta={"usage": {"input_tokens": 120, "output_tokens": 30, "reported": 1}}),
            ToolResult(call_id="c1", name="search_kb", output="{}", agent="technical"),
            ContextSet(key="device", value=None, writer="technical", agent="technical"),
            Notice(notice_kind="info", text="note", data={"n": 1}, agent="technical",
                   meta={"usage": {"input_tokens": 5, "output_tokens": 2, "reported": 0}}),
            Message(role="agent", text="Try reinstalling.", agent="technical"),
        ])
        await store.set_status(info.id, "resolved")
        await store.fork(info.id, 4)
        await store.create_session("triage", title="empty", session_id="empty-one")


async def export(where) -> dict:
    """Everything a store and its business data say, as plain data."""
    out: dict = {"sessions": {}}
    async with await open_store(where) as store:
        async for info in all_sessions(store):
            items = await session_items(store, info)
            out["sessions"][info.id] = {
                "json": session_json(info, items),
                "items": [records.dump(item) for item in items],
                "usage": await store.usage_totals(info.id),
                "context": {k: records.dump(e) for k, e in (await store.context_at(info.id)).items()},
                "handoffs": await store.kind_seqs(info.id, "handoff"),
            }
        out["search"] = sorted((h.session_id, h.seq) for h in await store.search("duplicate"))
        out["search_accents"] = sorted((h.session_id, h.seq) for h in await store.search("plante"))
    business = await open_business(where)
    try:
        out["business"] = await business.snapshot()
    finally:
        await business.close()
    return out


def run_cli(*argv: str, capsys) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.postgres
def test_sqlite_to_postgresql_and_back_keeps_everything(tmp_path, pg_url, capsys):
    import asyncio

    source, back = tmp_path / "desk.db", tmp_path / "back.db"
    asyncio.run(build_desk(source))
    before = asyncio.run(export(source))
    assert len(before["sessions"]) == 4 and before["search"] and before["search_accents"]
    assert any(s["usage"] for s in before["sessions"].values())
    assert before["business"]["demo_refunds"] and before["business"]["demo_credits"]

    code, out, err = run_cli("db", "copy", str(source), pg_url, capsys=capsys)
    assert (code, err) == (0, "") and out.startswith("copied 4 sessions") and "business data: copied" in out
    assert asyncio.run(export(pg_url)) == before
    code, out, err = run_cli("db", "copy", pg_url, str(back), capsys=capsys)
    assert (code, err) == (0, "")
    assert asyncio.run(export(back)) == before
    # And both ends pass the check.
    for where in (pg_url, str(back)):
        code, out, _ = run_cli("db", "check", where, capsys=capsys)
        assert code == 0 and "sessions: 4 ·" in out and "integrity: ok" in out


def test_an_interrupted_copy_resumes_where_it_stopped(tmp_path, other, capsys):
    import asyncio

    source = tmp_path / "desk.db"
    asyncio.run(build_desk(source))
    before = asyncio.run(export(source))
    killed = subprocess.run(
        [sys.executable, "-m", "tests.db_copy_killer", str(source), other, "2"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # Killed after two sessions: each one there is whole, the rest absent.
    halfway = asyncio.run(export(other))
    assert len(halfway["sessions"]) == 2
    for sid, copied in halfway["sessions"].items():
        assert copied == before["sessions"][sid]
    code, out, _ = run_cli("db", "check", other, capsys=capsys)
    assert code == 0 and "integrity: ok" in out
    code, out, err = run_cli("db", "copy", str(source), other, capsys=capsys)
    assert (code, err) == (0, "")
    assert out.startswith("copied 2 sessions") and "skipped 2 already there" in out
    assert asyncio.run(export(other)) == before
    # A third run has nothing left to do.
    code, out, _ = run_cli("db", "copy", str(source), other, capsys=capsys)
    assert out.startswith("copied 0 sessions") and "skipped 4" in out and "business data: already there" in out


def test_a_destination_session_with_other_content_is_never_overwritten(tmp_path, other, capsys):
    import asyncio

    source = tmp_path / "desk.db"

    async def setup() -> None:
        await build_desk(source)
        async with await open_store(other) as store:
            info = await store.create_session("triage", session_id="empty-one")
            await store.append(info.id, [Message(role="customer", text="mine", agent="triage")])

    asyncio.run(setup())
    mine = asyncio.run(export(other))
    code, out, err = run_cli("db", "copy", str(source), other, capsys=capsys)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "'empty-one'" in err and "refusing to overwrite" in err
    assert asyncio.run(export(other)) == mine


def test_business_writes_only_the_destination_has_are_never_overwritten(tmp_path, capsys):
    import asyncio

    source, dest = tmp_path / "desk.db", tmp_path / "dest.db"

    async def setup() -> None:
        await build_desk(source)
        async with await open_desk(dest, load_desk(REPO / "agents.toml")) as desk:
            await desk.services.customers.refund(
                key="dest/1", session_id="x", charge_id="CH-9008", amount=5, reason="x", agent="billing"
            )

    asyncio.run(setup())
    code, _, err = run_cli("db", "copy", str(source), str(dest), capsys=capsys)
    assert code == 1 and "business writes" in err and "'dest/1'" in err
    assert asyncio.run(export(dest))["sessions"] == {}


@pytest.mark.parametrize(
    "argv, said",
    [
        (["db", "copy", "mysql://u:secret@h/db", "x.db"], "unknown database URL scheme 'mysql'"),
        (["db", "copy", "missing.db", "x.db"], "missing.db: no such database file"),
        (["db", "copy", "x.db", "postgresql://u:secret@127.0.0.1:5432/"], "names no database"),
        (["db", "check", "postgresql://u:secret@127.0.0.1:1/desk"], "cannot reach the server"),
        (["db", "check", "missing.db"], "no such database file"),
    ],
)
def test_a_bad_database_is_one_line_and_exit_2(argv, said, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.db").touch()
    code, out, err = run_cli(*argv, capsys=capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and said in err and "secret" not in err and "Traceback" not in err


def test_copying_a_database_onto_itself_is_refused(tmp_path, capsys):
    import asyncio

    asyncio.run(build_desk(tmp_path / "desk.db"))
    code, _, err = run_cli("db", "copy", str(tmp_path / "desk.db"), f"sqlite:///{tmp_path / 'desk.db'}", capsys=capsys)
    assert code == 2 and "the same database" in err


def test_check_finds_a_broken_log_and_broken_money(tmp_path, capsys):
    import asyncio

    path = tmp_path / "desk.db"
    asyncio.run(build_desk(path))
    code, out, _ = run_cli("db", "check", str(path), capsys=capsys)
    assert code == 0 and "SQLite, schema v" in out and "integrity: ok" in out
    assert "business data: 41 customers" in out and "1 refunds, 1 credits" in out
    conn = sqlite3.connect(path)
    sid = conn.execute("SELECT id FROM sessions WHERE title = 'Ünïcode · résumé'").fetchone()[0]
    conn.execute("DELETE FROM items WHERE session_id = ? AND seq = 3", (sid,))
    conn.execute("UPDATE sessions SET handoff_count = handoff_count + 1 WHERE id = ?", (sid,))
    conn.execute("UPDATE demo_charges SET refunded_amount = 1 WHERE id = 'CH-9001'")
    conn.commit()
    conn.close()
    code, out, _ = run_cli("db", "check", str(path), capsys=capsys)
    assert code == 1
    problems = [line for line in out.splitlines() if line.startswith("problem:")]
    assert f"problem: session {sid}: seq 3 missing (7 items for a head of #8)" in problems
    assert f"problem: session {sid}: handoff_count 2, but 1 handoff items" in problems
    assert "problem: charge CH-9001: refunded_amount 1.00, but its refunds add up to 0.00" in problems
    assert len(problems) == 3 and out.rstrip().endswith("integrity: 3 problem(s)")


def test_a_source_without_business_data_is_left_untouched(tmp_path, capsys):
    import asyncio

    source, dest = tmp_path / "bare.db", tmp_path / "dest.db"

    async def setup() -> None:
        async with await open_store(source) as store:
            info = await store.create_session("triage")
            await store.append(info.id, [Message(role="customer", text="hello", agent="triage")])

    asyncio.run(setup())
    code, out, _ = run_cli("db", "copy", str(source), str(dest), capsys=capsys)
    assert code == 0 and out.strip() == "copied 1 sessions (1 items); business data: none in the source"
    tables = {r[0] for r in sqlite3.connect(source).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not any(name.startswith("demo_") for name in tables)
    code, out, _ = run_cli("db", "check", str(source), capsys=capsys)
    assert code == 0 and "business data: none" in out
