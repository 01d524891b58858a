"""An answer answers every customer message its step saw, the last one included (issue 32's
`events.unfinished_turn`, read with `seen_upto`). What lands in the log while the step's model
call runs and is not a customer message (the Chatwoot relay's "relayed item N" notice, appended
without the turn lease, say after a retried delivery) leaves the answer answering what it saw:
the turn is finished, and nothing is answered twice. Fast, in one process, on a real SQLite file.
"""

from __future__ import annotations

from supportdesk.engine.events import seen_upto
from supportdesk.engine.protocol import Answer
from supportdesk.engine.runner import drain
from supportdesk.items import Message, Notice
from supportdesk.wiring import open_desk
from tests.scripted import ScriptedModel


async def test_an_answer_answers_the_last_message_its_step_saw_though_a_notice_landed_meanwhile(db_path, test_desk):
    landed: list[Notice] = []

    class Meanwhile(ScriptedModel):
        async def stream(self, request):
            if not landed:  # the step has its window (up to the customer's message); a relay notes a delivery now
                [notice] = await desk.store.append(request.session_id, [Notice(
                    notice_kind="info", text="relayed item 1", data={"relayed": 1}, agent="triage",
                )])
                landed.append(notice)  # type: ignore[arg-type]
            async for out in super().stream(request):
                yield out

    model = Meanwhile([Answer("the answer"), Answer("a second answer nobody asked for")])
    async with await open_desk(db_path, test_desk, provider=model, customers=False) as desk:
        events = await drain(desk.runner.send(None, "where is my invoice?"))
        sid = events[0].session_id
        log = await desk.store.range(sid, 1, await desk.store.last_seq(sid))
        [asked] = [i for i in log if isinstance(i, Message) and i.role == "customer"]
        [answer] = [i for i in log if isinstance(i, Message) and i.role == "agent"]
        # The case this is about: the step saw up to the customer's message exactly, and the
        # notice stands between that message and the answer.
        assert seen_upto(answer) == asked.seq and asked.seq < landed[0].seq < answer.seq
        assert await desk.runner.unfinished_turn(sid) is None, "the message the answer's step saw is answered"
        await drain(desk.runner.resume(sid))  # nothing to finish: no second answer
        log = await desk.store.range(sid, 1, await desk.store.last_seq(sid))
    assert [i.text for i in log if isinstance(i, Message) and i.role == "agent"] == ["the answer"]
