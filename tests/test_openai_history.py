"""The session log as chat messages: the rules real servers enforce."""

from __future__ import annotations

from llm_desk import make_config, make_request
from supportdesk.items import ContextSet, Handoff, Message, Notice, ToolCall, ToolResult
from supportdesk.models.history import MISSING_RESULT, build_messages, system_prompt


def assert_wire_valid(messages):
    """Every call answered once, right after it; no orphan tool message; no null content."""
    assert messages[0]["role"] == "system"
    assert all(m["role"] != "system" for m in messages[1:])
    open_calls: list[str] = []
    for m in messages[1:]:
        assert m.get("content") is not None
        if m["role"] == "tool":
            assert open_calls and m["tool_call_id"] == open_calls.pop(0)
            continue
        assert not open_calls, f"calls without results before {m}"
        if m["role"] == "assistant" and "tool_calls" in m:
            open_calls = [c["id"] for c in m["tool_calls"]]
    assert not open_calls


def build(history, agent="billing", context=None):
    config = make_config()
    return build_messages(make_request(config, agent, history, context))


def test_tool_calls_of_one_step_share_one_assistant_message_with_their_text():
    history = [
        Message(role="customer", text="refund please", seq=1),
        Message(role="agent", text="Let me look.", seq=2, agent="billing"),
        ToolCall(call_id="a", name="lookup_customer", arguments={"email": "x@y.z"}, seq=3),
        ToolCall(call_id="b", name="list_charges", arguments={"month": "2026-03"}, seq=4),
        ToolResult(call_id="a", name="lookup_customer", output="found", seq=5),
        ToolResult(call_id="b", name="list_charges", output="nope", is_error=True, seq=6),
    ]
    messages = build(history)
    assert_wire_valid(messages)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assert messages[2]["content"] == "Let me look."
    assert [c["id"] for c in messages[2]["tool_calls"]] == ["a", "b"]
    assert messages[4]["content"] == "ERROR: nope"


def test_tool_calls_of_consecutive_steps_are_separate_assistant_messages():
    # Two steps, one call each, nothing said between them: the model made two assistant turns
    # (as tau2's agent sends them), not one turn with both calls.
    history = [
        Message(role="customer", text="refund please", seq=1),
        ToolCall(call_id="a", name="lookup_customer", arguments={"email": "x@y.z"}, seq=2),
        ToolResult(call_id="a", name="lookup_customer", output="found", seq=3),
        ToolCall(call_id="b", name="list_charges", arguments={"month": "2026-03"}, seq=4),
        ToolCall(call_id="c", name="list_charges", arguments={"month": "2026-04"}, seq=5),
        ToolResult(call_id="b", name="list_charges", output="none", seq=6),
        ToolResult(call_id="c", name="list_charges", output="one", seq=7),
    ]
    messages = build(history)
    assert_wire_valid(messages)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant", "tool", "tool"]
    assert [[c["id"] for c in m["tool_calls"]] for m in messages if "tool_calls" in m] == [["a"], ["b", "c"]]


def test_orphans_are_repaired_both_ways():
    history = [
        ToolResult(call_id="gone", name="lookup_customer", output="cut off by the window", seq=10),
        Message(role="customer", text="and?", seq=11),
        ToolCall(call_id="pending", name="issue_refund", arguments={"amount": 1}, seq=12),
    ]
    messages = build(history)
    assert_wire_valid(messages)
    assert all("cut off" not in (m.get("content") or "") for m in messages)
    assert messages[-1] == {"role": "tool", "tool_call_id": "pending", "content": MISSING_RESULT}


def test_a_second_result_for_a_call_becomes_a_note():
    history = [
        ToolCall(call_id="r1", name="issue_refund", arguments={"amount": 300}, seq=1),
        ToolResult(call_id="r1", name="issue_refund", output="waiting for staff approval", seq=2),
        Notice(notice_kind="approval_granted", text="Staff granted issue_refund (r1).", seq=3),
        ToolResult(call_id="r1", name="issue_refund", output="refunded 300", seq=4),
    ]
    messages = build(history)
    assert_wire_valid(messages)
    assert messages[2]["content"] == "waiting for staff approval"
    assert messages[3]["role"] == "user"
    assert "Staff approved" in messages[3]["content"] and "refunded 300" in messages[3]["content"]


def test_handoffs_staff_notes_and_notices():
    history = [
        Message(role="customer", text="help", seq=1),
        Handoff(from_agent="triage", to_agent="billing", reason="money", seq=2),
        Notice(notice_kind="provider_error", text="server down", seq=3),
        Message(role="staff", text="customer is a VIP", seq=4),
        Handoff(from_agent="billing", to_agent="senior", reason="staff decision", handoff_kind="manual", seq=5),
        ContextSet(key="tier", value="vip", writer="staff", seq=6),
        Message(role="customer", text="hello?", seq=7),
    ]
    messages = build(history, "senior", {"tier": "vip"})
    assert_wire_valid(messages)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[2]["tool_calls"][0]["function"]["name"] == "transfer_to_billing"
    assert '"reason": "money"' in messages[2]["tool_calls"][0]["function"]["arguments"]
    last = messages[-1]["content"]
    # staff note, manual move and the customer's next words merged into one user turn
    assert "Support staff wrote: customer is a VIP" in last
    assert "Staff moved the conversation from billing to senior" in last
    assert last.endswith("hello?")
    assert all("server down" not in (m.get("content") or "") for m in messages)
    assert '"tier": "vip"' in messages[0]["content"]


def test_system_prompt_names_agent_desk_and_targets():
    config = make_config()
    prompt = system_prompt(make_request(config, "billing", [], {}))
    assert prompt.startswith("You are Billing (billing), a level-1 agent of Acme Cloud support.")
    assert "You handle money." in prompt
    assert "transfer_to_senior: Senior, level 2." in prompt
    assert "nothing yet" in prompt
