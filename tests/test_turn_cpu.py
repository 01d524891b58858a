"""Issue 34: what a turn costs in CPU besides the model, cut without changing what it does.

- The session's row a turn holds (`TurnReads.session`) moves with each item the turn stores,
  but is copied when it is read, not once per item (a dozen copies a message before).
- A turn builds an agent's tool specs once, however many steps the agent takes; the next turn
  builds them again, so a desk changed between turns is what the model is told.
- A step whose window and context come from the turn's memory reads them in turn, without a
  task each and a trip round the event loop (`asyncio.gather`); a turn whose reads went stale
  still asks the store for both together.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

import supportdesk.engine.turn_reads as turn_reads
from supportdesk.config import ToolLimits
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.engine.runner import drain
from supportdesk.engine.turn_reads import TurnReads
from supportdesk.items import ContextSet, Handoff, Message
from supportdesk.store import open_store
from supportdesk.wiring import open_desk
from tests.conftest import make_test_tools
from tests.scripted import ScriptedModel


async def test_the_turns_row_moves_with_what_it_stores_and_is_copied_only_when_read(db_path, monkeypatch) -> None:
    copies: list[Any] = []
    real = turn_reads.replace

    def counted(obj: Any, **changes: Any) -> Any:
        copies.append(changes)
        return real(obj, **changes)

    monkeypatch.setattr(turn_reads, "replace", counted)
    async with await open_store(db_path) as store:
        info = await store.create_session("triage", first=[Message(role="customer", text="charged twice", agent="triage")])
        reads = await TurnReads.read(store, info.id, 10)
        stored = await store.append(info.id, [
            Message(role="agent", text="Bringing in billing.", agent="triage"),
            Handoff(from_agent="triage", to_agent="billing", reason="refund", agent="triage"),
        ])
        stored += await store.append(info.id, [
            ContextSet(key="category", value="billing", writer="billing", agent="billing"),
            Message(role="agent", text="Found it.", agent="billing"),
        ])
        for item in stored:
            reads.add(item)
        assert copies == []  # four items stored, the row not copied once
        held, row = reads.session, await store.get_session(info.id)
        assert held is not None and row is not None
        # The row as the store has it now: the handoff's agent kept past the items after it.
        assert (held.item_count, held.active_agent, held.updated_at) == (row.item_count, row.active_agent, row.updated_at) == (
            5, "billing", stored[-1].created_at,
        )
        assert reads.session is held and len(copies) == 1  # read again: no copy


async def test_a_turn_builds_an_agents_tool_specs_once_and_the_next_turn_anew(db_path, test_desk) -> None:
    tools, refunds = make_test_tools()
    built: list[str] = []
    real = tools.specs

    def specs(names: list[str], desk: Any = None, **kw: Any) -> Any:
        built.append(",".join(names))
        return real(names, desk, **kw)

    tools.specs = specs  # type: ignore[method-assign]
    script = [
        Transfer("billing", "charged twice"),
        CallTools([RequestedCall("c1", "refund", {"amount": 5.0})]),
        CallTools([RequestedCall("c2", "refund", {"amount": 6.0})]),
        Answer("Refunded."),
        Answer("Anything else?"),
    ]
    model = ScriptedModel(script)
    async with await open_desk(db_path, test_desk, provider=model, tools=tools, customers=False) as desk:
        events = await drain(desk.runner.send(None, "I was charged twice"))
        sid = events[0].session_id
        assert [r.agent.name for r in model.requests] == ["triage", "billing", "billing", "billing"]
        assert built == ["", "refund,explode"]  # billing's three steps: built once
        assert refunds == [5.0, 6.0]
        # Each request has its own list, equal to a fresh build (a model may keep or change it).
        lists = [r.tools for r in model.requests[1:]]
        assert lists[0] == lists[1] == lists[2] == real(["refund", "explode"], desk.config)
        assert lists[0] is not lists[1]
        # Changed between turns: the next turn's model is told the new limit.
        desk.config.tools["refund"] = ToolLimits(approval_threshold=3.0)  # as `[tools.refund]` says
        await drain(desk.runner.send(sid, "thanks"))
        assert built == ["", "refund,explode", "refund,explode"]
        [refund] = [t for t in model.requests[-1].tools if t.name == "refund"]
        assert refund.limits.approval_threshold == 3.0


@pytest.fixture
def gathered(monkeypatch) -> list[int]:
    """Calls of asyncio.gather made by the runner."""
    import supportdesk.engine.runner as runner

    calls: list[int] = []
    real = asyncio.gather

    class Asyncio:
        def __getattr__(self, name: str) -> Any:
            return getattr(asyncio, name)

        @staticmethod
        def gather(*aws: Any, **kw: Any) -> Any:
            calls.append(len(aws))
            return real(*aws, **kw)

    monkeypatch.setattr(runner, "asyncio", Asyncio())
    return calls


async def test_a_step_reads_its_window_and_context_from_the_turn_without_gathering(db_path, test_desk, gathered) -> None:
    tools, _ = make_test_tools()
    model = ScriptedModel([Transfer("billing", "charged twice", context={"category": "billing"}), Answer("Refunded.")])
    async with await open_desk(db_path, test_desk, provider=model, tools=tools, customers=False) as desk:
        await drain(desk.runner.send(None, "I was charged twice"))
        assert [len(r.history) for r in model.requests] == [1, 3]  # (the message; + the context, the handoff)
        assert model.requests[1].context == {"category": "billing"}
        assert gathered == []


async def test_a_stale_turn_still_reads_both_from_the_store_together(db_path, test_desk, gathered) -> None:
    """Something stored behind the turn's back (a status the turn was not shown): its reads
    go to the store, the window and the context asked together, and the step sees both."""
    tools, _ = make_test_tools()
    desk_box: dict[str, Any] = {}

    def behind_its_back(request: Any) -> Any:
        return Transfer("billing", "charged twice", context={"category": "billing"})

    async def stored_meanwhile(request: Any) -> None:
        store = desk_box["desk"].store
        await store.append(request.session_id, [ContextSet(key="note", value="x", writer="staff", agent="triage")])

    class Sneaky(ScriptedModel):
        async def stream(self, request: Any):  # type: ignore[override]
            if len(self.requests) == 0:
                await stored_meanwhile(request)
            async for out in super().stream(request):
                yield out

    model = Sneaky([behind_its_back, Answer("Refunded.")])
    async with await open_desk(db_path, test_desk, provider=model, tools=tools, customers=False) as desk:
        desk_box["desk"] = desk
        await drain(desk.runner.send(None, "I was charged twice"))
        assert model.requests[1].context == {"category": "billing", "note": "x"}
        assert [i.kind for i in model.requests[1].history] == ["message", "context_set", "context_set", "handoff"]
        assert gathered == [2]


async def test_a_call_reads_its_tools_limits_once(db_path, test_desk) -> None:
    """A call's checks and its run share one context with the tool's limits on the desk: read
    once a call (and once for the spec the model is told), not once by the checks and again by
    the run."""
    tools, refunds = make_test_tools()
    read: list[str] = []
    real = test_desk.limits_of

    def limits_of(tool: str, declared: ToolLimits) -> ToolLimits:
        read.append(tool)
        return real(tool, declared)

    test_desk.limits_of = limits_of  # type: ignore[method-assign]
    model = ScriptedModel([Transfer("billing", "charged twice"), CallTools([RequestedCall("c1", "refund", {"amount": 5.0})]), Answer("Done.")])
    async with await open_desk(db_path, test_desk, provider=model, tools=tools, customers=False) as desk:
        await drain(desk.runner.send(None, "I was charged twice"))
        assert refunds == [5.0]
        assert read.count("refund") == 2  # the spec billing's steps are told, the call


async def test_the_offline_model_finds_a_texts_slots_once(tmp_path) -> None:
    """The refund step reads the days and charges the customer's words name (dialogue.days_named,
    point_at) from the same texts the view read: slots and dates found once per text, kept like
    the view's (a second message with the same words finds nothing anew), and the same answer."""
    from supportdesk.config import load_desk
    from supportdesk.engine.events import Appended
    from supportdesk.models.offline import OfflineModel, slots
    from tests.conftest import REPO

    found: list[str] = []
    real = slots.extract_dates

    def counted(text: str) -> Any:
        found.append(text)
        return real(text)

    cfg = load_desk(REPO / "agents.toml")
    text = "I was charged twice this month (kept-slots test), my email is dana@example.com"
    async with await open_desk(tmp_path / "desk.db", cfg, provider=OfflineModel(cfg)) as desk:
        answers = []
        for n in range(2):
            sid = await desk.runner.new_session()
            slots.extract_dates = counted  # type: ignore[assignment]
            try:
                items = [e.item async for e in desk.runner.send(sid, text) if isinstance(e, Appended)]
            finally:
                slots.extract_dates = real
            answers.append([(i.kind, getattr(i, "text", "")) for i in items])
            if n == 0:
                assert found and len(found) == len(set(found))  # the first message: each text once
                assert any(i.kind == "offer" for i in items)
                found.clear()
        assert found == []  # the same words again: nothing found anew
        assert answers[0] == answers[1]
    assert slots.extract("the 3rd one") is slots.extract("".join(["the 3rd ", "one"]))
    assert slots.extract("the 3rd one", amount_asked=True) is not slots.extract("the 3rd one")


