"""Issue 13, the runner's rows: handoff arguments, limits that answer the customer and can all
fire, `run`'s exit codes, and tools that act once across a crash whatever call ids the model
makes up when the turn is resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from fake_llm_server import Complete, FakeLLMServer, Status, text_stream, tool_stream
from llm_desk import make_config

from supportdesk.config import Limits, load_desk
from supportdesk.wiring import open_desk
from supportdesk.engine.events import Appended, Done
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.engine.runner import LIMIT_ANSWER, drain
from supportdesk.store import SessionStore
from supportdesk.business import open_business as open_customers
from tests.conftest import REPO, make_test_tools
from tests.scripted import ScriptedModel

HERE = Path(__file__).resolve().parent


def _items(events: list[Any]) -> list[Any]:
    return [e.item for e in events if isinstance(e, Appended)]


def _done(events: list[Any]) -> Done:
    [done] = [e for e in events if isinstance(e, Done)]
    return done


# --- handoff arguments -------------------------------------------------------------------------


async def test_a_handoff_with_malformed_json_arguments_is_an_error_the_model_sees(db_path) -> None:
    """transfer_to_billing with broken JSON: no handoff with an empty reason; the model reads
    the error as the call's result, retries with good arguments, and the handoff happens."""
    with FakeLLMServer(["test-model"]) as server:
        server.push(
            tool_stream([("transfer_to_billing", '{"reason": "charged twice"')]),  # cut JSON
            tool_stream([("transfer_to_billing", '{"context": {"issue": "refund"}}')]),  # no reason
            tool_stream([("transfer_to_billing", '{"reason": "charged twice"}')]),
            text_stream("Billing here, let me look."),
        )
        desk = await open_desk(db_path, make_config(server.url, max_retries=0), customers=False)
        async with desk:
            items = _items(await drain(desk.runner.send(None, "I was charged twice")))
    calls = [i for i in items if i.kind == "tool_call"]
    results = [i for i in items if i.kind == "tool_result"]
    assert [c.name for c in calls] == ["transfer_to_billing", "transfer_to_billing"]
    assert calls[0].arguments == {"_invalid_json": '{"reason": "charged twice"'}
    assert results[0].is_error and "arguments must be a JSON object" in results[0].output
    assert results[1].is_error and "reason" in results[1].output and "Field required" in results[1].output
    [handoff] = [i for i in items if i.kind == "handoff"]
    assert handoff.to_agent == "billing" and handoff.reason == "charged twice"
    # The model saw both errors as tool results before its third try.
    third = server.requests[2]["messages"]
    tool_messages = [m for m in third if m.get("role") == "tool"]
    assert len(tool_messages) == 2 and "JSON object" in tool_messages[0]["content"]


# --- limits ------------------------------------------------------------------------------------


def _shipped_desk():
    return load_desk(REPO / "agents.toml")


async def _run_script(db_path, config, script) -> list[Any]:
    tools, _ = make_test_tools()
    desk = await open_desk(db_path, config, provider=ScriptedModel(list(script)), tools=tools, customers=False)
    async with desk:
        return await drain(desk.runner.send(None, "hello"))


def _assert_limit_answered(events: list[Any], config, words: str) -> None:
    items = _items(events)
    notice = next(i for i in items if i.kind == "notice")
    assert notice.notice_kind == "limit" and words in notice.text
    answer = items[-1]
    fallback = config.desk.fallback
    assert answer.kind == "message" and answer.role == "agent" and answer.agent == fallback
    assert answer.text == LIMIT_ANSWER.format(title=config.agents[fallback].title)
    assert "\n" not in answer.text
    done = _done(events)
    assert done.outcome == "limit" and done.active_agent == fallback


async def test_the_shipped_defaults_let_ping_pong_fire_and_the_customer_is_answered(db_path) -> None:
    config = _shipped_desk()
    script = [Transfer("billing", "a"), Transfer("triage", "b"), Transfer("billing", "c"), Transfer("triage", "d")]
    _assert_limit_answered(await _run_script(db_path, config, script), config, "back and forth")


async def test_the_shipped_defaults_let_the_handoff_limit_fire(db_path) -> None:
    config = _shipped_desk()
    # A tour with no ping-pong in any window of 4 holders: 7 handoffs, one more than allowed.
    path = ["billing", "senior", "triage", "technical", "senior", "triage", "billing"]
    script = [Transfer(to, f"step {n}") for n, to in enumerate(path)]
    events = await _run_script(db_path, config, script)
    limit = config.desk.limits.max_handoffs_per_message
    _assert_limit_answered(events, config, f"more than {limit} handoffs")


