"""What a turn streams to whoever drives it (the TUI, the CLI, evals)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from supportdesk.items import Item


@dataclass(frozen=True)
class SessionStarted:
    session_id: str


@dataclass(frozen=True)
class TurnWaiting:
    """Another turn holds this session (another terminal, worker or machine): this one waits
    for it to end, then runs on what it left."""

    session_id: str


@dataclass(frozen=True)
class StepStarted:
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
    session_id: str
    active_agent: str
    outcome: TurnOutcome = "answered"
    # The session's status after the turn: open, awaiting_approval, needs_human (or staff,
    # when the outcome is held).
    status: str = "open"


Event = SessionStarted | TurnWaiting | StepStarted | Token | Appended | Done
