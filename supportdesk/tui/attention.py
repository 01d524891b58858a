"""When a conversation needs staff, and why, read from the log: an approval waiting for a decision,
a customer who asked for a person, or a limit the runner reached in the latest turn.

Asking for a person or reaching a limit needs staff until staff act (a note, a reply, a manual
handoff) or the customer writes again and the agents take a new turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from supportdesk.items import Handoff, Item, Message, Notice


def needs_staff(recent: Sequence[Item], pending: Sequence[Notice]) -> str:
    """Why staff are needed, in a few words; "" when they are not. `recent` is the log's tail."""
    if pending:
        tools = ", ".join(dict.fromkeys(str(notice.data.get("tool", "a tool")) for notice in pending))
        return f"approval pending: {tools}"
    for item in reversed(recent):
        match item:
            case Message(role="customer" | "staff") | Handoff(handoff_kind="manual"):
                return ""
            case Notice(notice_kind="human_requested"):
                return "the customer asked for a person"
            case Notice(notice_kind="limit"):
                return "a limit was reached"
    return ""
