"""A customer message stored while a turn runs (issue 32) is seen by the turn's next step at its
seq, in the log's order (issue 34's held appends): a handoff or a step of reads the turn holds
for its next append was shown at the seqs after the stored log, and the message took the first
of them; the held items move after it, as the log will have them. The model never sees the log
in an order the log does not have.

Deterministic: the model's step waits on an asyncio.Event while the test stores the message
(`Runner.receive`, as the web channel does), then lets it go.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from supportdesk.config import parse_desk
from supportdesk.engine.events import seen_upto
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, StepRequest, Transfer
from supportdesk.engine.runner import drain
from supportdesk.engine.tools import ToolRegistry
from supportdesk.items import Item, Message
from supportdesk.wiring import open_desk
from tests.conftest import TEST_DESK
from tests.scripted import ScriptedModel


class _Nothing(BaseModel):
    pass


class Paused(ScriptedModel):
    """A scripted model whose steps come at once (`instant_steps`: the turn holds a handoff and a
    step of reads for its next append, as with the embedded model), and whose step `pause_at`
    (1-based) waits for `go` once it has its request (`entered`)."""

    instant_steps = True

    def __init__(self, script: list[Any], pause_at: int):
        super().__init__(script)
        self.pause_at = pause_at
        self.entered = asyncio.Event()
        self.go = asyncio.Event()

    async def stream(self, request: StepRequest) -> Any:
        if len(self.requests) + 1 == self.pause_at:
            self.entered.set()
            await self.go.wait()
        async for out in super().stream(request):
            yield out


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def where(request, tmp_path: Path) -> str:
    return str(tmp_path / "desk.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")


def _shown(item: Item) -> tuple[int, str, str]:
    return item.seq, item.kind, getattr(item, "text", "")


# The turn: triage hands off (held), billing looks a fact up (a step of reads: held), then answers.
# Paused at 1: the message lands before anything is held; at 2: before the held handoff; at 3:
# before the handoff and the held look-up.
@pytest.mark.parametrize("pause_at", [1, 2, 3])
async def test_a_message_stored_mid_turn_is_seen_by_the_next_step_at_its_seq(where: str, pause_at: int):
    registry = ToolRegistry()
    registry.tool("look_up", "Reads a fact", _Nothing)(lambda ctx, args: {"fact": "two charges"})
    config = parse_desk(
        TEST_DESK.replace('tools = ["refund", "explode"]', 'tools = ["refund", "explode", "look_up"]'),
        "test.toml", tool_names=["refund", "explode", "look_up"],
    )
    script = [
        Transfer("billing", "two charges", text="Bringing in billing."),
        CallTools(calls=[RequestedCall("call_1", "look_up", {})]),
        Answer("Here is what I found."),
        Answer("And hurrying."),
    ]
    model = Paused(script, pause_at)
    async with await open_desk(where, config, provider=model, tools=registry, customers=False) as desk:
        sid = await desk.runner.new_session()
        await desk.runner.receive(sid, "I was charged twice")
        turn = asyncio.create_task(drain(desk.runner.resume(sid)))
        await asyncio.wait_for(model.entered.wait(), 10)
        meanwhile = await desk.runner.receive(sid, "and please hurry")
        model.go.set()
        await asyncio.wait_for(turn, 10)
        log = {i.seq: i for i in await desk.store.range(sid, 1, 100)}
        unfinished = await desk.runner.unfinished_turn(sid)

    assert meanwhile.seq == 2  # nothing of the turn was stored before it
    # Every step whose view was built after the message sees the log's order: each item it was
    # shown is the log's item at that seq, the message among them, before what came after it.
    for request in model.requests[pause_at:]:
        assert [_shown(i) for i in request.history] == [_shown(log[i.seq]) for i in request.history]
        assert [i.seq for i in request.history][:2] == [1, 2]
    # What each step saw, as its items say (the handoff, the look-up's call, the answer): the
    # paused step and those before it saw the log up to before the message (held items shown
    # after it are not the log's order any more); the steps after it saw all before their items.
    steps = [i for i in log.values() if seen_upto(i) is not None]
    assert [i.kind for i in steps] == ["handoff", "tool_call", "message"]
    assert [seen_upto(i) for i in steps] == [1 if n < pause_at else i.seq - 1 for n, i in enumerate(steps)]
    # The answer answers the message when its step saw it; else the next turn does.
    assert unfinished == (meanwhile.seq if pause_at == 3 else None)


async def test_a_message_that_wins_the_race_with_the_held_items_append_is_placed_before_them(tmp_path: Path):
    """The held items' append is on its way (`take_held`) when the message lands at the seq they
    were shown at: the append is refused (`HeadMoved`) and stores them after the message, and the
    reads, told of the message first, hold the log in its order with no read of the store. A
    message landing anywhere else (after items of the turn not added yet) is left to the gap."""
    from supportdesk.engine.turn_reads import TurnReads
    from supportdesk.items import ContextSet, Handoff
    from supportdesk.store import HeadMoved, open_store

    async with await open_store(str(tmp_path / "desk.db")) as store:
        info = await store.create_session("triage", first=[Message(role="customer", text="hi", agent="triage")])
        reads = await TurnReads.read(store, info.id, 50)
        held = [ContextSet(key="topic", value="billing", writer="triage", agent="triage"),
                Handoff(from_agent="triage", to_agent="billing", reason="money", agent="triage")]
        reads.hold(held)
        at, waiting = reads.take_held() or (0, [])
        assert at == 2
        [message] = await store.append(info.id, [Message(role="customer", text="hurry", agent="triage")])
        reads.stored_meanwhile(message)
        with pytest.raises(HeadMoved):
            await store.append(info.id, waiting, at=at)
        for item in await store.append(info.id, waiting):
            reads.add(item)
        assert reads.whole and reads.step_saw_upto == 1
        log = await store.range(info.id, 1, 100)
        assert [_shown(i) for i in await reads.latest(info.id, 50)] == [_shown(i) for i in log]
        assert (await reads.context_at(info.id))["topic"].seq == 3
        # A message landing after an item of the turn not added here yet: not placed (the gap
        # the turn's next add shows is read then, `_catch_up`), never placed out of order.
        [ours] = await store.append(info.id, [ContextSet(key="k", value=1, writer="billing", agent="billing")])
        [later] = await store.append(info.id, [Message(role="customer", text="still there?", agent="billing")])
        reads.stored_meanwhile(later)
        assert reads.head == 4 and reads.whole
        reads.add(ours)
        assert reads.head == 5 and later.seq == 6
