"""What a turn streams to whoever drives it (the TUI, the CLI, evals), and whether one was cut short."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, assert_never

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

if TYPE_CHECKING:
    from supportdesk.store import Store


@dataclass(frozen=True)
class SessionStarted:
    """A turn created its session (the first message of a new conversation)."""

    session_id: str


@dataclass(frozen=True)
class TurnWaiting:
    """Another turn holds this session (another terminal, worker or machine): this one waits
    for it to end, then runs on what it left."""

    session_id: str


@dataclass(frozen=True)
class StepStarted:
    """An agent began a model step."""

    agent: str
    step: int


@dataclass(frozen=True)
class Token:
    """A streamed piece of the reply the agent is writing (not yet stored)."""

    agent: str
    text: str


@dataclass(frozen=True)
class Appended:
    """An item is now in the log (message, tool call/result, handoff, context set, notice)."""

    item: Item


# How a turn ended: an agent answered the customer, a provider failed (the turn can be
# retried), a desk limit stopped it (the fallback agent took the conversation back), or a
# hook (a guardrail, say) vetoed it before any model call, or a person holds the conversation
# (a take-over): the customer's message is stored and waits for them, no agent works on it.
TurnOutcome = Literal["answered", "provider_error", "limit", "vetoed", "held"]


@dataclass(frozen=True)
class Done:
    """The turn ended: who holds the conversation, how it ended, and the session's status."""

    session_id: str
    active_agent: str
    outcome: TurnOutcome = "answered"
    # The session's status after the turn: open, awaiting_approval, needs_human (or staff,
    # when the outcome is held).
    status: str = "open"


Event = SessionStarted | TurnWaiting | StepStarted | Token | Appended | Done


# How far back a session is read for an unfinished turn (a turn's items since its customer message),
# after a first glance at its last few.
RESUME_GLANCE = 16
RESUME_WINDOW = 200


async def _not_copied(store: Store, session_id: str, seq: int) -> int | None:
    """`seq`, unless it is part of what a fork copied: a fork cut at a turn's middle starts
    where staff chose to try something else, not where a process died (one read, and only for
    an unfinished turn; none when `store` is a running turn's reads, which hold the session's
    row as read with the turn's lease: where a session was forked, and from where, never changes,
    and every served turn asks this)."""
    held = getattr(store, "held_session", None)  # (`TurnReads.held_session`; a store has none)
    info = held(session_id) if held is not None else None
    if info is None:
        info = await store.get_session(session_id)
    if info is not None and info.forked_from and info.forked_at is not None and seq <= info.forked_at:
        return None
    return seq


def seen_upto(answer: Item) -> int | None:
    """The last seq the model step that made `answer` saw (its `meta["history"]`, a window of
    the log's newest items: the `dropped` before it and its `items`), or None when unknown (an
    answer no model step made: a limit's, a hook's, an older log's). `upto`, when there: the
    window's items did not all land where the step saw them (items its turn held back were
    stored after a customer message that came meanwhile, `HeadMoved`): the step saw the log
    up to that seq, and the held items, not what came between."""
    history = answer.meta.get("history") if answer.meta else None
    if not isinstance(history, dict):
        return None
    upto = history.get("upto")
    if type(upto) is int:
        return upto
    items, dropped = history.get("items"), history.get("dropped", 0)
    if type(items) is not int or type(dropped) is not int:
        return None
    return dropped + items


def saw_upto(item: Item, seq: int) -> Item:
    """A model step's item marked as having seen the log only up to `seq` (`seen_upto`): items
    its turn held back were placed after a customer message that came meanwhile. An earlier mark
    stands (the step saw no further than the first)."""
    history = item.meta.get("history") if item.meta else None
    if not isinstance(history, dict):
        return item
    upto = history.get("upto")
    if type(upto) is int and upto <= seq:
        return item
    return replace(item, meta={**item.meta, "history": {**history, "upto": seq}})


def _offer_step_saw(tail: list[Item], at: int) -> int | None:
    """What the step that asked the offer question `tail[at]` saw: its calls, stored with the
    question in one append, carry the step's `meta["history"]` on the first of them."""
    for item in reversed(tail[:at]):
        if item.kind == "message" and item.role == "customer":
            return None
        if item.kind == "tool_call" and (upto := seen_upto(item)) is not None:
            return upto
    return None


async def unfinished_turn(store: Store, session_id: str) -> int | None:
    """The seq of the customer message whose turn never ended, or None.

    A turn ends in a message of the agent holding the conversation at its end, a provider
    error or a limit notice (or a hook's veto of the turn); a customer message with none of
    these after it was cut short (the process died mid-turn). An agent that speaks and hands
    off in the same step ("I'm bringing in our billing team") has not answered: the agent it
    handed to has yet to. A person's takeover or reply ends a turn; a release hands back
    whatever customer message came while the person held it unanswered: that one waits.

    A customer message is stored at once, without the turn lease (issue 32), so it may land
    while a step's model call runs and before that step's answer: an answer answers only what
    its step saw (`meta["history"]`: the window ended at seq dropped + items), and a customer
    message after that is unanswered, for the next turn."""
    # Opening a session asks this as its first page is drawn: nearly every session ends in
    # an answer, so a glance at its last items decides, and only a long unanswered tail
    # reads the whole window.
    for window in (RESUME_GLANCE, RESUME_WINDOW):
        tail = await store.latest(session_id, window)
        holder: str | None = None  # who holds the conversation at the end, once a handoff says
        released = False  # a person gave it back after the items read so far (issue 39 §3)
        seen: int | None = None  # the last answer's step saw the log up to this seq, not further
        for at in range(len(tail) - 1, -1, -1):
            item = tail[at]
            if seen is not None:
                if item.seq <= seen:
                    return None  # the answer saw every customer message before it
                if isinstance(item, Message) and item.role == "customer":
                    return await _not_copied(store, session_id, item.seq)  # stored while its step ran
                continue
            # Every kind named (issue 36 item 8): a new kind must say whether it ends a turn.
            match item:
                case Handoff(to_agent=to_agent):
                    if holder is None:
                        holder = to_agent
                case Message(role="agent", agent=agent):
                    if released or holder in (None, agent):
                        upto = seen_upto(item) if not item.meta.get("offer_id") else _offer_step_saw(tail, at)
                        if upto is None or upto >= item.seq - 1:
                            return None  # (before a release, any agent's answer ended its turn)
                        seen = upto  # items came in while its step ran: was a customer message among them?
                case Release():
                    # Given back: a customer message that came while the person held it and that
                    # nobody answered waits for the agent taken back to; read on to find it.
                    released = True
                case StaffReply():
                    return None  # a person answered: the customer's messages are theirs
                case Takeover():
                    if not released:
                        return None  # a person holds it
                case Notice(notice_kind="provider_error" | "limit"):
                    return None
                case Notice(data=data) if data.get("vetoed") == "the turn":
                    return None  # a hook ended it on purpose
                case Message(role="customer", seq=seq):
                    return await _not_copied(store, session_id, seq)
                case Message() | ToolCall() | ToolResult() | ContextSet() | Notice() | StateChange() | TagChange():
                    pass  # a staff note, a system line, a tool's work, a write: the turn goes on
                case Offer() | Confirmation() | Decline():
                    pass  # the offer's question is an agent message of its own
                case _:
                    assert_never(item)
        if len(tail) < window:
            break  # the session's whole log was read
    return None
