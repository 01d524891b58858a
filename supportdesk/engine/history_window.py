"""The part of the log one model call sees, and one note for what falls out of it.

Like the Agents SDK's `SessionSettings(limit=N)`, and more: a budget in items and in estimated
tokens (`[desk.history] max_items`, `max_tokens`, per agent `[agents.X.history]`), a cut that
never separates a tool call from its result nor a handoff from the item that follows it, and what
falls out summarised into one system note at the head of the window:

- by the offline model (and any provider without a `summarise` method): extractive, from a
  bounded sample (the customer's opening message, the latest handoffs, the last exchange before
  the cut), so its cost does not grow with the session;
- by an LLM provider with `summarise(items, previous)`: one summary call, cached per session and
  cut seq, and extended from the previous summary as the cut moves, so a step does not pay for it
  again. A failing summary call falls back to the extractive note; it never fails the turn.

Reads are index lookups (`last_seq`, one `range`, the handoff seqs), whatever the session's length.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, assert_never

from supportdesk.config import AgentConfig, DeskConfig, HistorySettings
from supportdesk.engine.later import ready
from supportdesk.items import (
    Confirmation,
    ContextSet,
    Decline,
    Handoff,
    Item,
    Message,
    Notice,
    Offer,
    Release,
    StaffReply,
    StateChange,
    TagChange,
    Takeover,
    ToolCall,
    ToolResult,
)
from supportdesk.records import dump
from supportdesk.store import Store

SUMMARY_PREFIX = "Earlier in this conversation (summarised; the shared context keeps what was learned): "
# Items read beyond the window, so a pair the cut would split can be recognised.
_SLACK = 64
# How much of the dropped part a summary reads at most.
_SAMPLE = 200
# A note's share of a token budget, and its cap without one.
_NOTE_SHARE = 5
_NOTE_TOKENS = 300


def estimate_tokens(text: str) -> int:
    """A rough token count (about four characters a token) for servers that report none."""
    return (len(text) + 3) // 4


def item_text(item: Item) -> str:
    match item:
        case Message():
            return item.text
        case ToolCall():
            return f"{item.name} {json.dumps(item.arguments, ensure_ascii=False)}"
        case ToolResult():
            return f"{item.name} {item.output}"
        case Handoff():
            return f"{item.from_agent} {item.to_agent} {item.reason}"
        case Offer():
            return f"{item.tool} {item.action}"
        case ContextSet() | Notice() | Takeover() | Release() | StateChange() | StaffReply() | TagChange() | Confirmation() | Decline():
            return json.dumps(dump(item, exclude={"meta", "session_id", "created_at"}), ensure_ascii=False)
        case _:
            assert_never(item)


def item_tokens(item: Item) -> int:
    """The item's estimated tokens, its framing included. Counted once while kept: every model
    step of every turn re-counts its window, whose items the store hands back as the same objects
    while it keeps them parsed (`store.core.window_item`), and an item never changes (frozen).
    Kept by identity, the item held beside its count, so an id is never read for another item."""
    found = _counted.get(id(item))
    if found is not None and found[0] is item:
        return found[1]
    tokens = estimate_tokens(item_text(item)) + 4  # a message's framing
    if len(_counted) >= _COUNTED_MAX:
        _counted.clear()
    _counted[id(item)] = (item, tokens)
    return tokens


# Items' token counts (`item_tokens`), for about the items of the windows a busy worker builds
# (the store keeps 8,192 window items parsed); dropped all at once when full.
_COUNTED_MAX = 16_384
_counted: dict[int, tuple[Item, int]] = {}


def settings_for(desk: DeskConfig, agent: AgentConfig) -> HistorySettings:
    return agent.history or desk.desk.history


def read_depth(settings: HistorySettings) -> int:
    """How many of the newest items building a window reads (the window and its slack)."""
    return settings.max_items + _SLACK


def cut(items: Sequence[Item], max_items: int, max_tokens: int | None) -> int:
    """Where the window starts in `items` (oldest first): within both budgets, no pair split."""
    if not items:
        return 0
    start = max(0, len(items) - max_items)
    if max_tokens is not None:
        total, index = 0, len(items)
        while index > start:
            cost = item_tokens(items[index - 1])
            if total + cost > max_tokens and index < len(items):
                break
            total += cost
            index -= 1
        start = index
    calls = {item.call_id: n for n, item in enumerate(items) if isinstance(item, ToolCall)}
    moved = True
    while moved and start < len(items) - 1:
        moved = False
        # A handoff and the item after it stay together: a window may not begin just after one.
        if start > 0 and isinstance(items[start - 1], Handoff):
            start += 1
            moved = True
            continue
        for n in range(start, len(items)):
            item = items[n]
            if isinstance(item, ToolResult) and calls.get(item.call_id, -1) < start:
                start = n + 1  # its call fell out: the result goes with it
                moved = True
                break
    return min(start, len(items) - 1)


@dataclass
class Window:
    """What one model call sees: `items` (the summary note first when anything fell out)."""

    items: list[Item]
    seen: int  # log items in the window
    dropped: int  # log items before it, summarised
    tokens: int  # estimated tokens of the window, note included

    def as_meta(self) -> dict[str, int]:
        return {"items": self.seen, "dropped": self.dropped, "tokens": self.tokens}


class Summarising(Protocol):
    async def summarise(self, items: Sequence[Item], previous: str | None) -> str: ...


def _quote(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


async def extractive_summary(store: Store, session_id: str, upto: int) -> str:
    """Facts picked from a bounded sample of items 1..upto: no model call."""
    opening = await store.range(session_id, 1, min(upto, 20))
    first = next((i for i in opening if isinstance(i, Message) and i.role == "customer"), None)
    handoff_seqs = [seq for seq in await store.kind_seqs(session_id, "handoff") if seq <= upto][-5:]
    handoffs = [h for h in await store.items_at(session_id, handoff_seqs) if isinstance(h, Handoff)]
    recent = await store.range(session_id, max(1, upto - 40), upto)
    asked = [i for i in recent if isinstance(i, Message) and i.role == "customer"][-3:]
    answered = next((i for i in reversed(recent) if isinstance(i, Message) and i.role == "agent"), None)
    parts = [f"{upto} earlier items."]
    if first is not None:
        parts.append(f"The customer opened with: \"{_quote(first.text)}\".")
    if handoffs:
        parts.append("Handoffs: " + "; ".join(f"{h.from_agent} -> {h.to_agent} ({_quote(h.reason, 60)})" for h in handoffs) + ".")
    if asked and (first is None or asked[-1].seq != first.seq):
        parts.append("Lately the customer wrote: " + " / ".join(f"\"{_quote(m.text, 100)}\"" for m in asked) + ".")
    if answered is not None:
        parts.append(f"The last answer before this window ({answered.agent}): \"{_quote(answered.text, 120)}\".")
    return " ".join(parts)


class HistoryWindows:
    """Builds each model call's window; remembers LLM summaries per session and cut seq."""

    def __init__(self, provider: Any) -> None:
        # Looked at on first use: the provider may be deferred (engine/later.py) until a turn runs.
        self._provider = provider
        self._summaries: dict[str, tuple[int, str]] = {}
        self._last: dict[str, dict[str, int]] = {}
        self.summary_calls = 0

    def last_seen(self, session_id: str) -> dict[str, int]:
        """What the session's latest model call saw (`Window.as_meta`)."""
        return dict(self._last.get(session_id, {}))

    async def build(self, store: Store, session_id: str, settings: HistorySettings) -> Window:
        # One read (the latest items), not two (the last seq, then the range up to it): every
        # model step builds a window, and each read is a round trip to the store's thread.
        buffer = await store.latest(session_id, read_depth(settings))
        note_tokens = min(_NOTE_TOKENS, settings.max_tokens // _NOTE_SHARE) if settings.max_tokens else _NOTE_TOKENS
        budget = settings.max_tokens - note_tokens if settings.max_tokens else None
        start = cut(buffer, settings.max_items, budget)
        kept = list(buffer[start:])
        dropped = kept[0].seq - 1 if kept else 0
        tokens = sum(item_tokens(item) for item in kept)
        if dropped <= 0:
            window = Window(kept, len(kept), 0, tokens)
            self._last[session_id] = window.as_meta()
            return window
        text = await self._summary(store, session_id, dropped)
        limit = note_tokens * 4 - len(SUMMARY_PREFIX) - 24
        note_text = SUMMARY_PREFIX + (text if len(text) <= limit else text[: max(0, limit - 1)] + "…")
        note = Message(role="system", text=note_text, agent="", meta={"summary_of": dropped})
        window = Window([note, *kept], len(kept), dropped, tokens + item_tokens(note))
        self._last[session_id] = window.as_meta()
        return window

    @property
    def _summariser(self) -> Summarising | None:
        provider = ready(self._provider)
        return provider if callable(getattr(provider, "summarise", None)) else None

    async def _summary(self, store: Store, session_id: str, upto: int) -> str:
        summariser = self._summariser
        if summariser is None:
            return await extractive_summary(store, session_id, upto)
        cached = self._summaries.get(session_id)
        if cached is not None and cached[0] == upto:
            return cached[1]
        try:
            if cached is not None and 0 < upto - cached[0] <= _SAMPLE:
                items, previous = await store.range(session_id, cached[0] + 1, upto), cached[1]
            else:
                opening = await store.range(session_id, 1, min(upto, 20))
                tail = await store.range(session_id, max(len(opening) + 1, upto - _SAMPLE + 1), upto)
                items, previous = [*opening, *tail], None
            self.summary_calls += 1
            text = await summariser.summarise(items, previous)
        except Exception:  # a summary is a nicety: never fail the turn for it
            return await extractive_summary(store, session_id, upto)
        self._summaries[session_id] = (upto, text)
        return text
