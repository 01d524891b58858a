"""The seed double-charge conversation, end to end through the real desk, runner, tools and
store, with a scripted OpenAI-compatible server on 127.0.0.1 playing the model.

Each scripted reply first checks what the provider sent (which agent's prompt, which tools,
the history so far), so a wrong prompt, a lost tool result or a missing handoff in the
history fails the test instead of being papered over by the script.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from fake_llm_server import FakeLLMServer, Reply, Status, text_stream, tool_stream
from supportdesk.config import packaged_desk_path, parse_desk
from supportdesk.wiring import open_desk
from supportdesk.engine.events import Token
from supportdesk.engine.runner import drain
from supportdesk.models.openai_compat import OpenAIProvider

SEED = [
    "Hi, I was charged twice for my subscription this month.",
    "Yes, I can see two charges of $29.99 on March 1st and March 3rd. My email is dana@example.com.",
    "I'd like a refund for the duplicate charge.",
    "The amount is $29.99 — can you process that?",
    # Issue 33: the model's refund call is offered to the customer; this yes runs it.
    "Yes, please.",
]
USAGE = {"prompt_tokens": 500, "completion_tokens": 20, "total_tokens": 520}


def openai_desk(base_url: str):
    text = packaged_desk_path().read_text(encoding="utf-8")
    text, n = re.subn(
        r'^provider = "offline".*$',
        f'provider = "openai"\nbase_url = "{base_url}"\nmodel = "fake-model"\nmax_retries = 0',
        text,
        count=1,
        flags=re.M,
    )
    assert n == 1, "the default desk's [model] table changed shape"
    return parse_desk(text, "agents.toml (openai)")


class Problem(Exception):
    pass


def expecting(agent_title: str, check=None, then: Reply | None = None):
    """A scripted step: verify the request is for `agent_title` (and `check`), then reply."""

    def step(body: dict[str, Any]) -> Reply:
        try:
            system = body["messages"][0]
            if system["role"] != "system" or not system["content"].startswith(f"You are {agent_title} "):
                raise Problem(f"expected {agent_title}'s prompt, got {system['content'][:60]!r}")
            for message in body["messages"]:
                if message["role"] == "assistant" and "tool_calls" in message and message["content"] is None:
                    raise Problem("assistant tool-call message with null content")
            if check is not None:
                check(body)
        except Problem as exc:
            return Status(500, {"error": {"message": f"script check failed: {exc}"}})
        assert then is not None
        return then

    return step


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


def last_tool_result(body: dict[str, Any]) -> dict[str, Any]:
    tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
    if not tool_messages:
        raise Problem("no tool result in the history")
    return json.loads(tool_messages[-1]["content"])


def check_triage(body):
    if not {"transfer_to_billing", "transfer_to_technical"} <= tool_names(body):
        raise Problem(f"triage lacks transfer tools: {tool_names(body)}")
    if body["tool_choice"] != "auto" or body["max_tokens"] != 1024:
        raise Problem("missing tool_choice or token cap")


def check_billing_after_handoff(body):
    roles = [m["role"] for m in body["messages"]]
    if roles != ["system", "user", "assistant", "tool"]:
        raise Problem(f"billing should see the customer and the handoff, got {roles}")
    if body["messages"][2]["tool_calls"][0]["function"]["name"] != "transfer_to_billing":
        raise Problem("the handoff is not in the history as a transfer call")
    if '"issue": "duplicate charge"' not in body["messages"][0]["content"]:
        raise Problem("the shared context is not in billing's prompt")
    if not {"find_charges", "refund_charge", "transfer_to_senior"} <= tool_names(body):
        raise Problem(f"billing lacks its tools: {tool_names(body)}")


def check_charges_found(body):
    result = last_tool_result(body)
    if result.get("duplicates") != ["CH-9004"]:
        raise Problem(f"unexpected find_charges result {result}")


def check_refund_done(body):
    result = last_tool_result(body)
    if "CH-9004" not in json.dumps(result):
        raise Problem(f"unexpected refund result {result}")
    if '"customer_id": "CUS-1001"' not in body["messages"][0]["content"]:
        raise Problem("the customer found by the tool is not in the shared context")


@pytest.fixture
def server():
    with FakeLLMServer() as srv:
        yield srv


def script_seed(server: FakeLLMServer) -> None:
    server.push(
        # 1: triage routes to billing, writing what it learned; billing asks for details.
        expecting("Triage", check_triage, tool_stream(
            [("transfer_to_billing", json.dumps({"reason": "duplicate subscription charge", "context": {"issue": "duplicate charge"}}))]
        )),
        expecting("Billing", check_billing_after_handoff, text_stream(
            "I'm sorry about that. What amount and dates do you see for the two charges?", usage=USAGE
        )),
        # 2: billing looks the charges up, then explains.
        expecting("Billing", then=tool_stream(
            [("find_charges", json.dumps({"amount": 29.99, "dates": ["--03-01", "--03-03"]}))], usage=USAGE
        )),
        expecting("Billing", check_charges_found, text_stream(
            "I found both: CH-9003 on March 1st and CH-9004 on March 3rd, a duplicate."
        )),
        # 3: the customer asks for the refund; billing confirms the amount first.
        expecting("Billing", then=text_stream("I can refund the duplicate charge CH-9004. Which amount should I refund?")),
        # 4: the model calls the refund; the desk offers it (no model call until the answer).
        expecting("Billing", then=tool_stream(
            [("refund_charge", json.dumps({"charge_id": "CH-9004", "amount": 29.99, "reason": "duplicate charge"}))]
        )),
        # 5: the yes runs the refund through the real tool and its policy; the model reads the result.
        expecting("Billing", check_refund_done, text_stream("Done: $29.99 is refunded to your card for CH-9004.")),
    )


async def run_seed(db, config, provider=None):
    """The seed conversation on a fresh desk: (items, streamed tokens, CUS-1001's refunds)."""
    tokens: list[str] = []
    async with await open_desk(db, config, provider=provider) as desk:
        session_id = None
        for message in SEED:
            events = await drain(desk.runner.send(session_id, message))
            session_id = session_id or events[0].session_id
            tokens += [e.text for e in events if isinstance(e, Token)]
        items = await desk.store.latest(session_id, 100)
        refunds = await desk.services.customers.refunds("CUS-1001")
    return items, tokens, refunds


async def test_double_charge_conversation_end_to_end(server, tmp_path):
    script_seed(server)
    config = openai_desk(server.url)
    items, tokens, refunds = await run_seed(tmp_path / "desk.db", config, OpenAIProvider(config))

    problems = [i.text for i in items if i.kind == "notice"]
    assert problems == [], problems
    assert len(server.requests) == 7
    kinds = {i.kind for i in items}
    assert kinds == {"message", "handoff", "context_set", "tool_call", "tool_result", "offer", "confirmation"}
    handoffs = [(i.from_agent, i.to_agent, i.handoff_kind) for i in items if i.kind == "handoff"]
    assert handoffs == [("triage", "billing", "route")]
    context = {i.key: (i.value, i.writer) for i in items if i.kind == "context_set"}
    assert context["issue"] == ("duplicate charge", "triage")
    assert context["customer_id"] == ("CUS-1001", "billing")
    calls = [(i.name, i.arguments) for i in items if i.kind == "tool_call"]
    assert [name for name, _ in calls] == ["find_charges", "refund_charge", "refund_charge"]  # asked, then run on the yes
    assert calls[1] == calls[2]
    assert [i.is_error for i in items if i.kind == "tool_result"] == [False, True, False]
    assert [r["charge_id"] for r in refunds] == ["CH-9004"]
    customer = [i.text for i in items if i.kind == "message" and i.role == "customer"]
    assert customer == SEED
    replies = [i for i in items if i.kind == "message" and i.role == "agent"]
    assert [r.agent for r in replies] == ["billing"] * 5
    assert "$29.99" in replies[3].text and "CH-9004" in replies[3].text  # the offer, in checkable words
    assert replies[-1].text == "Done: $29.99 is refunded to your card for CH-9004."
    assert "Done: $29.99" in "".join(tokens)
    # usage travels with the items, reported when the server sent it and estimated when not
    usage = [i.meta["usage"] for i in items if "usage" in i.meta]
    assert {u["reported"] for u in usage} == {True, False}
    # the whole transcript reached the model on the last step, oldest first
    last = server.requests[-1]["messages"]
    users = [m["content"] for m in last if m["role"] == "user"]
    assert users[:-1] == SEED[:-1]
    # The yes, and the desk's note that it ran the offered call (the call and result follow).
    assert users[-1].startswith(SEED[-1]) and "The customer said yes to: refund_charge" in users[-1]


def projections(items, refunds):
    """What the TUI, replay and evals read, independent of wording and step count."""
    return {
        "kinds": {i.kind for i in items},
        "confirmed": [(i.tool, i.arguments) for i in items if i.kind == "confirmation"],
        "handoffs": [(i.from_agent, i.to_agent, i.handoff_kind) for i in items if i.kind == "handoff"],
        "tools": {i.name for i in items if i.kind == "tool_call"},
        "customer_id": next(i.value for i in items if i.kind == "context_set" and i.key == "customer_id"),
        "customer": [i.text for i in items if i.kind == "message" and i.role == "customer"],
        "refunded": [(r["charge_id"], r["amount"]) for r in refunds],
        "notices": [i.text for i in items if i.kind == "notice"],
    }


async def test_same_items_as_the_embedded_model(server, tmp_path):
    script_seed(server)
    config = openai_desk(server.url)
    served = projections(*(await run_seed(tmp_path / "openai.db", config, OpenAIProvider(config)))[::2])
    offline_config = parse_desk(packaged_desk_path().read_text(encoding="utf-8"), "agents.toml")
    assert offline_config.model.provider == "offline"
    embedded = projections(*(await run_seed(tmp_path / "offline.db", offline_config))[::2])
    # The embedded model asks about the duplicate's refund as soon as it finds it, and that
    # question is the desk's offer (issues 33 and 38); the customer answers it with a request,
    # not a yes, so that offer is declined ("other") before the request's own offer. The
    # scripted model asks nothing there: the rest is the same.
    assert embedded["kinds"] - served["kinds"] == {"decline"}
    assert {**served, "kinds": set()} == {**embedded, "kinds": set()}
    assert served["kinds"] == embedded["kinds"] - {"decline"}
