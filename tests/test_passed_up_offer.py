"""Issue 38.1 (offers): an action above the offering agent's limit, offered on behalf of the agent
it is passed up to (`RequestedCall.for_agent`, `Offer.for_agent`). The customer is asked once,
the exact call; their yes hands the conversation over and that agent runs exactly that call,
once. The offering agent never runs it, the limit stays in the tool, and a yes to anything else
runs nothing (engine/runner.py's gate)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from supportdesk.config import parse_desk
from supportdesk.engine.confirmation import names_another, read_answer
from supportdesk.engine.events import Appended, Done
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.engine.runner import drain
from supportdesk.engine.tools import ToolRegistry
from supportdesk.items import Confirmation, Decline, Handoff, Item, Message, Offer, ToolCall, ToolResult
from supportdesk.store.sessions import SessionStore
from supportdesk.wiring import open_desk
from tests.conftest import TEST_DESK, TEST_REFUND_LIMITS, add_explode
from tests.scripted import ScriptedModel


class Amount(BaseModel):
    amount: float


def refund_tools() -> tuple[ToolRegistry, list[tuple[float, str, str]]]:
    """A refund that waits for the customer's yes (level 1 up to $50, level 2 up to $2000):
    every run records its amount, the agent that ran it and its idempotency key."""
    registry = ToolRegistry()
    ran: list[tuple[float, str, str]] = []

    @registry.tool("refund", "Refund", Amount, effect="money", confirm="customer", limits=TEST_REFUND_LIMITS,
                   describe=lambda a: f"refund ${a.amount:.2f}")
    def refund(ctx, args: Amount):
        ran.append((args.amount, ctx.agent.name, ctx.idempotency_key))
        return {"refunded": args.amount}

    add_explode(registry)

    return registry, ran


def passed_up(amount: float, to: str = "senior") -> CallTools:
    """Billing's step: the refund, offered on behalf of `to`."""
    return CallTools([RequestedCall("call_up", "refund", {"amount": amount}, for_agent=to)])


async def items_of(events) -> list[Item]:
    return [e.item for e in await drain(events) if isinstance(e, Appended)]


async def offered_up(db_path, script: list[Any], extra: str = ""):
    tools, ran = refund_tools()
    desk = await open_desk(db_path, parse_desk(TEST_DESK + extra, "up.toml", tool_names=["refund", "explode"]),
                           provider=ScriptedModel(script), tools=tools, customers=False)
    first = await items_of(desk.runner.send(None, "what's the $120 charge on my account?"))
    return desk, first[0].session_id, first, ran


async def test_the_yes_hands_over_and_the_agent_passed_up_to_runs_exactly_the_offered_call_once(db_path):
    desk, sid, first, ran = await offered_up(db_path, [Transfer("billing", "money"), passed_up(120), Answer("refunded")])
    async with desk:
        [offer] = [i for i in first if isinstance(i, Offer)]
        assert (offer.agent, offer.for_agent, offer.arguments) == ("billing", "senior", {"amount": 120})
        assert ran == []  # asked, not run
        items = await items_of(desk.runner.send(sid, "yes please, thanks"))
        confirmed = next(i for i in items if isinstance(i, Confirmation))
        handoff = next(i for i in items if isinstance(i, Handoff))
        call = next(i for i in items if isinstance(i, ToolCall))
        result = next(i for i in items if isinstance(i, ToolResult))
        assert confirmed.offer_id == offer.offer_id
        assert (handoff.from_agent, handoff.to_agent, handoff.handoff_kind) == ("billing", "senior", "escalate")
        assert items.index(confirmed) < items.index(handoff) < items.index(call)
        assert (call.agent, call.arguments) == ("senior", offer.arguments) and not result.is_error
        assert [(amount, agent) for amount, agent, _ in ran] == [(120, "senior")]
        answer = [i for i in items if isinstance(i, Message) and i.role == "agent"][-1]
        assert (answer.text, answer.agent) == ("refunded", "senior")  # the agent that ran it answers
        await items_of(desk.runner.send(sid, "yes"))  # a yes later confirms nothing more
        assert len(ran) == 1


async def test_the_agent_that_passes_a_call_up_never_runs_it(db_path):
    """A desk that does not hold the refund for a yes: a call passed up is refused, not run by
    the agent that passed it (even within its own limit)."""
    desk, _, first, ran = await offered_up(db_path, [Transfer("billing", "money"), passed_up(20), Answer("ok")],
                                           extra='\n[confirm]\nrefund = "none"\n')
    async with desk:
        assert ran == [] and not [i for i in first if isinstance(i, Offer)]
        result = next(i for i in first if isinstance(i, ToolResult))
        assert result.is_error and "runs only on the customer's yes" in result.output


