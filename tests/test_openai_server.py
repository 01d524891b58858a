"""The provider against a real HTTP server on 127.0.0.1: retries, timeouts, dropped streams,
and malformed tool calls travelling through the real runner and store."""

from __future__ import annotations

import socket

import pytest
from pydantic import BaseModel, Field

from fake_llm_server import FakeLLMServer, Hang, Status, Stream, text_stream, tool_stream
from llm_desk import make_config, make_request
from supportdesk.wiring import open_desk
from supportdesk.engine.events import Appended, Token
from supportdesk.engine.protocol import Answer, ProviderError, TextDelta
from supportdesk.engine.runner import drain
from supportdesk.engine.tools import ToolRegistry
from supportdesk.models.openai_compat import OpenAIProvider
from supportdesk.models.retry import MAX_RETRY_AFTER


@pytest.fixture
def server():
    with FakeLLMServer() as srv:
        yield srv


class Sleeps:
    """Records the waits the provider asks for instead of sleeping through them."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def provider(server: FakeLLMServer, sleeps: Sleeps, **settings) -> OpenAIProvider:
    settings.setdefault("timeout", 5.0)
    return OpenAIProvider(make_config(server.url, **settings), sleep=sleeps)


async def run(p: OpenAIProvider, agent: str = "triage"):
    deltas, action = [], None
    async for piece in p.stream(make_request(p.config, agent)):
        if isinstance(piece, TextDelta):
            deltas.append(piece.text)
        else:
            action = piece
    return deltas, action


async def test_429_waits_as_long_as_retry_after_says(server):
    server.push(
        Status(429, {"error": {"message": "slow down"}}, {"retry-after": "2"}),
        Status(429, {"error": {"message": "slow down"}}, {"retry-after-ms": "1500"}),
        text_stream("Hello there."),
    )
    sleeps = Sleeps()
    p = provider(server, sleeps, max_retries=3)
    deltas, action = await run(p)
    await p.aclose()
    assert isinstance(action, Answer) and action.text == "Hello there."
    assert sleeps.waits == [2.0, 1.5]
    assert len(server.requests) == 3


async def test_429_asking_for_too_long_gives_up_at_once(server):
    server.push(Status(429, {"error": {"message": "quota"}}, {"retry-after": str(int(MAX_RETRY_AFTER * 30))}))
    sleeps = Sleeps()
    p = provider(server, sleeps, max_retries=3)
    with pytest.raises(ProviderError) as info:
        await run(p)
    await p.aclose()
    assert info.value.kind == "rate_limited"
    assert "600" in info.value.message
    assert sleeps.waits == [] and len(server.requests) == 1


async def test_429_forever_is_rate_limited_after_the_retries(server):
    server.push(*[Status(429, {"error": {"message": "busy"}}) for _ in range(3)])
    sleeps = Sleeps()
    p = provider(server, sleeps, max_retries=2)
    with pytest.raises(ProviderError) as info:
        await run(p)
    await p.aclose()
    assert info.value.kind == "rate_limited" and "3 attempts" in info.value.message
    assert len(server.requests) == 3
    # exponential backoff without Retry-After: the second wait is longer than the first
    assert len(sleeps.waits) == 2 and sleeps.waits[1] > sleeps.waits[0] > 0


async def test_503_is_retried_then_answers(server):
    server.push(Status(503, {"error": {"message": "loading model"}}), text_stream("Back."))
    sleeps = Sleeps()
    p = provider(server, sleeps)
    _, action = await run(p)
    await p.aclose()
    assert action.text == "Back."
    assert len(server.requests) == 2 and len(sleeps.waits) == 1


async def test_503_forever_is_unavailable(server):
    server.push(*[Status(503, {"error": {"message": "loading model"}}) for _ in range(2)])
    p = provider(server, Sleeps(), max_retries=1)
    with pytest.raises(ProviderError) as info:
        await run(p)
    await p.aclose()
    assert info.value.kind == "unreachable" and "HTTP 503" in info.value.message


async def test_a_hang_past_the_timeout_is_a_timeout_and_not_retried(server):
    server.push(Hang(30), Hang(30))
    p = provider(server, Sleeps(), timeout=0.5, max_retries=2)
    with pytest.raises(ProviderError) as info:
        await run(p)
    await p.aclose()
    assert info.value.kind == "timeout"
    assert "0.5 s" in info.value.message
    assert len(server.requests) == 1


async def test_a_stream_dropped_mid_reply_fails_without_repeating_the_text(server):
    reply = text_stream("This reply will be cut off somewhere.", pieces=4)
    server.push(Stream(reply.chunks, drop_after=3), text_stream("never used"))
    p = provider(server, Sleeps())
    deltas: list[str] = []
    with pytest.raises(ProviderError) as info:
        async for piece in p.stream(make_request(p.config)):
            deltas.append(piece.text)
    await p.aclose()
    assert info.value.kind == "bad_response" and "middle of its reply" in info.value.message
    assert "".join(deltas) and "".join(deltas) != "This reply will be cut off somewhere."
    assert len(server.requests) == 1  # text already reached the customer: no retry


async def test_a_stream_dropped_before_any_text_is_retried(server):
    server.push(Stream(text_stream("x").chunks, drop_after=0), text_stream("Second try."))
    p = provider(server, Sleeps())
    _, action = await run(p)
    await p.aclose()
    assert action.text == "Second try."
    assert len(server.requests) == 2


async def test_a_stream_that_ends_without_finishing_is_dropped(server):
    chunks = [c for c in text_stream("Half a").chunks if not c["choices"] or not c["choices"][0]["finish_reason"]]
    server.push(Stream(chunks, done=False))
    p = provider(server, Sleeps(), max_retries=0)
    with pytest.raises(ProviderError) as info:
        await run(p)
    await p.aclose()
    assert info.value.kind == "bad_response"


async def test_nobody_listening_is_unreachable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps = Sleeps()
    p = OpenAIProvider(make_config(f"http://127.0.0.1:{port}/v1", max_retries=1), sleep=sleeps)
    with pytest.raises(ProviderError) as info:
        await run(p)
    await p.aclose()
    assert info.value.kind == "unreachable"
    assert f"127.0.0.1:{port}" in info.value.message and "2 attempts" in info.value.message
    assert len(sleeps.waits) == 1


# --- malformed tool calls through the runner -----------------------------------------------


class RefundArgs(BaseModel):
    amount: float = Field(gt=0)
    reason: str


def refund_tools() -> tuple[ToolRegistry, list[float]]:
    registry = ToolRegistry()
    done: list[float] = []

    @registry.tool("issue_refund", "Refund a charge.", RefundArgs)
    def issue_refund(ctx, args: RefundArgs):
        done.append(args.amount)
        return {"refunded": args.amount}

    for name in ("lookup_customer", "list_charges"):
        registry.tool(name, name, RefundArgs)(lambda ctx, args: {})
    return registry, done


async def _billing_session(desk) -> str:
    """A session already held by billing (so the turn starts there)."""
    sid = await desk.runner.new_session()
    await desk.runner.force_handoff(sid, "billing", "test starts with billing")
    return sid


async def test_malformed_tool_calls_go_back_to_the_model_as_errors(server, tmp_path):
    server.push(
        tool_stream([("issue_refund", '{"amount": 29.99, "reason": ')]),  # invalid JSON
        tool_stream([("wire_money_abroad", '{"to": "me"}')]),  # unknown tool
        tool_stream([("issue_refund", '{"amount": -5, "reason": "dup"}')]),  # fails validation
        tool_stream([("issue_refund", '{"amount": 29.99, "reason": "duplicate charge"}')]),
        text_stream("Refunded $29.99.", usage={"prompt_tokens": 900, "completion_tokens": 6, "total_tokens": 906}),
    )
    registry, refunds = refund_tools()
    config = make_config(server.url)
    p = OpenAIProvider(config, sleep=Sleeps())
    async with await open_desk(tmp_path / "desk.db", config, provider=p, tools=registry, customers=False) as desk:
        sid = await _billing_session(desk)
        events = await drain(desk.runner.send(sid, "Refund my duplicate charge please."))
        items = [e.item for e in events if isinstance(e, Appended)]
    results = [i for i in items if i.kind == "tool_result"]
    assert [r.is_error for r in results] == [True, True, True, False]
    assert "JSON object" in results[0].output
    assert "unknown tool" in results[1].output
    assert "invalid arguments" in results[2].output
    assert refunds == [29.99]
    assert items[-1].kind == "message" and items[-1].text == "Refunded $29.99."
    assert items[-1].meta["usage"] == {"input_tokens": 900, "output_tokens": 6, "reported": True}
    # each error went back to the model as the tool message for its call
    second = server.requests[1]["messages"]
    tool_msgs = [m for m in second if m["role"] == "tool"]
    assert tool_msgs[-1]["content"].startswith("ERROR:")
    call_ids = [c["id"] for m in second if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert tool_msgs[-1]["tool_call_id"] == call_ids[-1]
    assert all(m.get("content") is not None for m in second)


async def test_a_model_that_never_stops_calling_bad_tools_hits_the_step_limit(server, tmp_path):
    server.push(*[tool_stream([("nonexistent_tool", "{}")]) for _ in range(20)])
    registry, _ = refund_tools()
    config = make_config(server.url)
    config.desk.limits.max_steps_per_message = 3
    p = OpenAIProvider(config, sleep=Sleeps())
    async with await open_desk(tmp_path / "desk.db", config, provider=p, tools=registry, customers=False) as desk:
        sid = await _billing_session(desk)
        events = await drain(desk.runner.send(sid, "hello"))
        items = [e.item for e in events if isinstance(e, Appended)]
        stored = await desk.store.latest(sid, 100)
    assert len(server.requests) == 3
    assert [i.notice_kind for i in items if i.kind == "notice"] == ["limit"]
    assert any(i.kind == "message" and i.role == "customer" and i.text == "hello" for i in stored)


async def test_provider_failure_becomes_a_notice_and_keeps_the_message(server, tmp_path):
    server.push(Status(401, {"error": {"message": "bad key"}}))
    config = make_config(server.url)
    p = OpenAIProvider(config, sleep=Sleeps())
    registry, _ = refund_tools()
    async with await open_desk(tmp_path / "desk.db", config, provider=p, tools=registry, customers=False) as desk:
        events = await drain(desk.runner.send(None, "I was charged twice."))
        sid = events[0].session_id
        stored = await desk.store.latest(sid, 10)
        # staff retry the turn once the server is fixed
        server.push(text_stream("Sorry about that. What can I do?"))
        retry = await drain(desk.runner.retry_turn(sid))
    kinds = [(i.kind, getattr(i, "role", getattr(i, "notice_kind", None))) for i in stored]
    assert kinds == [("message", "customer"), ("notice", "provider_error")]
    assert "API key" in stored[1].text
    assert "".join(e.text for e in retry if isinstance(e, Token)) == "Sorry about that. What can I do?"
    assert server.requests[-1]["messages"][-1] == {"role": "user", "content": "I was charged twice."}
