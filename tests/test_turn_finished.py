"""Issue 32: a turn is finished when the agent holding the conversation at its end has answered.

Triage speaking and handing off in one step ("I'm bringing in our billing team") is no answer:
after a crash in billing's step, the turn is found unfinished and billing answers it."""

from __future__ import annotations

import pytest

from supportdesk.engine.protocol import Answer, Transfer
from supportdesk.engine.runner import drain
from supportdesk.items import Handoff, Message
from supportdesk.wiring import open_desk
from tests.scripted import ScriptedModel


class Crash(BaseException):
    """The process dying in the middle of a step (nothing of the runner catches it)."""


def crash(request):
    raise Crash()


async def test_a_crash_after_triage_speaks_and_hands_off_leaves_the_turn_for_billing(db_path, test_desk) -> None:
    script = [Transfer("billing", "refund", text="I'm bringing in our billing team."), crash]
    async with await open_desk(db_path, test_desk, provider=ScriptedModel(script), customers=False) as desk:
        sid = await desk.runner.new_session()
        with pytest.raises(Crash):
            await drain(desk.runner.send(sid, "refund 5 please"))
        items = await desk.store.latest(sid, 10)
        said = [(i.agent, i.text) for i in items if isinstance(i, Message) and i.role == "agent"]
        assert said == [("triage", "I'm bringing in our billing team.")]
        assert [i.to_agent for i in items if isinstance(i, Handoff)] == ["billing"]
        customer = next(i for i in items if isinstance(i, Message) and i.role == "customer")
        assert await desk.runner.unfinished_turn(sid) == customer.seq
    resumed = ScriptedModel([Answer("Billing here: refunded.")])
    async with await open_desk(db_path, test_desk, provider=resumed, customers=False) as desk:
        await drain(desk.runner.resume(sid))
        items = await desk.store.latest(sid, 10)
        assert [(i.agent, i.text) for i in items if isinstance(i, Message) and i.role == "agent"][-1] == (
            "billing", "Billing here: refunded."
        )
        assert await desk.runner.unfinished_turn(sid) is None
        assert await drain(desk.runner.resume(sid)) == []  # answered once


async def test_an_answer_by_the_agent_that_then_holds_it_finishes_the_turn(db_path, test_desk) -> None:
    async with await open_desk(db_path, test_desk, provider=ScriptedModel([]), customers=False) as desk:
        info = await desk.store.create_session("triage", first=[Message(role="customer", text="refund 5", agent="triage")])
        await desk.store.append(info.id, [
            Message(role="agent", text="Bringing in billing.", agent="triage"),
            Handoff(from_agent="triage", to_agent="billing", reason="refund", agent="triage"),
        ])
        assert await desk.runner.unfinished_turn(info.id) == 1
        await desk.store.append(info.id, [Message(role="agent", text="Refunded.", agent="billing")])
        assert await desk.runner.unfinished_turn(info.id) is None


async def test_a_fork_cut_in_a_turns_middle_is_not_resumed_but_a_crash_after_the_fork_is(db_path, test_desk) -> None:
    """A fork copies items 1..k where staff chose to try something else: a turn left open in
    the copy is not a crash to finish. A customer message written in the fork afterwards is."""
    async with await open_desk(db_path, test_desk, provider=ScriptedModel([]), customers=False) as desk:
        info = await desk.store.create_session("triage", first=[Message(role="customer", text="refund 5", agent="triage")])
        await desk.store.append(info.id, [
            Message(role="agent", text="Bringing in billing.", agent="triage"),
            Handoff(from_agent="triage", to_agent="billing", reason="refund", agent="triage"),
        ])
        assert await desk.runner.unfinished_turn(info.id) == 1
        fork = await desk.store.fork(info.id, 3)
        assert await desk.runner.unfinished_turn(fork.id) is None
        [later] = await desk.store.append(fork.id, [Message(role="customer", text="and 5 more", agent="billing")])
        assert await desk.runner.unfinished_turn(fork.id) == later.seq
