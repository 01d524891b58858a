"""A call the desk's gate held for the customer's yes was asked, not refused (issue 34's race):
when the customer's "yes please refund the duplicate" is stored while billing's step that offers
the refund runs, that step did not see it, and the next turn answers it. The yes came before the
offer in the log, so it cannot answer it (the gate's rule); the offer stands, and the money
skill's reply asks its question, never the gate's words ("not run: ... needs the customer's yes").

The real desk (agents.toml, the embedded model, the demo business); the model's third step (billing's
offer) waits on an asyncio.Event while the test stores the message, as the web channel does.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from supportdesk.engine.runner import drain
from supportdesk.items import Confirmation, Message, Offer
from supportdesk.wiring import open_desk
from tests.serve_harness import repo_desk

CHARGED_TWICE = "I was charged twice for my subscription this month, dana@example.com"


async def test_a_yes_sent_before_the_offer_gets_the_offers_question_and_the_next_yes_runs_it(tmp_path: Path):
    async with await open_desk(tmp_path / "desk.db", repo_desk()) as desk:
        runner = desk.runner
        entered, go = asyncio.Event(), asyncio.Event()
        steps = 0
        real = runner.provider.stream

        async def stream(request: Any) -> Any:
            nonlocal steps
            steps += 1
            if steps == 3:  # billing's step that offers the refund
                entered.set()
                await go.wait()
            async for out in real(request):
                yield out

        runner.provider.stream = stream  # type: ignore[method-assign]
        sid = await runner.new_session()
        await runner.receive(sid, CHARGED_TWICE)
        turn = asyncio.create_task(drain(runner.resume(sid)))
        await asyncio.wait_for(entered.wait(), 30)
        early = await runner.receive(sid, "yes please refund the duplicate")
        go.set()
        await asyncio.wait_for(turn, 30)
        [offer] = [i for i in await desk.store.range(sid, 1, 100) if isinstance(i, Offer)]
        assert early.seq < offer.seq and await runner.unfinished_turn(sid) == early.seq

        await drain(runner.resume(sid))  # the turn of the yes that came before the offer
        log = await desk.store.range(sid, 1, 100)
        reply = log[-1]
        assert isinstance(reply, Message) and reply.role == "agent" and reply.agent == "billing"
        assert reply.text == f"Before I do anything: shall I {offer.action}? Please answer yes or no."
        assert [i for i in log if isinstance(i, Offer)] == [offer]  # the one offer stands
        assert await runner.unfinished_turn(sid) is None

        await drain(runner.send(sid, "yes"))
        log = await desk.store.range(sid, 1, 200)
    assert any(isinstance(i, Confirmation) and i.offer_id == offer.offer_id for i in log)
    last = log[-1]
    assert isinstance(last, Message) and last.text.startswith("Done: I've refunded $29.99"), last
