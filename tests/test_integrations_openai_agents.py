"""DeskSession: the Agents SDK's Session protocol on our store, checked against SQLiteSession.

The SDK desk runs for real (`Runner.run` with the SDK's own scripted model, no network); what
it stores must read back exactly as SQLiteSession reads it, and must open in our TUI as a desk
session with its handoff on the timeline.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from agents import Agent, Runner, SessionSettings, SQLiteSession, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel as SdkScriptedModel
from agents.testing import assistant_message, function_call
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supportdesk.integrations.openai_agents import CHANNEL, DeskSession
from supportdesk.integrations.sdk_items import tombstone_of
from supportdesk.items import Handoff, Message, ToolCall, ToolResult
from supportdesk.store import open_store
from supportdesk.tui.projection import snapshot

# The SDK's own tracing would export to OpenAI at exit; tests stay on loopback.
set_tracing_disabled(True)

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def where(request, tmp_path: Path) -> Path | str:
    """The desk database: a real SQLite file, or a fresh database on the test PostgreSQL server."""
    return tmp_path / "desk.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")


CUSTOMER = "I was charged twice for my plan this month"
REPLY = "I found the duplicate charge of $20 and refunded it."


@function_tool
def find_charges(customer: str) -> str:
    """The customer's recent charges."""
    return json.dumps([{"id": "ch_1", "amount": 20}, {"id": "ch_2", "amount": 20}])


def sdk_desk() -> tuple[Agent, SdkScriptedModel]:
    """The SDK's customer-service shape: triage hands billing the conversation."""
    model = SdkScriptedModel(
        [
            [function_call("transfer_to_billing_agent", {}, call_id="call_handoff")],
            [function_call("find_charges", {"customer": "C-1"}, call_id="call_charges")],
            [assistant_message(REPLY)],
        ]
    )
    billing = Agent(name="Billing Agent", model=model, tools=[find_charges])
    triage = Agent(name="Triage Agent", model=model, handoffs=[billing])
    return triage, model


async def run_desk(session) -> str:
    triage, model = sdk_desk()
    hooks = getattr(session, "hooks", None)
    result = await Runner.run(triage, CUSTOMER, session=session, **({"hooks": hooks} if hooks else {}))
    model.assert_complete()
    return result.last_agent.name


async def test_an_sdk_desk_reads_back_exactly_as_sqlite_session(where):
    reference = SQLiteSession("case-1")
    assert await run_desk(reference) == "Billing Agent"
    ours = DeskSession("case-1", where, entry_agent="Triage Agent")
    assert await run_desk(ours) == "Billing Agent"

    expected = await reference.get_items()
    assert len(expected) == 6
    assert await ours.get_items() == expected
    assert await ours.get_items(2) == await reference.get_items(2)
    # A second DeskSession on the same database sees the same session.
    assert await DeskSession("case-1", where).get_items() == expected


async def test_the_sdk_run_is_a_desk_session_with_its_handoff(where):
    await run_desk(DeskSession("case-2", where, entry_agent="Triage Agent"))
    async with await open_store(where) as store:
        info = await store.get_session("case-2")
        assert info is not None
        assert (info.channel, info.entry_agent, info.active_agent) == (CHANNEL, "Triage Agent", "Billing Agent")
        assert info.meta["source"] == "openai-agents"
        items = await store.range("case-2", 1, info.item_count)
        shape = [(i.kind, i.agent) for i in items]
        assert shape == [
            ("message", "Triage Agent"),
            ("tool_call", "Triage Agent"),
            ("handoff", "Triage Agent"),
            ("tool_call", "Billing Agent"),
            ("tool_result", "Billing Agent"),
            ("message", "Billing Agent"),
        ]
        assert isinstance(items[0], Message) and items[0].role == "customer" and items[0].text == CUSTOMER
        handoff = items[2]
        assert isinstance(handoff, Handoff)
        assert (handoff.from_agent, handoff.to_agent) == ("Triage Agent", "Billing Agent")
        call, result = items[3], items[4]
        assert isinstance(call, ToolCall) and call.arguments == {"customer": "C-1"}
        assert isinstance(result, ToolResult) and result.name == "find_charges" and "ch_2" in result.output
        assert isinstance(items[5], Message) and items[5].role == "agent" and items[5].text == REPLY

        # The panes' fold: the handoff is on the timeline, and before it triage held the case.
        end = await snapshot(store, "case-2")
        assert end is not None and end.stops == [3] and end.agent == "Billing Agent"
        assert [(h.from_agent, h.to_agent) for h in end.handoffs] == [("Triage Agent", "Billing Agent")]
        before = await snapshot(store, "case-2", 2)
        assert before is not None and before.agent == "Triage Agent" and before.stops == []


