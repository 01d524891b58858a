"""The channel names a session carries (`SessionInfo.channel`), declared once.

Every session records where its customer is. The TUI reads this table to know whether what
staff type goes to a customer somewhere else (a served channel) or is the customer at this
terminal; `supportdesk serve` reads it to know whose unanswered messages it answers on start-up.
A new channel adds its name here (`tests/test_channels.py` finds every channel name the code
writes and fails on one this table does not hold). The contract a served channel implements is
`supportdesk/channels/protocol.py`; this module is below both the TUI and the channels, so both
read it without importing each other.
"""

from __future__ import annotations

from typing import Literal

# local: the customer types at this desk (the TUI, `supportdesk run`); served: the customer is
# reached through `supportdesk serve` and waits there for answers; recorded: nobody waits (a
# benchmark's simulated customer, an imported or bridged session).
Reach = Literal["local", "served", "recorded"]

CHANNELS: dict[str, Reach] = {
    "tui": "local",
    "cli": "local",
    "web": "served",
    "chatwoot": "served",
    "bench": "recorded",
    "import": "recorded",
    "agents-sdk": "recorded",
}

# The channels whose customers wait on `supportdesk serve`, in the table's order.
SERVED: tuple[str, ...] = tuple(name for name, reach in CHANNELS.items() if reach == "served")


def is_served(channel: str) -> bool:
    """Whether the session's customer is reached through `serve` (staff write to them as staff)."""
    return CHANNELS.get(channel) == "served"
