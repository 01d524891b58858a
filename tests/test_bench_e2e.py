"""End to end: the desk's provider and tau2's customer simulator both talk to one scripted
OpenAI-compatible server on 127.0.0.1, which plays a retail task's gold conversation; tau2's
orchestrator drives it and tau2's evaluator scores the stored session 1.0."""

from __future__ import annotations

import asyncio
import json

from tests.bench_support import require_tau2

require_tau2()

from fake_llm_server import Complete, FakeLLMServer, text_stream, tool_stream  # noqa: E402
from supportdesk.bench.players import reason_for_call  # noqa: E402
from supportdesk.bench.run import BenchOptions, run_tau2  # noqa: E402
from supportdesk.bench.tau2env import load_domain  # noqa: E402
from supportdesk.items import Message, ToolCall  # noqa: E402
from supportdesk.store import SessionStore  # noqa: E402

TASK = "17"
STOP = "###STOP###"


class GoldConversation:
    """Answers the desk with the task's gold calls, one per step, then the closing reply; answers
    the customer simulator with the task's reason for calling, then the stop word."""

    def __init__(self, task):
        self.task = task
        self.gold = task.evaluation_criteria.actions
        self.customer_requests = 0
        self.desk_requests = 0

    def __call__(self, body):
        messages = body["messages"]
        if "<scenario>" in messages[0]["content"]:
            self.customer_requests += 1
            said = sum(1 for m in messages if m["role"] == "assistant")
            text = reason_for_call(self.task) if said == 0 else STOP
            return Complete({"content": text})
        self.desk_requests += 1
        done = sum(1 for m in messages if m["role"] == "tool")
        if done < len(self.gold):
            action = self.gold[done]
            reply = tool_stream([(action.name, json.dumps(action.arguments))])
        else:
            reply = text_stream("Your order will now ship to the new address.")
        if not body.get("stream"):
            raise AssertionError("the desk's provider streams")
        return reply


def test_a_scripted_server_plays_the_gold_conversation_and_scores_one(tmp_path):
    task = load_domain("retail", "base", [TASK]).tasks[0]
    script = GoldConversation(task)
    with FakeLLMServer() as server:
        server.push(*[script] * 40)
        config = tmp_path / "agents.toml"
        config.write_text(
            '[model]\nprovider = "openai"\n'
            f'base_url = "{server.url}"\nmodel = "fake-model"\nmax_retries = 0\n'
            '[agents.triage]\ntitle = "T"\ndescription = "d"\n'
        )
        opts = BenchOptions(
            domain="retail",
            tasks=[TASK],
            agent="desk",
            desk="single",
            config=str(config),
            user_model="fake-user",
            user_base_url=server.url,
            db=str(tmp_path / "bench.db"),
        )
        report = asyncio.run(run_tau2(opts))
        paths = set(server.paths)
        user_models = {r["model"] for r in server.requests if "<scenario>" in r["messages"][0]["content"]}
    [result] = report.results
    assert (result.reward, result.failure) == (1.0, ""), result
    assert paths == {"/v1/chat/completions"}
    assert user_models == {"fake-user"}
    assert script.customer_requests == 2 and script.desk_requests == len(script.gold) + 1

    async def stored():
        async with await SessionStore.open(tmp_path / "bench.db") as store:
            return await store.range(result.session_id, 1, await store.last_seq(result.session_id))

    items = asyncio.run(stored())
    customer = [i.text for i in items if isinstance(i, Message) and i.role == "customer"]
    assert customer == [reason_for_call(task)]
    assert [i.name for i in items if isinstance(i, ToolCall)] == [a.name for a in script.gold]