async def test_the_sdk_session_replays_in_the_tui_with_its_handoff(db_path, test_desk):
    from supportdesk.tui.app import SupportDeskApp
    from supportdesk.tui.screens.replay import ReplayScreen
    from supportdesk.tui.widgets import AgentBar, HandoffTimeline
    from tests.tui_seed import scripted_desk, until

    await run_desk(DeskSession("case-3", db_path, entry_agent="Triage Agent"))
    desk, _, _ = await scripted_desk(db_path, test_desk)
    app = SupportDeskApp(desk=desk, replay_id="case-3")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.total)
        screen = app.screen
        await until(pilot, lambda: screen.shown == 6 and not screen.workers)
        assert "handoff 1 of 1 · item 6 of 6" in str(screen.query_one("#position").render())
        await pilot.press("left_square_bracket")  # step back to the handoff
        await until(pilot, lambda: screen.shown == 3 and not screen.workers)
        assert screen.query_one(AgentBar).agent == "Billing Agent"
        assert screen.query_one(HandoffTimeline).current == 3
        await pilot.press("left")
        await until(pilot, lambda: screen.shown == 2 and not screen.workers)
        assert screen.query_one(AgentBar).agent == "Triage Agent"
    await desk.close()


async def test_an_sdk_run_shows_up_live_in_an_open_chat_screen(db_path, test_desk):
    """Staff watch the session in the TUI while the SDK app writes it through DeskSession."""
    from supportdesk.tui.app import SupportDeskApp
    from supportdesk.tui.widgets import AgentBar, Conversation, HandoffTimeline
    from tests.tui_seed import scripted_desk, until

    session = DeskSession("case-live", db_path, entry_agent="Triage Agent")
    # An earlier turn that ended (a session ending in a customer message would be resumed by the desk).
    await session.add_items([{"role": "user", "content": "hello?"}, {"role": "assistant", "content": "Hi, how can I help?"}])
    desk, _, _ = await scripted_desk(db_path, test_desk)
    app = SupportDeskApp(desk=desk, session_id="case-live")
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.chat is not None and app.chat.query_one(Conversation).last == 2)
            await run_desk(session)  # the SDK run, writing through its own connections
            screen = app.chat
            await until(pilot, lambda: screen.query_one(Conversation).last == 8)
            shown = [(i.kind, i.agent) for i in screen.query_one(Conversation).items]
            assert shown[-4:] == [
                ("handoff", "Triage Agent"), ("tool_call", "Billing Agent"), ("tool_result", "Billing Agent"), ("message", "Billing Agent"),
            ]
            assert [h.to_agent for h in screen.query_one(HandoffTimeline).handoffs] == ["Billing Agent"]
            assert screen.query_one(AgentBar).agent == "Billing Agent"
    finally:
        await desk.close()


async def test_the_desk_never_answers_an_sdk_session_mid_turn(db_path, test_desk):
    """An SDK app's session that ends in the customer's message is the SDK's turn, not ours to resume."""
    from supportdesk.engine.runner import drain
    from tests.tui_seed import scripted_desk

    await DeskSession("case-mid", db_path).add_items([{"role": "user", "content": "are you there?"}])
    desk, model, _ = await scripted_desk(db_path, test_desk)
    async with desk:
        assert await desk.runner.unfinished_turn("case-mid") is not None
        assert await drain(desk.runner.resume("case-mid")) == []
        assert (await desk.store.get_session("case-mid")).item_count == 1
    assert model.requests == []


async def test_pop_and_clear_leave_the_log_append_only(where):
    ours = DeskSession("case-4", where)
    reference = SQLiteSession("case-4")
    first = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}]
    for session in (ours, reference):
        await session.add_items(first)
        assert await session.pop_item() == {"role": "assistant", "content": "two"}
        await session.add_items([{"role": "user", "content": "three"}])
    assert await ours.get_items() == await reference.get_items()

    await ours.clear_session()
    await reference.clear_session()
    assert await ours.get_items() == await reference.get_items() == []
    assert await ours.pop_item() is None
    async with await open_store(where) as store:
        items = await store.range("case-4", 1, 100)
    # Nothing was deleted: every item is still there for replay, plus the two tombstones.
    texts = [i.text for i in items if isinstance(i, Message)]
    assert texts == ["one", "two", "three"]
    assert [tombstone_of(i) for i in items if tombstone_of(i)] == ["pop_item", "clear_session"]
    popped = next(i for i in items if tombstone_of(i) == "pop_item")
    assert popped.data["seq"] == 2


