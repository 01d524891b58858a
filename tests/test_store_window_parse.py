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


async def test_a_window_read_again_is_not_parsed_again_and_new_items_are(where: str, monkeypatch):
    parsed: list[object] = []
    real = core.item_from_json
    monkeypatch.setattr(core, "item_from_json", lambda doc: parsed.append(doc) or real(doc))
    monkeypatch.setattr(core, "_parsed", {})
    async with await open_store(where) as store:
        sid = (await store.create_session("triage")).id
        await store.append(sid, [Message(role="customer", text=f"message {n}") for n in range(5)])
        first = await store.turn_start(sid, 50)
        assert [i.text for i in first.items] == [f"message {n}" for n in range(5)] and len(parsed) == 5
        again = await store.turn_start(sid, 50)
        assert len(parsed) == 5  # the same documents: kept
        assert [(i.seq, i.text, i.created_at) for i in again.items] == [(i.seq, i.text, i.created_at) for i in first.items]
        await store.append(sid, [Message(role="agent", text="an answer", agent="triage")])
        later = await store.turn_start(sid, 50)
        assert [i.text for i in later.items][-1] == "an answer" and len(parsed) == 6  # only the new one parsed
        # Another session's item at the same seq with the same text is another document.
        other = (await store.create_session("triage")).id
        await store.append(other, [Message(role="customer", text="message 0")])
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
