"""The history window: budgets in items and tokens, pairs never split, one summary note for what
fell out (extractive offline, a cached summary call for LLM providers), and the inspector's line."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from supportdesk.config import parse_desk
from supportdesk.wiring import open_desk
from supportdesk.engine.history_window import SUMMARY_PREFIX, cut, item_tokens
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.engine.runner import drain
from supportdesk.items import Handoff, Message, ToolCall, ToolResult
from tests.conftest import TEST_DESK, make_test_tools
from tests.scripted import ScriptedModel


def _config(extra: str):
    return parse_desk(TEST_DESK.replace("[agents.triage]", extra + "\n[agents.triage]", 1), "test.toml", tool_names=["refund", "explode"])


# --- the cut ------------------------------------------------------------------------------------


@st.composite
def logs(draw):
    """A plausible log: messages, tool calls each followed (later, same step) by their results, handoffs."""
    items, seq = [], 0
    for _ in range(draw(st.integers(1, 60))):
        kind = draw(st.sampled_from(["message", "tools", "handoff"]))
        if kind == "message":
            seq += 1
            items.append(Message(role=draw(st.sampled_from(["customer", "agent"])), text="x" * draw(st.integers(1, 400)), seq=seq))
        elif kind == "tools":
            calls = draw(st.integers(1, 3))
            ids = [f"c{seq}-{n}" for n in range(calls)]
            for call_id in ids:
                seq += 1
                items.append(ToolCall(call_id=call_id, name="lookup", arguments={"q": "y" * draw(st.integers(0, 50))}, seq=seq))
            for call_id in ids:
                seq += 1
                items.append(ToolResult(call_id=call_id, name="lookup", output="z" * draw(st.integers(0, 300)), seq=seq))
        else:
            seq += 1
            items.append(Handoff(from_agent="a", to_agent="b", seq=seq))
    return items


@settings(max_examples=120, deadline=None, derandomize=True)
@given(items=logs(), max_items=st.integers(4, 40), max_tokens=st.one_of(st.none(), st.integers(64, 2000)))
def test_the_cut_keeps_budgets_and_never_splits_a_pair(items, max_items, max_tokens):
    start = cut(items, max_items, max_tokens)
    window = items[start:]
    assert window and window[-1] is items[-1]  # the newest item is always seen
    assert len(window) <= max_items
    if max_tokens is not None and len(window) > 1:
        assert sum(item_tokens(i) for i in window) <= max_tokens
    calls_in = {i.call_id for i in window if isinstance(i, ToolCall)}
    orphans = [i for i in window if isinstance(i, ToolResult) and i.call_id not in calls_in]
    if len(window) > 1:
        assert not orphans, "a result is in the window without its call"
        assert start == 0 or not isinstance(items[start - 1], Handoff), "the window begins just after a handoff"


# --- a 10,000-item session ------------------------------------------------------------------------------


async def seed_long(store, session_id: str, total: int) -> None:
    await store.create_session("triage", session_id=session_id)
    batch, seq = [], 0
    opener = Message(role="customer", text="My invoice INV-1 shows the Pro plan twice", agent="triage")
    batch.append(opener)
    for n in range(1, total - 1):
        if n % 97 == 0:
            batch.append(Handoff(from_agent="triage", to_agent="billing", reason=f"question {n}", agent="triage"))
        elif n % 5 == 0:
            batch.append(ToolCall(call_id=f"c{n}", name="refund", arguments={"amount": 1.0}, agent="billing"))
        elif n % 5 == 1 and n > 5 and (n - 1) % 97:
            batch.append(ToolResult(call_id=f"c{n - 1}", name="refund", output="ok " * 20, agent="billing"))
        else:
            batch.append(Message(role="customer" if n % 2 else "agent", text=f"message {n} " + "words " * 30, agent="billing"))
        if len(batch) >= 1000:
            await store.append(session_id, batch)
            batch = []
    # The last turn ended with an answer (a session ending in a customer message has a turn to finish).
    batch.append(Message(role="agent", text="Anything else I can do?", agent="billing"))
    await store.append(session_id, batch)


async def test_a_10000_item_session_is_held_to_the_budget_on_every_model_call(db_path):
    config = _config("[desk.history]\nmax_items = 60\nmax_tokens = 3000\n")
    tools, _ = make_test_tools()
    model = ScriptedModel([Transfer("senior", "again"), CallTools([RequestedCall("r1", "refund", {"amount": 5.0})]), Answer("Done.")])
    desk = await open_desk(db_path, config, provider=model, tools=tools, customers=False)
    async with desk:
        await seed_long(desk.store, "long", 10_000)
        assert await desk.store.last_seq("long") == 10_000
        events = await drain(desk.runner.send("long", "and one more refund please"))
        reply = [e for e in events if getattr(e, "item", None) is not None][-1].item
    assert len(model.requests) == 3
    for request in model.requests:
        note, *seen = request.history
        assert isinstance(note, Message) and note.role == "system" and note.text.startswith(SUMMARY_PREFIX)
        assert "My invoice INV-1" in note.text  # the opener survives the cut, in the note
        assert len(seen) <= 60
        assert sum(item_tokens(i) for i in request.history) <= 3000
        assert seen[-1].seq >= 10_001  # the newest items are in it
    # The inspector's figure travels with the reply.
    assert reply.meta["history"]["items"] <= 60 and reply.meta["history"]["dropped"] > 9_900
    assert reply.meta["history"]["tokens"] <= 3000


async def test_an_agent_can_have_its_own_window(db_path):
    config = _config("[desk.history]\nmax_items = 50\n")
    config.agents["billing"].history = replace(config.desk.history, max_items=8)
    tools, _ = make_test_tools()
    model = ScriptedModel([Transfer("triage", "not mine"), Answer("ok")])
    desk = await open_desk(db_path, config, provider=model, tools=tools, customers=False)
    async with desk:
        await seed_long(desk.store, "s", 200)  # billing holds it by now
        await drain(desk.runner.send("s", "hello"))
    billing_call, triage_call = model.requests
    assert (billing_call.agent.name, triage_call.agent.name) == ("billing", "triage")
    assert len(triage_call.history) <= 51 and len(billing_call.history) <= 9
    assert len(triage_call.history) > 9


class SummarisingModel(ScriptedModel):
    """A provider with a summary call, as an LLM provider has (counting its calls)."""

    def __init__(self, script, fail: bool = False):
        super().__init__(script)
        self.summaries: list[tuple[int, str | None]] = []
        self.fail = fail

    async def summarise(self, items, previous):
        self.summaries.append((len(items), previous))
        if self.fail:
            raise RuntimeError("summary server down")
        return f"summary of {len(items)} items" + (" after an earlier summary" if previous else "")


async def test_an_llm_summary_is_cached_per_cut_and_extended_as_the_cut_moves(db_path):
    config = _config("[desk.history]\nmax_items = 20\n")
    tools, _ = make_test_tools()
    model = SummarisingModel([CallTools([RequestedCall("c1", "explode", {})]), Answer("one"), Answer("two")])
    desk = await open_desk(db_path, config, provider=model, tools=tools, customers=False)
    async with desk:
        await seed_long(desk.store, "s", 500)
        await drain(desk.runner.send("s", "first"))
        await drain(desk.runner.send("s", "second"))
    # Three model calls; the cut moved each time, so each needed a summary: the first from a
    # bounded sample, the next ones only from the items that newly fell out, with the previous.
    assert len(model.summaries) == 3
    assert model.summaries[0][1] is None and model.summaries[0][0] <= 220
    assert all(previous is not None and count <= 10 for count, previous in model.summaries[1:])
    assert model.requests[-1].history[0].text.endswith("after an earlier summary")


async def test_the_same_cut_is_not_summarised_twice(db_path):
    config = _config("[desk.history]\nmax_items = 20\n")
    tools, _ = make_test_tools()
    model = SummarisingModel([Answer("one")])
    desk = await open_desk(db_path, config, provider=model, tools=tools, customers=False)
    async with desk:
        await seed_long(desk.store, "s", 300)
        await desk.runner.windows.build(desk.store, "s", config.desk.history)
        await desk.runner.windows.build(desk.store, "s", config.desk.history)
    assert desk.runner.windows.summary_calls == 1


async def test_a_failing_summary_call_falls_back_to_the_extractive_note(db_path):
    config = _config("[desk.history]\nmax_items = 20\n")
    tools, _ = make_test_tools()
    model = SummarisingModel([Answer("fine")], fail=True)
    desk = await open_desk(db_path, config, provider=model, tools=tools, customers=False)
    async with desk:
        await seed_long(desk.store, "s", 300)
        events = await drain(desk.runner.send("s", "hello"))
    assert events[-1].outcome == "answered"
    assert "My invoice INV-1" in model.requests[0].history[0].text


async def test_the_inspector_says_how_many_items_the_last_call_saw(db_path, test_desk):
    from supportdesk.tui.app import SupportDeskApp
    from supportdesk.tui.widgets import ContextInspector
    from tests.tui_seed import until

    config = _config("[desk.history]\nmax_items = 30\n")
    tools, _ = make_test_tools()
    desk = await open_desk(db_path, config, provider=ScriptedModel([Answer("Here to help.")]), tools=tools, customers=False)
    try:
        await seed_long(desk.store, "s", 120)
        await drain(desk.runner.send("s", "hello"))
        app = SupportDeskApp(desk=desk, session_id="s")
        async with app.run_test(size=(160, 45)) as pilot:
            await until(pilot, lambda: getattr(app, "chat", None) is not None)
            inspector = app.chat.query_one(ContextInspector)
            await until(pilot, lambda: inspector.seen is not None)
            assert inspector.seen["items"] <= 30 and inspector.seen["dropped"] > 90
            expected = f"last call saw {inspector.seen['items']} items (+{inspector.seen['dropped']} summarised)"
            assert expected in str(inspector.border_subtitle)
    finally:
        await desk.close()


async def test_an_openai_compatible_server_writes_the_summary_once_per_cut(tmp_path):
    """The summary call over real HTTP (the fake server on 127.0.0.1): asked once for a cut,
    then the model call carries it as the window's first message."""
    from supportdesk.models.openai_compat import SUMMARY_INSTRUCTIONS, OpenAIProvider
    from supportdesk.store import open_store
    from tests.fake_llm_server import Complete, FakeLLMServer
    from tests.llm_desk import make_config

    with FakeLLMServer() as server:
        config = make_config(server.url, stream=False)
        config.desk.history = replace(config.desk.history, max_items=20)
        server.push(Complete({"role": "assistant", "content": "Customer disputes INV-1; billing refunded $1 twice."}))
        provider = OpenAIProvider(config)
        from supportdesk.engine.history_window import HistoryWindows

        windows = HistoryWindows(provider)
        async with await open_store(tmp_path / "desk.db") as store:
            await seed_long(store, "s", 300)
            first = await windows.build(store, "s", config.desk.history)
            again = await windows.build(store, "s", config.desk.history)
        await provider.aclose()
    assert len(server.requests) == 1  # the second build used the cached summary
    request = server.requests[0]
    assert request["messages"][0]["content"] == SUMMARY_INSTRUCTIONS and request.get("stream") in (False, None)
    assert "My invoice INV-1" in request["messages"][1]["content"]
    assert first.items[0].text.endswith("Customer disputes INV-1; billing refunded $1 twice.")
    assert again.items[0].text == first.items[0].text