async def test_items_the_desk_wrote_come_back_as_sdk_input_items(where):
    ours = DeskSession("case-5", where)
    await ours.add_items([{"role": "user", "content": "my card was declined"}])
    async with await open_store(where) as store:
        await store.append(
            "case-5",
            [
                Message(role="staff", text="customer is on the Pro plan", agent="agent"),
                ToolCall(call_id="t1", name="find_charges", arguments={"customer": "C-1"}, agent="agent"),
                ToolResult(call_id="t1", name="find_charges", output="none", agent="agent"),
                Message(role="agent", text="Nothing was charged.", agent="agent"),
            ],
        )
    assert await ours.get_items() == [
        {"role": "user", "content": "my card was declined"},
        {"role": "user", "content": "[staff note] customer is on the Pro plan"},
        {"type": "function_call", "call_id": "t1", "name": "find_charges", "arguments": '{"customer": "C-1"}'},
        {"type": "function_call_output", "call_id": "t1", "output": "none"},
        {"role": "assistant", "content": "Nothing was charged."},
    ]


async def test_a_run_that_starts_with_another_agent_is_shown_as_a_return(where):
    """The SDK app puts the next turn back to triage: the timeline says so; the SDK never sees it."""
    session = DeskSession("case-6", where, entry_agent="Triage Agent")
    await run_desk(session)
    triage, model = sdk_desk()
    model = SdkScriptedModel([[assistant_message("Anything else?")]])
    triage = Agent(name="Triage Agent", model=model)
    await Runner.run(triage, "thanks", session=session, hooks=session.hooks)
    reference = SQLiteSession("case-6")
    await run_desk(reference)
    await Runner.run(Agent(name="Triage Agent", model=SdkScriptedModel([[assistant_message("Anything else?")]])), "thanks", session=reference)
    assert await session.get_items() == await reference.get_items()
    async with await open_store(where) as store:
        handoffs = await store.handoffs("case-6")
        info = await store.get_session("case-6")
    assert [(h.from_agent, h.to_agent, h.handoff_kind) for h in handoffs] == [
        ("Triage Agent", "Billing Agent", "route"),
        ("Billing Agent", "Triage Agent", "return"),
    ]
    assert info is not None and info.active_agent == "Triage Agent"


async def test_settings_limit_and_its_precedence(where):
    ours = DeskSession("case-7", where, session_settings={"limit": 2})
    await ours.add_items([{"role": "user", "content": str(n)} for n in range(5)])
    assert [i["content"] for i in await ours.get_items()] == ["3", "4"]
    assert [i["content"] for i in await ours.get_items(limit=3)] == ["2", "3", "4"]
    assert await ours.get_items(limit=0) == []
    assert len(await ours.get_items(limit=-1)) == 5
    assert ours.session_settings == SessionSettings(limit=2)


def test_run_sync_works_from_its_own_event_loop(where):
    session = DeskSession("case-8", where, entry_agent="Triage Agent")
    triage, _ = sdk_desk()
    result = Runner.run_sync(triage, CUSTOMER, session=session)
    assert result.final_output == REPLY
    assert len(asyncio.run(session.get_items())) == 6


async def test_a_store_the_caller_holds_open_is_used_and_left_open(where):
    async with await open_store(where) as store:
        session = DeskSession("case-10", store)
        await session.add_items([{"role": "user", "content": "hello"}])
        assert await session.get_items() == [{"role": "user", "content": "hello"}]
        assert (await store.get_session("case-10")).item_count == 1  # still open: usable after


def test_a_closed_session_refuses_writes(where):
    session = DeskSession("case-9", where)
    session.close()
    with pytest.raises(RuntimeError, match="DeskSession is closed"):
        asyncio.run(session.add_items([]))


# Random sequences of the protocol's operations give what SQLiteSession gives, call by call.
_item = st.sampled_from(
    [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "hi", "annotations": []}]},
        {"type": "function_call", "call_id": "c", "name": "lookup", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "ok"},
        {"type": "reasoning", "id": "r", "summary": []},
    ]
)
_op = st.one_of(
    st.tuples(st.just("add"), st.lists(_item, max_size=3)),
    st.tuples(st.just("pop"), st.none()),
    st.tuples(st.just("clear"), st.none()),
    st.tuples(st.just("get"), st.one_of(st.none(), st.integers(min_value=-1, max_value=4))),
)


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(_op, max_size=12))
def test_any_sequence_of_calls_matches_sqlite_session(where, ops):
    async def both() -> None:
        ours = DeskSession(f"prop-{uuid.uuid4().hex}", where)
        reference = SQLiteSession("prop")
        for name, arg in ops:
            if name == "add":
                await ours.add_items([dict(i) for i in arg])
                await reference.add_items([dict(i) for i in arg])
            elif name == "pop":
                assert await ours.pop_item() == await reference.pop_item()
            elif name == "clear":
                await ours.clear_session()
                await reference.clear_session()
            else:
                assert await ours.get_items(arg) == await reference.get_items(arg)
        assert await ours.get_items() == await reference.get_items()
        reference.close()

    asyncio.run(both())
