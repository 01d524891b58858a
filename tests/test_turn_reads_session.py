"""Issue 34: a served turn asks whether its message is unanswered from the session's row it read
with its lease, not with one more read of the store; a fork cut in a turn's middle is still not
resumed that way."""

from __future__ import annotations

from typing import Any

from supportdesk.engine.protocol import Answer
from supportdesk.engine.runner import drain
from supportdesk.items import Handoff, Message
from supportdesk.wiring import open_desk
from tests.scripted import ScriptedModel


def _count_session_reads(store: Any) -> list[str]:
    reads: list[str] = []
    real = store.get_session

    async def counted(session_id: str) -> Any:
        reads.append(session_id)
        return await real(session_id)

    store.get_session = counted
    return reads


async def test_a_resumed_turn_reads_no_session_row_beyond_its_lease(db_path, test_desk) -> None:
    model = ScriptedModel([Answer("Refunded.")])
    async with await open_desk(db_path, test_desk, provider=model, customers=False) as desk:
        info = await desk.store.create_session("billing", first=[Message(role="customer", text="refund 5", agent="billing")])
        reads = _count_session_reads(desk.store)
        await drain(desk.runner.resume(info.id))
        said = [i.text for i in await desk.store.latest(info.id, 5) if isinstance(i, Message) and i.role == "agent"]
        assert said == ["Refunded."]
        assert reads == []  # (before: one, to ask whether the session is a fork)


async def test_a_fork_cut_in_a_turns_middle_is_not_resumed_by_a_turn(db_path, test_desk) -> None:
    """The fork's row as its turn reads it with the lease says where it was cut."""
    async with await open_desk(db_path, test_desk, provider=ScriptedModel([Answer("Refunded.")]), customers=False) as desk:
        info = await desk.store.create_session("triage", first=[Message(role="customer", text="refund 5", agent="triage")])
        await desk.store.append(info.id, [
            Message(role="agent", text="Bringing in billing.", agent="triage"),
            Handoff(from_agent="triage", to_agent="billing", reason="refund", agent="triage"),
        ])
        fork = await desk.store.fork(info.id, 3)
        assert await drain(desk.runner.resume(fork.id)) == []
        assert [i.text for i in await desk.store.latest(fork.id, 5) if isinstance(i, Message)][-1] == "Bringing in billing."
        await drain(desk.runner.resume(info.id))  # the original's turn is unfinished: billing answers it
        assert [i.text for i in await desk.store.latest(info.id, 5) if isinstance(i, Message)][-1] == "Refunded."
