"""Issue 32: a second web message while the first turn runs is "stored" (202) when it is stored,
not when that turn ends, and it joins the conversation between the running turn's steps.

Real HTTP on 127.0.0.1 (tests/serve_harness.py) on a real SQLite file and on PostgreSQL; the model blocks its
first step on an asyncio.Event until the test lets it go, so "while the turn runs" is a fact
of the test, not a matter of timing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from supportdesk.engine.protocol import Answer, StepRequest, TextDelta, Transfer
from supportdesk.items import Message
from supportdesk.store import open_store
from tests.serve_harness import new_conversation, repo_desk, say, serving


class HeldModel:
    """Its first step says it has begun (`entered`) and waits for `go`; each step then plays the
    next of `plan` ("transfer": hand to billing; "answer": answer the newest customer message
    of its history, naming it). Every request is kept."""

    name = "held"

    def __init__(self, plan: list[str]):
        self.plan = plan
        self.entered = asyncio.Event()
        self.go = asyncio.Event()
        self.requests: list[StepRequest] = []

    async def stream(self, request: StepRequest) -> Any:
        self.requests.append(request)
        if len(self.requests) == 1:
            self.entered.set()
            await self.go.wait()
        step = self.plan.pop(0) if self.plan else "answer"
        if step == "transfer":
            yield Transfer(to_agent="billing", reason="money")
            return
        said = [i.text for i in request.history if isinstance(i, Message) and i.role == "customer"]
        text = f"answering: {said[-1]}"
        yield TextDelta(text)
        yield Answer(text)

    async def aclose(self) -> None:
        pass


async def _log(db_path: Any, session_id: str) -> list[Any]:
    async with await open_store(db_path) as store:
        return await store.range(session_id, 1, await store.last_seq(session_id))


def _answers(log: list[Any]) -> list[str]:
    return [i.text for i in log if isinstance(i, Message) and i.role == "agent"]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_path(request, tmp_path) -> Any:
    return tmp_path / "desk.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")


@pytest.mark.parametrize("plan", [["answer"], ["transfer", "answer"]], ids=["one-step", "handoff-then-answer"])
async def test_a_second_message_is_stored_at_once_while_the_first_turn_runs_and_each_is_answered_once(db_path, plan):
    async with serving(db_path, repo_desk()) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        model = HeldModel(list(plan))
        served.desk.runner.provider = model
        conversation = await new_conversation(client)
        first = await say(client, conversation, "first: my card was charged twice")
        await asyncio.wait_for(model.entered.wait(), 10)  # the first turn holds the session, blocked

        # The second message's 202 comes while that turn is still blocked (before: after it).
        second = await asyncio.wait_for(say(client, conversation, "second: and my invoice is wrong"), 10)
        assert not model.go.is_set() and len(model.requests) == 1
        assert second == first + 1, "stored at once: nothing of the running turn came before it"
        async with await open_store(db_path) as other:  # another connection: it is committed
            stored = await other.item(conversation[0], second)
        assert isinstance(stored, Message) and stored.role == "customer" and stored.text.startswith("second:")

        model.go.set()
        await asyncio.wait_for(served.conversations.idle(), 30)
        log = await _log(db_path, conversation[0])
        assert await served.desk.runner.unfinished_turn(conversation[0]) is None, "no message left unanswered"

    answers = _answers(log)
    if plan == ["answer"]:
        # The running turn's only step did not see it: the turn after answers it, once.
        assert answers == ["answering: first: my card was charged twice", "answering: second: and my invoice is wrong"]
    else:
        # It joined between the steps: the step after the handoff saw it, and that answer was the one.
        [_, after_handoff] = model.requests
        assert second in [i.seq for i in after_handoff.history]
        assert answers == ["answering: second: and my invoice is wrong"], answers
