"""A caller that stops a turn early (eval routing at the handoff, the TUI when its turn ends)
closes every generator of the turn at once: the turn's kept reads are dropped then, not whenever
the garbage collector finalises an abandoned generator (whose finaliser wakes the event loop
through its self-pipe, a cost on every message eval routing reads; `Runner._one_at_a_time`,
`_send` and `_turn` iterate what they wrap under `aclosing`)."""

from __future__ import annotations

import gc

from supportdesk.engine.events import StepStarted
from supportdesk.engine.protocol import Answer, Transfer
from supportdesk.wiring import open_desk
from tests.scripted import ScriptedModel


async def test_a_turn_stopped_at_the_handoff_is_closed_at_once(db_path, test_desk) -> None:
    script = [Transfer("billing", "refund", text="Bringing in billing."), Answer("Billing here.")]
    async with await open_desk(db_path, test_desk, provider=ScriptedModel(script), customers=False) as desk:
        sid = await desk.runner.new_session()
        gc.disable()  # (the collector must not close what the runner left open)
        try:
            events = desk.runner.send(sid, "refund 5 please")
            async for event in events:
                if isinstance(event, StepStarted) and event.agent == "billing":
                    break
            assert sid in desk.runner._turn_reads  # the turn is under way
            await events.aclose()
            assert desk.runner._turn_reads == {}
        finally:
            gc.enable()
