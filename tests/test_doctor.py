"""`supportdesk doctor` against a real loopback server."""

from __future__ import annotations

import socket

import pytest

from fake_llm_server import Complete, FakeLLMServer, Status
from llm_desk import DESK_TOML, make_config
from supportdesk.cli import main
from supportdesk.commands.doctor import diagnose

PING_CALL = {"content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ping", "arguments": "{\"ok\": true}"}}]}


@pytest.fixture
def server():
    with FakeLLMServer(models=["test-model", "big-model", "other"]) as srv:
        yield srv


async def doctor(config) -> tuple[int, list[str]]:
    lines: list[str] = []
    code = await diagnose(config, out=lines.append)
    return code, lines


async def test_everything_fine(server):
    server.push(Complete(PING_CALL, "tool_calls"), Complete(PING_CALL, "tool_calls"))
    code, lines = await doctor(make_config(server.url))
    assert code == 0, lines
    assert all(line.startswith("✓") for line in lines), lines
    text = "\n".join(lines)
    assert "3 models listed" in text
    assert "test-model is served" in text and "big-model is served (used by senior)" in text
    assert "/v1/models" in server.paths
    first = server.requests[0]
    assert first["tool_choice"] == {"type": "function", "function": {"name": "ping"}}
    assert first["max_tokens"] == 64
    assert {r["model"] for r in server.requests} == {"test-model", "big-model"}


async def test_model_not_served(server):
    server.models = ["llama3.2", "qwen2.5"]
    code, lines = await doctor(make_config(server.url))
    assert code == 1
    bad = [line for line in lines if line.startswith("✗")]
    assert any("test-model is not served; the server has: llama3.2, qwen2.5" in line for line in bad), lines
    assert server.requests == []  # no tool probe for a model that is not there


async def test_named_tool_choice_refused_falls_back_to_required(server):
    server.push(
        Status(400, {"error": {"message": "tool_choice must be one of none, auto, required"}}),
        Complete(PING_CALL, "tool_calls"),
        Complete(PING_CALL, "tool_calls"),
    )
    code, lines = await doctor(make_config(server.url))
    assert code == 0, lines
    assert server.requests[1]["tool_choice"] == "required"


async def test_model_that_answers_with_text_cannot_hand_off(server):
    server.push(Complete({"content": "pong"}), Complete(PING_CALL, "tool_calls"))
    code, lines = await doctor(make_config(server.url))
    assert code == 1
    assert any(line.startswith("✗ tools") and "test-model answered with text" in line for line in lines), lines


async def test_unreachable_server_is_one_clear_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, lines = await doctor(make_config(f"http://127.0.0.1:{port}/v1", max_retries=0))
    assert code == 1
    assert lines[-1].startswith("✗ server") and f"127.0.0.1:{port}" in lines[-1]


async def test_missing_key_variable(monkeypatch, server):
    monkeypatch.delenv("SD_DOCTOR_KEY", raising=False)
    code, lines = await doctor(make_config(server.url, api_key_env="SD_DOCTOR_KEY"))
    assert code == 1
    assert lines[-1].startswith("✗ api key") and "SD_DOCTOR_KEY" in lines[-1]
    assert server.paths == []


def desk_file(tmp_path, base_url: str, provider: str = "openai"):
    """A desk file for the CLI (which checks tool names against the real registry)."""
    text = DESK_TOML.format(base_url=base_url, timeout=5, max_retries=0, extra="")
    text = text.replace('tools = ["lookup_customer", "list_charges", "issue_refund"]', "tools = []")
    path = tmp_path / "agents.toml"
    path.write_text(text.replace('provider = "openai"', f'provider = "{provider}"'))
    return path


def test_cli_offline_desk(tmp_path, capsys):
    path = desk_file(tmp_path, "http://127.0.0.1:9/v1", "offline")
    code = main(["doctor", "--config", str(path)])
    out = capsys.readouterr().out
    assert code == 0
    assert "offline" in out and "needs no server" in out


def test_cli_broken_desk_exits_2(tmp_path, capsys):
    path = tmp_path / "agents.toml"
    path.write_text("[model]\nprovider = 'openai'\n[agents.triage]\ntitle='T'\ndescription='d'\n")
    code = main(["doctor", "--config", str(path)])
    out = capsys.readouterr()
    assert code == 2
    assert "model.base_url" in out.out + out.err
    assert "Traceback" not in out.out + out.err


