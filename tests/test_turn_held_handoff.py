"""A handoff held for the turn's next append (issue 34: a round trip and a commit less a handoff).

With a model whose steps come at once (`instant_steps`: the embedded model), the runner keeps a
handoff step's items for the next step's append, and the next step reads them in memory at the
seqs they are to get (`TurnReads.hold`). The append is told those seqs (`Store.append(at=)`),
and the store refuses it (`HeadMoved`, nothing written) when the log ends elsewhere: a customer
message stored meanwhile (issue 32). Then the held items go where the log ends, and the step's
answer is marked as having seen the log only up to where they were shown, so the message it
never saw is answered by the next turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from supportdesk.engine.events import seen_upto
from supportdesk.engine.protocol import Answer, Transfer
from supportdesk.engine.runner import drain
from supportdesk.items import ContextSet, Handoff, Message
from supportdesk.store import HeadMoved, open_store
from supportdesk.wiring import open_desk
from tests.scripted import ScriptedModel


class Instant(ScriptedModel):
    """A scripted model that says its steps come at once, as the embedded model does."""

    instant_steps = True


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def where(request, tmp_path: Path) -> str:
    return str(tmp_path / "desk.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")


def _counting_appends(desk: Any) -> list[int]:
    """How many items each of the store's appends carried, recorded."""
    sizes: list[int] = []
    real = desk.store.append

    async def append(session_id: str, items: Any, **kwargs: Any) -> Any:
        sizes.append(len(items))
        return await real(session_id, items, **kwargs)

    desk.store.append = append
    return sizes


async def test_an_append_told_where_it_lands_refuses_a_log_that_ends_elsewhere(where: str):
    async with await open_store(where) as store, await open_store(where) as other:
        info = await store.create_session("triage", first=[Message(role="customer", text="hi", agent="triage")])
        [stored] = await store.append(info.id, [ContextSet(key="a", value=1, writer="triage", agent="triage")], at=2)
        assert stored.seq == 2
        # Another process's append moves the log on; this one's kept head (PostgreSQL's guarded
        # one-statement append) is then stale, and the locked read decides.
        await other.append(info.id, [Message(role="customer", text="still there?", agent="triage")])
        with pytest.raises(HeadMoved):
            await store.append(info.id, [ContextSet(key="b", value=2, writer="triage", agent="triage")], at=3)
        # This process's own last append is the head, but `at` wants another seq.
        await store.append(info.id, [ContextSet(key="c", value=3, writer="triage", agent="triage")])
        with pytest.raises(HeadMoved):
            await store.append(info.id, [ContextSet(key="d", value=4, writer="triage", agent="triage")], at=6)
        assert [i.seq for i in await store.range(info.id, 1, 100)] == [1, 2, 3, 4]  # nothing refused was written
        assert "b" not in await store.context_at(info.id) and "d" not in await store.context_at(info.id)


async def test_a_handoff_goes_to_the_store_with_the_next_step_and_that_step_saw_it_where_it_landed(where: str, test_desk):
    model = Instant([Transfer("billing", "two charges", text="Bringing in billing."), Answer("Billing here.")])
    async with await open_desk(where, test_desk, provider=model, customers=False) as desk:
        sizes = _counting_appends(desk)
        sid = await desk.runner.new_session()
        await drain(desk.runner.send(sid, "I was charged twice"))
        log = await desk.store.range(sid, 1, 100)
    # The customer's message, then one append: triage's words and handoff with billing's answer.
    assert sizes == [1, 3], sizes
    assert [(i.kind, i.agent) for i in log] == [
        ("message", "triage"), ("message", "triage"), ("handoff", "triage"), ("message", "billing"),
    ]
    # Billing's step was shown the held items at the seqs they got.
    billing = model.requests[1]
    assert [(i.seq, i.kind) for i in billing.history] == [(i.seq, i.kind) for i in log[:3]]
    assert seen_upto(log[-1]) == 3


