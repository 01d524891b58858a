"""The panes' data as of a position k in a session's log, and the contract every pane keeps
(no Textual here).

Live view and replay are the same fold: the live chat asks for k = the end, replay moves k.
Every read is an index lookup (a window of items, the handoffs, the context as of k), so the
cost does not grow with the session's length. New items at the live end are folded into the
snapshot by `advance`, without reading again.

A pane (`Pane`) is shown a whole snapshot (a session opened, the replay cursor moved) or
extended with the items appended after what it shows (the live end); the screens reach their
panes through these two methods only, so a new pane gets both paths by implementing them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

from supportdesk.folds import desk_state
from supportdesk.items import STATE_KINDS, ContextSet, Handoff, Item
from supportdesk.engine.log import ContextEntry, SessionInfo, Store

# How many items the conversation pane mounts at a time; older ones load on demand.
PAGE = 40
# More than this many items in a window and its far end is let go (it reloads on demand).
MAX_WINDOW = 3 * PAGE
# How many handoffs the timeline lists at a time (a 100,000-item session may hold thousands).
HANDOFF_PAGE = 20
# A replay jump reads about a screenful; scrolling up (or a short window) loads the rest.
JUMP_PAGE = 12


@dataclass
class Snapshot:
    """What every pane shows of a session at position k."""

    session: SessionInfo | None  # None: a new session, nothing written yet
    position: int  # k: the last item shown
    items: list[Item]  # the window of items ending at k, oldest first
    agent: str  # who held the conversation once item k was written
    stops: list[int]  # the seqs of every handoff up to k (ints: cheap however many)
    handoffs: list[Handoff]  # the latest HANDOFF_PAGE of them, for the live timeline
    context: dict[str, ContextEntry]  # the shared context as of k
    changed: set[str] = field(default_factory=set)  # keys the step (live: the turn) ending at k wrote
    # The live end (the chat) or a cursor (replay): the live view highlights what the whole
    # turn changed and lists the latest handoffs; a cursor highlights one step and marks the
    # handoff it is at, on a page around it.
    live: bool = False
    later_stops: list[int] = field(default_factory=list)  # a cursor's handoffs after k
    # Every handoff read so far, by seq: successive snapshots of one session share it, so a
    # timeline page is read once however often the cursor passes it.
    handoffs_read: dict[int, Handoff] = field(default_factory=dict)
    # The session's id: a new session has one from its first item on, before its info is read.
    session_id: str | None = None

    def __post_init__(self) -> None:
        if self.session_id is None and self.session is not None:
            self.session_id = self.session.id


def new_session(entry_agent: str) -> Snapshot:
    """What every pane shows before a new session's first message: nothing, held by the entry agent."""
    return Snapshot(None, 0, [], entry_agent, [], [], {}, live=True)


@runtime_checkable
class Pane(Protocol):
    """What every pane of a session screen implements; the screens call nothing else to update it."""

    async def show(self, snapshot: Snapshot) -> None:
        """Show the session as of `snapshot.position` (a session opened, the replay cursor moved)."""

    async def extend(self, items: Sequence[Item]) -> None:
        """Fold in items appended at the live end, after what was shown (oldest first)."""


def step_start(items: Sequence[Item], position: int) -> int:
    """The seq after which the step that wrote item `position` began.

    The runner appends everything one step produced (context writes, tool calls and results,
    a reply or a handoff) in one transaction, and the store stamps them with one time. So the
    step is the run of items ending at k that share item k's time.
    """
    upto = [item for item in items if item.seq <= position]
    if not upto or upto[-1].seq != position:
        return position  # item k is not in the window: nothing to attribute
    stamp = upto[-1].created_at
    for item in reversed(upto):
        if item.created_at != stamp:
            return item.seq
    return upto[0].seq - 1


def turn_start(items: Sequence[Item], position: int) -> int:
    """The seq of the customer's message that started the turn ending at `position`.

    The live view highlights what the whole latest turn changed: a turn usually ends with a
    reply-only step, which would otherwise leave nothing highlighted right after it.
    """
    for item in reversed(items):
        if item.seq <= position and item.kind == "message" and item.role == "customer":
            return item.seq
    return step_start(items, position)


def last_call_seen(items: Sequence[Item], position: int) -> dict[str, int] | None:
    """What the latest model call up to k saw (`history` in its item's meta), if the window holds it."""
    for item in reversed(items):
        if item.seq <= position and isinstance(item.meta.get("history"), dict):
            return item.meta["history"]
    return None


def changed_keys(
    context: dict[str, ContextEntry], items: Sequence[Item], position: int, *, whole_turn: bool = False
) -> set[str]:
    start = turn_start(items, position) if whole_turn else step_start(items, position)
    return {key for key, entry in context.items() if start < entry.seq <= position}


async def snapshot(
    store: Store, session_id: str, position: int | None = None, page: int = PAGE, *, whole_turn: bool = False
) -> Snapshot | None:
    """The panes' state as of item `position` (default: the end of the log); `whole_turn` is
    the live view (what the whole latest turn changed)."""
    info = await store.get_session(session_id)
    if info is None:
        return None
    end = info.item_count if position is None else max(0, min(position, info.item_count))
    items = await store.range(session_id, max(1, end - page + 1), end) if end else []
    agent = await store.agent_at(session_id, end) if end else info.entry_agent
    stops = [seq for seq in await store.kind_seqs(session_id, "handoff") if seq <= end]
    read: dict[int, Handoff] = {}
    handoffs = await read_handoffs(store, session_id, stops[-HANDOFF_PAGE:], read)
    context = await store.context_at(session_id, end)
    changed = changed_keys(context, items, end, whole_turn=whole_turn)
    return Snapshot(info, end, items, agent, stops, handoffs, context, changed, live=whole_turn, handoffs_read=read)


