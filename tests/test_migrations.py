"""Opening databases: forward migration, refusal of files that are not ours, and index-only reads."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from supportdesk.items import ContextSet, Handoff, Message
from supportdesk.store import SessionStore, StoreError
from supportdesk.store import sessions as store_sql
from supportdesk.store.schema import APPLICATION_ID, CURRENT_VERSION, MIGRATIONS

REPO = Path(__file__).resolve().parent.parent


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_version_1(path: Path) -> None:
    """A database as supportdesk v1 left it: only the first migration, a few items, no FTS."""
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[0])
    conn.execute(f"PRAGMA user_version = 1")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    now = "2025-06-01T10:00:00+00:00"
    conn.execute(
        "INSERT INTO sessions (id, title, created_at, updated_at, entry_agent, active_agent, item_count, handoff_count) "
        "VALUES ('old1', 'Charged twice', ?, ?, 'triage', 'billing', 3, 1)",
        (now, now),
    )
    rows = [
        (1, "message", "triage", {"role": "customer", "text": "I was charged twice for the narwhal plan"}, None),
        (2, "handoff", "triage", {"from_agent": "triage", "to_agent": "billing", "reason": "money", "handoff_kind": "route"}, None),
        (3, "message", "billing", {"role": "agent", "text": "The duplicate narwhal charge is refunded"}, None),
    ]
    for seq, kind, agent, body, key in rows:
        conn.execute(
            "INSERT INTO items (session_id, seq, kind, agent, created_at, body, meta, ctx_key) VALUES ('old1', ?, ?, ?, ?, ?, NULL, ?)",
            (seq, kind, agent, now, json.dumps(body), key),
        )
    conn.commit()
    conn.close()


async def test_version_1_database_migrates_forward_and_old_messages_are_searchable(tmp_path: Path):
    path = tmp_path / "v1.db"
    build_version_1(path)
    store = await SessionStore.open(path)
    try:
        hits = await store.search("narwhal")
        assert [(h.session_id, h.seq) for h in hits] == [("old1", 3), ("old1", 1)]
        assert (await store.get_session("old1")).active_agent == "billing"
        assert [i.kind for i in await store.range("old1", 1, 10)] == ["message", "handoff", "message"]
        # the log goes on at seq 4, and new messages are indexed too
        added = await store.append("old1", [Message(role="customer", text="and the narwhal invoice?", agent="billing")])
        assert added[0].seq == 4
        assert [h.seq for h in await store.search("narwhal")] == [4, 3, 1]
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    # opening again is a no-op (no second backfill: each message indexed once)
    again = await SessionStore.open(path)
    try:
        assert [h.seq for h in await again.search("narwhal")] == [4, 3, 1]
    finally:
        await again.close()


async def test_fresh_file_gets_the_current_schema(tmp_path: Path):
    path = tmp_path / "sub" / "dir" / "new.db"  # folders are created
    store = await SessionStore.open(path)
    await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_empty_file_is_adopted_as_a_new_database(tmp_path: Path):
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    store = await SessionStore.open(path)
    try:
        info = await store.create_session("triage")
        await store.append(info.id, [Message(role="customer", text="hello", agent="triage")])
        assert await store.last_seq(info.id) == 1
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION


async def test_newer_schema_is_refused_and_left_byte_identical(tmp_path: Path):
    path = tmp_path / "future.db"
    store = await SessionStore.open(path)
    info = await store.create_session("triage")
    await store.append(info.id, [Message(role="customer", text="from the future", agent="triage")])
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {CURRENT_VERSION + 1}")
        conn.execute("PRAGMA journal_mode = DELETE")  # fold the WAL in: one file holds everything
    assert not Path(f"{path}-wal").exists()
    before = digest(path)
    with pytest.raises(StoreError) as caught:
        await SessionStore.open(path)
    message = str(caught.value)
    assert f"v{CURRENT_VERSION + 1}" in message and "newer supportdesk" in message
    assert "\n" not in message
    assert digest(path) == before
    assert not Path(f"{path}-wal").exists()  # not switched to WAL either


async def test_text_file_is_refused_and_untouched(tmp_path: Path):
    path = tmp_path / "notes.db"
    path.write_text("These are my notes, not a database.\n" * 50)
    before = digest(path)
    with pytest.raises(StoreError, match="not a supportdesk database"):
        await SessionStore.open(path)
    assert digest(path) == before
    tiny = tmp_path / "tiny.db"
    tiny.write_text("hi")
    with pytest.raises(StoreError, match="not a supportdesk database"):
        await SessionStore.open(tiny)
    assert tiny.read_text() == "hi"


async def test_another_programs_sqlite_database_is_refused_and_untouched(tmp_path: Path):
    path = tmp_path / "recipes.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE recipes (name TEXT, minutes INTEGER)")
        conn.execute("INSERT INTO recipes VALUES ('soup', 30)")
    assert sqlite3.connect(path).execute("PRAGMA application_id").fetchone()[0] == 0
    before = digest(path)
    with pytest.raises(StoreError, match="another program"):
        await SessionStore.open(path)
    assert digest(path) == before
    # a foreign application id with no tables yet is refused too
    marked = tmp_path / "marked.db"
    with sqlite3.connect(marked) as conn:
        conn.execute("PRAGMA application_id = 1234")
    before = digest(marked)
    with pytest.raises(StoreError):
        await SessionStore.open(marked)
    assert digest(marked) == before


async def test_folder_path_is_a_clear_error(tmp_path: Path):
    with pytest.raises(StoreError, match="is a folder"):
        await SessionStore.open(tmp_path)


async def test_path_below_a_file_is_a_clear_error(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError) as caught:
        await SessionStore.open(blocker / "desk.db")
    assert "\n" not in str(caught.value)
    assert blocker.read_text() == "x"


def run_cli(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "supportdesk.cli", *args],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=60,
    )


@pytest.mark.parametrize("kind", ["text", "foreign", "newer", "folder"])
def test_cli_refuses_bad_databases_with_one_line_and_exit_1(tmp_path: Path, kind: str):
    path = tmp_path / "bad.db"
    if kind == "text":
        path.write_text("hello, I am a text file\n")
    elif kind == "foreign":
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE mine (x)")
    elif kind == "newer":
        with sqlite3.connect(path) as conn:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {CURRENT_VERSION + 5}")
    else:
        path.mkdir()
    before = None if kind == "folder" else digest(path)
    result = run_cli("sessions", "list", "--db", str(path))
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert str(path) in lines[0]
    assert result.stdout == ""
    if before is not None:
        assert digest(path) == before


# --- cost that does not grow: every pane read is an index search ------------------------------

INDEXED_READS = {
    "latest": store_sql.SQL_LATEST,
    "range": store_sql.SQL_RANGE,
    "item": store_sql.SQL_ITEM,
    "handoffs": store_sql.SQL_OF_KIND,
    "kind_seqs": store_sql.SQL_KIND_SEQS,
    # messages are not in items_by_kind (migration 9): they are read along (session_id, seq)
    "messages": store_sql.SQL_OF_KIND_MESSAGE,
    "message_seqs": store_sql.SQL_KIND_SEQS_MESSAGE,
    "agent_at": store_sql.SQL_AGENT_AT,
    "context_at": store_sql.SQL_CONTEXT_AT,
    "last_seq": store_sql.SQL_LAST_SEQ,
    "items_at": store_sql.SQL_ITEMS_AT,
    "usage_totals": store_sql.SQL_USAGE_TOTALS,
    # inside every append: the session head, and indexing the new messages for search
    "append_head": store_sql.SQL_APPEND_HEAD,
    "append_head_same_state": store_sql.SQL_APPEND_HEAD_SAME_STATE,
    "append_index_messages": store_sql.SQL_INDEX_NEW_MESSAGES,
}

# The index constraint each read must use: an index search on session_id alone would still
# read every item of the session, so the seq bound (or the kind/key) must be in it too.
EXPECTED_PROBE = {
    "latest": "(session_id=? AND seq>?)",
    "range": "(session_id=? AND seq>? AND seq<?)",
    "item": "(session_id=? AND seq=?)",
    "handoffs": "items_by_kind (session_id=? AND kind=? AND seq>? AND seq<?)",
    "kind_seqs": "items_by_kind (session_id=? AND kind=?)",
    "messages": "(session_id=? AND seq>? AND seq<?)",
    "message_seqs": "(session_id=?)",
    "agent_at": "items_by_kind (session_id=? AND kind=? AND seq<?)",
    "context_at": "items_by_ctx_key (session_id=? AND ctx_key=? AND seq<?)",
    "last_seq": "sessions USING INDEX sqlite_autoindex_sessions_1 (id=?)",
    "items_at": "(session_id=? AND seq=?)",
    "usage_totals": "usage_totals USING PRIMARY KEY (session_id=?)",
    "append_head": "sessions USING INDEX sqlite_autoindex_sessions_1 (id=?)",
    "append_head_same_state": "sessions USING INDEX sqlite_autoindex_sessions_1 (id=?)",
    "append_index_messages": "items USING INTEGER PRIMARY KEY (rowid>?)",
}


@pytest.fixture
async def big_db(tmp_path: Path) -> tuple[Path, str]:
    """A database with two sessions, handoffs and context writes, so the planner has choices."""
    path = tmp_path / "plan.db"
    store = await SessionStore.open(path)
    try:
        ids = []
        for _ in range(2):
            info = await store.create_session("triage")
            ids.append(info.id)
            for round_ in range(20):
                await store.append(
                    info.id,
                    [Message(role="customer", text=f"message {round_}", agent="triage")]
                    + [Message(role="agent", text=f"reply {round_} {n}", agent="billing") for n in range(20)]
                    + [Handoff(from_agent="triage", to_agent="billing", agent="triage"),
                       ContextSet(key=f"k{round_ % 3}", value=round_, writer="billing", agent="billing")],
                )
    finally:
        await store.close()
    return path, ids[0]


def plan(conn: sqlite3.Connection, sql: str) -> list[str]:
    import re

    names = re.findall(r":(\w+)", sql)
    params = {name: 1 for name in names} if names else (1,) * sql.count("?")
    return [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]


@pytest.mark.parametrize("name", sorted(INDEXED_READS))
def test_pane_reads_are_index_searches_not_scans(big_db, name: str):
    path, _ = big_db
    with sqlite3.connect(path) as conn:
        steps = plan(conn, INDEXED_READS[name])
        for analyze in (False, True):
            if analyze:
                conn.execute("ANALYZE")  # statistics must not tip the planner into a scan
                steps = plan(conn, INDEXED_READS[name])
            assert steps, name
            # (search_progress is a one-row table: reading it whole is one row; json_each is the
            # list of seqs the caller passed, not a table)
            assert not any(
                step.startswith("SCAN") and "search_progress" not in step and "json_each" not in step for step in steps
            ), (name, steps)
            assert not any("TEMP B-TREE" in step for step in steps), (name, steps)  # no sort of a result set
            # ("SEARCH items" alone is max(id) on the rowid: one descent to the last row)
            searches = [s for s in steps if s.startswith("SEARCH") and s != "SEARCH items"]
            assert searches, (name, steps)
            assert all("USING" in s and ("INDEX" in s or "PRIMARY KEY" in s) for s in searches), (name, steps)
            assert any(EXPECTED_PROBE[name] in s for s in searches), (name, steps)


@pytest.mark.parametrize("sql", [store_sql.SQL_SEARCH_BACKLOG, store_sql.SQL_MARK_INDEXED, store_sql.SQL_LOWER_MARK])
def test_the_search_mark_reads_max_id_without_a_scan(big_db, sql: str):
    path, _ = big_db
    with sqlite3.connect(path) as conn:
        steps = plan(conn, sql)
    # max(id) on the rowid is SQLite's min/max optimization: one descent to the last row
    assert "SEARCH items" in steps, steps
    assert not any(step.startswith("SCAN") and "search_progress" not in step for step in steps), steps


def test_the_store_runs_the_explained_sql(big_db):
    """Trace the statements the store sends: the pane reads are exactly the constants explained above."""
    import asyncio

    path, sid = big_db
    seen: list[str] = []

    async def go() -> None:
        store = await SessionStore.open(path)
        try:
            await store._db._execute(store._db._conn.set_trace_callback, seen.append)
            await store.latest(sid, 50)
            await store.range(sid, 3, 9)
            await store.item(sid, 4)
            await store.handoffs(sid, upto=100)
            await store.kind_seqs(sid, "handoff")
            await store.of_kind(sid, "message", upto=30)
            await store.kind_seqs(sid, "message")
            await store.agent_at(sid, 30)
            await store.context_at(sid, 100)
            await store.last_seq(sid)
            await store.items_at(sid, [3, 7, 12])
            await store.usage_totals(sid)
        finally:
            await store.close()

    asyncio.run(go())
    normalized = {" ".join(s.split()) for s in seen}
    for name, sql in INDEXED_READS.items():
        if name.startswith("append_"):
            continue
        # the traced text has the parameters bound; compare the statement's leading words
        head = " ".join(sql.split()).split("?")[0]
        assert any(s.startswith(head) for s in normalized), (name, head)


async def test_version_2_database_gets_the_search_mark_and_indexes_each_message_once(tmp_path: Path):
    path = tmp_path / "v2.db"
    build_version_1(path)
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[1])  # v2: FTS backfilled, every message indexed
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    store = await SessionStore.open(path)
    try:
        assert [h.seq for h in await store.search("narwhal")] == [3, 1]
        await store.append("old1", [Message(role="agent", text="narwhal again", agent="billing")])
        assert [h.seq for h in await store.search("narwhal")] == [4, 3, 1]
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
        assert conn.execute("SELECT count(*) FROM message_fts WHERE message_fts MATCH 'narwhal'").fetchone()[0] == 3


def build_version_3_with_usage(path: Path) -> list[tuple[str, str, dict | None]]:
    """A v3 database whose items carry token usage in meta; returns (session, agent, meta) per item."""
    build_version_1(path)
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[1])
    conn.executescript(MIGRATIONS[2])
    conn.execute("PRAGMA user_version = 3")
    now = "2025-06-02T10:00:00+00:00"
    written: list[tuple[str, str, dict | None]] = []
    for sid in ("u1", "u2"):
        conn.execute(
            "INSERT INTO sessions (id, created_at, updated_at, entry_agent, active_agent, item_count) "
            "VALUES (?, ?, ?, 'triage', 'triage', 30)",
            (sid, now, now),
        )
        for seq in range(1, 31):
            agent = ("triage", "billing", "technical")[seq % 3]
            meta: dict | None
            if seq % 4 == 0:
                meta = None  # a customer line, say: no meta at all
            elif seq % 4 == 1:
                meta = {"confidence": 0.8}  # meta without usage
            else:
                usage = {"input_tokens": 50 * seq + len(sid), "output_tokens": seq}
                if seq % 5:
                    usage["reported"] = seq % 7 != 0
                meta = {"model": "small", "usage": usage}
            written.append((sid, agent, meta))
            conn.execute(
                "INSERT INTO items (session_id, seq, kind, agent, created_at, body, meta) VALUES (?, ?, 'message', ?, ?, ?, ?)",
                (sid, seq, agent, now, json.dumps({"role": "agent", "text": f"line {seq}"}),
                 None if meta is None else json.dumps(meta)),
            )
    conn.commit()
    conn.close()
    return written


def usage_summed(written: list[tuple[str, str, dict | None]], sid: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for session, agent, meta in written:
        if session != sid or not meta or "usage" not in meta:
            continue
        sums = out.setdefault(agent, {"input_tokens": 0, "output_tokens": 0, "reported": 1})
        sums["input_tokens"] += meta["usage"]["input_tokens"]
        sums["output_tokens"] += meta["usage"]["output_tokens"]
        sums["reported"] = min(sums["reported"], int(meta["usage"].get("reported", True)))
    return dict(sorted(out.items()))


async def test_version_3_database_back_fills_usage_totals_once(tmp_path: Path):
    path = tmp_path / "v3.db"
    written = build_version_3_with_usage(path)
    store = await SessionStore.open(path)
    try:
        for sid in ("u1", "u2"):
            totals = await store.usage_totals(sid)
            assert totals == usage_summed(written, sid)
            assert set(totals) == {"triage", "billing", "technical"}
        assert await store.usage_totals("old1") == {}  # v1's items carried no usage
        # new appends add to the back-filled totals
        meta = {"usage": {"input_tokens": 9, "output_tokens": 4, "reported": False}}
        await store.append("u1", [Message(role="agent", text="more", agent="billing", meta=meta)])
        written.append(("u1", "billing", meta))
        assert await store.usage_totals("u1") == usage_summed(written, "u1")
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
    # opening again does not back-fill a second time
    async with await SessionStore.open(path) as again:
        assert await again.usage_totals("u1") == usage_summed(written, "u1")
        assert await again.usage_totals("u2") == usage_summed(written, "u2")


# --- version 9: the leaner search index and kind index (issue 16) --------------------------------


def build_version_8(path: Path) -> None:
    """A database as the schema before migration 9 left it: the search index kept its own copy
    of every message and the word positions, items_by_kind held every item, and one message
    past the search mark waited for the next batch."""
    build_version_1(path)
    conn = sqlite3.connect(path)
    now = "2025-06-03T10:00:00+00:00"
    conn.execute(
        "INSERT INTO sessions (id, title, created_at, updated_at, entry_agent, active_agent, item_count) "
        "VALUES ('old2', 'Tusks', ?, ?, 'triage', 'triage', 1)",
        (now, now),
    )
    conn.execute(
        "INSERT INTO items (session_id, seq, kind, agent, created_at, body) VALUES ('old2', 1, 'message', 'triage', ?, ?)",
        (now, json.dumps({"role": "customer", "text": "my walrus needs a tusk_polish"})),
    )
    for number in range(2, 9):
        conn.executescript(MIGRATIONS[number - 1])
    conn.execute(
        "INSERT INTO items (session_id, seq, kind, agent, created_at, body) VALUES ('old1', 4, 'message', 'billing', ?, ?)",
        (now, json.dumps({"role": "agent", "text": "one more narwhal note, not yet indexed"})),
    )
    conn.execute("UPDATE sessions SET item_count = 4 WHERE id = 'old1'")
    conn.execute("PRAGMA user_version = 8")
    conn.commit()
    conn.close()


def index_holds(path: Path, word: str) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT count(*) FROM message_fts WHERE message_fts MATCH ?", (word,)).fetchone()[0]


async def test_version_8_database_gets_the_lean_search_index_and_keeps_every_item(tmp_path: Path):
    path = tmp_path / "v8.db"
    build_version_8(path)
    with sqlite3.connect(path) as conn:
        before = conn.execute("SELECT id, session_id, seq, kind, agent, created_at, body, meta FROM items ORDER BY id").fetchall()
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'message_fts_content'").fetchone()[0] == 1
    assert index_holds(path, "narwhal") == 2  # seq 4 is past the mark
    store = await SessionStore.open(path)
    try:
        # what was indexed is indexed again, up to the same mark: the search indexes the rest
        assert index_holds(path, "narwhal") == 2
        assert [(h.session_id, h.seq) for h in await store.search("narwhal")] == [("old1", 4), ("old1", 3), ("old1", 1)]
        assert index_holds(path, "narwhal") == 3
        # a word with `_` is the two words FTS5 cuts it into
        assert [h.session_id for h in await store.search("tusk_polish")] == ["old2"]
        assert [h.session_id for h in await store.search("polish")] == ["old2"]
        # the kind reads: handoffs through the partial index, messages along (session_id, seq)
        assert [h.seq for h in await store.handoffs("old1")] == [2]
        assert await store.agent_at("old1", 3) == "billing"
        assert await store.kind_seqs("old1", "message") == [1, 3, 4]
        assert [m.seq for m in await store.of_kind("old1", "message", upto=3)] == [1, 3]
        # deleting a session takes its words out of the (external-content) index
        assert await store.delete_session("old2")
        assert index_holds(path, "walrus") == 0
        assert await store.search("walrus") == []
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        after = conn.execute("SELECT id, session_id, seq, kind, agent, created_at, body, meta FROM items ORDER BY id").fetchall()
        assert after == [row for row in before if row[1] != "old2"]  # every item kept, byte for byte
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'message_fts_content'").fetchone()[0] == 0
        kind_index = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'items_by_kind'").fetchone()[0]
        assert "WHERE kind <> 'message'" in kind_index
    # opening again changes nothing
    again = await SessionStore.open(path)
    try:
        assert [h.seq for h in await again.search("narwhal")] == [4, 3, 1]
    finally:
        await again.close()
