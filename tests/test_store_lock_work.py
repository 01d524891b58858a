"""The Python work an append does while it holds the write lock (issue 34, the 4-writer row of
`benchmarks/bench_store.py`), made cheaper without changing what is kept: the figures' share
built without the frozen dataclass's __init__ (every field still there), its durations' tallies
moved in place, an unchanged share moving no roll-up row, and the summaries' JSON through one
encoder made once (the same text as `json.dumps` gave)."""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import datetime, timedelta, timezone

import pytest

from supportdesk.folds.desk_state import start
from supportdesk.folds.sla import SlaProgress
from supportdesk.items import Item, Message, ToolCall
from supportdesk.store import figure_summary
from supportdesk.store.protocol import StoreError
from supportdesk.store.figure_summary import FigureSummary, rollup_delta
from supportdesk.store.kept_folds import advance_all

T0 = datetime(2026, 11, 2, 9, 30, tzinfo=timezone.utc)


def _stamped(items: list[Item], first_seq: int = 1) -> list[Item]:
    from dataclasses import replace

    return [
        replace(item, session_id="s", seq=first_seq + n, created_at=T0 + timedelta(seconds=first_seq + n))
        for n, item in enumerate(items)
    ]


def _folded(items: list[Item]) -> tuple:
    state, share, progress = start("triage"), figure_summary.start("triage", T0), SlaProgress()
    return advance_all(state, share, progress, _stamped(items))


def test_the_folded_share_has_every_field_and_equals_one_built_the_usual_way() -> None:
    _, share, _ = _folded([Message(role="customer", text="charged twice", agent="triage")])
    assert set(vars(share)) == {f.name for f in fields(FigureSummary)}
    assert FigureSummary(**vars(share)) == share
    assert FigureSummary.from_json(share.to_json()) == share


def test_the_durations_tallies_follow_the_last_fold() -> None:
    # Asked and not answered: "unanswered"; once answered, it goes and the first answer comes.
    _, asked, _ = _folded([Message(role="customer", text="charged twice", agent="triage")])
    assert ("unanswered", "", "", "") in asked.tallies
    answered = figure_summary.fold(
        _stamped([Message(role="agent", text="let me look", agent="triage")], first_seq=2), asked, [False]
    )
    assert ("unanswered", "", "", "") not in answered.tallies
    assert [key[0] for key in answered.tallies if key[0] == "first_answer"] == ["first_answer"]
    assert ("unanswered", "", "", "") in asked.tallies  # the share folded from is left as it was


def test_an_unchanged_share_moves_no_rollup_row_and_a_changed_one_moves_its_tallies() -> None:
    _, before, _ = _folded([Message(role="customer", text="hi", agent="triage")])
    same = figure_summary.fold(_stamped([Message(role="customer", text="again", agent="triage")], 2), before, [False])
    assert same.tallies == before.tallies and rollup_delta(before, same) == []
    call = ToolCall(call_id="c1", name="refund", arguments={"amount": 5}, agent="billing")
    answer = Message(role="agent", text="done", agent="billing", meta={"usage": {"input_tokens": 7, "output_tokens": 3}})
    moved = figure_summary.fold(_stamped([call, answer], 2), before, [False, False])
    rows = rollup_delta(before, moved)
    whole: dict = {}
    for summary, sign in ((before, -1), (moved, 1)):
        for key, value in summary.rollup(sign).items():
            whole[key] = [a + b for a, b in zip(whole.get(key, [0, 0, 0, 0]), value)]
    assert rows == [(*key, *value) for key, value in sorted(whole.items()) if any(value)] != []


def test_the_summaries_json_is_the_text_json_dumps_gave() -> None:
    # Non-ASCII kept as it is (ensure_ascii off) and no spaces: the text other processes parse and
    # the SQL reads with json_extract is unchanged by the encoder made once.
    state, share, progress = _folded([Message(role="customer", text="Grüße, mein Konto — 請求", agent="triage")])
    for text in (state.to_json(), share.to_json(), progress.to_json()):
        assert text == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
    assert "Grüße, mein Konto — 請求" in state.to_json()


