"""What a customer channel is: the contract `supportdesk serve` runs each channel through.

A channel turns its transport's threads (a web conversation, a Chatwoot conversation, a mail
thread, a line of a file) into desk sessions, hands each customer message to the host
(`Conversations.receive`: stored before anything else, then a turn), and, if it pushes replies
somewhere (`Delivers`), is handed every event the customer should see, in order. The host
(`channels/conversations.py`) runs the turns, fans events out (`hub.py`) and says what a customer
may see (`view.py`); a channel holds none of that.

Four members, like the Agents SDK's `Session`: `name`, `session_for`, `start`, `close`; and one
optional capability, `deliver`. The web channel pulls (its event stream reads the hub on each
request), so it does not deliver; Chatwoot and the worked example of docs/extending.md push.
Every name is declared in `engine/channels.CHANNELS`, which the TUI reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from supportdesk.channels.view import CustomerEvent


@runtime_checkable
class Channel(Protocol):
    """A way customers reach the desk, started and stopped by `supportdesk serve`."""

    # The `channel` of the sessions it opens: a key of engine/channels.CHANNELS.
    name: str

    def session_for(self, thread: str) -> str:
        """The desk session of one of the channel's threads: the same thread, the same session
        (so a redelivered message or a restarted server finds it again)."""
        ...

    async def start(self) -> None:
        """Begin receiving (and deliver what was stored but not delivered before a restart)."""
        ...

    async def close(self) -> None:
        """Stop receiving and delivering; what is stored stays for the next start."""
        ...


@runtime_checkable
class Delivers(Protocol):
    """A channel that pushes replies to its customers (the host calls it for each event)."""

    async def deliver(self, session_id: str, event: CustomerEvent) -> bool:
        """Send one thing the customer should see (an agent's or a person's message, an offer, a
        status); whether it was one this channel sends. Called in the log's order."""
        ...
