"""A turn's start read parses each stored item once while it stays kept (store/core.window_item).

A conversation's next turn reads much of the window the last one read; parsing those items
again was the largest cost of a served turn's start. Runs on both adapters (they share the core).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from supportdesk.items import Message
from supportdesk.store import core, open_store

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def where(request, tmp_path: Path) -> str:
    return str(tmp_path / "desk.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")


async def _append_elsewhere(store, sid: str, items) -> None:
    """An append as another process's: the PostgreSQL writer keeps its own items' parses
    (`core.keep_parsed`, tested below); a reader in another process has none of them."""
    before = set(core._parsed)
    await store.append(sid, items)
    for doc in set(core._parsed) - before:
        del core._parsed[doc]


async def test_a_window_read_again_is_not_parsed_again_and_new_items_are(where: str, monkeypatch):
    parsed: list[object] = []
    real = core.item_from_json
    monkeypatch.setattr(core, "item_from_json", lambda doc: parsed.append(doc) or real(doc))
    monkeypatch.setattr(core, "_parsed", {})
    async with await open_store(where) as store:
        sid = (await store.create_session("triage")).id
        await _append_elsewhere(store, sid, [Message(role="customer", text=f"message {n}") for n in range(5)])
        first = await store.turn_start(sid, 50)
        assert [i.text for i in first.items] == [f"message {n}" for n in range(5)] and len(parsed) == 5
        again = await store.turn_start(sid, 50)
        assert len(parsed) == 5  # the same documents: kept
        assert [(i.seq, i.text, i.created_at) for i in again.items] == [(i.seq, i.text, i.created_at) for i in first.items]
        await _append_elsewhere(store, sid, [Message(role="agent", text="an answer", agent="triage")])
        later = await store.turn_start(sid, 50)
        assert [i.text for i in later.items][-1] == "an answer" and len(parsed) == 6  # only the new one parsed
        # Another session's item at the same seq with the same text is another document.
        other = (await store.create_session("triage")).id
        await _append_elsewhere(store, other, [Message(role="customer", text="message 0")])
        [theirs] = (await store.turn_start(other, 50)).items
        assert theirs.session_id == other and len(parsed) == 7


def test_what_is_kept_is_bounded(monkeypatch):
    monkeypatch.setattr(core, "_parsed", {})
    monkeypatch.setattr(core, "PARSED_KEPT", 3)
    monkeypatch.setattr(core, "item_from_json", lambda doc: object())
    for n in range(5):
        core.window_item(f"doc {n}")
        assert len(core._parsed) <= 3
    long = "x" * (core.PARSED_LONGEST + 1)
    assert core.window_item(long) is not core.window_item(long)  # parsed each time, never kept
    assert long not in core._parsed


async def test_latest_reads_through_the_kept_parses(where: str, monkeypatch):
    """A turn whose start read went stale (a customer's message stored meanwhile, issue 32) reads
    its window with `latest`: those items are the same documents, not parsed again."""
    parsed: list[object] = []
    real = core.item_from_json
    monkeypatch.setattr(core, "item_from_json", lambda doc: parsed.append(doc) or real(doc))
    monkeypatch.setattr(core, "_parsed", {})
    async with await open_store(where) as store:
        sid = (await store.create_session("triage")).id
        await _append_elsewhere(store, sid, [Message(role="customer", text=f"message {n}") for n in range(5)])
        await store.turn_start(sid, 50)
        assert len(parsed) == 5
        assert [i.text for i in await store.latest(sid, 50)] == [f"message {n}" for n in range(5)]
        assert len(parsed) == 5


async def test_many_conversations_windows_stay_kept(tmp_path: Path, monkeypatch):
    """`serve` with 60 conversations of 50 items reads 3,000 window items in turn: the second round
    of turn starts parses nothing (a cache that forgot everything when full parsed them all again)."""
    parsed: list[object] = []
    real = core.item_from_json
    monkeypatch.setattr(core, "item_from_json", lambda doc: parsed.append(doc) or real(doc))
    monkeypatch.setattr(core, "_parsed", {})
    async with await open_store(str(tmp_path / "desk.db")) as store:
        sids = [(await store.create_session("triage")).id for _ in range(60)]
        for sid in sids:
            await store.append(sid, [Message(role="customer", text=f"message {n}") for n in range(50)])
        for sid in sids:
            await store.turn_start(sid, 50)
        assert len(parsed) == 3000
        for sid in sids:
            await store.turn_start(sid, 50)
        assert len(parsed) == 3000


def test_when_full_the_oldest_go_and_the_newest_stay(monkeypatch):
    monkeypatch.setattr(core, "_parsed", {})
    monkeypatch.setattr(core, "PARSED_KEPT", 4)
    monkeypatch.setattr(core, "item_from_json", lambda doc: object())
    kept = [core.window_item(f"doc {n}") for n in range(5)]
    assert "doc 0" not in core._parsed
    assert core.window_item("doc 3") is kept[3] and core.window_item("doc 4") is kept[4]


@pytest.mark.postgres
async def test_the_postgres_writer_reads_back_what_it_stored_without_parsing_it_and_as_a_parse_gives_it(pg_url: str, monkeypatch):
    """A PostgreSQL append makes each item's document for its NOTIFY (the text a read gives) and
    keeps the stored item as its parse: the writer's next turn start parses none of its items
    (about 12 a served message, each a pydantic parse). What is kept must be what a parse of the
    document gives, field for field, for every kind a turn stores; a document too big for the
    NOTIFY is not kept (parsed when read)."""
    from dataclasses import fields

    from supportdesk.items import Handoff, Offer, ToolCall, ToolResult, item_from_json

    parsed: list[object] = []
    real = core.item_from_json
    monkeypatch.setattr(core, "item_from_json", lambda doc: parsed.append(doc) or real(doc))
    monkeypatch.setattr(core, "_parsed", {})
    async with await open_store(pg_url) as store:
        sid = (await store.create_session("triage")).id
        items = [
            Message(role="customer", text='a "quote" é 中文\ttab\nline', agent="triage"),
            Handoff(from_agent="triage", to_agent="billing", reason="money", agent="triage"),
            ToolCall(call_id="c1", name="find_charges", arguments={"customer": "dana@example.com", "n": [1, 2.5]}, agent="billing"),
            ToolResult(call_id="c1", name="find_charges", output='{"charges": []}', agent="billing"),
            Message(role="agent", text="Shall I refund it?", agent="billing", meta={"usage": {"input_tokens": 3, "output_tokens": 4}}),
            Offer(offer_id="o1", tool="refund_charge", arguments={"charge_id": "CH-1", "amount": 29.99}, action="refund $29.99",
                  text="Shall I refund it?", call_id="c2", agent="billing"),
        ]
        stored = await store.append(sid, items)
        big = await store.append(sid, [Message(role="agent", text="x" * 9000, agent="billing")])
        start = await store.turn_start(sid, 50)
        assert len(parsed) == 1  # the big one alone
        assert start.items[: len(stored)] == stored  # the very items the append returned
        for kept in start.items:
            doc = next(d for d, i in core._parsed.items() if i is kept) if kept is not start.items[-1] else None
            if doc is None:
                continue
            again = item_from_json(doc)
            assert type(again) is type(kept)
            assert {f.name: getattr(again, f.name) for f in fields(again)} == {f.name: getattr(kept, f.name) for f in fields(kept)}
        assert start.items[-1].seq == big[0].seq
