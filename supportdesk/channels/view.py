"""What a customer may see of a session: the log folded into customer-facing events.

The customer sees their own messages, the agents' replies, who they are talking to, and that a
colleague is checking something. Never tool calls or results, the shared context, staff notes,
internal ids (agents' names, approval or call ids) or reasons: those are the desk's business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, assert_never

from supportdesk import items as k
from supportdesk.config import DeskConfig
from supportdesk.engine.confirmation import yes_label
from supportdesk.items import STAFF_META
from supportdesk.staff import PART_OF_ACT

CHECKING = "A colleague is checking this. We will be right back with you."
CHECKED = "A colleague has checked your request."
PERSON_COMING = "A colleague will join this conversation."
STAFF_JOINED = "A colleague has joined this conversation."
# Who a staff reply is from when its writer chose no display name (`staff.default_actor`).
STAFF_TEAM = "Support team"
RESOLVED = "This conversation is marked as resolved. Write again any time."
DELAYED = "Sorry, this is taking longer than it should. Your message is saved and a colleague will look at it."


@dataclass(frozen=True)
class CustomerEvent:
    """One thing to show the customer. `seq` is the log position (the SSE id); None for a
    streamed piece of a reply, which is not stored and so cannot be resumed."""

    type: str  # message, delta, handoff, status, offer, answer
    data: dict[str, Any]
    seq: int | None = None


def agent_title(config: DeskConfig, name: str) -> str:
    agent = config.agents.get(name)
    return agent.title if agent is not None else "Support"


def customer_event(item: k.Item, config: DeskConfig) -> CustomerEvent | None:
    """The customer's view of one stored item, or None when it is not theirs to see."""
    match item:
        case k.Message(role="customer"):
            return CustomerEvent("message", {"from": "customer", "text": item.text, "at": _at(item)}, item.seq)
        case k.Message(role="agent"):
            data = {"from": "agent", "agent": agent_title(config, item.agent), "text": item.text, "at": _at(item)}
            return CustomerEvent("message", data, item.seq)
        case k.Message():
            # Staff messages are internal notes (staff write to customers as `staff_reply`);
            # system messages are the desk's own.
            return None
        case k.StaffReply():
            # The person's name is theirs to give: the customer sees it, as Chatwoot shows an agent's.
            # An OS login nobody chose as a display name ("root") is not shown: the team is.
            unnamed = bool(item.meta.get(STAFF_META, {}).get("unnamed"))
            data = {"from": "staff", "name": STAFF_TEAM if unnamed else item.person, "text": item.text, "at": _at(item)}
            return CustomerEvent("message", data, item.seq)
        case k.Takeover():
            return CustomerEvent("status", {"status": "staff", "text": STAFF_JOINED}, item.seq)
        case k.Release():
            title = agent_title(config, item.to_agent)
            return CustomerEvent("handoff", {"agent": title, "text": f"You are now talking to {title}."}, item.seq)
        case k.StateChange(state="resolved"):
            return CustomerEvent("status", {"status": "resolved", "text": RESOLVED}, item.seq)
        case k.StateChange() | k.TagChange():
            return None  # the desk's own bookkeeping
        case k.Handoff() if item.meta.get(PART_OF_ACT):
            return None  # the release it is part of already told the customer (said once, not twice)
        case k.Handoff():
            title = agent_title(config, item.to_agent)
            return CustomerEvent("handoff", {"agent": title, "text": f"You are now talking to {title}."}, item.seq)
        case k.Notice():
            return _notice(item)
        case k.ToolCall() | k.ToolResult() | k.ContextSet():
            return None
        case k.Offer():
            # The question itself arrives as the agent's message; this carries the buttons. The
            # offer id is the token a button's answer names (POST .../answer), nothing more.
            data = {"offer_id": item.offer_id, "text": item.text, "yes": yes_label(item.action), "no": "No"}
            return CustomerEvent("offer", data, item.seq)
        case k.Confirmation():
            return CustomerEvent("answer", {"offer_id": item.offer_id, "answer": "yes"}, item.seq)
        case k.Decline():
            return CustomerEvent("answer", {"offer_id": item.offer_id, "answer": item.why}, item.seq)
        case _:
            assert_never(item)


def _notice(item: k.Notice) -> CustomerEvent | None:
    match item.notice_kind:
        case "approval_requested":
            status, text = "checking", CHECKING
        case "approval_granted" | "approval_denied":
            status, text = "checked", CHECKED
        case "human_requested":
            status, text = "person", PERSON_COMING
        case "limit" | "provider_error":
            status, text = "delayed", DELAYED
        case "info" | "customer_action":
            return None
        case _:
            assert_never(item.notice_kind)
    return CustomerEvent("status", {"status": status, "text": text}, item.seq)


def delta_event(config: DeskConfig, agent: str, text: str) -> CustomerEvent:
    return CustomerEvent("delta", {"agent": agent_title(config, agent), "text": text})


def _at(item: k.Item) -> str:
    return item.created_at.isoformat()
