"""A model provider for OpenAI-compatible chat-completion servers.

Hosted OpenAI, Ollama, vLLM, llama.cpp and LM Studio all speak `/v1/chat/completions` with
tools. This module wraps the official `openai` client (imported here and nowhere else, so the
offline desk never loads it) behind the desk's small `ModelProvider` protocol:

- the agent's tools become function tools; each handoff target becomes `transfer_to_<agent>`
  (named, and its handoff kind decided, by the desk: engine/handoffs.py);
- the model's reply maps onto the same actions the embedded model returns (Answer, CallTools,
  Transfer), so the runner, the TUI and replay cannot tell the difference;
- retries are ours, not the client's (the client's max_retries is 0): when and how long to
  wait is models/retry.py, shared by any HTTP provider;
- every failure that reaches the runner is a `ProviderError` with a plain sentence, and the
  API key (models/keys.py) never appears in one;
- it is a `ModelServer` too, so `supportdesk doctor` can check the server, model and tools.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

try:
    import httpx2
    import openai
except ImportError as exc:  # pragma: no cover - exercised only without the extra installed
    raise ImportError(
        "the openai provider needs the openai package: pip install 'supportdesk[openai]'"
    ) from exc

from supportdesk.config import DeskConfig
from supportdesk.engine.handoffs import handoff_kind, transfer_target
from supportdesk.engine.protocol import (
    Action,
    Answer,
    CallTools,
    ProviderError,
    RequestedCall,
    StepRequest,
    TextDelta,
    Transfer,
    Usage,
)
from supportdesk.items import Item
from supportdesk.engine.history_window import estimate_tokens
from supportdesk.models.history import build_messages, tool_definitions
from supportdesk.models.keys import PLACEHOLDER_KEY, resolve_api_key, scrub_key
from supportdesk.models.retry import Sleep, backoff_delay, status_retry_wait, waits_too_long

# Server text quoted in an error is cut to this many characters.
_MAX_SERVER_TEXT = 200
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class _StreamDropped(Exception):
    """The stream ended before the server said the reply was finished."""


class _EmptyReply(Exception):
    def __init__(self, finish_reason: str | None):
        self.finish_reason = finish_reason


@dataclass
class _Reply:
    """One model reply, assembled from stream chunks or a whole response."""

    text: str = ""
    # index -> {"id", "name", "arguments"}; filled from deltas in arrival order.
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: tuple[int, int] | None = None
    model: str = ""
    request_id: str | None = None

    def add_tool_delta(self, delta: Any) -> None:
        index = getattr(delta, "index", None)
        call_id = getattr(delta, "id", None)
        if index is None:
            # A few servers omit the index: a new id starts a new call, else continue the last.
            known = [i for i, c in self.calls.items() if call_id and c["id"] == call_id]
            if known:
                index = known[0]
            elif call_id or not self.calls:
                index = len(self.calls)
            else:
                index = max(self.calls)
        slot = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        if call_id and not slot["id"]:
            slot["id"] = call_id
        function = getattr(delta, "function", None)
        if function is not None:
            # Real servers repeat the name in every delta: set it once, never concatenate.
            if function.name and not slot["name"]:
                slot["name"] = _clean(function.name)
            if function.arguments:
                slot["arguments"] += _clean(function.arguments)


def _clean(text: str) -> str:
    """Text a server sent, storable as UTF-8: lone surrogates (from a server escaping bad
    bytes) would make the store refuse the item, so they become U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def parse_arguments(raw: str) -> dict[str, Any] | None:
    """The JSON object a model sent as arguments; None when it is not one."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _plain(text: str) -> str:
    """Server text made safe to show: no control characters or terminal escapes, bounded."""
    text = _CONTROL.sub(" ", text).strip()
    return text if len(text) <= _MAX_SERVER_TEXT else text[: _MAX_SERVER_TEXT - 1] + "…"


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if isinstance(message, str) and message:
            return message
    if isinstance(body, str) and body:
        return body
    return ""


# What the summary call is told: the desk's facts live in the shared context; the note keeps the story.
SUMMARY_INSTRUCTIONS = (
    "You condense the earlier part of a customer-support conversation for the support agents. "
    "In at most five sentences, say what the customer asked for, what was done (tools, handoffs, "
    "refunds) and what is still open. Quote ids and amounts exactly. Plain text only."
)


class OpenAIProvider:
    """`ModelProvider` for any server that speaks `/v1/chat/completions` with tools."""

    name = "openai"

    def __init__(
        self,
        config: DeskConfig,
        *,
        http_client: httpx2.AsyncClient | None = None,
        sleep: Sleep | None = None,
    ) -> None:
        self.config = config
        self.settings = config.model
        self._sleep: Sleep = sleep or asyncio.sleep
        self._key_problem: ProviderError | None = None
        try:
            self._key = resolve_api_key(self.settings)
        except ProviderError as exc:
            # Report it on the first step (as a notice), not while the desk is being opened.
            self._key, self._key_problem = PLACEHOLDER_KEY, exc
        timeout = self.settings.timeout
        self.client = openai.AsyncOpenAI(
            api_key=self._key,
            base_url=self.settings.base_url,
            # The client's default is ten minutes; a support chat cannot wait that long.
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
            # Retries are ours (see module docstring).
            max_retries=0,
            # Always an httpx2 client: openai 3 speaks nothing else, and openai 2.54+ takes one
            # too (older litellm releases, which the tau2 extra may resolve to, held openai below 3).
            http_client=http_client or httpx2.AsyncClient(),
        )

    @property
    def base_url(self) -> str:
        return str(self.client.base_url)

    def model_for(self, agent_model: str | None) -> str:
        return agent_model or self.settings.model or ""

    async def aclose(self) -> None:
        await self.client.close()

    # --- the protocol ------------------------------------------------------------------------

    async def stream(self, request: StepRequest) -> AsyncIterator[TextDelta | Action]:
        if self._key_problem is not None:
            raise self._key_problem
        model = self.model_for(request.agent.model)
        messages = build_messages(request)
        tools = tool_definitions(request)
        params = self._params(model, messages, tools)
        started = False  # once text reached the customer, a retry would repeat it
        attempt = 0
        while True:
            try:
                reply = _Reply(model=model)
                if self.settings.stream:
                    async for piece in self._stream_once(params, reply):
                        started = True
                        yield piece
                else:
                    await self._complete_once(params, reply)
                    if reply.text:
                        yield TextDelta(reply.text)
                if not reply.text and not reply.calls:
                    raise _EmptyReply(reply.finish_reason)
                yield self._action(request, reply, messages, tools)
                return
            except (openai.OpenAIError, _StreamDropped, json.JSONDecodeError) as exc:
                if _rejects_stream_options(exc) and "stream_options" in params:
                    # Some older servers refuse the usage request; go on without usage.
                    params.pop("stream_options")
                    continue
                wait = None if started else self._retry_wait(exc, attempt)
                if wait is None or attempt >= self.settings.max_retries:
                    raise self._provider_error(exc, attempt + 1, model) from None
                attempt += 1
                await self._sleep(wait)
            except _EmptyReply as exc:
                raise self._empty_reply_error(exc.finish_reason) from None

    # --- one request -------------------------------------------------------------------------

    def _params(
        self, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> dict[str, Any]:
        s = self.settings
        params: dict[str, Any] = {"model": model, "messages": messages}
        # Always an explicit cap: some servers default to "until the context is full".
        params[s.max_tokens_field] = s.max_tokens
        if s.temperature is not None:
            params["temperature"] = s.temperature
        if tools:
            params["tools"] = tools
            # tool_choice without tools is an error on several servers.
            if s.tool_choice == "required" and len(tools) == 1:
                # "required" with a single tool means that tool; the named form is the one
                # every server with tool calling accepts (llama-cpp-python rejects "required").
                params["tool_choice"] = {"type": "function", "function": {"name": tools[0]["function"]["name"]}}
            elif s.tool_choice is not None:
                params["tool_choice"] = s.tool_choice
        if s.stream:
            params["stream_options"] = {"include_usage": True}
        return params

    async def _stream_once(self, params: dict[str, Any], reply: _Reply) -> AsyncIterator[TextDelta]:
        stream = await self.client.chat.completions.create(**params, stream=True)
        reply.request_id = stream.response.headers.get("x-request-id")
        try:
            async for chunk in _dropped_as_such(stream):
                usage = getattr(chunk, "usage", None)
                if usage is not None and usage.prompt_tokens is not None:
                    reply.usage = (usage.prompt_tokens or 0, usage.completion_tokens or 0)
                for choice in getattr(chunk, "choices", None) or []:
                    if getattr(choice, "index", 0) not in (0, None):
                        continue  # we ask for one choice; ignore any others
                    delta = choice.delta
                    if delta is not None:
                        if delta.content:
                            piece = _clean(delta.content)
                            reply.text += piece
                            yield TextDelta(piece)
                        for tool_delta in delta.tool_calls or []:
                            reply.add_tool_delta(tool_delta)
                    if choice.finish_reason:
                        reply.finish_reason = choice.finish_reason
        finally:
            await stream.close()
        if reply.finish_reason is None:
            raise _StreamDropped()

    async def _complete_once(self, params: dict[str, Any], reply: _Reply) -> None:
        body = {k: v for k, v in params.items() if k != "stream_options"}
        raw = await self.client.chat.completions.with_raw_response.create(**body)
        reply.request_id = raw.headers.get("x-request-id")
        response = raw.parse()
        if not response.choices:
            raise _EmptyReply(None)
        choice = response.choices[0]
        message = choice.message
        reply.text = _clean(message.content or "")
        reply.finish_reason = choice.finish_reason
        for index, call in enumerate(message.tool_calls or []):
            function = getattr(call, "function", None)
            reply.calls[index] = {
                "id": call.id or "",
                "name": _clean((function.name if function else "") or ""),
                "arguments": _clean((function.arguments if function else "") or ""),
            }
        if response.usage is not None and response.usage.prompt_tokens is not None:
            reply.usage = (response.usage.prompt_tokens or 0, response.usage.completion_tokens or 0)

    # --- the history window's summary (engine/history_window.py) -------------------------------

    async def summarise(self, items: Sequence[Item], previous: str | None) -> str:
        """One plain (non-streamed) call condensing items that left a model call's history window.

        Errors propagate: the window falls back to its extractive note and the turn goes on."""
        if self._key_problem is not None:
            raise self._key_problem
        from supportdesk.engine.history_window import item_text

        lines = "\n".join(f"#{item.seq} {item.kind} ({item.agent}): {item_text(item)}" for item in items)
        earlier = f"The summary so far:\n{previous}\n\nWhat happened after it:\n" if previous else "The conversation:\n"
        response = await self.client.chat.completions.create(
            model=self.model_for(None),
            messages=[
                {"role": "system", "content": SUMMARY_INSTRUCTIONS},
                {"role": "user", "content": earlier + lines},
            ],
            max_tokens=min(self.settings.max_tokens, 300),
            stream=False,
        )
        return _clean(response.choices[0].message.content or "").strip() if response.choices else ""

    # --- mapping the reply onto an action ----------------------------------------------------

    def _action(
        self,
        request: StepRequest,
        reply: _Reply,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
    ) -> Action:
        if reply.usage is not None:
            usage = Usage(reply.usage[0], reply.usage[1], reported=True)
        else:
            sent = json.dumps(messages, ensure_ascii=False) + json.dumps(tools, ensure_ascii=False)
            made = reply.text + "".join(c["name"] + c["arguments"] for c in reply.calls.values())
            usage = Usage(estimate_tokens(sent), estimate_tokens(made), reported=False)
        meta: dict[str, Any] = {"provider": self.name, "model": reply.model}
        if reply.finish_reason:
            meta["finish_reason"] = reply.finish_reason
        if reply.request_id:
            meta["request_id"] = reply.request_id

        calls: list[RequestedCall] = []
        transfers: list[tuple[str, dict[str, Any] | None, RequestedCall]] = []
        for _, slot in sorted(reply.calls.items()):
            call_id = slot["id"] or f"call_{uuid.uuid4().hex[:12]}"
            arguments = parse_arguments(slot["arguments"])
            target = transfer_target(slot["name"])
            if target is not None and target in self.config.agents:
                transfers.append((target, arguments, RequestedCall(call_id, slot["name"], arguments, slot["arguments"])))
            else:
                # Unknown names pass through: the runner answers them with an error result.
                calls.append(RequestedCall(call_id, slot["name"], arguments, slot["arguments"]))

        if calls:
            # Tools first; a transfer requested alongside them is left for the next step,
            # when the model has seen the results.
            if transfers:
                meta["deferred_transfer"] = transfers[0][0]
            return CallTools(calls, text=reply.text, usage=usage, meta=meta)
        if transfers:
            target, arguments, call = transfers[0]
            arguments = arguments or {}
            reason = arguments.get("reason")
            return Transfer(
                target,
                reason if isinstance(reason, str) else "",
                handoff_kind=handoff_kind(self.config, request.agent.name, target),
                text=reply.text,
                context=_context_writes(arguments.get("context")),
                usage=usage,
                meta=meta,
                call=call,
            )
        return Answer(reply.text, usage=usage, meta=meta)

    # --- failures ----------------------------------------------------------------------------

    def _retry_wait(self, exc: BaseException, attempt: int) -> float | None:
        """Seconds to wait before trying again, or None when retrying would not help."""
        if isinstance(exc, openai.APIStatusError):
            return status_retry_wait(exc.status_code, exc.response.headers, attempt)
        if isinstance(exc, openai.APITimeoutError):
            return None  # a hang has already used the whole timeout once
        if isinstance(exc, (openai.APIConnectionError, _StreamDropped)):
            return backoff_delay(attempt)
        return None

    def _scrub(self, text: str) -> str:
        return _plain(scrub_key(text, self._key))

    def _provider_error(self, exc: BaseException, attempts: int, model: str) -> ProviderError:
        where = self.base_url.rstrip("/")
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        said = self._scrub(_server_message(exc))
        said_part = f": {said}" if said else ""
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError(
                "timeout", f"the model server at {where} did not answer within {self.settings.timeout:g} s"
            )
        if isinstance(exc, openai.APIConnectionError):
            return ProviderError("unreachable", f"cannot reach the model server at {where}{tries}")
        if isinstance(exc, _StreamDropped):
            return ProviderError(
                "bad_response", f"the model server at {where} stopped in the middle of its reply{tries}"
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status in (401, 403):
                hint = (
                    f"check the key in ${self.settings.api_key_env}"
                    if self.settings.api_key_env
                    else "set model.api_key_env to the variable that holds the key"
                )
                return ProviderError("auth", f"the model server refused the API key (HTTP {status}); {hint}")
            if status == 404:
                if "model" in said.lower() or not said:
                    return ProviderError(
                        "unknown_model",
                        f"the model server at {where} does not know the model {model!r} (HTTP 404); "
                        "check model in [model] (or that base_url ends in /v1)",
                    )
                return ProviderError("bad_response", f"the model server answered HTTP 404{said_part}")
            if status == 429:
                asked = waits_too_long(exc.response.headers)
                if asked is not None:
                    return ProviderError(
                        "rate_limited",
                        f"the model server is rate limiting and asks to wait {asked:g} s; try again later",
                    )
                return ProviderError("rate_limited", f"the model server is rate limiting requests{tries}; try again shortly")
            if status in (502, 503, 504):
                return ProviderError("unreachable", f"the model server at {where} is unavailable (HTTP {status}){tries}")
            if status >= 500:
                return ProviderError("bad_response", f"the model server failed (HTTP {status}){tries}{said_part}")
            return ProviderError("bad_response", f"the model server rejected the request (HTTP {status}){said_part}")
        if isinstance(exc, (json.JSONDecodeError, openai.APIResponseValidationError)):
            return ProviderError("bad_response", f"the model server at {where} sent a reply that is not valid JSON")
        if isinstance(exc, openai.APIError):
            return ProviderError("bad_response", f"the model server reported an error{said_part or ': ' + self._scrub(str(exc))}")
        return ProviderError("error", f"the model request failed: {self._scrub(str(exc))}")

    def _empty_reply_error(self, finish_reason: str | None) -> ProviderError:
        if finish_reason == "length":
            return ProviderError(
                "bad_response",
                f"the model used its whole token cap ({self.settings.max_tokens}) without replying; "
                "raise max_tokens in [model]",
            )
        return ProviderError("bad_response", "the model sent an empty reply")

    # --- the ModelServer protocol, which `supportdesk doctor` checks ----------------------------

    def describe(self) -> str:
        return f"openai-compatible server at {self.settings.base_url}"

    def _where(self) -> str:
        return f"the model server at {self.settings.base_url}"

    def _json_reply(self, response: Any, what: str) -> dict[str, Any]:
        """The reply's JSON object, or a ProviderError that says what came instead."""
        text = response.text
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if isinstance(body, dict):
            return body
        seen = _describe_body(response.headers.get("content-type", ""), text) if body is None else "JSON that is not an object"
        raise ProviderError("bad_response", f"{self._where()} sent {seen} when asked for {what}")

    async def list_models(self) -> list[str]:
        """Model ids the server lists at GET /models."""
        if self._key_problem is not None:
            raise self._key_problem
        try:
            raw = await self.client.models.with_raw_response.list()
        except (openai.OpenAIError, json.JSONDecodeError) as exc:
            raise self._provider_error(exc, 1, self.settings.model or "") from None
        body = self._json_reply(raw.http_response, "/models")
        data = body.get("data")
        if not isinstance(data, list):
            raise ProviderError("bad_response", f"{self._where()} answered /models with JSON that has no model list")
        return [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]

    async def probe_tools(self, model: str) -> bool:
        """Ask for one tiny forced tool call; True when the server returned a tool call.

        Forcing a named function is what the llama.cpp, vLLM and OpenAI servers support; a
        server that refuses that form gets "required", then "auto".
        """
        if self._key_problem is not None:
            raise self._key_problem
        tool = {
            "type": "function",
            "function": {
                "name": "ping",
                "description": "Answer the connectivity check.",
                "parameters": {
                    "type": "object",
                    "properties": {"ok": {"type": "boolean"}},
                    "required": ["ok"],
                },
            },
        }
        choices: list[Any] = [{"type": "function", "function": {"name": "ping"}}, "required", "auto"]
        last: BaseException | None = None
        for choice in choices:
            try:
                # The token cap's field name is configured, so the client's overloads cannot see it.
                raw = await self.client.chat.completions.with_raw_response.create(  # type: ignore[call-overload]
                    model=model,
                    messages=[{"role": "user", "content": "Call the ping tool with ok=true."}],
                    tools=[tool],
                    tool_choice=choice,
                    **{self.settings.max_tokens_field: 64},
                )
            except openai.BadRequestError as exc:
                last = exc
                continue
            except (openai.OpenAIError, json.JSONDecodeError) as exc:
                raise self._provider_error(exc, 1, model) from None
            # Read the body ourselves: a server may stream, send nothing, or send JSON of
            # another shape, and doctor must say which instead of failing on it.
            body = self._json_reply(raw.http_response, "a chat completion")
            replied = body.get("choices")
            if not isinstance(replied, list) or not replied or not isinstance(replied[0], dict):
                raise ProviderError("bad_response", f"{self._where()} answered a chat completion with no choices in it")
            message = replied[0].get("message")
            if not isinstance(message, dict):
                raise ProviderError("bad_response", f"{self._where()} answered a chat completion with no message in it")
            return bool(message.get("tool_calls"))
        assert last is not None
        raise self._provider_error(last, 1, model)


