"""The one fold behind every pane (tui/projection.py), without Textual.

The live end is a snapshot read once, then advanced item by item with no reads; replay's cursor
reuses what the last position read. Both must equal a snapshot read afresh at the same position,
or a pane would show one thing live and another after a reload (or in replay).
"""

from __future__ import annotations

import random

from supportdesk.items import ContextSet, Handoff, Message
from supportdesk.store import open_store
from supportdesk.tui.projection import PAGE, Snapshot, advance, cursor, fold_context, new_session, snapshot
from tests.tui_seed import SEED_ID, fixed_clock, seed_double_charge


def panes_see(snap: Snapshot) -> tuple:
    """What the panes are shown, beside the window of items (which the cursor keeps its own way)."""
    return (
        snap.session_id, snap.position, snap.agent, snap.stops, [h.seq for h in snap.handoffs],
        snap.context, snap.changed,
    )


async def seeded(db_path):
    store = await open_store(db_path)
    store.clock = fixed_clock()
    await seed_double_charge(store)
    # A key cleared later, and a turn after the refund: the fold must drop the key as the store does.
    await store.append(SEED_ID, [Message(role="customer", text="thanks", agent="billing")])
    await store.append(SEED_ID, [ContextSet(key="issue", value=None, writer="billing", agent="billing")])
    await seed_steps(store, "long", 130)
    return store


async def seed_steps(store, session_id: str, n: int) -> None:
    """A long session written in steps of one to three items (each step one time, as the runner
    writes them): messages, context writes and clears, a handoff every seventh item."""
    await store.create_session("triage", session_id=session_id)
    agents, holder, step = ["triage", "billing", "technical", "senior"], "triage", []
    sizes = random.Random(7)
    for seq in range(1, n + 1):
        if seq % 7 == 0:
            to = agents[(agents.index(holder) + 1) % len(agents)]
            step.append(Handoff(from_agent=holder, to_agent=to, reason=f"step {seq}", agent=holder))
            holder = to
        elif seq % 5 == 0:
            value = None if seq % 3 == 0 else seq
            step.append(ContextSet(key=f"k{seq % 4}", value=value, writer=holder, agent=holder))
        else:
            step.append(Message(role="customer" if seq % 2 else "agent", text=f"line {seq}", agent=holder))
        if len(step) >= sizes.randint(1, 3):
            await store.append(session_id, step)
            step = []
    if step:
        await store.append(session_id, step)


async def test_the_live_fold_equals_a_fresh_read_at_every_position(db_path):
    store = await seeded(db_path)
    try:
        for session_id in (SEED_ID, "long"):
            info = await store.get_session(session_id)
            assert info is not None
            for start in (0, 1, 5, info.item_count // 2):
                live = await snapshot(store, session_id, start, whole_turn=True)
                assert live is not None
                for k in range(start + 1, info.item_count + 1):
                    # Items arrive in batches of one to three, as a turn's events do.
                    live = advance(live, await store.range(session_id, live.position + 1, k))
                    fresh = await snapshot(store, session_id, k, whole_turn=True)
                    assert fresh is not None
                    assert panes_see(live) == panes_see(fresh), (session_id, start, k)
                    assert live.items == fresh.items
        context = await store.context_at(SEED_ID)
        assert "issue" not in context and "refund" in context  # the seed really clears a key
    finally:
        await store.close()


async def test_a_new_session_folds_from_its_first_item(db_path):
    store = await seeded(db_path)
    try:
        items = await store.range(SEED_ID, 1, 20)
        live = advance(new_session("triage"), items[:1])
        assert live.session_id == SEED_ID and live.agent == "triage"
        live = advance(live, items[1:])
        fresh = await snapshot(store, SEED_ID, whole_turn=True)
        assert fresh is not None
        assert panes_see(live) == panes_see(fresh)
        assert fold_context({}, items) == fresh.context
    finally:
        await store.close()


async def test_the_replay_cursor_equals_a_fresh_read_wherever_it_moves(db_path):
    store = await seeded(db_path)
    try:
        total = (await store.get_session("long")).item_count  # type: ignore[union-attr]
        every_stop = await store.kind_seqs("long", "handoff")
        moves = random.Random(14)
        at = await cursor(store, "long", None)
        assert at is not None and at.position == total and at.later_stops == []
        for _ in range(120):
            k = moves.choice([at.position - 1, at.position + 1, at.position + 5, moves.randint(0, total)])
            at = await cursor(store, "long", k, at)
            fresh = await snapshot(store, "long", max(0, min(k, total)))
            assert at is not None and fresh is not None
            assert (at.position, at.agent, at.stops, at.context, at.changed) == (
                fresh.position, fresh.agent, fresh.stops, fresh.context, fresh.changed
            ), k
            assert at.stops + at.later_stops == every_stop
            # The window ends at k without a gap, and holds the step ending there.
            seqs = [item.seq for item in at.items]
            assert seqs == (list(range(seqs[0], at.position + 1)) if at.position else [])
            assert len(seqs) <= 3 * PAGE
    finally:
        await store.close()
