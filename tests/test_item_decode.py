"""Stored items read without pydantic's validator are the items the validator would give.

`item_from_json` constructs a row's item directly when every field already has its declared
type (the TUI's first page is read that way, before the validator is built), and sends any
other row through pydantic's validator (`item_adapter()`). These tests hold the two paths to one result: every kind as
the store writes it comes out identical either way, and every row the validator would change
or reject goes to the validator.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from pydantic import ValidationError

from supportdesk import items
from supportdesk.items import ITEM_KINDS, _constructed, item_adapter, item_body_json, item_from_json
from supportdesk.store import SessionStore
from supportdesk.store.sessions import _ITEM_COLS
from tests.test_item_kinds import EVERY_SAMPLE


async def _stored_rows(tmp_path) -> list[str]:
    """Every sample kind appended by the real store, then its rows as the store reads them."""
    db = tmp_path / "desk.db"
    store = await SessionStore.open(db)
    try:
        info = await store.create_session("triage")
        await store.append(info.id, EVERY_SAMPLE)
    finally:
        await store.close()
    conn = sqlite3.connect(db)
    try:
        return [row[0] for row in conn.execute(f"SELECT {_ITEM_COLS} FROM items ORDER BY seq")]
    finally:
        conn.close()


def _same(a, b) -> None:
    assert type(a) is type(b)
    assert a == b
    assert a.__dict__ == b.__dict__
    assert item_body_json(a) == item_body_json(b)
    assert a.created_at.utcoffset() == b.created_at.utcoffset()


async def test_every_stored_kind_is_constructed_as_the_validator_reads_it(tmp_path):
    rows = await _stored_rows(tmp_path)
    assert {json.loads(row)["kind"] for row in rows} == set(ITEM_KINDS)
    for row in rows:
        constructed = _constructed(json.loads(row))
        assert constructed is not None, f"a stored row was not constructed: {row}"
        _same(constructed, item_adapter().validate_json(row))


@pytest.mark.parametrize(
    "change",
    [
        {"seq": "7"},  # lax: the validator turns it into 7
        {"created_at": "2026-03-14T09:30:00.1234567+00:00"},  # seven digits: the validator decides
        {"meta": None},
    ],
)
async def test_rows_the_validator_would_change_go_through_it(tmp_path, monkeypatch, change):
    row = json.dumps({**json.loads((await _stored_rows(tmp_path))[0]), **change})
    assert _constructed(json.loads(row)) is None
    monkeypatch.setattr(items, "_constructed_left", 10)
    try:
        expected = item_adapter().validate_json(row)
    except ValidationError as exc:
        with pytest.raises(ValidationError) as raised:
            item_from_json(row)
        assert raised.value.errors() == exc.errors()
    else:
        _same(item_from_json(row), expected)


@pytest.mark.parametrize(
    "change",
    [
        {"kind": "telegram"},
        {"role": "robot"},
        {"surprise": 1},
        {"text": 5},
        {"created_at": "yesterday"},
    ],
)
async def test_rows_the_validator_rejects_are_rejected(tmp_path, monkeypatch, change):
    first = json.loads((await _stored_rows(tmp_path))[0])
    assert first["kind"] == "message"
    row = json.dumps({**first, **change})
    monkeypatch.setattr(items, "_constructed_left", 10)
    with pytest.raises(ValidationError):
        item_from_json(row)


def test_a_missing_required_field_is_left_to_the_validator():
    row = {"kind": "message", "role": "agent", "seq": 1}  # no text
    assert _constructed(row) is None
    with pytest.raises(ValidationError):
        item_adapter().validate_python(row)
