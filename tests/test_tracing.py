"""OpenTelemetry tracing: the span tree of a turn (in-memory exporter), the OTLP export to a
real HTTP collector on 127.0.0.1, and no OpenTelemetry import at all when tracing is off."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from supportdesk.config import ConfigError, parse_desk
from supportdesk.wiring import open_desk
from supportdesk.engine.hooks import DeskHook, HookSet, Veto
from supportdesk.wiring import desk_hooks
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer, Usage
from supportdesk.engine.runner import drain
from supportdesk.engine.tracing import TracingHook
from tests.conftest import TEST_DESK, make_test_tools
from tests.scripted import ScriptedModel

SCRIPT = [
    Transfer("billing", "charged twice", usage=Usage(120, 8)),
    CallTools([RequestedCall("c1", "refund", {"amount": 20.0})], usage=Usage(200, 12)),
    Answer("Refunded $20.", usage=Usage(260, 6)),
]


async def traced_turn(db_path, config, script, extra_hooks=()):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tools, _ = make_test_tools()
    desk = await open_desk(db_path, config, provider=ScriptedModel(list(script)), tools=tools, customers=False)
    desk.runner.hooks = HookSet([("tracing", TracingHook(provider)), *extra_hooks])
    async with desk:
        events = await drain(desk.runner.send(None, "I was charged twice"))
    return events[0].session_id, exporter.get_finished_spans()


def tree(spans):
    by_id = {span.context.span_id: span for span in spans}
    children: dict[int | None, list] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        assert parent is None or parent in by_id, f"{span.name} has a parent that was never exported"
        children.setdefault(parent, []).append(span)
    for kids in children.values():
        kids.sort(key=lambda s: s.start_time)

    def shape(span):
        return (span.name, [shape(kid) for kid in children.get(span.context.span_id, [])])

    return [shape(root) for root in children.get(None, [])], children


async def test_a_turn_is_a_span_tree_of_agent_steps_tools_and_handoffs(db_path, test_desk):
    session_id, spans = await traced_turn(db_path, test_desk, SCRIPT)
    shapes, _ = tree(spans)
    assert shapes == [
        (
            "supportdesk.turn",
            [
                ("invoke_agent triage", [("handoff billing", [])]),
                ("invoke_agent billing", [("execute_tool refund", [])]),
                ("invoke_agent billing", []),
            ],
        )
    ]
    by_name = {}
    for span in spans:
        by_name.setdefault(span.name, []).append(span)
    [turn] = by_name["supportdesk.turn"]
    assert turn.attributes["session.id"] == session_id and turn.attributes["seq"] == 1
    assert turn.attributes["gen_ai.conversation.id"] == session_id
    assert turn.attributes["supportdesk.outcome"] == "answered" and turn.attributes["supportdesk.final_agent"] == "billing"
    [triage] = by_name["invoke_agent triage"]
    assert triage.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert triage.attributes["gen_ai.agent.name"] == "triage"
    assert triage.attributes["gen_ai.request.model"] == "offline"
    assert (triage.attributes["gen_ai.usage.input_tokens"], triage.attributes["gen_ai.usage.output_tokens"]) == (120, 8)
    assert triage.attributes["seq"] == 1 and triage.attributes["supportdesk.action"] == "transfer"
    [handoff] = by_name["handoff billing"]
    assert handoff.attributes["supportdesk.handoff.from"] == "triage" and handoff.attributes["seq"] == 2
    [tool] = by_name["execute_tool refund"]
    assert tool.attributes["gen_ai.tool.name"] == "refund" and tool.attributes["gen_ai.tool.call.id"] == "c1"
    assert tool.attributes["session.id"] == session_id and tool.status.status_code != StatusCode.ERROR
    second, third = by_name["invoke_agent billing"]
    assert second.attributes["seq"] == 2 and third.attributes["seq"] == 4
    assert third.attributes["gen_ai.usage.output_tokens"] == 6


async def test_a_vetoed_tool_call_is_still_a_span_marked_vetoed(db_path, test_desk):
    class NoRefunds(DeskHook):
        def before_tool_call(self, event):
            return Veto("no refunds today")

    _, spans = await traced_turn(db_path, test_desk, SCRIPT, [("NoRefunds", NoRefunds())])
    [tool] = [s for s in spans if s.name == "execute_tool refund"]
    assert tool.attributes["supportdesk.vetoed"] is True and tool.status.status_code == StatusCode.ERROR


class Collector(BaseHTTPRequestHandler):
    bodies: list[tuple[str, bytes]] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length", 0))
        Collector.bodies.append((self.path, self.rfile.read(length)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args):
        pass


async def test_the_standard_endpoint_variable_turns_tracing_on_and_exports_over_otlp(db_path, test_desk, monkeypatch):
    server = HTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Collector.bodies = []
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
        tools, _ = make_test_tools()
        desk = await open_desk(db_path, test_desk, provider=ScriptedModel(list(SCRIPT)), tools=tools, customers=False)
        assert [name for name, _ in desk.runner.hooks.hooks] == ["tracing"]
        async with desk:
            await drain(desk.runner.send(None, "I was charged twice"))
        # Closing the desk flushed the batch to the collector.
    finally:
        server.shutdown()
    assert [path for path, _ in Collector.bodies] == ["/v1/traces"]
    body = Collector.bodies[0][1]
    assert b"supportdesk.turn" in body and b"execute_tool refund" in body and b"gen_ai.agent.name" in body


def test_tracing_on_without_the_extra_is_one_config_line(monkeypatch):
    config = parse_desk(TEST_DESK + "\n[tracing]\nenabled = true\n", "test.toml", tool_names=["refund", "explode"])
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    with pytest.raises(ConfigError, match=r"\[tracing\] needs OpenTelemetry; install it with pip install 'supportdesk\[tracing\]'"):
        desk_hooks(config)


def test_with_tracing_off_a_turn_never_imports_opentelemetry(tmp_path):
    code = (
        "import asyncio, sys\n"
        "from supportdesk.wiring import open_desk\n"
        "from supportdesk.engine.runner import drain\n"
        "async def main():\n"
        f"    async with await open_desk({str(tmp_path / 'desk.db')!r}) as desk:\n"
        "        await drain(desk.runner.send(None, 'I was charged twice'))\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]"