async def test_a_call_is_passed_up_only_to_a_handoff_target_that_has_the_tool(db_path):
    # technical: not one of billing's handoffs; triage: one, without the refund tool.
    script = [Transfer("billing", "money"), passed_up(120, "technical"), passed_up(120, "triage"), Answer("ok")]
    desk, _, first, ran = await offered_up(db_path, script)
    async with desk:
        assert ran == [] and not [i for i in first if isinstance(i, Offer)]
        refusals = [i.output for i in first if isinstance(i, ToolResult)]
        assert len(refusals) == 2 and all(r.startswith("refused") for r in refusals)


async def test_the_limit_of_the_agent_passed_up_to_stays_in_the_tool(db_path):
    desk, _, first, ran = await offered_up(db_path, [Transfer("billing", "money"), passed_up(5000), Answer("no")])
    async with desk:
        assert ran == [] and not [i for i in first if isinstance(i, Offer)]
        assert any(isinstance(i, ToolResult) and i.output.startswith("refused by policy") for i in first)


async def test_a_yes_to_another_amount_or_a_hedge_runs_nothing_and_hands_nothing_over(tmp_path):
    for n, (answer, why) in enumerate((("yes, refund $70", "change_of_mind"), ("i guess so?", "question"), ("no thanks", "no"))):
        script = [Transfer("billing", "money"), passed_up(120), Answer("ok")]
        desk, sid, _, ran = await offered_up(tmp_path / f"{n}.db", script)
        async with desk:
            items = await items_of(desk.runner.send(sid, answer))
            assert [i.why for i in items if isinstance(i, Decline)] == [why], answer
            assert not [i for i in items if isinstance(i, Handoff)] and ran == [], answer


async def test_a_yes_whose_run_was_not_stored_is_run_again_under_the_same_key(db_path, monkeypatch):
    """The confirmed call ran, then its items failed to store (the window a crash hits): the
    retried turn reads the same yes and runs the call under the offer's key again, as the agent
    passed up to, so the business data replays the refund instead of making a second one."""
    desk, sid, _, ran = await offered_up(db_path, [Transfer("billing", "money"), passed_up(120), Answer("refunded")])
    append = SessionStore.append
    failed: list[bool] = []

    async def append_once_failing(self, session_id, items, **kw):  # type: ignore[no-untyped-def]
        if not failed and any(isinstance(i, ToolResult) and i.name == "refund" and not i.is_error for i in items):
            failed.append(True)
            raise OSError("disk full")
        return await append(self, session_id, items, **kw)

    monkeypatch.setattr(SessionStore, "append", append_once_failing)
    async with desk:
        try:
            await drain(desk.runner.send(sid, "yes"))
        except OSError:
            pass
        assert failed and len(ran) == 1
        events = await drain(desk.runner.retry_turn(sid))
        assert [(amount, agent) for amount, agent, _ in ran] == [(120, "senior"), (120, "senior")]
        assert ran[0][2] == ran[1][2]  # one key: the data layer's replay, not a second refund
        assert [e.active_agent for e in events if isinstance(e, Done)] == ["senior"]


# --- what the gate reads as a yes to the exact offer (engine/confirmation.py) --------------------


def test_an_acknowledgement_then_a_question_is_no_yes():
    """"ok and why is it so much" after an offer asks about the charge; read as a yes, it ran
    the refund passed up to the senior (money-6's conversation, once the refund was offered)."""
    for text in ("ok and why is it so much", "ok why is it so much", "alright and how long does it take"):
        assert read_answer(text, "Shall I have them refund $129.99?") != "yes", text


def test_a_yes_naming_another_sum_by_its_currency_sign_names_another_than_the_offered():
    assert names_another("yes, refund $70", {"amount": 120}, [])
    assert names_another("yes but only €1,000", {"amount": 1299.99}, [])
    assert not names_another("yes refund the $120 please", {"amount": 120}, [])
    assert not names_another("yes, $1,299.99 is right", {"amount": 1299.99}, [])


def test_the_offers_own_action_asked_for_with_thanks_is_a_yes_and_nothing_beside_it_is():
    """"refund it then, thanks a lot" after the offer of that refund asks for exactly it (money-12's
    held conversation: read as no answer, the senior asked again); a time, a condition, another
    choice or a question beside it, or thanks alone, is no yes."""
    offer = "Shall I have them refund $129.99 for the duplicate charge on March 3, 2026 (charge CH-9008)?"
    for text in ("refund it then, thanks a lot", "ok refund it, cheers", "Refund it please, thank you very much"):
        assert read_answer(text, offer) == "yes", text
    for text in ("thanks a lot", "refund it tomorrow thanks", "refund it if you can", "refund it?",
                 "refund the other one thanks", "cancel it thanks"):
        assert read_answer(text, offer) != "yes", text