async def test_the_shipped_defaults_let_the_step_limit_fire(db_path) -> None:
    config = _shipped_desk()
    config.agents["triage"].tools = ["explode"]
    script = [CallTools([RequestedCall(f"c{i}", "explode", {})]) for i in range(20)]
    events = await _run_script(db_path, config, script)
    _assert_limit_answered(events, config, f"{config.desk.limits.max_steps_per_message} steps")


async def test_a_timeout_still_answers_the_customer(db_path) -> None:
    config = _shipped_desk()
    config.desk.limits.step_timeout = 0.2
    tools, _ = make_test_tools()
    slow = ScriptedModel([Answer("late")], delay=2.0)
    desk = await open_desk(db_path, config, provider=slow, tools=tools, customers=False)
    async with desk:
        events = await drain(desk.runner.send(None, "hello?"))
    _assert_limit_answered(events, config, "step took longer")


def test_default_limits_can_all_fire() -> None:
    for limits in (Limits(), _shipped_desk().desk.limits):
        # ping-pong needs window - 1 handoffs in a turn, which the handoff limit must allow
        assert limits.pingpong_window - 1 <= limits.max_handoffs_per_message
        # every handoff is a step: the handoff limit comes before the step limit
        assert limits.max_handoffs_per_message + 1 < limits.max_steps_per_message
        assert limits.step_timeout < limits.message_timeout


def test_a_desk_whose_ping_pong_could_never_fire_is_refused() -> None:
    from supportdesk.config import ConfigError, parse_desk

    text = (REPO / "agents.toml").read_text().replace("pingpong_window = 4 ", "pingpong_window = 9 ")
    with pytest.raises(ConfigError) as refused:
        parse_desk(text, "desk.toml")
    [line] = [p for p in refused.value.problems if "pingpong_window" in p]
    assert "could never be detected" in line and "\n" not in line


# --- run's exit codes --------------------------------------------------------------------------


def _desk_file(folder: Path, server: FakeLLMServer) -> Path:
    """The shipped desk, served by the scripted OpenAI-compatible server."""
    text = (REPO / "agents.toml").read_text()
    model = (
        f'[model]\nprovider = "openai"\nbase_url = "{server.url}"\nmodel = "fake-model"\n'
        "max_retries = 0\ntimeout = 10.0\nstream = false\n"
    )
    start = text.index("\n[model]\n") + 1
    end = text.index("\n[agents.", start) + 1
    path = folder / "desk.toml"
    path.write_text(text[:start] + model + "\n" + text[end:])
    return path


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "supportdesk.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def _answer(text: str) -> Complete:
    return Complete({"content": text})