def test_summaries_parse_to_every_field_and_fill_what_an_older_text_lacks() -> None:
    from supportdesk.folds.desk_state import ConversationState

    state, share, progress = _folded(
        [Message(role="customer", text="charged twice", agent="triage"), Message(role="agent", text="on it", agent="triage")]
    )
    for cls, value in ((ConversationState, state), (FigureSummary, share), (SlaProgress, progress)):
        parsed = cls.from_json(value.to_json())
        assert set(vars(parsed)) == {f.name for f in fields(cls)} and parsed == value
        assert cls(**vars(parsed)) == parsed
    # A text from before a field existed: the field's default, as the dataclass gives it.
    old = json.loads(state.to_json())
    del old["offer"], old["customer_rank"]
    assert ConversationState.from_json(json.dumps(old)) == ConversationState(**{**vars(state), "offer": None, "customer_rank": 3})
    assert FigureSummary.from_json('{"seq": 4}') == FigureSummary(seq=4)
    assert SlaProgress.from_json("{}") == SlaProgress()
    # The mutable defaults are made fresh for each parse, never shared between parsed values.
    assert FigureSummary.from_json("{}").calls is not FigureSummary.from_json("{}").calls
    assert SlaProgress.from_json("{}").waits is not SlaProgress.from_json("{}").waits


async def test_the_store_counts_each_committed_writes_hold_of_the_lock(tmp_path) -> None:
    # bench_store's "the write lock held per append" reads these: each committed write counted once,
    # whether it committed on the caller's thread (`_write_now`), in a hop alone or in a group.
    import asyncio

    from supportdesk.store.sessions import APPEND_NOW_MOST, SessionStore

    async with await SessionStore.open(tmp_path / "desk.db") as store:
        sid = (await store.create_session("triage")).id  # a hop
        assert store.lock_holds == 1
        for n in range(5):  # on the caller's thread
            await store.append(sid, [Message(role="agent", text=f"line {n}", agent="triage")])
        assert store.writes_now >= 1 and store.lock_holds == 6
        big = [Message(role="agent", text=f"bulk {n}", agent="triage") for n in range(APPEND_NOW_MOST + 1)]
        await store.append(sid, big)  # a hop
        assert store.lock_holds == 7
        await asyncio.gather(*(store.append(sid, big) for _ in range(3)))  # queued: alone or grouped
        holds, held = store.lock_holds, store.lock_held_ns
        assert 8 <= holds <= 10 - store.groups_committed and held > 0
        with pytest.raises(StoreError):
            await store.append("no-such-session", [Message(role="agent", text="x", agent="triage")])
        assert (store.lock_holds, store.lock_held_ns) == (holds, held)  # a failed write is not counted


def test_an_items_stamped_copy_is_what_dataclasses_replace_would_make() -> None:
    # `_copied` skips the frozen __init__: right only while no item kind has a __post_init__ or a
    # field outside __init__ (a kind that grows one fails here, and the copy must go back to replace).
    import dataclasses
    import typing

    from supportdesk.store.sessions import _copied

    kinds = typing.get_args(Item)
    assert len(kinds) >= 10
    for kind in kinds:
        assert not hasattr(kind, "__post_init__"), kind
        assert all(f.init for f in dataclasses.fields(kind)), kind
    item = Message(role="customer", text="charged twice", agent="triage", meta={"n": 1})
    copy = _copied(item, "s1", T0)
    assert copy == dataclasses.replace(item, session_id="s1", seq=0, created_at=T0)
    assert (item.session_id, item.seq) == ("", 0) and copy is not item


async def test_an_append_returns_its_own_stamped_copies_and_leaves_the_callers_items(tmp_path) -> None:
    import dataclasses

    from supportdesk.store.sessions import SessionStore

    async with await SessionStore.open(tmp_path / "desk.db") as store:
        sid = (await store.create_session("triage")).id
        items = [Message(role="customer", text=f"line {n}", agent="triage") for n in range(3)]
        first = await store.append(sid, items)
        again = await store.append(sid, items)  # the same objects appended twice: new copies each time
        assert [i.seq for i in first] == [1, 2, 3] and [i.seq for i in again] == [4, 5, 6]
        assert all(i.seq == 0 and i.session_id == "" for i in items)
        assert first == [dataclasses.replace(i, session_id=sid, seq=n, created_at=first[0].created_at) for n, i in enumerate(items, 1)]
        assert await store.range(sid, 1, 6) == [*first, *again]
