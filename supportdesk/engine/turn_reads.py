"""The store as one turn reads it: one read when the turn starts, then what the turn appends.

A turn runs under its session's turn lease, so no other turn writes to the session while it
runs. The turn starts with one read taken with its lease (`TurnLease.try_start`: the session's
row, the newest items, the shared context, who holds the conversation); every item the turn
stores is added here as it is stored, so each step's history window and context come from
memory instead of two more reads per step. What is written without the lease (a customer's
message a channel stores at once, issue 32) shows as a gap, below. Reads this cannot answer (older items, another session, a context
as of an earlier seq) go to the store.

It checks itself: an added item that does not follow the last one it holds (an append it was
not shown) makes it stale, and from then on every read goes to the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from supportdesk.items import ContextSet, Handoff, Item, Message, Offer, Release, Takeover
from supportdesk.store import ContextEntry, SessionInfo, Store, TurnStart


def customer_words(items: Sequence[Item]) -> list[str]:
    """What counts as the customer's own words among `items` (what a tool's
    `require_named_account` policy reads): the text of every message the customer wrote, then
    every summary staff released the conversation with (a person of the support staff vouches
    for it). Nothing a model can write counts: not an agent's message, a tool call or result,
    nor the shared context. The one definition: the runner's read of a session outside a turn
    and a turn's read of the log it holds both ask it."""
    said = [i.text for i in items if isinstance(i, Message) and i.role == "customer"]
    return said + [i.summary for i in items if isinstance(i, Release) and i.summary]


class TurnReads:
    """Reads of one session during one turn (see the module's docstring)."""

    def __init__(self, store: Store, session_id: str, depth: int):
        self._store = store
        self.session_id = session_id
        # How many of the newest items are kept (the most any read of the turn asks for).
        self.depth = depth
        self.session: SessionInfo | None = None
        self.holder: str | None = None
        self._items: list[Item] = []
        self._whole = True
        self._context: dict[str, ContextEntry] = {}
        self.fresh = False

    @classmethod
    async def read(cls, store: Store, session_id: str, depth: int) -> TurnReads:
        return cls.of(store, session_id, depth, await store.turn_start(session_id, depth))

    @classmethod
    def of(cls, store: Store, session_id: str, depth: int, start: TurnStart) -> TurnReads:
        """The reads of a turn whose start was read with its lease (`TurnLease.try_start`)."""
        reads = cls(store, session_id, depth)
        reads.session, reads.holder = start.session, start.holder
        reads._items, reads._whole, reads._context = list(start.items), start.whole_log, dict(start.context)
        reads.fresh = start.session is not None
        return reads

    @property
    def head(self) -> int:
        return self._items[-1].seq if self._items else 0

    def add(self, item: Item) -> None:
        """An item the turn has just stored."""
        if not self.fresh or item.session_id != self.session_id:
            return
        if item.seq != self.head + 1 or (not self._items and not self._whole):
            self.fresh = False  # something was stored that this was not shown
            return
        self._items.append(item)
        if len(self._items) > self.depth:
            del self._items[: len(self._items) - self.depth]
            self._whole = False
        # Three kinds move what this holds besides the items; the rest pass by.
        if isinstance(item, ContextSet):
            if item.value is None:
                self._context.pop(item.key, None)
            else:
                self._context[item.key] = ContextEntry(item.key, item.value, item.writer, item.seq, item.created_at)
        elif isinstance(item, Takeover):
            self.holder = item.person
        elif isinstance(item, Release):
            self.holder = None
        if self.session is not None:
            active = item.to_agent if isinstance(item, Handoff) else self.session.active_agent
            self.session = replace(self.session, item_count=item.seq, active_agent=active, updated_at=item.created_at)

    def since_last_offer(self) -> list[Item] | None:
        """The held items from the newest offer on; [] when no offer can still be open (none
        is held, and the whole log is here or two customer messages came after whatever older
        offer there was: an offer answers only the message right after it); None when only the
        store can say."""
        if not self.fresh:
            return None
        for at in range(len(self._items) - 1, -1, -1):
            if isinstance(self._items[at], Offer):
                return self._items[at:]
        customer = sum(1 for i in self._items if isinstance(i, Message) and i.role == "customer")
        return [] if self._whole or customer >= 2 else None

    def customer_words(self) -> list[str] | None:
        """`customer_words` of the log, when the whole log is here; else None."""
        if not (self.fresh and self._whole):
            return None
        return customer_words(self._items)

    # --- the reads of `Store` it answers; everything else is the store's ----------------------------

    async def latest(self, session_id: str, n: int) -> list[Item]:
        if self.fresh and session_id == self.session_id and (n <= len(self._items) or self._whole):
            return list(self._items[-n:]) if n > 0 else []
        return await self._store.latest(session_id, n)

    async def context_at(self, session_id: str, seq: int | None = None) -> dict[str, ContextEntry]:
        if self.fresh and session_id == self.session_id and seq is None:
            return dict(self._context)
        return await self._store.context_at(session_id, seq)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)