# --- the offline model's own CPU per message (issue 34) ---------------------------------------------
# What depends only on a text is read once per text, what depends only on the desk once per desk;
# every answer stays the same (the eval conversations' stored items were compared before/after).


def _offline_request(cfg: Any, agent: str, history: list[Any], tools: list[Any] | None = None) -> Any:
    from supportdesk.engine.protocol import StepRequest

    return StepRequest(
        session_id="s", agent=cfg.agents[agent], desk=cfg, tools=tools or [], handoff_targets=[], history=history, context={}
    )


def _charges_log(output: str) -> list[Any]:
    from supportdesk.items import ToolCall, ToolResult

    return [
        Message(role="customer", text="I was charged twice (parse-once test)", agent="billing", seq=1),
        ToolCall(call_id="c1", name="find_charges", arguments={"customer_id": "cus_1"}, agent="billing", seq=2),
        ToolResult(call_id="c1", name="find_charges", output=output, agent="billing", seq=3),
    ]


def test_a_stored_tool_output_is_parsed_once_per_text_and_a_changed_text_anew(monkeypatch) -> None:
    import json as real_json

    import supportdesk.models.offline.view as view_module
    from supportdesk.config import load_desk
    from tests.conftest import REPO

    parsed: list[str] = []

    class CountingJson:
        @staticmethod
        def loads(text: str) -> Any:
            parsed.append(text)
            return real_json.loads(text)

    monkeypatch.setattr(view_module, "json", CountingJson)
    cfg = load_desk(REPO / "agents.toml")
    first = '{"charges": [{"id": "ch_parse_once_1", "amount": 5.0}]}'
    views = [view_module.View(_offline_request(cfg, "billing", _charges_log(first))) for _ in range(3)]
    assert parsed == [first]  # three steps read the log: the output parsed once
    assert [v.tools[0].output for v in views] == [{"charges": [{"id": "ch_parse_once_1", "amount": 5.0}]}] * 3
    # A changed text is parsed anew, and read as what it now says.
    changed = first.replace("5.0", "7.0")
    view = view_module.View(_offline_request(cfg, "billing", _charges_log(changed)))
    assert parsed == [first, changed]
    assert view.tools[0].output["charges"][0]["amount"] == 7.0
    # Text that holds no JSON stays the text (and is not parsed again either).
    for _ in range(2):
        view = view_module.View(_offline_request(cfg, "billing", _charges_log("no charges found (parse-once)")))
        assert view.tools[0].output == "no charges found (parse-once)"
    assert parsed == [first, changed, "no charges found (parse-once)"]