# --- counting a window's tokens once per item (issue 34) ------------------------------------------


def test_an_items_tokens_are_counted_once_while_kept_and_always_its_own(monkeypatch):
    """Every model step re-counts its window; a kept item is counted once (its text is not made
    again), and a count is only ever an item's own: an equal-looking item of another size, or one
    built after the first is gone, gets its own count."""
    import supportdesk.engine.history_window as hw

    made: list[object] = []
    real = hw.item_text
    monkeypatch.setattr(hw, "item_text", lambda item: made.append(item) or real(item))
    call = ToolCall(call_id="c1", name="find_charges", arguments={"email": "dana@example.com"}, seq=7, session_id="s")
    first = item_tokens(call)
    assert first == (len(real(call)) + 3) // 4 + 4
    assert [item_tokens(call) for _ in range(3)] == [first] * 3
    assert made == [call]  # counted once
    longer = replace(call, arguments={"email": "dana@example.com", "note": "x" * 400})  # same session and seq
    assert item_tokens(longer) == (len(real(longer)) + 3) // 4 + 4 > first
    for n in range(50):  # items made and dropped: a freed item's id may be reused by the next
        short = Message(role="customer", text="y" * n, seq=1, session_id="s")
        assert item_tokens(short) == (n + 3) // 4 + 4
