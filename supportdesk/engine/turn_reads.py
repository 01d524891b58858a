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

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from supportdesk.business.core import BusinessCore
from supportdesk.engine.confirmation import gives_only_details, offers_exchange, request_scan_start
from supportdesk.engine.events import saw_upto
from supportdesk.engine.services import Services
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
        self._session: SessionInfo | None = None
        # What the items added since `_session` was last built moved (item count, active agent,
        # last update), applied when `session` is next read: a turn adds a dozen items and reads
        # the row two or three times, so the row is not copied once per item.
        self._moved: tuple[int, str, Any] | None = None
        self.holder: str | None = None
        self._items: list[Item] = []
        self._whole = True
        self._context: dict[str, ContextEntry] = {}
        self.fresh = False
        # Items the turn stored after a gap (customer messages stored meanwhile, issue 32), held
        # until a read fills the gap (`_catch_up`); while any are held, `fresh` is False.
        self._after_gap: list[Item] = []
        self._catching: asyncio.Task[None] | None = None  # the read filling it (reads at once share it)
        # The seq of the first item the turn holds back for its next append (`hold`), shown to
        # its steps at the seqs they are to get; None: none held. Kept until the append's items
        # are added (they replace their stand-ins), after `take_held` gave the items away.
        self._held_from: int | None = None
        # The held items as the runner gave them (unstamped: the append stamps them), waiting
        # for the turn's next append (`take_held`). The one owner of what a turn holds back.
        self._held_items: list[Item] = []
        # Where the log the running step was shown ended, when a customer message has since been
        # placed before held items it was shown (`stored_meanwhile`): it saw the log up to this
        # seq and the held items, not the message; None: its view is the log's order. Cleared as
        # a step's view is built (`viewed`).
        self.step_saw_upto: int | None = None
        # The desk's business data as this turn's tools read it (`services`).
        self._services: Services | None = None

    def services(self, desk: Services) -> Services:
        """What this turn's tools act on: the desk's business data through one view for the turn
        (`BusinessCore.for_turn`: a row read once is not read again until a write), made at the
        first tool's need (the data is open by then)."""
        if self._services is None:
            customers = desk.customers
            if not isinstance(customers, BusinessCore):
                return desk  # (not open yet, or a back office of its own: read as it reads)
            self._services = Services(customers=customers.for_turn())
        return self._services

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
    def session(self) -> SessionInfo | None:
        """The session's row as read with the lease, moved on by the items the turn added."""
        if self._moved is not None and self._session is not None:
            count, active, when = self._moved
            self._session = replace(self._session, item_count=count, active_agent=active, updated_at=when)
            self._moved = None
        return self._session

    @session.setter
    def session(self, info: SessionInfo | None) -> None:
        self._session, self._moved = info, None

    @property
    def head(self) -> int:
        return self._items[-1].seq if self._items else 0

    def hold(self, items: Sequence[Item]) -> list[Item]:
        """Items the turn stores with its next append (the runner's `_append(hold=True)`), read
        by its steps meanwhile as if stored: stamped with the seqs they are to get (the append
        is told them, `Store.append(at=)`) and the time now. Only while this is fresh; returns
        them as stamped."""
        assert self.fresh and not self._after_gap, "items are held only while the turn's reads are fresh"
        now = self._store.clock()
        stamped = [
            replace(item, session_id=self.session_id, seq=self.head + n, created_at=now)
            for n, item in enumerate(items, start=1)
        ]
        held_from = self._held_from if self._held_from is not None else self.head + 1
        self._held_from = None  # (added as the turn's own, below)
        for item in stamped:
            self.add(item)
        self._held_from = held_from
        self._held_items += items
        return stamped

    @property
    def holding(self) -> bool:
        """Whether items wait for the turn's next append (`hold`)."""
        return bool(self._held_items)

    def take_held(self) -> tuple[int, list[Item]] | None:
        """The held items for the append that stores them now, with the seq the first was shown
        at (`Store.append(at=)`), or None: none held. Their stand-ins stay until that append's
        items are added (`add`)."""
        if not self._held_items:
            return None
        assert self._held_from is not None
        items, self._held_items = self._held_items, []
        return self._held_from, items

    def stored_meanwhile(self, item: Item) -> None:
        """A customer's message this process stored without the lease while the turn runs
        (`Runner.receive`, issue 32), placed at its seq so the turn's next step reads the log in
        the log's order. Items held for the next append (`hold`) were shown at the seqs after
        the stored log; the message took the first of them, so they move one seq on (their
        append is told the new seq, `take_held`) and the message stands before them, as the log
        will have it. A message that lands anywhere else (after an append of the turn not yet
        added here) is left to the gap the turn's next append shows (`add`, `_catch_up`), as
        one stored by another process is; a stale read ignores it (the store answers)."""
        if item.session_id != self.session_id or not self.fresh or self._after_gap:
            return
        if self._held_from is None:
            if item.seq == self.head + 1:
                self.add(item)
            return
        if item.seq != self._held_from:
            return
        # The steps shown the held items (the held ones, and the one running now) saw the log up
        # to the message, not it: marked so (`events.seen_upto`), their answers do not answer it.
        saw = item.seq - 1
        self.step_saw_upto = saw if self.step_saw_upto is None else self.step_saw_upto
        self._held_items = [saw_upto(i, saw) for i in self._held_items]
        at = next((n for n, i in enumerate(self._items) if i.seq >= item.seq), len(self._items))
        shown, self._items = self._items[at:], self._items[:at]
        self._held_from = None  # (the message and the moved stand-ins are added as the turn's own)
        for each in [item, *(replace(saw_upto(i, saw), seq=i.seq + 1) for i in shown)]:
            self.add(each)
        self._held_from = item.seq + 1

    def viewed(self) -> None:
        """A step's view of the log is being built from this: it is in the log's order."""
        self.step_saw_upto = None

    def add(self, item: Item) -> None:
        """An item the turn has just stored."""
        if item.session_id != self.session_id:
            return
        if self._held_from is not None:
            # The turn's next append, which stores the held items first: they replace their
            # stand-ins when they landed at the seqs shown; anywhere else (`HeadMoved`: a
            # customer message came first) only the store knows the log from here on.
            held_from, self._held_from = self._held_from, None
            del self._items[next((at for at, i in enumerate(self._items) if i.seq >= held_from), len(self._items)):]
            if item.seq != held_from:
                self.fresh = False
                self._after_gap = []
                return
        if self._after_gap:
            if item.seq == self._after_gap[-1].seq + 1:
                self._after_gap.append(item)
            else:
                self._after_gap = []  # stale for good: every read goes to the store
            return
        if not self.fresh:
            return
        if item.seq != self.head + 1 or (not self._items and not self._whole):
            self.fresh = False  # something was stored that this was not shown
            if item.seq > self.head + 1 and self._items:
                self._after_gap = [item]  # the next read may fill the gap (`_catch_up`)
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
        if self._session is not None:
            before = self._moved[1] if self._moved is not None else self._session.active_agent
            active = item.to_agent if isinstance(item, Handoff) else before
            self._moved = (item.seq, active, item.created_at)

    def held_session(self, session_id: str) -> SessionInfo | None:
        """The session's row as the turn read it with its lease (its counts moved on by what the
        turn stored since), or None: another session, or none was read. For what a turn never
        changes (where the session was forked from, its channel): no read of the store."""
        return self.session if session_id == self.session_id else None

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

    def offers_turn(self) -> list[Item] | None:
        """The held items of the turn that made the newest offer, from the customer message it
        answered up to the offer (`confirmation.asked_beside` reads them); None when only the
        store can say."""
        if not self.fresh:
            return None
        for at in range(len(self._items) - 1, -1, -1):
            if isinstance(self._items[at], Offer):
                exchange = offers_exchange(self._items[:at])
                if self._whole:
                    return exchange if exchange is not None else self._items[:at]
                # (an exchange that opens with the window's first item, a message giving only
                # details, may go further back than the window: only the store can say)
                first = exchange[0] if exchange else None
                complete = isinstance(first, Message) and not (first is self._items[0] and gives_only_details(first.text))
                return exchange if complete else None
        return None

    async def since_request(self, tool: str) -> list[Item] | None:
        """The held items `confirmation.requested` reads for `tool` (a confirm = "request" call
        the gate asks about), when they are enough to say what the whole log would: from the
        tool's last successful run, offer answer or the REQUEST_WINDOW-th customer message back,
        whichever is newest (where `requested`'s backward scan stops), or all of them when the
        whole log is here. None when that point is older than what is held (or the held log is
        stale): only the store can say. A gap of customer messages stored meanwhile is read
        first (`_catch_up`), as for a step's window."""
        await self._caught_up()
        if not self.fresh:
            return None
        start = request_scan_start(self._items, tool)
        if start is not None:
            return self._items[start:]
        return list(self._items) if self._whole else None

    @property
    def whole(self) -> bool:
        """Whether this holds the session's whole log, fresh: every read of the turn's session
        is answered here, none by the store."""
        return self.fresh and self._whole and not self._after_gap

    def customer_words(self) -> list[str] | None:
        """`customer_words` of the log, when the whole log is here; else None."""
        if not (self.fresh and self._whole):
            return None
        return customer_words(self._items)

    # --- the reads of `Store` it answers; everything else is the store's ----------------------------

    async def _catch_up(self) -> None:
        """Read the gap before the items held after it, once: when it holds only customer
        messages (stored without the lease while the turn ran, issue 32: they move nothing this
        keeps but the items), this is fresh again and the turn's later steps read from memory,
        not the store. Anything else in the gap (staff took over, a status moved) leaves it
        stale, and the store answers every read, as before."""
        held, self._after_gap = self._after_gap, []
        gap = await self._store.range(self.session_id, self.head + 1, held[0].seq - 1)
        if [i.seq for i in gap] != list(range(self.head + 1, held[0].seq)) or not all(
            isinstance(i, Message) and i.role == "customer" for i in gap
        ):
            return
        self.fresh = True
        for item in [*gap, *held]:
            self.add(item)

    async def _caught_up(self) -> None:
        """The gap filled, if one waits (`_catch_up`); a step's reads that run at once (its
        window and its context) wait for the same read."""
        if self._catching is None:
            if not self._after_gap:
                return
            self._catching = asyncio.ensure_future(self._catch_up())
        task = self._catching
        try:
            await task
        finally:
            if self._catching is task and task.done():
                self._catching = None

    def in_memory(self, session_id: str, n: int) -> bool:
        """Whether `latest(session_id, n)` and `context_at(session_id)` (a step's window and
        context) are answered from what this holds, with no read of the store to wait for."""
        return (
            session_id == self.session_id and self.fresh and self._catching is None and not self._after_gap
            and (n <= len(self._items) or self._whole)
        )

    async def latest(self, session_id: str, n: int) -> list[Item]:
        if session_id == self.session_id:
            await self._caught_up()
        if self.fresh and session_id == self.session_id and (n <= len(self._items) or self._whole):
            return list(self._items[-n:]) if n > 0 else []
        return await self._store.latest(session_id, n)

    async def context_at(self, session_id: str, seq: int | None = None) -> dict[str, ContextEntry]:
        if session_id == self.session_id:
            await self._caught_up()
        if self.fresh and session_id == self.session_id and seq is None:
            return dict(self._context)
        return await self._store.context_at(session_id, seq)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)