def test_an_agents_message_is_read_for_an_amount_asked_once_per_text(monkeypatch) -> None:
    import supportdesk.models.offline.view as view_module
    from supportdesk.config import load_desk
    from tests.conftest import REPO

    read: list[str] = []
    real = view_module.slot_extraction.ASKS_FOR_AMOUNT

    class Counting:
        @staticmethod
        def search(text: str) -> Any:
            read.append(text)
            return real.search(text)

    monkeypatch.setattr(view_module.slot_extraction, "ASKS_FOR_AMOUNT", Counting)
    cfg = load_desk(REPO / "agents.toml")
    asked = "How much was the charge you want refunded? (asked-once test)"
    history = [
        Message(role="customer", text="refund please", agent="billing", seq=1),
        Message(role="agent", text=asked, agent="billing", seq=2),
        Message(role="customer", text="it was 12.50", agent="billing", seq=3),
    ]
    views = [view_module.View(_offline_request(cfg, "billing", history)) for _ in range(3)]
    assert read == [asked]
    assert all(v.facts.amounts == [12.5] for v in views)  # read as the amount asked for, each time


def test_the_offline_model_plans_a_desk_once_and_a_new_or_changed_desk_anew(monkeypatch) -> None:
    from supportdesk.config import load_desk
    from supportdesk.engine.protocol import Transfer as TransferAction
    from supportdesk.models.offline import OfflineModel
    from tests.conftest import REPO

    cfg = load_desk(REPO / "agents.toml")
    model = OfflineModel(cfg)
    planned: list[str] = []
    real = model._router

    def counted(desk: Any, agent: Any) -> Any:
        planned.append(agent.name)
        return real(desk, agent)

    monkeypatch.setattr(model, "_router", counted)
    entry = cfg.desk.entry
    request = _offline_request(cfg, entry, [Message(role="customer", text="I was charged twice for my plan", agent=entry, seq=1)])
    actions = [model.decide(request) for _ in range(3)]
    assert planned == [entry]  # three steps on one desk: its routing worked out once
    assert all(isinstance(a, TransferAction) and a.to_agent == "billing" for a in actions)
    # A new desk (another config object) is worked out anew, and routes the same.
    fresh = load_desk(REPO / "agents.toml")
    again = model.decide(_offline_request(fresh, entry, list(request.history)))
    assert planned == [entry, entry]
    assert isinstance(again, TransferAction) and again.to_agent == "billing"
    # The same desk changed in place (the entry agent loses its handoffs): worked out anew, and
    # the entry agent no longer routes.
    fresh.agents[entry].handoffs = []
    changed = model.decide(_offline_request(fresh, entry, list(request.history)))
    assert planned == [entry, entry, entry]
    assert not isinstance(changed, TransferAction)
    # A desk whose id was another's, freed: the other's plan is not taken for it.
    reused = load_desk(REPO / "agents.toml")
    model._by_desk[id(reused)] = (fresh, {(entry, tuple(reused.agents[entry].handoffs)): (None, False)})
    routed = model.decide(_offline_request(reused, entry, list(request.history)))
    assert isinstance(routed, TransferAction) and routed.to_agent == "billing"