def _call(name: str, arguments: dict[str, Any]) -> Complete:
    """A tool call under a call id never seen before (as a real model makes them)."""
    call = {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return Complete({"content": None, "tool_calls": [call]}, finish_reason="tool_calls")


def test_run_exits_0_when_every_turn_is_answered_and_json_says_so(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.push(_answer("Hello! How can I help?"), _answer("Anything else?"))
        desk = _desk_file(tmp_path, server)
        ran = _cli("run", "--db", str(tmp_path / "d.db"), "--config", str(desk), "--json", "hi", "thanks")
    assert ran.returncode == 0, ran.stderr
    lines = [json.loads(line) for line in ran.stdout.splitlines()]
    turns = [line for line in lines if "outcome" in line]
    assert [t["outcome"] for t in turns] == ["answered", "answered"] and [t["turn"] for t in turns] == [1, 2]


def test_run_exits_3_on_a_provider_error_and_json_carries_it(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.push(_answer("Hello!"), Status(500, {"error": {"message": "boom"}}))
        desk = _desk_file(tmp_path, server)
        ran = _cli("run", "--db", str(tmp_path / "d.db"), "--config", str(desk), "--json", "hi", "refund me")
    assert ran.returncode == 3, ran.stderr
    turns = [json.loads(line) for line in ran.stdout.splitlines() if '"outcome"' in line]
    assert [t["outcome"] for t in turns] == ["answered", "provider_error"]
    assert "Traceback" not in ran.stderr


def test_run_exits_4_when_a_limit_ends_a_turn(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        bounce = [("transfer_to_billing", {"reason": "money"}), ("transfer_to_triage", {"reason": "not money"})] * 3
        server.push(*[_call(name, args) for name, args in bounce])
        desk = _desk_file(tmp_path, server)
        ran = _cli("run", "--db", str(tmp_path / "d.db"), "--config", str(desk), "help")
    assert ran.returncode == 4, ran.stderr
    assert "Limit reached" in ran.stdout and "taken your conversation back" in ran.stdout


def test_run_exit_codes_are_in_the_user_guide() -> None:
    from supportdesk.cli import EXIT_FAILURE, EXIT_HELD, EXIT_LIMIT, EXIT_OK, EXIT_PROVIDER, EXIT_USAGE, EXIT_VETOED

    readme = (REPO / "docs" / "usage.md").read_text()
    section = readme[readme.index("## Exit codes") :]
    for code in (EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_PROVIDER, EXIT_LIMIT, EXIT_VETOED, EXIT_HELD):
        assert f"| {code} |" in section


# --- exactly once across a crash -----------------------------------------------------------------


def _refund_desk_server(server: FakeLLMServer) -> None:
    """Triage hands to billing; billing refunds the duplicate (a fresh call id every time it is
    asked), then answers once it has seen the refund's result."""

    def reply(body: dict[str, Any]) -> Complete:
        tools = {t["function"]["name"] for t in body.get("tools", [])}
        seen = [m for m in body["messages"] if m.get("role") == "tool"]
        if "refund_charge" not in tools:
            return _call("transfer_to_billing", {"reason": "duplicate charge"})
        if not any("refund" in m.get("content", "") and "RF-" in m.get("content", "") for m in seen):
            return _call("refund_charge", {"charge_id": "CH-9004", "amount": 29.99, "reason": "duplicate charge"})
        return _answer("I have refunded the duplicate $29.99.")

    server.push(*[reply] * 20)


def _crash_mid_turn(tmp_path: Path, desk: Path, db: Path, *run: str) -> str:
    """Run a turn in a real process and SIGKILL it after the refund ran, before it was stored."""
    marker = tmp_path / "refund-ran"
    process = subprocess.Popen(
        [sys.executable, str(HERE / "crash_after_tool.py"), str(marker), "refund_charge", "--",
         "run", "--db", str(db), "--config", str(desk), *run],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 90
    while not marker.exists():
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        assert time.monotonic() < deadline, "the refund never ran"
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    return marker.read_text()


async def _refunds(db: Path) -> list[dict[str, Any]]:
    store = await open_customers(db)
    try:
        return await store.refunds("CUS-1001")
    finally:
        await store.close()


@pytest.mark.parametrize("how", ["retry", "next message"])
async def test_a_turn_resumed_after_a_sigkill_refunds_once_with_fresh_call_ids(tmp_path: Path, how: str) -> None:
    db = tmp_path / "desk.db"
    with FakeLLMServer() as server:
        _refund_desk_server(server)
        desk = _desk_file(tmp_path, server)
        # The model calls refund_charge at once: the desk offers it and the turn waits (issue 33).
        asked = _cli("run", "--db", str(db), "--config", str(desk), "I was charged twice, please refund the duplicate. I'm dana@example.com")
        assert asked.returncode == 0, asked.stderr
        assert await _refunds(db) == []
        async with await SessionStore.open(db) as store:
            [info] = await store.list_sessions()
            [offer] = await store.of_kind(info.id, "offer")
        # The customer's yes, in a process killed after the refund ran, before its items were stored.
        _crash_mid_turn(tmp_path, desk, db, "--session", info.id, "yes")
        assert len(await _refunds(db)) == 1  # the refund happened; its items were never stored
        async with await SessionStore.open(db) as store:
            before = await store.range(info.id, 1, await store.last_seq(info.id))
        assert not any(i.kind in ("confirmation", "tool_result") and i.seq > offer.seq for i in before)

        if how == "retry":
            ran = _cli("run", "--db", str(db), "--config", str(desk), "--retry", "--session", info.id)
        else:  # the session's next message finishes the cut-short turn first
            server.push(_answer("You're welcome!"))
            ran = _cli("run", "--db", str(db), "--config", str(desk), "--session", info.id, "thanks")
        assert ran.returncode == 0, ran.stderr

    refunds = await _refunds(db)
    assert len(refunds) == 1 and refunds[0]["amount"] == 29.99
    async with await SessionStore.open(db) as store:
        items = await store.range(info.id, 1, await store.last_seq(info.id))
    asked_call, ran_call = [i for i in items if i.kind == "tool_call" and i.name == "refund_charge"]
    held, result = [i for i in items if i.kind == "tool_result" and i.name == "refund_charge"]
    assert held.is_error and held.output.startswith("not run")  # the model's own call: offered, not made
    # The yes read again after the restart ran the offered call under the offer's key: the
    # first refund's result, not a second refund.
    assert [c.offer_id for c in items if c.kind == "confirmation"] == [offer.offer_id]
    assert json.loads(result.output)["replayed"] is True
    assert asked_call.call_id.startswith("call_") and ran_call.arguments == offer.arguments
    answers = [i.text for i in items if i.kind == "message" and i.role == "agent"]
    assert "I have refunded the duplicate $29.99." in answers


async def test_resume_does_nothing_on_a_finished_turn(db_path, test_desk) -> None:
    tools, refunds = make_test_tools()
    script = [Transfer("billing", "x"), CallTools([RequestedCall("c1", "refund", {"amount": 5})]), Answer("done")]
    desk = await open_desk(db_path, test_desk, provider=ScriptedModel(script), tools=tools, customers=False)
    async with desk:
        events = await drain(desk.runner.send(None, "refund 5"))
        sid = _items(events)[0].session_id
        assert await desk.runner.unfinished_turn(sid) is None
        assert await drain(desk.runner.resume(sid)) == []
    assert refunds == [5]


async def test_an_unfinished_turn_is_found_past_a_glance_at_the_last_items(db_path, test_desk) -> None:
    """Opening a session glances at its last few items (an answered session reads no more);
    a turn cut short after more calls than the glance holds is still found."""
    from supportdesk.engine import events as events_module
    from supportdesk.items import Message, ToolCall, ToolResult

    desk = await open_desk(db_path, test_desk, provider=ScriptedModel([]), customers=False)
    async with desk:
        info = await desk.store.create_session("triage", first=[Message(role="customer", text="refund 5", agent="triage")])
        steps = []
        for n in range(events_module.RESUME_GLANCE):
            steps += [ToolCall(call_id=f"c{n}", name="refund", arguments={"amount": 5}, agent="billing"),
                      ToolResult(call_id=f"c{n}", name="refund", output="ok", agent="billing")]
        await desk.store.append(info.id, steps)
        asked: list[int] = []
        latest = desk.store.latest

        async def counted(session_id: str, n: int):
            asked.append(n)
            return await latest(session_id, n)

        desk.runner.store.latest = counted  # type: ignore[method-assign]
        assert await desk.runner.unfinished_turn(info.id) == 1
        assert asked == [events_module.RESUME_GLANCE, events_module.RESUME_WINDOW]
        await desk.store.append(info.id, [Message(role="agent", text="Refunded $5.", agent="billing")])
        asked.clear()
        assert await desk.runner.unfinished_turn(info.id) is None
        assert asked == [events_module.RESUME_GLANCE]  # the answer was in the glance


async def test_opening_leaves_a_turn_that_may_still_be_running_elsewhere(db_path, test_desk) -> None:
    """The TUI resumes only a turn idle for longer than a step may take: a turn another
    process is running right now is left to it."""
    from supportdesk.items import Handoff, Message

    tools, refunds = make_test_tools()
    script = [CallTools([RequestedCall("c9", "refund", {"amount": 5})]), Answer("Refunded $5.")]
    desk = await open_desk(db_path, test_desk, provider=ScriptedModel(script), tools=tools, customers=False)
    async with desk:
        info = await desk.store.create_session("triage", first=[Message(role="customer", text="refund 5", agent="triage")])
        await desk.store.append(
            info.id, [Handoff(from_agent="triage", to_agent="billing", reason="refund", handoff_kind="route", agent="triage")]
        )
        assert await desk.runner.unfinished_turn(info.id) == 1
        assert await drain(desk.runner.resume(info.id, idle_for=600)) == []  # written just now
        assert refunds == []
        events = await drain(desk.runner.resume(info.id, idle_for=0))
        assert _done(events).outcome == "answered" and refunds == [5]
