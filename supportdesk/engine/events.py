"""What a turn streams to whoever drives it (the TUI, the CLI, evals), and whether one was cut short."""

from __future__ import annotations

from dataclasses import dataclass
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
    an unfinished turn)."""
    info = await store.get_session(session_id)
    if info is not None and info.forked_from and info.forked_at is not None and seq <= info.forked_at:
        return None
    return seq


async def unfinished_turn(store: Store, session_id: str) -> int | None:
    """The seq of the customer message whose turn never ended, or None.

    A turn ends in a message of the agent holding the conversation at its end, a provider
    error or a limit notice (or a hook's veto of the turn); a customer message with none of
    these after it was cut short (the process died mid-turn). An agent that speaks and hands
    off in the same step ("I'm bringing in our billing team") has not answered: the agent it
    handed to has yet to. A person's takeover or reply ends a turn; a release hands back
    whatever customer message came while the person held it unanswered: that one waits."""
    # Opening a session asks this as its first page is drawn: nearly every session ends in
    # an answer, so a glance at its last items decides, and only a long unanswered tail
    # reads the whole window.
    for window in (RESUME_GLANCE, RESUME_WINDOW):
        tail = await store.latest(session_id, window)
        holder: str | None = None  # who holds the conversation at the end, once a handoff says
        released = False  # a person gave it back after the items read so far (issue 39 §3)
        for item in reversed(tail):
            # Every kind named (issue 36 item 8): a new kind must say whether it ends a turn.
            match item:
                case Handoff(to_agent=to_agent):
                    if holder is None:
                        holder = to_agent
                case Message(role="agent", agent=agent):
                    if released or holder in (None, agent):
                        return None  # (before a release, any agent's answer ended its turn)
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
