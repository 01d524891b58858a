"""Fixed data for the inbox tests: four conversations in four states, written through a real store.

`python -m tests.inbox_seed DB [PREFIX]` writes them from a process of its own (the inbox must
show sessions other processes create), the same as `seed_desk_states` does in-process.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

from supportdesk.items import ContextSet, Handoff, Message, Notice, ToolCall, ToolResult
from tests.tui_seed import FIXED, fixed_clock

# The inbox's "now" in tests: an hour after the seed's fixed clock starts.
INBOX_NOW = FIXED + timedelta(hours=1)


def refund_request(approval_id: str = "ap1") -> Notice:
    return Notice(notice_kind="approval_requested", text="Senior asks staff to approve refund: refund of $300.00",
                  data={"approval_id": approval_id, "tool": "refund", "arguments": {"amount": 300}}, agent="senior")


async def seed_desk_states(store, prefix: str = "") -> dict[str, str]:
    """Four sessions: waiting for approval, human requested, agent working, waiting for the customer.

    Returns their ids by state."""
    ids = {name: f"{prefix}{name}" for name in ("approval", "human", "working", "waiting")}
    await store.create_session("triage", session_id=ids["waiting"], first=[
        Message(role="customer", text="How do I export my invoices?", agent="triage")])
    await store.append(ids["waiting"], [
        ContextSet(key="customer_email", value="kim@example.com", writer="triage", agent="triage"),
        Message(role="agent", text="Open Billing > Invoices and press Export.", agent="triage")])
    await store.create_session("triage", session_id=ids["approval"], first=[
        Message(role="customer", text="Refund me $300 for the duplicate annual charge", agent="triage")])
    await store.append(ids["approval"], [
        ContextSet(key="customer_email", value="dana@example.com", writer="triage", agent="triage"),
        Handoff(from_agent="triage", to_agent="billing", reason="refund", agent="triage"),
        Handoff(from_agent="billing", to_agent="senior", reason="big refund", handoff_kind="escalate", agent="billing"),
        ToolCall(call_id="c1", name="refund", arguments={"amount": 300}, agent="senior"),
        ToolResult(call_id="c1", name="refund", output="waiting for staff approval: refund of $300.00", agent="senior", awaits_approval=True),
        refund_request(),
        Message(role="agent", text="A colleague must approve that refund.", agent="senior")])
    await store.create_session("triage", session_id=ids["human"], first=[
        Message(role="customer", text="I want to talk to a person, now.", agent="triage")])
    await store.append(ids["human"], [
        Notice(notice_kind="human_requested", text="The customer asked for a person.", agent="triage"),
        Message(role="agent", text="I've asked a colleague to join.", agent="triage")])
    await store.create_session("triage", session_id=ids["working"], first=[
        Message(role="customer", text="My app crashes when I upload a photo", agent="triage")])
    await store.append(ids["working"], [Handoff(from_agent="triage", to_agent="technical", reason="crash", agent="triage")])
    return ids


async def _main(db: str, prefix: str) -> None:
    from supportdesk.store import open_store

    store = await open_store(db)
    store.clock = fixed_clock(FIXED + timedelta(minutes=10))
    await seed_desk_states(store, prefix)
    await store.close()


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""))
