"""A customer message stored while a turn runs (issue 32: `Runner.receive` takes no lease) joins
that turn at its next step, and changes nothing a turn's protections rest on: a turn resumed after
a crash names its calls as before (exactly once), and an answer answers only what its step saw.
Fast, in one process, on a real SQLite file: the crash is a turn left mid-way and closed, as in
tests/test_exactly_once.py.
"""

from __future__ import annotations

from supportdesk.engine.events import Appended
from supportdesk.engine.runner import drain
from supportdesk.items import Message
from supportdesk.wiring import open_desk
from tests.scripted import ScriptedModel
from tests.test_exactly_once import keyed_tools, refund
from supportdesk.engine.protocol import Answer, Transfer


async def test_a_turn_resumed_after_a_message_came_in_mid_turn_keeps_its_calls_keys(db_path, test_desk):
    tools, calls = keyed_tools()
    model = ScriptedModel([Transfer("billing", "two charges"), refund("c1", 10.0), refund("c2", 20.0), Answer("Done.")])
    async with await open_desk(db_path, test_desk, provider=model, tools=tools, customers=False) as desk:
        turn = desk.runner.send(None, "refund both charges")
        sid = ""
        async for event in turn:
            if isinstance(event, Appended):
                sid = event.item.session_id
                if event.item.kind == "tool_result":
                    break
        # While the turn runs, the customer writes again (the web channel's 202, no lease) ...
        later = await desk.runner.receive(sid, "and please hurry")
        await turn.aclose()  # ... and the process dies before the turn ends
        assert await desk.runner.unfinished_turn(sid) == later.seq
        await drain(desk.runner.resume(sid))
        # The resumed turn's next step saw the message that came in.
        assert later.seq in [i.seq for i in model.requests[-1].history]
        assert await desk.runner.unfinished_turn(sid) is None
    # Named after the turn's first message, counted on from the call stored before the crash:
    # a second refund, not the first one's key again and not a new turn's first.
    assert calls == [(10.0, f"{sid}/turn-1/refund/1"), (20.0, f"{sid}/turn-1/refund/2")]


async def test_an_answer_answers_only_the_customer_messages_its_step_saw(db_path, test_desk):
    """A message stored while the answering step's model call ran lands before the answer in the
    log, but the answer never saw it: the turn is unfinished for it, and the next one answers it."""
    received: list[Message] = []

    class Meanwhile(ScriptedModel):
        async def stream(self, request):
            if not received:  # the step has its window; the customer writes now
                received.append(await desk.runner.receive(request.session_id, "one more thing"))
            async for out in super().stream(request):
                yield out

    model = Meanwhile([Answer("answer to the first"), Answer("answer to the second")])
    async with await open_desk(db_path, test_desk, provider=model, customers=False) as desk:
        events = await drain(desk.runner.send(None, "first"))
        sid = events[0].session_id
        [second] = received
        answer = [e.item for e in events if isinstance(e, Appended) and e.item.kind == "message"][-1]
        assert answer.seq > second.seq, "the answer was stored after the message it never saw"
        assert await desk.runner.unfinished_turn(sid) == second.seq
        await drain(desk.runner.resume(sid))
        assert await desk.runner.unfinished_turn(sid) is None
        await drain(desk.runner.resume(sid))  # nothing left: not answered twice
        log = await desk.store.range(sid, 1, await desk.store.last_seq(sid))
    assert [i.text for i in log if isinstance(i, Message) and i.role == "agent"] == ["answer to the first", "answer to the second"]


async def test_a_message_sent_after_a_crash_finishes_the_unfinished_turn_then_its_own_under_one_lease(db_path, test_desk):
    """`send` finishes a turn a crash cut short before it stores its message: that turn's answer
    is not the last append under the lease, so it must not give the lease back (the message and
    its own turn would then be refused as fenced by a lost lease)."""
    tools, calls = keyed_tools()
    model = ScriptedModel([Transfer("billing", "two charges"), refund("c1", 10.0), Answer("Refunded."), Answer("You're welcome.")])
    async with await open_desk(db_path, test_desk, provider=model, tools=tools, customers=False) as desk:
        turn = desk.runner.send(None, "refund the charge")
        sid = ""
        async for event in turn:
            if isinstance(event, Appended):
                sid = event.item.session_id
                if event.item.kind == "tool_result":
                    break
        await turn.aclose()
        events = await drain(desk.runner.send(sid, "thanks"))
        said = [e.item.text for e in events if isinstance(e, Appended) and isinstance(e.item, Message)]
        assert said == ["Refunded.", "thanks", "You're welcome."]
        free = desk.store.turn(sid)
        assert await free.try_acquire(), "the turn gave its lease back"
        await free.release()
    assert calls == [(10.0, f"{sid}/turn-1/refund/1")]


async def test_a_message_stored_while_the_step_that_asks_an_offer_ran_is_not_taken_as_answered(db_path):
    """An offer's question ends the turn like an answer; it answers only what its step saw (the
    step's window rides on its first call), so a message stored meanwhile gets a turn of its own."""
    from tests.test_confirmation import call, gated_desk, gated_tools

    received: list[Message] = []

    class Meanwhile(ScriptedModel):
        async def stream(self, request):
            if len(self.requests) == 1 and not received:  # billing's step has its window
                received.append(await desk.runner.receive(request.session_id, "also, my invoice is wrong"))
            async for out in super().stream(request):
                yield out

    tools, ran = gated_tools()
    model = Meanwhile([Transfer("billing", "money"), call("refund", amount=5), Answer("About the invoice: fixed.")])
    async with await open_desk(db_path, gated_desk(), provider=model, tools=tools, customers=False) as desk:
        events = await drain(desk.runner.send(None, "refund the duplicate please"))
        sid = events[0].session_id
        [second] = received
        assert any(isinstance(e, Appended) and e.item.kind == "offer" and e.item.seq > second.seq for e in events)
        assert await desk.runner.unfinished_turn(sid) == second.seq
        await drain(desk.runner.resume(sid))
        assert await desk.runner.unfinished_turn(sid) is None
        log = await desk.store.range(sid, 1, await desk.store.last_seq(sid))
    assert ran == []  # nothing offered was run without a yes
    assert [i.text for i in log if isinstance(i, Message) and i.role == "agent"][-1] == "About the invoice: fixed."
