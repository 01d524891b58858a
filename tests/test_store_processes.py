"""Several real OS processes appending to one session, and a writer killed mid-run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from supportdesk.store import SessionStore

WRITER = Path(__file__).resolve().parent / "store_writer.py"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and fork-free spawning of POSIX writers")


def new_session(db: Path) -> str:
    async def go() -> str:
        store = await SessionStore.open(db)
        try:
            return (await store.create_session("triage")).id
        finally:
            await store.close()

    return asyncio.run(go())


def start_writer(db: Path, sid: str, writer: int, batches: int, sizes: str, start: Path | None = None) -> subprocess.Popen[str]:
    cmd = [sys.executable, str(WRITER), str(db), sid, str(writer), str(batches), "--sizes", sizes]
    if start is not None:
        cmd += ["--start", str(start)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
    return proc


def read_log(db: Path, sid: str) -> tuple[list[tuple[int, dict]], int]:
    """(seq, meta) of every item in seq order, and the session's item_count, via plain sqlite3."""

    async def search() -> int:
        # a search first indexes whatever messages the appends left for the next batch
        async with await SessionStore.open(db) as store:
            return len(await store.search("writer", limit=1_000_000))

    found = asyncio.run(search())
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT seq, meta FROM items WHERE session_id = ? ORDER BY seq", (sid,)).fetchall()
        count = conn.execute("SELECT item_count FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
        fts = conn.execute(
            "SELECT count(*) FROM message_fts WHERE message_fts MATCH 'writer' "
            "AND rowid IN (SELECT id FROM items WHERE session_id = ?)",
            (sid,),
        ).fetchone()[0]
        assert fts == len(rows) == found, "every message is in the search index exactly once"
    finally:
        conn.close()
    return [(seq, json.loads(meta)) for seq, meta in rows], count


def check_batches_whole(log: list[tuple[int, dict]]) -> dict[int, list[int]]:
    """Every batch's items sit on consecutive seqs, parts 0..size-1 in order; returns writer -> batches."""
    by_batch: dict[tuple[int, int], list[tuple[int, dict]]] = defaultdict(list)
    for seq, meta in log:
        by_batch[(meta["writer"], meta["batch"])].append((seq, meta))
    batches: dict[int, list[int]] = defaultdict(list)
    for (writer, batch), members in by_batch.items():
        size = members[0][1]["size"]
        assert [m["part"] for _, m in members] == list(range(size)), f"writer {writer} batch {batch} is partial"
        first = members[0][0]
        assert [s for s, _ in members] == list(range(first, first + size)), f"writer {writer} batch {batch} interleaved"
        batches[writer].append(batch)
    return batches


@pytest.mark.timeout(360)  # the writers are given 300 s
def test_four_processes_append_ten_thousand_items_to_one_session(tmp_path: Path):
    db = tmp_path / "shared.db"
    sid = new_session(db)
    go = tmp_path / "go"
    # batch sizes 1,2,3,4 repeat: 1,000 batches hold exactly 2,500 items per writer
    writers = [start_writer(db, sid, w, 1000, "1,2,3,4", start=go) for w in range(4)]
    go.touch()
    for proc in writers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert out.splitlines()[-1] == "committed 999"

    log, count = read_log(db, sid)
    assert [seq for seq, _ in log] == list(range(1, 10_001)), "seq is exactly 1..10,000: no gap, no duplicate"
    assert count == 10_000
    per_writer: dict[int, list[int]] = defaultdict(list)
    for _, meta in log:
        per_writer[meta["writer"]].append(meta["n"])
    assert sorted(per_writer) == [0, 1, 2, 3]
    for writer, counters in per_writer.items():
        assert counters == list(range(1, 2501)), f"writer {writer}'s items kept their order"
    batches = check_batches_whole(log)
    assert all(sorted(b) == b == list(range(1000)) for b in batches.values())
    # the writers really interleaved (the test would prove little if they ran one after another)
    switches = sum(1 for (_, a), (_, b) in zip(log, log[1:]) if a["writer"] != b["writer"])
    assert switches > 10


def test_writer_killed_mid_run_loses_no_committed_batch_and_leaves_no_partial_one(tmp_path: Path):
    db = tmp_path / "killed.db"
    sid = new_session(db)
    reported: dict[int, int] = {}  # writer -> highest batch it reported committed
    for round_, wait_for in enumerate((40, 150, 7)):
        # a steady writer runs alongside, so the victim is killed while contending for the lock
        steady = start_writer(db, sid, 100 + round_, 300, "3,1")
        victim = start_writer(db, sid, round_, 1_000_000, "5,40,1,17,120")
        assert victim.stdout is not None
        last = -1
        for _ in range(wait_for):
            line = victim.stdout.readline()
            assert line.startswith("committed "), line
            last = int(line.split()[1])
        os.kill(victim.pid, signal.SIGKILL)
        out, _ = victim.communicate(timeout=30)
        for line in out.splitlines():  # lines flushed before the kill landed
            last = int(line.split()[1])
        assert victim.returncode == -signal.SIGKILL
        reported[round_] = last
        # the lock the victim may have held is released: the steady writer finishes
        s_out, s_err = steady.communicate(timeout=120)
        assert steady.returncode == 0, s_err
        assert s_out.splitlines()[-1] == "committed 299"

    log, count = read_log(db, sid)
    assert [seq for seq, _ in log] == list(range(1, len(log) + 1)), "seqs contiguous after the kills"
    assert count == len(log)
    batches = check_batches_whole(log)
    for round_, last in reported.items():
        present = batches[round_]
        # batches commit in order, so what is there is a prefix, and it covers every reported one
        assert present == list(range(len(present))), f"victim {round_} has holes"
        assert present[-1] >= last, f"victim {round_} lost committed batch(es) {last} > {present[-1]}"
    for round_ in range(3):
        assert batches[100 + round_] == list(range(300))

    # the store opens the killed-into database and keeps appending after the last seq
    async def reopen() -> int:
        store = await SessionStore.open(db)
        try:
            from supportdesk.items import Message

            added = await store.append(sid, [Message(role="agent", text="after the crash", agent="triage")])
            return added[0].seq
        finally:
            await store.close()

    assert asyncio.run(reopen()) == len(log) + 1


def test_processes_opening_one_new_file_at_once_migrate_it_once(tmp_path: Path):
    db = tmp_path / "fresh.db"  # does not exist yet: every writer races to create and migrate it
    go = tmp_path / "go"
    cmd = [sys.executable, str(WRITER), str(db), "-", "0", "50", "--sizes", "1,3", "--start", str(go), "--open-after-start"]
    procs = []
    for writer in range(4):
        cmd[4] = str(writer)
        proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        procs.append(proc)
    go.touch()
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.splitlines()[-1] == "committed 49"
    from supportdesk.store.schema import APPLICATION_ID, CURRENT_VERSION

    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("SELECT count(*) FROM search_progress").fetchone()[0] == 1  # migrated once
        counts = conn.execute("SELECT item_count FROM sessions").fetchall()
        assert counts == [(100,)] * 4  # 50 batches of 1 or 3 items each
    finally:
        conn.close()
