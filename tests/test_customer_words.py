"""What counts as the customer's own words, the only text a tool's `require_named_account` policy
reads to decide whose account the customer named (issue 39 §3).

Defined once, `turn_reads.customer_words`: the text of the customer's messages, then the summaries
staff released the conversation with. The runner reads it from the store between turns and from
the running turn's reads during one (issue 36: it used to write the rule twice). Nothing a model
can write may count: an agent's message, a tool call or result, the shared context. These fail
when either read takes its words from the wrong items.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from supportdesk.config import load_desk
from supportdesk.engine.turn_reads import TurnReads, customer_words
from supportdesk.items import ContextSet, Message, Release, StaffReply, ToolCall, ToolResult
from supportdesk.staff import Actor
from supportdesk.wiring import open_desk
from tests.conftest import REPO
from tests.scripted import ScriptedModel
from tests.test_item_kinds import EVERY_SAMPLE

AT = datetime(2026, 3, 14, 9, 30, tzinfo=timezone.utc)
NAMED_BY_A_MODEL = "marco@example.com"


def test_of_every_kind_only_the_customers_messages_and_release_summaries_count():
    # One sample of each kind and shape (every message role, a context write, tool calls and
    # results, staff's replies ...): only two of them are the customer's words.
    assert customer_words(EVERY_SAMPLE) == ["a customer line", "refund agreed"]
    # In that order whatever the log's: messages first, then what staff vouched for; a release
    # without a summary vouches for nothing.
    envelope = {"session_id": "s1", "created_at": AT, "agent": "billing"}
    log = [
        Release(seq=1, person="dana", to_agent="billing", summary="verified: dana@example.com", **envelope),
        Release(seq=2, person="dana", to_agent="billing", summary="", **envelope),
        Message(seq=3, role="customer", text="hello", **envelope),
    ]
    assert customer_words(log) == ["hello", "verified: dana@example.com"]


@pytest.fixture
def desk():
    return load_desk(REPO / "agents.toml")


async def test_the_runner_and_a_turn_read_the_same_words_and_never_a_models(db_path, desk):
    async with await open_desk(db_path, desk, provider=ScriptedModel([])) as opened:
        store, runner = opened.store, opened.runner
        info = await store.create_session("triage")
        # A log in which the model and the shared context name an account the customer never wrote.
        await store.append(info.id, [
            Message(role="customer", text="please cancel my plan"),
            Message(role="agent", text=f"Is your account {NAMED_BY_A_MODEL}?", agent="triage"),
            ContextSet(key="customer_email", value=NAMED_BY_A_MODEL, writer="billing", agent="billing"),
            ToolCall(call_id="c1", name="find_customer", arguments={"query": NAMED_BY_A_MODEL}, agent="billing"),
            ToolResult(call_id="c1", name="find_customer", output=f'{{"email": "{NAMED_BY_A_MODEL}"}}', agent="billing"),
            Message(role="customer", text="yes, that one"),
        ])
        await runner.takeover(info.id, Actor("dana", "cli"))
        await store.append(info.id, [StaffReply(person="dana", text=f"Found {NAMED_BY_A_MODEL}", origin="cli")])
        await runner.release(info.id, summary="verified by phone: dana@example.com", by=Actor("dana", "cli"))
        expected = ["please cancel my plan", "yes, that one", "verified by phone: dana@example.com"]

        # Between turns: read from the store.
        assert await runner._customer_words(info.id) == "\n".join(expected)
        # A turn holding the whole log reads the same from the items it holds ...
        whole = TurnReads.of(store, info.id, 100, await store.turn_start(info.id, 100))
        assert whole.customer_words() == expected
        # ... and the runner, during that turn, answers from them (its store cache left aside).
        runner._customer_said.clear()
        runner._turn_reads[info.id] = whole
        try:
            assert await runner._customer_words(info.id) == "\n".join(expected)
        finally:
            del runner._turn_reads[info.id]
        # A turn holding only the newest items cannot say: the runner reads the store.
        part = TurnReads.of(store, info.id, 2, await store.turn_start(info.id, 2))
        assert part.customer_words() is None
        runner._turn_reads[info.id] = part
        try:
            assert await runner._customer_words(info.id) == "\n".join(expected)
        finally:
            del runner._turn_reads[info.id]
        assert NAMED_BY_A_MODEL not in await runner._customer_words(info.id)
