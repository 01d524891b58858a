"""A customer message stored while a turn runs (issue 32) costs the turn one read, not two reads
a step (issue 34 §3: under `serve`'s load most turns have one): the turn's next read fills the gap
and its later steps read from memory again. A gap holding anything but customer messages (staff
took over) leaves the turn's reads to the store, as before."""

from __future__ import annotations

import pytest

from supportdesk.engine.protocol import Answer, Transfer
from supportdesk.engine.runner import drain
from supportdesk.items import Message, Takeover
from supportdesk.store import SessionStore
from supportdesk.wiring import open_desk
from tests.scripted import ScriptedModel
from tests.test_exactly_once import keyed_tools, refund


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    seen: list[str] = []
    for name in ("latest", "context_at", "range", "get_session"):
        real = getattr(SessionStore, name)

        def counted(self, *args, _real=real, _name=name, **kwargs):
            seen.append(_name)
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(SessionStore, name, counted)
    return seen


@pytest.mark.parametrize("by", ["another process", "this runner"])
async def test_a_message_stored_mid_turn_is_read_once_and_every_later_step_sees_it(db_path, test_desk, reads, by):
    """Stored by another process (its append, straight to the store), the turn reads the gap
    once; stored by this runner (`receive`), its running turn is told, and reads nothing."""
    tools, _ = keyed_tools()
    later: list[int] = []

    class Meanwhile(ScriptedModel):
        async def stream(self, request):
            if len(self.requests) == 1 and not later:  # the second step: the customer writes again
                if by == "this runner":
                    stored = await desk.runner.receive(request.session_id, "and please hurry")
                else:
                    [stored] = await desk.store.append(
                        request.session_id, [Message(role="customer", text="and please hurry", agent="billing")]
                    )
                later.append(stored.seq)
                reads.clear()
            async for out in super().stream(request):
                yield out

    model = Meanwhile([Transfer("billing", "two charges"), refund("c1", 10.0), refund("c2", 20.0), Answer("Done.")])
    async with await open_desk(db_path, test_desk, provider=model, tools=tools, customers=False) as desk:
        await drain(desk.runner.send(None, "refund both charges"))
    [seq] = later
    assert [seq in [i.seq for i in request.history] for request in model.requests] == [False, False, True, True]
    assert reads.count("range") == (1 if by == "another process" else 0), reads
    assert "latest" not in reads and "context_at" not in reads, reads


async def test_a_gap_holding_a_takeover_leaves_the_turn_reading_the_store(db_path, test_desk, reads):
    tools, _ = keyed_tools()
    done: list[bool] = []

    class Meanwhile(ScriptedModel):
        async def stream(self, request):
            if len(self.requests) == 1 and not done:  # staff take the conversation mid-turn
                await desk.store.append(request.session_id, [Takeover(person="sam", reason="mine")])
                done.append(True)
                reads.clear()
            async for out in super().stream(request):
                yield out

    model = Meanwhile([Transfer("billing", "two charges"), refund("c1", 10.0), refund("c2", 20.0), Answer("Done.")])
    async with await open_desk(db_path, test_desk, provider=model, tools=tools, customers=False) as desk:
        await drain(desk.runner.send(None, "refund both charges"))
    # The gap was read, held a takeover, and the later steps' windows came from the store.
    assert reads.count("range") == 1 and reads.count("latest") == 2, reads
