"""Hooks: every moment is seen in order; a before-hook vetoes or holds a tool call or a handoff
for staff; a hook that raises is reported once and skipped for the turn; hooks load from the desk
file and from the `supportdesk.hooks` entry-point group."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from supportdesk.config import ConfigError, parse_desk
from supportdesk.wiring import open_desk
from supportdesk.engine.events import Appended, Done
from supportdesk.engine.hooks import AskApproval, DeskHook, HookSet, Veto
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.engine.runner import drain
from supportdesk.items import Handoff, Message, Notice, ToolResult
from tests.conftest import TEST_DESK, make_test_tools
from tests.scripted import ScriptedModel


async def _desk(db_path, config, script, hooks=()):
    tools, refunds = make_test_tools()
    model = ScriptedModel(list(script))
    desk = await open_desk(db_path, config, provider=model, tools=tools, customers=False)
    desk.runner.hooks = HookSet([(type(h).__name__, h) for h in hooks])
    return desk, model, refunds


def _items(events):
    return [e.item for e in events if isinstance(e, Appended)]


class NoRefundsOverTwenty(DeskHook):
    """The kind of rule a team adds from outside the code: it sees the call before it runs."""

    def before_tool_call(self, event):
        if event.name == "refund" and (event.arguments or {}).get("amount", 0) > 20:
            return Veto("refunds over $20 need a ticket in the finance queue")
        return None


class Recorder(DeskHook):
    def __init__(self):
        self.seen = []

    def __getattribute__(self, name):
        attr = object.__getattribute__(self, name)
        if name.startswith(("before_", "after_")):
            def record(event, _name=name):
                object.__getattribute__(self, "seen").append((_name, getattr(event, "agent", getattr(event, "from_agent", ""))))
                return None

            return record
        return attr


async def test_a_hook_vetoes_a_refund_and_the_conversation_says_why(db_path, test_desk):
    script = [
        Transfer("billing", "charged twice"),
        CallTools([RequestedCall("c1", "refund", {"amount": 29.99})]),
        lambda request: Answer(f"I could not refund it: {[i for i in request.history if i.kind == 'tool_result'][-1].output}"),
    ]
    desk, model, refunds = await _desk(db_path, test_desk, script, hooks=[NoRefundsOverTwenty()])
    async with desk:
        items = _items(await drain(desk.runner.send(None, "I was charged twice, refund $29.99")))
    assert refunds == []  # the tool never ran
    kinds = [i.kind for i in items]
    assert kinds == ["message", "handoff", "tool_call", "tool_result", "notice", "message"]
    result, notice, reply = items[3], items[4], items[5]
    assert isinstance(result, ToolResult) and result.is_error
    assert result.output == "vetoed by NoRefundsOverTwenty: refunds over $20 need a ticket in the finance queue"
    assert isinstance(notice, Notice) and notice.data["vetoed"] == "refund" and notice.data["call_id"] == "c1"
    assert "NoRefundsOverTwenty vetoed refund" in notice.text
    # The agent was told why (its next request held the error result) and said so.
    assert isinstance(reply, Message) and "finance queue" in reply.text


async def test_a_hook_can_hold_a_tool_call_for_staff(db_path, test_desk):
    class AskForRefunds(DeskHook):
        def before_tool_call(self, event):
            return AskApproval("every refund is checked by a person today") if event.name == "refund" else None

    script = [Transfer("billing", "refund"), CallTools([RequestedCall("c1", "refund", {"amount": 10.0})]), Answer("A colleague will check it."), Answer("Done.")]
    desk, _, refunds = await _desk(db_path, test_desk, script, hooks=[AskForRefunds()])
    async with desk:
        events = await drain(desk.runner.send(None, "refund $10 please"))
        sid = events[0].session_id
        assert refunds == []
        assert events[-1].status == "awaiting_approval"
        [pending] = await desk.runner.pending_approvals(sid)
        assert "asked by AskForRefunds" in pending.text
        await drain(desk.runner.decide_approval(sid, pending.data["approval_id"], True))
    assert refunds == [10.0]


async def test_a_hook_vetoes_a_handoff_and_the_agent_keeps_the_case(db_path, test_desk):
    class NoSenior(DeskHook):
        def before_handoff(self, event):
            return Veto("senior is in a meeting") if event.to_agent == "senior" else None

    script = [Transfer("billing", "money"), Transfer("senior", "big refund"), Answer("I'll handle it myself.")]
    desk, model, _ = await _desk(db_path, test_desk, script, hooks=[NoSenior()])
    async with desk:
        events = await drain(desk.runner.send(None, "refund $900"))
    items = _items(events)
    assert [h.to_agent for h in items if isinstance(h, Handoff)] == ["billing"]
    refusal = next(i for i in items if isinstance(i, ToolResult))
    assert refusal.name == "transfer_to_senior" and refusal.is_error and "senior is in a meeting" in refusal.output
    assert any(isinstance(i, Notice) and i.data.get("vetoed") == "the handoff to senior" for i in items)
    assert isinstance(events[-1], Done) and events[-1].active_agent == "billing"
    assert [i for i in model.requests[-1].history if i.kind == "tool_result"][-1].output.startswith("vetoed by NoSenior")


async def test_a_hook_can_hold_a_handoff_until_staff_grant_it(db_path, test_desk):
    class SeniorNeedsOk(DeskHook):
        def before_handoff(self, event):
            return AskApproval("senior time is booked by a supervisor") if event.to_agent == "senior" else None

    script = [Transfer("billing", "money"), Transfer("senior", "big refund"), Answer("A supervisor will confirm."), Answer("Senior here.")]
    desk, _, _ = await _desk(db_path, test_desk, script, hooks=[SeniorNeedsOk()])
    async with desk:
        events = await drain(desk.runner.send(None, "refund $900"))
        sid = events[0].session_id
        assert events[-1].active_agent == "billing" and events[-1].status == "awaiting_approval"
        [pending] = await desk.runner.pending_approvals(sid)
        after = await drain(desk.runner.decide_approval(sid, pending.data["approval_id"], True))
    handoff = next(i for i in _items(after) if isinstance(i, Handoff))
    assert (handoff.from_agent, handoff.to_agent) == ("billing", "senior")
    assert after[-1].active_agent == "senior"


async def test_a_raising_hook_is_reported_once_per_turn_and_the_message_is_kept(db_path, test_desk):
    class Broken(DeskHook):
        calls = 0

        def before_model_step(self, event):
            Broken.calls += 1
            raise ValueError("no database")

        before_tool_call = before_model_step

    script = [Transfer("billing", "money"), CallTools([RequestedCall("c1", "refund", {"amount": 5.0})]), Answer("Refunded."), Answer("Hello again.")]
    desk, _, refunds = await _desk(db_path, test_desk, script, hooks=[Broken()])
    async with desk:
        events = await drain(desk.runner.send(None, "refund $5"))
        sid = events[0].session_id
        second = await drain(desk.runner.send(sid, "thanks"))
    items = _items(events)
    assert isinstance(items[0], Message) and items[0].text == "refund $5"
    failures = [i for i in items if isinstance(i, Notice) and i.data.get("hook") == "Broken"]
    assert len(failures) == 1 and "ValueError: no database" in failures[0].text
    # Called once a turn (two turns): after it raised it was skipped for the rest of its turn.
    assert Broken.calls == 2 and refunds == [5.0] and events[-1].outcome == "answered"
    # The next turn gives it another chance (and reports it again, once).
    assert len([i for i in _items(second) if isinstance(i, Notice) and i.data.get("hook") == "Broken"]) == 1


async def test_every_moment_reaches_a_hook_in_order(db_path, test_desk):
    recorder = Recorder()
    script = [Transfer("billing", "money"), CallTools([RequestedCall("c1", "refund", {"amount": 5.0})]), Answer("Refunded.")]
    desk, _, _ = await _desk(db_path, test_desk, script, hooks=[recorder])
    async with desk:
        await drain(desk.runner.send(None, "refund $5"))
    assert recorder.seen == [
        ("before_turn", "triage"),
        ("before_model_step", "triage"),
        ("after_model_step", "triage"),
        ("before_handoff", "triage"),
        ("after_handoff", "triage"),
        ("before_model_step", "billing"),
        ("after_model_step", "billing"),
        ("before_tool_call", "billing"),
        ("after_tool_call", "billing"),
        ("before_model_step", "billing"),
        ("after_model_step", "billing"),
        ("after_turn", "billing"),
    ]


# --- where hooks come from ---------------------------------------------------------------------


@pytest.fixture
def hook_package(tmp_path: Path, monkeypatch):
    """A package with a hook, installed as an entry point of the supportdesk.hooks group."""
    (tmp_path / "team_hooks.py").write_text(
        textwrap.dedent(
            """
            from supportdesk.engine.hooks import DeskHook, Veto

            class NoExplosions(DeskHook):
                def before_tool_call(self, event):
                    return Veto("explosions are not allowed") if event.name == "explode" else None

            class Audit(DeskHook):
                pass
            """
        )
    )
    dist = tmp_path / "team_hooks-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: team-hooks\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[supportdesk.hooks]\naudit = team_hooks:Audit\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("team_hooks", None)


async def test_hooks_load_from_the_desk_file_and_entry_points(db_path, hook_package):
    config = parse_desk(TEST_DESK + '\n[hooks]\nenabled = ["team_hooks:NoExplosions"]\n', "test.toml", tool_names=["refund", "explode"])
    tools, _ = make_test_tools()
    desk = await open_desk(db_path, config, provider=ScriptedModel([Transfer("billing", "x"), CallTools([RequestedCall("c1", "explode", {})]), Answer("ok")]), tools=tools, customers=False)
    async with desk:
        assert [name for name, _ in desk.runner.hooks.hooks] == ["team_hooks:NoExplosions", "audit"]
        items = _items(await drain(desk.runner.send(None, "boom?")))
    result = next(i for i in items if isinstance(i, ToolResult))
    assert result.output == "vetoed by team_hooks:NoExplosions: explosions are not allowed"


def test_a_hook_that_cannot_load_is_one_line(db_path, capsys, tmp_path):
    desk_file = tmp_path / "desk.toml"
    desk_file.write_text(TEST_DESK.replace('tools = ["refund", "explode"]', "tools = []").replace('tools = ["refund"]', "tools = []") + '\n[hooks]\nenabled = ["no_such_module:Hook"]\n')
    from supportdesk.cli import main

    assert main(["run", "--db", str(db_path), "--config", str(desk_file), "hello"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "[hooks] hook 'no_such_module:Hook' cannot be loaded" in err


def test_a_malformed_hook_name_is_a_config_error():
    config = parse_desk(TEST_DESK + '\n[hooks]\nenabled = ["just_a_module"]\n', "test.toml", tool_names=["refund", "explode"])
    from supportdesk.wiring import desk_hooks

    with pytest.raises(ConfigError, match="must be written module:object"):
        desk_hooks(config)
