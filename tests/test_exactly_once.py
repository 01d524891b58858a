"""Exactly-once across a retried or resumed turn: a side-effecting call's idempotency key numbers
the call among the turn's calls of that tool, counting the ones already stored before the turn
stopped (`Runner._turn_start`). Were the stored calls not counted, a resumed turn's second refund
would get the first one's key, the data layer would replay the first refund, and the log would show
a success that moved less money. Fast, in one process: the crash is a turn left mid-way and closed.
"""

from __future__ import annotations

from pydantic import BaseModel

from supportdesk.engine.events import Appended
from supportdesk.engine.protocol import Answer, CallTools, ProviderError, RequestedCall, Transfer
from supportdesk.engine.runner import drain
from supportdesk.engine.tools import ToolRegistry
from supportdesk.wiring import open_desk
from tests.conftest import add_explode
from tests.scripted import ScriptedModel


class Amount(BaseModel):
    amount: float


def keyed_tools() -> tuple[ToolRegistry, list[tuple[float, str]]]:
    """A `refund` that records the idempotency key each call was given."""
    registry = ToolRegistry()
    calls: list[tuple[float, str]] = []

    @registry.tool("refund", "Refund an amount", Amount)
    def refund(ctx, args: Amount):
        calls.append((args.amount, ctx.idempotency_key))
        return {"refunded": args.amount}

    add_explode(registry)

    return registry, calls


def refund(call_id: str, amount: float) -> CallTools:
    return CallTools([RequestedCall(call_id, "refund", {"amount": amount})])


async def test_a_resumed_turn_numbers_its_calls_after_the_ones_stored_before_the_crash(db_path, test_desk):
    tools, calls = keyed_tools()
    model = ScriptedModel([Transfer("billing", "two charges"), refund("c1", 10.0), refund("other-id", 20.0), Answer("Done.")])
    async with await open_desk(db_path, test_desk, provider=model, tools=tools, customers=False) as desk:
        turn = desk.runner.send(None, "refund both charges")
        sid = ""
        async for event in turn:  # the process "dies" right after the first refund is stored
            if isinstance(event, Appended):
                sid = event.item.session_id
                if event.item.kind == "tool_result":
                    break
        await turn.aclose()
        assert await desk.runner.unfinished_turn(sid) == 1
        await drain(desk.runner.resume(sid))
    assert calls == [(10.0, f"{sid}/turn-1/refund/1"), (20.0, f"{sid}/turn-1/refund/2")]


async def test_a_retried_turn_goes_on_counting_the_calls_of_its_turn(db_path, test_desk):
    tools, calls = keyed_tools()
    script = [Transfer("billing", "two charges"), refund("c1", 10.0), ProviderError("unreachable", "down"),
              refund("c1", 20.0), Answer("Done.")]
    model = ScriptedModel(script)
    async with await open_desk(db_path, test_desk, provider=model, tools=tools, customers=False) as desk:
        events = await drain(desk.runner.send(None, "refund both charges"))
        sid = events[0].session_id
        await drain(desk.runner.retry_turn(sid))
    assert calls == [(10.0, f"{sid}/turn-1/refund/1"), (20.0, f"{sid}/turn-1/refund/2")]


async def test_a_turn_that_ended_in_a_provider_error_is_not_run_again_on_resume(db_path, test_desk):
    """The error notice ends the turn (the customer is told to retry): opening the session later
    must not run the turn again on its own, so its refund is not asked for a second time."""
    tools, calls = keyed_tools()
    model = ScriptedModel([Transfer("billing", "two charges"), refund("c1", 10.0), ProviderError("unreachable", "down"),
                           refund("c2", 20.0), Answer("Done.")])
    async with await open_desk(db_path, test_desk, provider=model, tools=tools, customers=False) as desk:
        events = await drain(desk.runner.send(None, "refund both charges"))
        sid = events[0].session_id
        assert await desk.runner.unfinished_turn(sid) is None
        assert await drain(desk.runner.resume(sid)) == []
    assert calls == [(10.0, f"{sid}/turn-1/refund/1")]
