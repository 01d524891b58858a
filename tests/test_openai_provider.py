"""The OpenAI-compatible provider against recorded wire traffic (httpx2 MockTransport).

Each fixture under tests/wire/ is what a real server sends (hosted OpenAI, vLLM, llama.cpp's
server, Ollama); the transport replays it to the official client, so everything from the
HTTP body up is the real code path.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from llm_desk import WIRE, make_config, make_request
from supportdesk.engine.protocol import (
    Answer,
    CallTools,
    ModelProvider,
    ProviderError,
    TextDelta,
    Transfer,
)
from supportdesk.items import Handoff, Message, ToolCall, ToolResult
from supportdesk.models.openai_compat import OpenAIProvider


class Wire:
    """Replays canned responses in order and keeps every request the client sent."""

    def __init__(self, *responses: httpx2.Response):
        self.responses = list(responses)
        self.requests: list[httpx2.Request] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if not self.responses:
            return httpx2.Response(500, json={"error": {"message": "no more canned responses"}})
        return self.responses.pop(0)

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))

    def body(self, i: int = -1) -> dict[str, Any]:
        return json.loads(self.requests[i].content)


def sse(name: str) -> httpx2.Response:
    return httpx2.Response(
        200,
        headers={"content-type": "text/event-stream", "x-request-id": "req_" + name.split(".")[0]},
        content=(WIRE / name).read_bytes(),
    )


def json_fixture(name: str, status: int = 200) -> httpx2.Response:
    return httpx2.Response(status, headers={"content-type": "application/json"}, content=(WIRE / name).read_bytes())


async def run(provider: OpenAIProvider, request) -> tuple[list[str], Any]:
    deltas: list[str] = []
    action = None
    async for piece in provider.stream(request):
        assert action is None, "nothing may follow the action"
        if isinstance(piece, TextDelta):
            deltas.append(piece.text)
        else:
            action = piece
    assert action is not None
    return deltas, action


async def no_sleep(_seconds: float) -> None:
    return None


def provider_for(wire: Wire, **settings: Any) -> OpenAIProvider:
    return OpenAIProvider(make_config(**settings), http_client=wire.client(), sleep=no_sleep)


async def test_speaks_the_model_protocol():
    wire = Wire()
    provider = provider_for(wire)
    assert isinstance(provider, ModelProvider)
    assert provider.name == "openai"
    await provider.aclose()


async def test_streamed_text_arrives_as_deltas_then_answer_with_reported_usage():
    wire = Wire(sse("openai_text_stream.sse"))
    provider = provider_for(wire)
    config = provider.config
    request = make_request(config, "billing", [Message(role="customer", text="I was charged twice.", seq=1)])
    deltas, action = await run(provider, request)
    assert deltas == ["I'm sorry", " about the double", " charge. Which dates do you see?"]
    assert isinstance(action, Answer)
    assert action.text == "".join(deltas)
    assert (action.usage.input_tokens, action.usage.output_tokens, action.usage.reported) == (412, 14, True)
    assert action.meta["model"] == "test-model"
    assert action.meta["request_id"] == "req_openai_text_stream"
    body = wire.body()
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 256
    assert body["model"] == "test-model"
    assert body["messages"][-1] == {"role": "user", "content": "I was charged twice."}
    await provider.aclose()


async def test_stream_without_usage_gets_an_estimate():
    wire = Wire(sse("llamacpp_no_usage_text_stream.sse"))
    provider = provider_for(wire)
    deltas, action = await run(provider, make_request(provider.config, "triage", [Message(role="customer", text="hi")]))
    assert "".join(deltas) == "Hello! How can I help?"
    assert isinstance(action, Answer)
    assert action.usage.reported is False
    assert action.usage.input_tokens > 0
    assert action.usage.output_tokens == (len("Hello! How can I help?") + 3) // 4


async def test_llamacpp_transfer_repeats_the_name_in_every_delta():
    wire = Wire(sse("llamacpp_transfer_stream.sse"))
    provider = provider_for(wire)
    request = make_request(provider.config, "triage", [Message(role="customer", text="charged twice")])
    deltas, action = await run(provider, request)
    assert deltas == []
    assert isinstance(action, Transfer)
    assert action.to_agent == "billing"  # not "billingtransfer_to_billing..."
    assert action.reason == "Customer reports a duplicate subscription charge"
    assert action.handoff_kind == "route"
    assert action.context == {"issue": "duplicate charge"}
    assert action.usage.reported is False
    body = wire.body()
    names = [t["function"]["name"] for t in body["tools"]]
    assert names == ["transfer_to_billing", "transfer_to_technical"]
    assert body["tool_choice"] == "auto"


async def test_parallel_tool_calls_are_assembled_by_index():
    wire = Wire(sse("vllm_parallel_tools_stream.sse"))
    provider = provider_for(wire)
    deltas, action = await run(provider, make_request(provider.config, "billing"))
    assert "".join(deltas) == "Let me check your account."
    assert isinstance(action, CallTools)
    assert action.text == "Let me check your account."
    assert [(c.call_id, c.name, c.arguments) for c in action.calls] == [
        ("chatcmpl-tool-aa01", "lookup_customer", {"email": "ana@example.com"}),
        ("chatcmpl-tool-bb02", "list_charges", {"month": "2026-03"}),
    ]
    assert action.usage.reported is True
    assert (action.usage.input_tokens, action.usage.output_tokens) == (655, 47)
    tools = {t["function"]["name"]: t["function"] for t in wire.body()["tools"]}
    assert tools["issue_refund"]["parameters"]["required"] == ["amount", "reason"]
    assert tools["issue_refund"]["parameters"]["properties"]["amount"]["type"] == "number"
    assert set(tools) == {"lookup_customer", "list_charges", "issue_refund", "transfer_to_senior", "transfer_to_triage"}


async def test_text_then_transfer_to_a_higher_level_is_an_escalation():
    wire = Wire(sse("ollama_text_then_transfer_stream.sse"))
    provider = provider_for(wire)
    deltas, action = await run(provider, make_request(provider.config, "billing"))
    assert "".join(deltas) == "Let me bring in our senior team."
    assert isinstance(action, Transfer)
    assert (action.to_agent, action.handoff_kind) == ("senior", "escalate")
    assert action.text == "Let me bring in our senior team."
    assert action.reason == "Refund of $480 is above the level-1 limit"


async def test_non_streamed_tool_call_and_answer():
    wire = Wire(json_fixture("openai_tool_call_nonstream.json"), json_fixture("openai_text_nonstream.json"))
    provider = provider_for(wire, stream=False)
    deltas, action = await run(provider, make_request(provider.config, "billing"))
    assert deltas == []
    assert isinstance(action, CallTools)
    assert action.calls[0].name == "issue_refund"
    assert action.calls[0].arguments == {"amount": 29.99, "reason": "duplicate charge"}
    assert action.usage.input_tokens == 702
    body = wire.body()
    assert "stream" not in body or body["stream"] is False
    assert "stream_options" not in body

    deltas, action = await run(provider, make_request(provider.config, "billing"))
    assert deltas == ["Your refund of $29.99 is on its way."]
    assert isinstance(action, Answer) and action.text == deltas[0]


async def test_per_agent_model_override_and_token_cap_field():
    wire = Wire(sse("openai_text_stream.sse"))
    provider = provider_for(wire, max_tokens_field="max_completion_tokens", temperature=0.0)
    await run(provider, make_request(provider.config, "senior"))
    body = wire.body()
    assert body["model"] == "big-model"
    assert body["max_completion_tokens"] == 256
    assert "max_tokens" not in body
    assert body["temperature"] == 0.0


async def test_no_tool_choice_without_tools():
    config = make_config()
    config.agents["triage"].handoffs = []
    wire = Wire(sse("openai_text_stream.sse"))
    provider = OpenAIProvider(config, http_client=wire.client(), sleep=no_sleep)
    await run(provider, make_request(config, "triage"))
    body = wire.body()
    assert "tools" not in body and "tool_choice" not in body


async def test_history_goes_out_as_valid_chat_messages():
    history = [
        Message(role="customer", text="I was charged twice.", seq=1, agent="triage"),
        Handoff(from_agent="triage", to_agent="billing", reason="duplicate charge", seq=2, agent="triage"),
        ToolCall(call_id="c1", name="lookup_customer", arguments={"email": "a@b.c"}, seq=3, agent="billing"),
        ToolResult(call_id="c1", name="lookup_customer", output='{"id": "cus_1"}', seq=4, agent="billing"),
        Message(role="agent", text="I see two charges.", seq=5, agent="billing"),
    ]
    wire = Wire(sse("openai_text_stream.sse"))
    provider = provider_for(wire)
    await run(provider, make_request(provider.config, "billing", history, {"issue": "duplicate charge"}))
    messages = wire.body()["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert "duplicate charge" in messages[0]["content"]  # the shared context
    assert messages[2]["content"] == ""  # never null next to tool calls
    assert messages[2]["tool_calls"][0]["function"]["name"] == "transfer_to_billing"
    assert messages[3]["tool_call_id"] == messages[2]["tool_calls"][0]["id"]
    assert json.loads(messages[4]["tool_calls"][0]["function"]["arguments"]) == {"email": "a@b.c"}
    assert messages[5] == {"role": "tool", "tool_call_id": "c1", "content": '{"id": "cus_1"}'}


async def test_invalid_json_arguments_and_unknown_tools_pass_through_for_the_runner():
    chunks = [
        {"index": 0, "id": "call_a", "type": "function", "function": {"name": "issue_refund", "arguments": "{\"amount\": 29.99,"}},
        {"index": 1, "id": "call_b", "type": "function", "function": {"name": "delete_everything", "arguments": "{}"}},
        {"index": 2, "id": "call_c", "type": "function", "function": {"name": "transfer_to_nobody", "arguments": "[1]"}},
    ]
    body = "".join(
        "data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
                               "choices": [{"index": 0, "delta": {"tool_calls": [c]}, "finish_reason": None}]}) + "\n\n"
        for c in chunks
    )
    body += "data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                   "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}) + "\n\ndata: [DONE]\n\n"
    wire = Wire(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode()))
    provider = provider_for(wire)
    _, action = await run(provider, make_request(provider.config, "billing"))
    assert isinstance(action, CallTools)
    got = [(c.call_id, c.name, c.arguments, c.raw_arguments) for c in action.calls]
    assert got == [
        ("call_a", "issue_refund", None, "{\"amount\": 29.99,"),
        ("call_b", "delete_everything", {}, "{}"),
        ("call_c", "transfer_to_nobody", None, "[1]"),
    ]


async def test_transfer_alongside_tools_runs_the_tools_first():
    body = "data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{
        "index": 0, "finish_reason": "tool_calls", "delta": {"tool_calls": [
            {"index": 0, "id": "t1", "type": "function", "function": {"name": "transfer_to_senior", "arguments": "{\"reason\": \"big\"}"}},
            {"index": 1, "id": "t2", "type": "function", "function": {"name": "lookup_customer", "arguments": "{\"email\": \"a@b.c\"}"}},
        ]}}]}) + "\n\ndata: [DONE]\n\n"
    wire = Wire(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode()))
    provider = provider_for(wire)
    _, action = await run(provider, make_request(provider.config, "billing"))
    assert isinstance(action, CallTools)
    assert [c.name for c in action.calls] == ["lookup_customer"]
    assert action.meta["deferred_transfer"] == "senior"


async def test_return_to_the_entry_agent_is_a_return():
    body = "data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{
        "index": 0, "finish_reason": "tool_calls", "delta": {"tool_calls": [
            {"index": 0, "id": "t1", "type": "function", "function": {"name": "transfer_to_triage", "arguments": "not json"}},
        ]}}]}) + "\n\ndata: [DONE]\n\n"
    wire = Wire(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode()))
    provider = provider_for(wire)
    _, action = await run(provider, make_request(provider.config, "billing"))
    assert isinstance(action, Transfer)
    assert (action.to_agent, action.handoff_kind, action.reason) == ("triage", "return", "")


async def test_missing_index_in_tool_deltas_still_assembles():
    deltas = [
        {"id": "c9", "type": "function", "function": {"name": "lookup_customer", "arguments": "{\"email\":"}},
        {"function": {"arguments": " \"z@y.x\"}"}},
    ]
    body = "".join(
        "data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
                               "choices": [{"index": 0, "delta": {"tool_calls": [d]}, "finish_reason": None}]}) + "\n\n"
        for d in deltas
    ) + "data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
                               "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}) + "\n\ndata: [DONE]\n\n"
    wire = Wire(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode()))
    provider = provider_for(wire)
    _, action = await run(provider, make_request(provider.config, "billing"))
    assert [(c.call_id, c.arguments) for c in action.calls] == [("c9", {"email": "z@y.x"})]


# --- failures ------------------------------------------------------------------------------


async def collect_error(provider: OpenAIProvider, request) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        await run(provider, request)
    return info.value


async def test_unknown_model_404(monkeypatch):
    wire = Wire(json_fixture("ollama_model_not_found.json", 404))
    provider = provider_for(wire)
    err = await collect_error(provider, make_request(provider.config))
    assert err.kind == "unknown_model"
    assert "test-model" in err.message
    assert len(wire.requests) == 1  # a 404 is not retried


async def test_bad_key_is_auth_and_never_shows_the_key(monkeypatch):
    monkeypatch.setenv("SD_TEST_KEY", "sk-test-very-secret")
    wire = Wire(json_fixture("openai_invalid_key.json", 401))
    provider = provider_for(wire, api_key_env="SD_TEST_KEY")
    err = await collect_error(provider, make_request(provider.config))
    assert err.kind == "auth"
    assert "SD_TEST_KEY" in err.message
    assert "sk-test-very-secret" not in err.message
    assert wire.requests[0].headers["authorization"] == "Bearer sk-test-very-secret"
    assert len(wire.requests) == 1


async def test_missing_key_variable_is_reported_before_any_request(monkeypatch):
    monkeypatch.delenv("SD_ABSENT_KEY", raising=False)
    wire = Wire(sse("openai_text_stream.sse"))
    provider = provider_for(wire, api_key_env="SD_ABSENT_KEY")
    err = await collect_error(provider, make_request(provider.config))
    assert err.kind == "auth" and "SD_ABSENT_KEY is not set" in err.message
    assert wire.requests == []


async def test_local_server_without_key_env_gets_a_placeholder():
    wire = Wire(sse("openai_text_stream.sse"))
    provider = provider_for(wire)
    await run(provider, make_request(provider.config))
    assert wire.requests[0].headers["authorization"] == "Bearer not-needed"


async def test_rejected_stream_options_are_dropped_once():
    wire = Wire(
        httpx2.Response(400, json={"error": {"message": "Unrecognized request argument supplied: stream_options"}}),
        sse("openai_text_stream.sse"),
    )
    provider = provider_for(wire)
    _, action = await run(provider, make_request(provider.config))
    assert isinstance(action, Answer)
    assert "stream_options" in wire.body(0) and "stream_options" not in wire.body(1)


async def test_bad_request_is_a_bad_response_with_the_servers_words():
    wire = Wire(httpx2.Response(400, json={"error": {"message": "tools are not supported by this model\x1b[31m"}}))
    provider = provider_for(wire)
    err = await collect_error(provider, make_request(provider.config))
    assert err.kind == "bad_response"
    assert "tools are not supported by this model" in err.message
    assert "\x1b" not in err.message


async def test_5xx_is_retried_then_succeeds():
    wire = Wire(
        httpx2.Response(502, text="bad gateway"),
        httpx2.Response(500, json={"error": {"message": "oops"}}),
        sse("openai_text_stream.sse"),
    )
    provider = provider_for(wire, max_retries=2)
    _, action = await run(provider, make_request(provider.config))
    assert isinstance(action, Answer)
    assert len(wire.requests) == 3


async def test_empty_reply_at_the_token_cap_says_so():
    body = "data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                  "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}) + "\n\ndata: [DONE]\n\n"
    wire = Wire(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode()))
    provider = provider_for(wire)
    err = await collect_error(provider, make_request(provider.config))
    assert err.kind == "bad_response" and "max_tokens" in err.message


async def test_error_event_inside_the_stream():
    body = 'data: {"error": {"message": "context length exceeded", "type": "server_error"}}\n\n'
    wire = Wire(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode()))
    provider = provider_for(wire)
    err = await collect_error(provider, make_request(provider.config))
    assert err.kind == "bad_response" and "context length exceeded" in err.message


async def test_garbage_in_the_stream_is_a_bad_response():
    body = "data: {not json at all\n\n"
    wire = Wire(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode()))
    provider = provider_for(wire, max_retries=0)
    err = await collect_error(provider, make_request(provider.config))
    assert err.kind == "bad_response"


async def test_required_with_a_single_tool_names_it():
    config = make_config(tool_choice="required")
    config.agents["triage"].handoffs = ["billing"]
    wire = Wire(sse("llamacpp_transfer_stream.sse"), sse("vllm_parallel_tools_stream.sse"))
    provider = OpenAIProvider(config, http_client=wire.client(), sleep=no_sleep)
    await run(provider, make_request(config, "triage"))
    assert wire.body()["tool_choice"] == {"type": "function", "function": {"name": "transfer_to_billing"}}
    await run(provider, make_request(config, "billing"))
    assert wire.body()["tool_choice"] == "required"


async def test_lone_surrogates_from_a_server_become_replacement_characters():
    body = 'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"bad \\ud800 byte \\ud83d\\ude00"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    wire = Wire(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode()))
    provider = provider_for(wire)
    _, action = await run(provider, make_request(provider.config))
    assert action.text == "bad \ufffd byte \U0001f600"
    action.text.encode("utf-8")  # storable