def test_cli_against_a_server(tmp_path, capsys, server):
    server.push(Complete(PING_CALL, "tool_calls"), Complete(PING_CALL, "tool_calls"))
    path = desk_file(tmp_path, server.url)
    code = main(["doctor", "--config", str(path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "✓ tools" in out


async def test_server_without_a_models_route_is_checked_through_the_tool_probe():
    with FakeLLMServer(list_models=False) as srv:
        srv.push(Complete(PING_CALL, "tool_calls"), Status(404, {"error": {"message": "model 'big-model' not found"}}))
        code, lines = await doctor(make_config(srv.url))
    assert code == 1
    assert lines[3].startswith("! server")
    assert any(line.startswith("✓ tools") and "test-model" in line for line in lines), lines
    assert any(line.startswith("✗ model") and "big-model" in line for line in lines), lines


async def test_rejected_key_on_models_is_one_line(monkeypatch, server):
    monkeypatch.setenv("SD_DOCTOR_KEY", "sk-should-never-print")
    server.models_reply = Status(401, {"error": {"message": "Incorrect API key provided: sk-should-never-print"}})
    code, lines = await doctor(make_config(server.url, api_key_env="SD_DOCTOR_KEY"))
    assert code == 1
    assert lines[-1].startswith("✗ server") and "refused the API key (HTTP 401)" in lines[-1]
    assert "SD_DOCTOR_KEY" in lines[-1]
    assert all("sk-should-never-print" not in line for line in lines)
    assert server.requests == []


# --- issue 13: any answer a server gives is one line -------------------------------------------

from fake_llm_server import Raw, text_stream, tool_stream  # noqa: E402

_ODD_REPLIES = {
    "streamed text": (lambda: text_stream("hello"), "streamed reply (server-sent events) to a plain request"),
    "streamed tool call": (lambda: tool_stream([("ping", '{"ok": true}')]), "streamed reply (server-sent events)"),
    "empty body": (lambda: Raw(b""), "sent an empty reply"),
    "html page": (lambda: Raw(b"<html><body>502 Bad Gateway</body></html>", "text/html"), "sent an HTML page"),
    "cut json": (lambda: Raw(b'{"choices": ['), "a reply that is not JSON"),
    "no choices": (lambda: Status(200, {"id": "x"}), "no choices in it"),
    "choices not a list": (lambda: Status(200, {"choices": "x"}), "no choices in it"),
    "message not an object": (lambda: Status(200, {"choices": [{"message": "hi"}]}), "no message in it"),
}


@pytest.mark.parametrize("case", list(_ODD_REPLIES))
async def test_any_chat_answer_is_one_line_saying_what_came(server, case):
    make, words = _ODD_REPLIES[case]
    server.push(make(), make())
    code, lines = await doctor(make_config(server.url, max_retries=0))
    assert code == 1
    bad = [line for line in lines if line.startswith("✗")]
    assert bad and all(words in line for line in bad), lines
    assert all("\n" not in line and "Traceback" not in line for line in lines)


@pytest.mark.parametrize(
    "reply, words",
    [
        (Raw(b""), "sent an empty reply when asked for /models"),
        (Raw(b"data: {}\n\n", "text/event-stream"), "streamed reply"),
        (Status(200, {"data": "x"}), "JSON that has no model list"),
        (Raw(b"[1, 2]"), "JSON that is not an object"),
    ],
)
async def test_any_models_answer_is_one_line_and_the_model_is_checked_directly(server, reply, words):
    server.models_reply = reply
    server.push(Complete(PING_CALL, "tool_calls"), Complete(PING_CALL, "tool_calls"))
    code, lines = await doctor(make_config(server.url, max_retries=0))
    warn = [line for line in lines if line.startswith("!")]
    assert len(warn) == 1 and words in warn[0], lines
    assert code == 0 and any("made a tool call" in line for line in lines)


def test_doctor_command_against_a_streaming_server_exits_1_without_a_traceback(server, tmp_path, capsys):
    server.push(text_stream("hi"), text_stream("hi"))
    desk = tmp_path / "desk.toml"
    desk_text = DESK_TOML.format(base_url=server.url, timeout=5.0, max_retries=0, extra="")
    desk.write_text(desk_text.replace('tools = ["lookup_customer", "list_charges", "issue_refund"]', 'tools = ["find_charges"]'))
    assert main(["doctor", "--config", str(desk)]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert "streamed reply" in out.out