async def cursor(store: Store, session_id: str, position: int | None, before: Snapshot | None = None) -> Snapshot | None:
    """Replay's snapshot at `position` (None: the end), reading only what moving there needs.

    The first one reads the session and every handoff's seq (one index read); each later one
    (`before`, the snapshot the cursor was at) reuses them and its window of items: a step back
    trims the window, a short step forward reads the items stepped over, a jump reads a page
    ending at k (the conversation draws its last screenful; the fold needs the step and the model
    call before k, which can lie further back). Then the agent and the context as of k (an index
    probe each).
    """
    if before is None or before.session is None:
        info = await store.get_session(session_id)
        if info is None:
            return None
        every_stop = await store.kind_seqs(session_id, "handoff")
        window: list[Item] = []
        read: dict[int, Handoff] = {}
    else:
        info, every_stop, window, read = before.session, before.stops + before.later_stops, before.items, before.handoffs_read
    k = info.item_count if position is None else max(0, min(position, info.item_count))
    first, last = (window[0].seq, window[-1].seq) if window else (k + 1, 0)
    if window and first <= k <= last:
        items = [item for item in window if item.seq <= k]
    elif window and last < k <= last + JUMP_PAGE:
        items = window + await store.range(session_id, last + 1, k)
    else:
        items = await store.range(session_id, max(1, k - PAGE + 1), k) if k else []
    items = items[-MAX_WINDOW:]
    agent = await store.agent_at(session_id, k) if k else info.entry_agent
    context = await store.context_at(session_id, k)
    split = bisect_right(every_stop, k)
    return Snapshot(
        info, k, items, agent, every_stop[:split], [], context, changed_keys(context, items, k),
        live=False, later_stops=every_stop[split:], handoffs_read=read,
    )


def fold_context(context: dict[str, ContextEntry], items: Sequence[Item]) -> dict[str, ContextEntry]:
    """The shared context after `items` (the same fold as the store's `context_at`: the latest
    write of each key wins, a write of None clears it)."""
    out = dict(context)
    for item in items:
        if isinstance(item, ContextSet):
            if item.value is None:
                out.pop(item.key, None)
            else:
                out[item.key] = ContextEntry(
                    key=item.key, value=item.value, writer=item.writer, seq=item.seq, created_at=item.created_at
                )
    return out


def advance(snap: Snapshot, items: Sequence[Item]) -> Snapshot:
    """`snap` with the items appended after its position folded in (the live end): no reads.

    `items` must follow on from `snap.position` without a gap (the chat reads any gap first)."""
    fresh = [item for item in items if item.seq > snap.position]
    if not fresh:
        return snap
    end = fresh[-1].seq
    window = (snap.items + fresh)[-PAGE:]
    handoffs = [item for item in fresh if isinstance(item, Handoff)]
    read = snap.handoffs_read
    read.update((h.seq, h) for h in handoffs)
    context = fold_context(snap.context, fresh)
    return replace(
        snap,
        session_id=snap.session_id or fresh[0].session_id or None,
        position=end,
        items=window,
        agent=handoffs[-1].to_agent if handoffs else snap.agent,
        stops=snap.stops + [h.seq for h in handoffs],
        handoffs=(snap.handoffs + handoffs)[-HANDOFF_PAGE:],
        context=context,
        changed=changed_keys(context, window, end, whole_turn=snap.live),
    )


async def read_handoffs(
    store: Store, session_id: str, seqs: Sequence[int], cache: dict[int, Handoff] | None = None
) -> list[Handoff]:
    """The handoff items at these seqs, in the order given, remembered in `cache`.

    The seqs not in the cache are read together, so a timeline page is one read, not one per row.
    """
    cache = {} if cache is None else cache
    missing = [seq for seq in seqs if seq not in cache]
    if missing:
        for item in await store.items_at(session_id, missing):
            if isinstance(item, Handoff):
                cache[item.seq] = item
    return [cache[seq] for seq in seqs if seq in cache]


# The kinds that decide who holds a conversation, its staff state, tags and priority (declared
# on each kind: `holds_state`): few per session, read whole by kind (an index range), so the
# header is right however long the log.
STAFF_STATE_KINDS = STATE_KINDS


async def conversation_state(
    store: Store, session_id: str, entry_agent: str, tail: Sequence[Item] = ()
) -> desk_state.ConversationState:
    """desk_state's fold over every item of `STAFF_STATE_KINDS` and the latest page (`tail`):
    the state the chat header shows; new items then `advance` it."""
    by_seq: dict[int, Item] = {item.seq: item for item in tail}
    for kind in STAFF_STATE_KINDS:
        for item in await store.of_kind(session_id, kind):
            by_seq.setdefault(item.seq, item)
    return desk_state.fold([by_seq[seq] for seq in sorted(by_seq)], desk_state.start(entry_agent))