async def test_a_message_stored_while_a_handoff_was_held_is_answered_by_the_next_turn(where: str, test_desk):
    meanwhile: list[int] = []

    class Meanwhile(Instant):
        async def stream(self, request):
            if len(self.requests) == 1 and not meanwhile:  # billing's step: the customer writes again
                meanwhile.append((await desk.runner.receive(request.session_id, "and please hurry")).seq)
            async for out in super().stream(request):
                yield out

    model = Meanwhile([Transfer("billing", "two charges", text="Bringing in billing."), Answer("Billing here."), Answer("Hurrying.")])
    async with await open_desk(where, test_desk, provider=model, customers=False) as desk:
        sid = await desk.runner.new_session()
        await drain(desk.runner.send(sid, "I was charged twice"))
        [hurry] = meanwhile
        # Billing's step was shown the held items at 2-3, not the message that took seq 2.
        assert hurry == 2 and [getattr(i, "text", "") for i in model.requests[1].history if i.seq == 2] == [
            "Bringing in billing."
        ]
        log = await desk.store.range(sid, 1, 100)
        # The held items went after the message, where the log ended; the answer after them,
        # marked as having seen the log up to where they were shown (not the message).
        assert [(i.seq, i.kind, i.agent) for i in log] == [
            (1, "message", "triage"), (2, "message", "triage"), (3, "message", "triage"), (4, "handoff", "triage"),
            (5, "message", "billing"),
        ]
        assert isinstance(log[3], Handoff) and seen_upto(log[4]) == 1
        assert await desk.runner.unfinished_turn(sid) == hurry
        await drain(desk.runner.resume(sid))
        last = (await desk.store.latest(sid, 1))[0]
        assert isinstance(last, Message) and (last.agent, last.text) == ("billing", "Hurrying.")
        assert await desk.runner.unfinished_turn(sid) is None


async def test_a_step_whose_calls_only_read_goes_with_the_next_append_and_one_that_acts_does_not(where: str):
    """A step of calls that only read (`Tool.effect` "reads") is held like a handoff: the next
    step reads its call and result in memory at the seqs they get, and they are stored with that
    step's append (issue 34: a looked-up answer's round trip and commit). A step with a call that
    acts outside the log (here a desk action) is stored at once, before the next step runs."""
    from pydantic import BaseModel

    from supportdesk.config import parse_desk
    from supportdesk.engine.protocol import CallTools, RequestedCall
    from supportdesk.engine.tools import ToolOutput, ToolRegistry
    from supportdesk.items import Notice
    from tests.conftest import TEST_DESK

    class Nothing(BaseModel):
        pass

    registry = ToolRegistry()
    registry.tool("look_up", "Reads a fact", Nothing)(lambda ctx, args: {"fact": "two charges"})
    registry.tool("note_down", "Writes a desk note", Nothing, effect="desk")(lambda ctx, args: {"noted": True})
    # A call that only reads but leaves a notice: the turn's status is read from the notices
    # each append returns, so its step is stored at once too (held, the session stayed "open").
    registry.tool("look_and_flag", "Reads, and asks for a person", Nothing)(lambda ctx, args: ToolOutput(
        {"fact": "odd"}, notices=[Notice(notice_kind="human_requested", text="a person, please", agent="triage")]
    ))
    desk_config = parse_desk(
        TEST_DESK.replace('description = "routes"', 'description = "routes"\ntools = ["look_up", "note_down", "look_and_flag"]'),
        "test.toml", tool_names=["refund", "explode", "look_up", "note_down", "look_and_flag"],
    )
    cases = (("look_up", [1, 3], "open"), ("note_down", [1, 2, 1], "open"), ("look_and_flag", [1, 3, 1], "needs_human"))
    for tool, appends, status in cases:
        model = Instant([CallTools(calls=[RequestedCall("call_1", tool, {})]), Answer("Done.")])
        async with await open_desk(where, desk_config, provider=model, tools=registry, customers=False) as desk:
            sizes = _counting_appends(desk)
            sid = await desk.runner.new_session()
            await drain(desk.runner.send(sid, "look it up please"))
            log = await desk.store.range(sid, 1, 100)
            info = await desk.store.get_session(sid)
        assert sizes == appends, (tool, sizes)
        assert info is not None and info.status == status, (tool, info)
        kinds = ["message", "tool_call", "tool_result", *(["notice"] if tool == "look_and_flag" else []), "message"]
        assert [(i.seq, i.kind) for i in log] == list(enumerate(kinds, start=1))
        # The answer's step was shown the call and its result at the seqs they got.
        assert [(i.seq, i.kind) for i in model.requests[1].history] == [(i.seq, i.kind) for i in log[:-1]]