def _describe_body(content_type: str, text: str) -> str:
    """What a reply that is not a JSON object was, in a few words."""
    if not text.strip():
        return "an empty reply"
    if "event-stream" in content_type or text.lstrip().startswith("data:"):
        return "a streamed reply (server-sent events) to a plain request"
    if "html" in content_type or text.lstrip().startswith("<"):
        return "an HTML page"
    return f"a reply that is not JSON ({content_type or 'no content type'}, starting {text.strip()[:40]!r})"


async def _dropped_as_such(stream: Any) -> AsyncIterator[Any]:
    """The stream's chunks; a connection lost after the reply began is a dropped stream,
    not an unreachable server (a read timeout stays a timeout)."""
    try:
        async for chunk in stream:
            yield chunk
    except openai.APITimeoutError:
        raise
    except openai.APIConnectionError as exc:
        raise _StreamDropped() from exc
    # openai 2.x hands an httpx2 client's errors inside a stream through unwrapped.
    except httpx2.TimeoutException as exc:
        raise openai.APITimeoutError(request=exc.request) from exc
    except httpx2.TransportError as exc:
        raise _StreamDropped() from exc


def _rejects_stream_options(exc: BaseException) -> bool:
    return (
        isinstance(exc, openai.BadRequestError)
        and "stream_options" in (_server_message(exc) or str(exc))
    )


def _context_writes(value: Any) -> dict[str, Any]:
    """The `context` argument of a transfer, as shared-context writes (bad shapes ignored)."""
    if not isinstance(value, dict):
        return {}
    writes: dict[str, Any] = {}
    for key, item in value.items():
        key = str(key).strip()
        if key and len(key) <= 64:
            writes[key] = item
    return writes
