"""OpenTelemetry tracing, opt-in: a span per turn, with a child per agent step, and below a step
its tool calls and its handoff.

On when the desk file says `[tracing] enabled = true` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set;
otherwise nothing here imports OpenTelemetry (the `tracing` extra), so start-up never pays for it.

Tracing is a hook (engine/hooks.py): it sees the moments every hook sees and turns them into
spans, so the runner has no tracing code of its own. Spans are started with an explicit parent,
never made "current": a turn is an async generator, and a context attached in one `yield` may be
detached in another task.

Attributes follow the OpenTelemetry GenAI semantic conventions (`gen_ai.operation.name`,
`gen_ai.agent.name`, `gen_ai.request.model`, `gen_ai.usage.input_tokens`/`output_tokens`,
`gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.conversation.id`) plus `session.id` and `seq`
(the log position the span is about).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from supportdesk.config import ConfigError
from supportdesk.engine.hooks import (
    DeskHook,
    HandoffDone,
    ModelStep,
    ModelStepDone,
    ToolCallAsked,
    ToolCallDone,
    TurnEnded,
    TurnStarted,
)

ENV_ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"
# Where spans go when tracing is on without an endpoint: a collector on this machine.
LOCAL_COLLECTOR = "http://127.0.0.1:4318/v1/traces"
TRACING_EXTRA = "pip install 'supportdesk[tracing]'"
INSTRUMENTATION = "supportdesk"


def tracing_wanted(config: Any) -> bool:
    return bool(config.tracing.enabled or os.environ.get(ENV_ENDPOINT))


@dataclass
class _Turn:
    span: Any
    step: Any = None
    tool_starts: dict[str, tuple[int, ToolCallAsked]] = field(default_factory=dict)


class TracingHook(DeskHook):
    """Spans from the hook moments. `tracer_provider`: an OpenTelemetry SDK TracerProvider."""

    def __init__(self, tracer_provider: Any, *, owns_provider: bool = False) -> None:
        from opentelemetry import trace

        self._trace = trace
        self._provider = tracer_provider
        self._owns_provider = owns_provider
        self._tracer = tracer_provider.get_tracer(INSTRUMENTATION)
        self._turns: dict[str, _Turn] = {}

    def _child(self, parent: Any, name: str, attributes: dict[str, Any], start: int | None = None) -> Any:
        context = self._trace.set_span_in_context(parent)
        return self._tracer.start_span(name, context=context, attributes=attributes, start_time=start)

    def before_turn(self, event: TurnStarted) -> None:
        self._end_turn(event.session_id, "superseded")
        span = self._tracer.start_span(
            "supportdesk.turn",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.conversation.id": event.session_id,
                "session.id": event.session_id,
                "seq": event.seq,
                "supportdesk.agent": event.agent,
            },
        )
        self._turns[event.session_id] = _Turn(span)
        return None

    def before_model_step(self, event: ModelStep) -> None:
        turn = self._turns.get(event.session_id)
        if turn is None:
            return
        self._end_step(turn)
        turn.step = self._child(
            turn.span,
            f"invoke_agent {event.agent}",
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": event.agent,
                "gen_ai.request.model": event.model,
                "gen_ai.conversation.id": event.session_id,
                "session.id": event.session_id,
                "seq": event.seq,
                "supportdesk.step": event.step,
                "supportdesk.history_items": event.history_items,
            },
        )

    def after_model_step(self, event: ModelStepDone) -> None:
        turn = self._turns.get(event.session_id)
        if turn is None or turn.step is None:
            return
        turn.step.set_attribute("supportdesk.action", event.action)
        if event.input_tokens is not None:
            turn.step.set_attribute("gen_ai.usage.input_tokens", event.input_tokens)
        if event.output_tokens is not None:
            turn.step.set_attribute("gen_ai.usage.output_tokens", event.output_tokens)

    def before_tool_call(self, event: ToolCallAsked) -> None:
        turn = self._turns.get(event.session_id)
        if turn is not None:
            turn.tool_starts[event.call_id] = (time.time_ns(), event)
        return None

    def after_tool_call(self, event: ToolCallDone) -> None:
        turn = self._turns.get(event.session_id)
        if turn is None:
            return
        start, _asked = turn.tool_starts.pop(event.call_id, (None, None))
        self._tool_span(turn, event.session_id, event.agent, event.name, event.call_id, start, error=event.is_error)

    def _tool_span(self, turn: _Turn, session_id: str, agent: str, name: str, call_id: str, start: int | None, *, error: bool, vetoed: bool = False) -> None:
        from opentelemetry.trace import Status, StatusCode

        span = self._child(
            turn.step or turn.span,
            f"execute_tool {name}",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": call_id,
                "gen_ai.agent.name": agent,
                "session.id": session_id,
            },
            start,
        )
        if vetoed:
            span.set_attribute("supportdesk.vetoed", True)
        if error or vetoed:
            span.set_status(Status(StatusCode.ERROR))
        span.end()

    def after_handoff(self, event: HandoffDone) -> None:
        turn = self._turns.get(event.session_id)
        if turn is None:
            return
        span = self._child(
            turn.step or turn.span,
            f"handoff {event.to_agent}",
            {
                "supportdesk.handoff.from": event.from_agent,
                "supportdesk.handoff.to": event.to_agent,
                "supportdesk.handoff.reason": event.reason,
                "gen_ai.agent.name": event.from_agent,
                "session.id": event.session_id,
                "seq": event.seq,
            },
        )
        span.end()

    def after_turn(self, event: TurnEnded) -> None:
        turn = self._turns.get(event.session_id)
        if turn is not None:
            turn.span.set_attribute("supportdesk.final_agent", event.agent)
        self._end_turn(event.session_id, event.outcome)

    def _end_step(self, turn: _Turn) -> None:
        # A call some hook vetoed never reached after_tool_call: it is still one of the step's spans.
        for call_id, (start, asked) in list(turn.tool_starts.items()):
            self._tool_span(turn, asked.session_id, asked.agent, asked.name, call_id, start, error=True, vetoed=True)
        turn.tool_starts.clear()
        if turn.step is not None:
            turn.step.end()
            turn.step = None

    def _end_turn(self, session_id: str, outcome: str) -> None:
        turn = self._turns.pop(session_id, None)
        if turn is None:
            return
        self._end_step(turn)
        turn.span.set_attribute("supportdesk.outcome", outcome)
        turn.span.end()

    def close(self) -> None:
        """Flush what is still buffered (the desk calls this when it closes)."""
        if self._owns_provider:
            self._provider.shutdown()


def desk_tracing(config: Any) -> TracingHook | None:
    """The tracing hook when the desk asks for tracing; None (and no OpenTelemetry import) otherwise."""
    if not tracing_wanted(config):
        return None

    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise ConfigError(
            [f"{config.source or 'agents.toml'}: [tracing] needs OpenTelemetry; install it with {TRACING_EXTRA}"]
        ) from None
    endpoint = config.tracing.endpoint or (None if os.environ.get(ENV_ENDPOINT) else LOCAL_COLLECTOR)
    provider = TracerProvider(resource=Resource.create({"service.name": config.tracing.service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    return TracingHook(provider, owns_provider=True)
