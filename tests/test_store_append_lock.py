"""What an append does while it holds SQLite's write lock (issue 34, the 4-writer row of
`benchmarks/bench_store.py`): other processes wait for that lock, so the append's Python work (the
fold of the kept summaries over its items, their JSON, the roll-up's rows) is done before
`BEGIN IMMEDIATE` whenever this store wrote the session's row last, and used only if the row read
under the lock is still that row. Here: the fold runs with the lock free (a second connection
probes it), the summaries stay equal to a fold of the whole log when another connection, or a
status change, wrote in between, and the parsed-summary cache never frees itself all at once."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from supportdesk.items import ContextSet, Handoff, Message, Notice, ToolCall, ToolResult
from supportdesk.store import sessions
from supportdesk.store.sessions import SessionStore

CONVERSATION = [
    [Message(role="customer", text="I was charged twice", agent="triage")],
    [ContextSet(key="customer_email", value="dana@example.com", writer="triage", agent="triage"),
     Handoff(from_agent="triage", to_agent="billing", reason="duplicate charge", agent="triage")],
    [ToolCall(call_id="c1", name="refund", arguments={"charge_id": "CH-26"}, agent="billing"),
     ToolResult(call_id="c1", name="refund", output="waiting for staff approval", agent="billing", awaits_approval=True),
     Notice(notice_kind="approval_requested", text="Billing asks staff to approve refund", agent="billing",
            data={"approval_id": "ap1", "tool": "refund", "arguments": {"charge_id": "CH-26"}})],
    [Message(role="agent", text="I've asked a colleague to approve the refund.", agent="billing")],
    [Notice(notice_kind="approval_granted", text="Staff granted refund.", agent="billing", data={"approval_id": "ap1"}),
     Message(role="agent", text="Refunded $29.00.", agent="billing")],
    [Message(role="customer", text="thanks, that's all", agent="billing")],
]


def _write_lock_held(path: Path) -> bool:
    """Whether some connection holds the database's write lock right now (a second connection
    asks for it without waiting)."""
    probe = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        assert "locked" in str(exc) or "busy" in str(exc), exc
        return True
    else:
        probe.execute("ROLLBACK")
        return False
    finally:
        probe.close()


@pytest.fixture
def folds(monkeypatch: pytest.MonkeyPatch, db_path: Path) -> list[bool]:
    """Whether the write lock was held during each fold of the kept summaries an append made."""
    seen: list[bool] = []
    real = sessions.advance_all

    def watched(*args: Any) -> Any:
        seen.append(_write_lock_held(db_path))
        return real(*args)

    monkeypatch.setattr(sessions, "advance_all", watched)
    return seen


def _stored_equals_whole_log(path: Path, session_id: str) -> None:
    """The three kept summaries are, to the byte, those folded from the session's whole log."""
    with sqlite3.connect(path) as conn:
        entry, created, status, summary, figures, clocks, state_col = conn.execute(
            "SELECT entry_agent, created_at, status, desk_summary, figure_summary, sla_summary, desk_state "
            "FROM sessions WHERE id = ?",
            (session_id,),
        ).fetchone()
        state, share, progress = sessions._whole_log(conn, session_id, entry, created, status)
    assert (summary, figures, clocks, state_col) == (state.to_json(), share.to_json(), progress.to_json(), state.state)


async def test_an_append_after_this_store_s_own_folds_without_the_write_lock(db_path: Path, folds: list[bool]) -> None:
    async with await SessionStore.open(db_path) as store:
        await store.create_session("triage", session_id="s1")
        for batch in CONVERSATION:
            await store.append("s1", batch)
            _stored_equals_whole_log(db_path, "s1")
        assert await store.last_seq("s1") == sum(map(len, CONVERSATION))
    # The first append knows no row of the session's yet: it folds under the lock. Every later
    # one folds from the row its predecessor left, before taking the lock (folding under the
    # lock again would make these True).
    assert folds[0] is True
    assert folds[1:] == [False] * (len(CONVERSATION) - 1)


async def test_a_row_another_connection_or_a_status_change_moved_is_folded_again_under_the_lock(
    db_path: Path, folds: list[bool]
) -> None:
    a, b = await SessionStore.open(db_path), await SessionStore.open(db_path)
    try:
        await a.create_session("triage", session_id="s1")
        await a.append("s1", CONVERSATION[0])
        await a.append("s1", CONVERSATION[1])
        del folds[:]
        # b (another process, say) appends: the row a folded ahead from is gone; a's next append
        # folds once ahead (from its stale row, then thrown away) and once under the lock.
        await b.append("s1", CONVERSATION[2])
        await a.append("s1", CONVERSATION[3])
        _stored_equals_whole_log(db_path, "s1")
        assert folds == [True, False, True]  # b's (it knew no row), a's ahead, a's under the lock
        # A status change moves the figures' share without moving the head: folded again too.
        del folds[:]
        await a.set_status("s1", "needs_human")
        await a.append("s1", CONVERSATION[4])
        _stored_equals_whole_log(db_path, "s1")
        assert folds == [False, True]
        del folds[:]
        await a.append("s1", CONVERSATION[5])
        _stored_equals_whole_log(db_path, "s1")
        assert folds == [False]
        items = await a.range("s1", 1, 99)
        assert [i.seq for i in items] == list(range(1, sum(map(len, CONVERSATION)) + 1))
        assert [i.kind for i in items] == [i.kind for batch in CONVERSATION for i in batch]
    finally:
        await a.close()
        await b.close()


def test_the_parsed_summaries_cache_lets_its_oldest_go_one_at_a_time() -> None:
    # It is written under the write lock: clearing it whole there freed 256 parsed summaries at
    # once (~3 ms with the lock held, every ~85 appends of 4 writer processes).
    kept = sessions._KeptStates()
    for n in range(kept.SIZE + 10):
        kept._put(kept.states, f"text {n}", n)  # type: ignore[arg-type]
    assert len(kept.states) == kept.SIZE
    assert "text 9" not in kept.states and "text 10" in kept.states and f"text {kept.SIZE + 9}" in kept.states
