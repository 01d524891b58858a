"""A call held for staff approval is data (`ToolResult.awaits_approval`), not a sentence
(issue 36 item 6). Every reader reads the field: a held result worded differently is still held,
and a result that is not held is not, whatever its words. A log stored before the field existed
had only the words: such a row is read with the field set from them, in one place
(`items._read_legacy`, and the figures' SQL over raw rows)."""

from __future__ import annotations

import ast
import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

from supportdesk.engine.protocol import StepRequest
from supportdesk.items import APPROVAL_PENDING, Message, ToolCall, ToolResult, item_adapter, item_from_json, pending_text
from supportdesk.models.offline.view import View
from supportdesk.store import figure_summary, open_store
from supportdesk.tui.widgets.items import is_pending
from supportdesk.config import parse_desk
from tests.conftest import TEST_DESK
from tests.stats_fold import as_fold, fold
from tests.stats_seed import StepClock

ROOT = Path(__file__).resolve().parents[1]
AT = datetime(2026, 3, 2, 10, 30, tzinfo=timezone.utc)

# Held, in words that do not begin with the sentence; not held, in words that do.
HELD = ToolResult(call_id="c1", name="refund_charge", output="a supervisor decides this one", awaits_approval=True, agent="billing")
MADE = ToolResult(call_id="c1", name="refund_charge", output=pending_text("nothing, just these words"), agent="billing")


def _money(result: ToolResult) -> dict:
    call = ToolCall(call_id="c1", name="refund_charge", arguments={"amount": 40.0}, agent="billing")
    share = figure_summary.fold([call, result], figure_summary.start("triage", AT), [False, False])
    return {key: value for key, value in share.tallies.items() if key[0] == "money"}


def _waiting(result: ToolResult) -> bool:
    config = parse_desk(TEST_DESK, "test.toml", tool_names=["refund", "explode", "refund_charge"])
    call = ToolCall(call_id="c1", name="refund_charge", arguments={"amount": 40.0}, seq=1, agent="billing")
    view = View(StepRequest("s1", config.agents["billing"], config, [], [], [call, result], {}))
    (event,) = view.tools
    return event.waiting


def test_every_reader_reads_the_field_not_the_words():
    assert (is_pending(HELD), is_pending(MADE)) == (True, False)
    assert (_waiting(HELD), _waiting(MADE)) == (True, False)
    assert _money(HELD) == {}
    assert list(_money(MADE).values()) == [(1, 40_000_000, 0, 0)]


def test_a_row_stored_before_the_field_is_read_from_its_words_and_a_new_row_as_it_says():
    row = {"kind": "tool_result", "call_id": "c1", "name": "refund_charge", "session_id": "s", "seq": 2,
           "created_at": AT.isoformat(), "agent": "billing", "meta": {}}
    old_held = {**row, "output": pending_text("over the limit"), "is_error": False}
    old_made = {**row, "output": '{"refunded": 40}', "is_error": False}
    new_made = {**old_held, "awaits_approval": False}
    for read in (lambda d: item_from_json(json.dumps(d)), lambda d: item_adapter().validate_json(json.dumps(d))):
        assert [read(d).awaits_approval for d in (old_held, old_made, new_made)] == [True, False, False]


def test_the_sentence_is_written_in_one_place_and_read_nowhere():
    """Only items.py (the sentence, and the legacy read) and the figures' SQL (raw legacy rows)
    name it; desk_state's inbox label is its own words for a state, not a result's output."""
    allowed = {"supportdesk/items.py", "supportdesk/store/figures.py"}
    found = []
    for path in sorted((ROOT / "supportdesk").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name | ast.Attribute) and getattr(node, "id", getattr(node, "attr", "")) == "APPROVAL_PENDING":
                found.append(f"{rel}:{node.lineno}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(APPROVAL_PENDING):
                if rel != "supportdesk/folds/desk_state.py":
                    found.append(f"{rel}:{node.lineno}")
    assert found == []


async def test_the_figures_sql_reads_old_rows_by_their_words_and_new_rows_by_the_field(tmp_path: Path):
    """The money figure of a session crossing the window's edge is read by SQL from the rows:
    a held refund is not money made, whether the row says so by the field or (stored before the
    field) by its words; a made refund with no field is money made."""
    clock = StepClock()
    clock.now = AT
    where = tmp_path / "desk.db"
    async with await open_store(where) as store:
        store.clock = clock
        await store.create_session("triage", session_id="s1", first=[Message(role="customer", text="refund please")])
        clock.now += timedelta(minutes=1)
        await store.append("s1", [
            ToolCall(call_id="c1", name="refund_charge", arguments={"amount": 300.0}, agent="billing"),
            ToolResult(call_id="c1", name="refund_charge", output=pending_text("over the limit"), awaits_approval=True, agent="billing"),
            ToolCall(call_id="c2", name="refund_charge", arguments={"amount": 20.0}, agent="billing"),
            ToolResult(call_id="c2", name="refund_charge", output='{"refunded": 20}', agent="billing"),
            ToolCall(call_id="c3", name="refund_charge", arguments={"amount": 70.0}, agent="billing"),
            ToolResult(call_id="c3", name="refund_charge", output="the supervisor decides", awaits_approval=True, agent="billing"),
        ])
    # c1 and c2 as a store before the field wrote them; c3 keeps it (its words alone say nothing).
    with sqlite3.connect(where) as db:
        db.execute("UPDATE items SET body = json_remove(body, '$.awaits_approval') "
                   "WHERE kind = 'tool_result' AND json_extract(body, '$.call_id') IN ('c1', 'c2')")
    async with await open_store(where) as store:
        items = await store.range("s1", 1, 7)
        assert [i.awaits_approval for i in items if isinstance(i, ToolResult)] == [True, False, True]
        since, until = AT - timedelta(minutes=7), clock.now + timedelta(minutes=3)  # edges inside one hour
        figures = await store.desk_figures(since, until)
        assert {t: (m.count, m.total) for t, m in figures.money.items()} == {"refund_charge": (1, 20.0)}
        assert as_fold(figures) == await fold(store, since, until)
