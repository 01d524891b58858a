"""The panes' data as of a position k in a session's log (no Textual here).

Live view and replay are the same fold: the live chat asks for k = the end, replay moves k.
Every read is an index lookup (a window of items, the handoffs, the context as of k), so the
cost does not grow with the session's length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from supportdesk import desk_state
from supportdesk.items import Handoff, Item
from supportdesk.engine.log import ContextEntry, SessionInfo, Store

# How many items the conversation pane mounts at a time; older ones load on demand.
PAGE = 40
# How many handoffs the timeline lists at a time (a 100,000-item session may hold thousands).
HANDOFF_PAGE = 20


@dataclass
class Snapshot:
    session: SessionInfo
    position: int  # k: the last item shown
    items: list[Item]  # the window of items ending at k, oldest first
    agent: str  # who held the conversation once item k was written
    stops: list[int]  # the seqs of every handoff up to k (ints: cheap however many)
    handoffs: list[Handoff]  # the latest HANDOFF_PAGE of them, for the timeline
    context: dict[str, ContextEntry]  # the shared context as of k
    changed: set[str] = field(default_factory=set)  # keys the step ending at k wrote


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
    """The panes' state as of item `position` (default: the end of the log)."""
    info = await store.get_session(session_id)
    if info is None:
        return None
    end = info.item_count if position is None else max(0, min(position, info.item_count))
    items = await store.range(session_id, max(1, end - page + 1), end) if end else []
    agent = await store.agent_at(session_id, end) if end else info.entry_agent
    stops = [seq for seq in await store.kind_seqs(session_id, "handoff") if seq <= end]
    handoffs = await read_handoffs(store, session_id, stops[-HANDOFF_PAGE:])
    context = await store.context_at(session_id, end)
    return Snapshot(info, end, items, agent, stops, handoffs, context, changed_keys(context, items, end, whole_turn=whole_turn))


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


# The kinds that decide who holds a conversation, its staff state, tags and priority: few per
# session, read whole by kind (an index range), so the header is right however long the log.
STAFF_STATE_KINDS = ("takeover", "release", "state_change", "tag_change")


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