def test_an_agents_skills_are_kept_by_its_tools() -> None:
    from supportdesk.config import load_desk
    from supportdesk.models.offline.specialist import skills_of
    from tests.conftest import REPO

    cfg = load_desk(REPO / "agents.toml")
    billing = cfg.agents["billing"]
    assert "money" in skills_of(billing)
    assert skills_of(billing) is skills_of(billing)  # kept, not worked out per call
    other = dataclasses.replace(billing, tools=["request_human"])  # the same name, other tools
    assert "money" not in skills_of(other)
    assert "money" in skills_of(billing)


def test_pure_readings_of_a_message_are_made_once_per_text(monkeypatch) -> None:
    from supportdesk.models.offline import cues, slots
    from supportdesk.readers import gates

    asked: list[str] = []
    real = gates.reads_money

    def counted(text: str) -> Any:
        asked.append(text)
        return real(text)

    monkeypatch.setattr(gates, "reads_money", counted)
    text = "can you help me change how my thing works (kept-readings test)"
    first = [cues.names_money(text) for _ in range(3)]
    assert asked == [text] and first == [first[0]] * 3
    other = text + " please"
    cues.names_money(other)
    assert asked == [text, other]  # a changed text is read anew
    for reading in (cues.vague, cues.beside_facts, cues.other_language, slots.names_relative_day, slots.months_named):
        found = reading(text)
        assert reading.kept[text] == found  # type: ignore[attr-defined]
