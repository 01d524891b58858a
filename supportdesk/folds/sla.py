"""SLA clocks: how long a customer waited, for anyone, folded from a session's log.

A second fold beside `desk_state` (and built on it): no Textual, no SQL, no clock of its own. The
caller passes `now`, so a clock that is still running reads the same in a test as in the inbox.

- **Waits.** The customer waits from a message of theirs until someone answers (an agent's
  message or a person's `staff_reply`). The first such wait is the *first response*, later ones
  *next responses*. *Resolution* runs from the first customer message to the conversation being
  resolved (the last time, if it was reopened).
- **Who the time is spent on**, from `desk_state` at each moment: the agents while they work
  (`ai`/working); staff while staff are needed (`needs_staff`: an approval, a person asked for, a
  limit), while a person holds the conversation and the customer waits for them, and while it is
  snoozed with the customer waiting; the customer while the desk waits for them (`ai`/
  waiting_customer, or a person holding it after answering). Resolved time is nobody's.
- **Breaches** against `[desk.sla]`: a response (first or next) longer than its target, a
  resolution later than its target, and a clock still running past its target at `now`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, assert_never

from supportdesk.folds import desk_state
from supportdesk import items as k
from supportdesk.config import SlaSettings
from supportdesk.staff import actor_of

WaitingOn = Literal["ai", "staff", "customer"]
Target = Literal["first_response", "next_response", "resolution"]
TARGETS: tuple[Target, ...] = ("first_response", "next_response", "resolution")

# One encoder made once: `json.dumps` with any option builds a new JSONEncoder at every call, and the
# stores encode the three summaries at every append, inside the write lock. Same text as
# `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@dataclass(frozen=True)
class SlaClock:
    """One conversation's clocks as of `now`."""

    started: datetime | None = None  # the first customer message
    first_response: float | None = None  # seconds; None until someone answered
    next_responses: tuple[float, ...] = ()  # seconds, each later wait that was answered
    resolution: float | None = None  # seconds; None while not resolved
    waiting_since: datetime | None = None  # the customer is waiting now, since then
    waiting_for: Target | None = None  # which response the running wait is: first or next
    waits: dict[WaitingOn, float] = field(default_factory=dict)  # seconds spent on each
    breaches: dict[Target, int] = field(default_factory=dict)  # how many times each was missed
    state: desk_state.ConversationState = field(default_factory=desk_state.ConversationState)
    staff_acted: bool = False  # any staff action other than resolving it
    takeover_reasons: tuple[str, ...] = ()
    needs_staff_reasons: tuple[str, ...] = ()  # why staff were called, each time they were

    @property
    def resolved(self) -> bool:
        return self.state.state == "resolved"

    @property
    def contained(self) -> bool:
        """The agents settled it alone: resolved (or left idle with the customer answered) with no
        staff action but the resolving."""
        settled = self.resolved or (self.state.state, self.state.detail) == ("ai", "waiting_customer")
        return settled and not self.staff_acted and self.started is not None

    def running(self, now: datetime) -> float | None:
        """Seconds the customer has been waiting at `now`, or None."""
        return (now - self.waiting_since).total_seconds() if self.waiting_since is not None else None

    def remaining(self, sla: SlaSettings, now: datetime) -> float | None:
        """Seconds left before the running wait breaches its target (negative: overdue), or None."""
        if self.waiting_since is None or self.waiting_for is None:
            return None
        target = getattr(sla, self.waiting_for)
        if target is None:
            return None
        return target - (now - self.waiting_since).total_seconds()


def waiting_on(state: desk_state.ConversationState, customer_waiting: bool) -> WaitingOn | None:
    """Whom the time at this state is spent on (None: nobody's, the conversation is resolved)."""
    match state.state:
        case "ai":
            return "ai" if state.detail == "working" else "customer"
        case "needs_staff":
            return "staff"
        case "staff" | "snoozed":
            return "staff" if customer_waiting else "customer"
        case "resolved":
            return None
        case _:
            assert_never(state.state)


def _answers(item: k.Item) -> bool:
    """An item that answers the waiting customer."""
    match item:
        case k.Message(role="agent") | k.StaffReply():
            return True
        case k.Message() | k.ToolCall() | k.ToolResult() | k.Handoff() | k.ContextSet() | k.Notice():
            return False
        case k.Takeover() | k.Release() | k.StateChange() | k.TagChange():
            return False
        case k.Offer() | k.Confirmation() | k.Decline():
            return False  # an offer's question is the agent's message that follows it
        case _:
            assert_never(item)


class Waits(tuple[float, ...]):
    """The answered waits (seconds), with their JSON text made once and extended after.

    A session keeps every answered wait (the figures' percentiles are exact), so a long one
    holds thousands, and the stores write them at every append: encoding them all each time made
    an append cost more the longer the session was. An append extends the text by its own waits
    (as json.dumps writes a float: its repr)."""

    _text: str | None = None

    def json(self) -> str:
        if self._text is None:
            self._text = json.dumps(list(self), separators=(",", ":"))
        return self._text

    def extended(self, more: Sequence[float]) -> Waits:
        if not more:
            return self
        longer = Waits((*self, *more))
        added = ",".join(map(float.__repr__, map(float, more)))
        longer._text = f"{self.json()[:-1]}{',' if self else ''}{added}]"
        return longer


def _waits(values: tuple[float, ...]) -> Waits:
    return values if isinstance(values, Waits) else Waits(values)


@dataclass(frozen=True)
class SlaProgress:
    """The clocks' values after the items folded so far, before `now` is known: what the stores
    keep beside each session (as they keep `desk_state`), so the figures never re-read a log.
    `finish` reads them at `now`."""

    started: datetime | None = None
    waiting_since: datetime | None = None
    answered: tuple[float, ...] = ()  # seconds, each wait that was answered, in order
    resolution: float | None = None
    waits: dict[WaitingOn, float] = field(default_factory=dict)  # unrounded: the sums go on
    staff_acted: bool = False
    takeovers: tuple[str, ...] = ()
    called: tuple[str, ...] = ()
    last_at: datetime | None = None

    def to_json(self) -> str:
        def stamp(at: datetime | None) -> str | None:
            return at.isoformat() if at is not None else None

        # Field by field: asdict deep-copies every list and dict, and the stores write this at
        # every append. The answered waits go last, as the text they keep (`Waits`).
        out = {
            "started": stamp(self.started),
            "waiting_since": stamp(self.waiting_since),
            "resolution": self.resolution,
            "waits": self.waits,
            "staff_acted": self.staff_acted,
            "takeovers": self.takeovers,
            "called": self.called,
            "last_at": stamp(self.last_at),
        }
        head = _encode(out)
        return f'{head[:-1]},"answered":{_waits(self.answered).json()}}}'

    @classmethod
    def from_json(cls, text: str) -> SlaProgress:
        raw: dict[str, Any] = json.loads(text)
        for key in ("started", "waiting_since", "last_at"):
            if raw.get(key):
                raw[key] = datetime.fromisoformat(raw[key])
        for key in ("takeovers", "called"):
            raw[key] = tuple(raw.get(key, ()))
        raw["answered"] = Waits(raw.get("answered", ()))
        if not raw.keys() <= _PROGRESS_DEFAULTS.keys():
            return cls(**raw)  # (a field this code does not know: refused as before)
        # Without the frozen __init__ (one object.__setattr__ per field): an append parses the
        # clocks again under the write lock whenever another process appended last.
        fields = {**_PROGRESS_DEFAULTS, "waits": {}, **raw}
        new = object.__new__(cls)
        object.__setattr__(new, "__dict__", fields)
        return new


# Every field's default, for `from_json`'s fields a stored progress lacks (`waits` made fresh).
_PROGRESS_DEFAULTS: dict[str, Any] = dict(SlaProgress().__dict__)


def advance(
    progress: SlaProgress, before: desk_state.ConversationState, after: desk_state.ConversationState, item: k.Item
) -> SlaProgress:
    """The clocks after one more item, given the conversation's state before and after it (the
    caller advances `desk_state` over the same item in the same pass: the two never disagree)."""
    return advance_many(progress, [(before, after, item)])


def advance_many(
    progress: SlaProgress,
    steps: Iterable[tuple[desk_state.ConversationState, desk_state.ConversationState, k.Item]],
) -> SlaProgress:
    """The clocks after several items, each with the conversation's state before and after it.

    One pass with the clocks in locals and one SlaProgress at the end: an append folds a batch,
    and a frozen copy per item (with `answered` copied whole each time) made a long session's
    appends cost more the longer it was."""
    started, waiting_since, resolution = progress.started, progress.waiting_since, progress.resolution
    staff_acted, last_at = progress.staff_acted, progress.last_at
    answered: list[float] = []  # the waits answered in these items
    takeovers: list[str] | None = None
    called: list[str] | None = None
    waits: dict[WaitingOn, float] | None = None
    folded = False
    for before, after, item in steps:
        folded = True
        at = item.created_at
        if last_at is not None:
            on = waiting_on(before, waiting_since is not None)
            if on is not None:
                if waits is None:
                    waits = dict(progress.waits)
                waits[on] = waits.get(on, 0.0) + max(0.0, (at - last_at).total_seconds())
        last_at = at
        if isinstance(item, k.Message) and item.role == "customer":
            started = started or at
            if waiting_since is None:
                waiting_since = at
        elif _answers(item) and waiting_since is not None:
            answered.append((at - waiting_since).total_seconds())
            waiting_since = None
        if after.state == "needs_staff" and (before.state, before.detail) != (after.state, after.detail):
            if called is None:
                called = list(progress.called)
            called.append(after.detail)
        if isinstance(item, k.Takeover):
            if takeovers is None:
                takeovers = list(progress.takeovers)
            takeovers.append(item.reason)
        if actor_of(item) is not None and not (isinstance(item, k.StateChange) and item.state == "resolved"):
            staff_acted = True
        if after.state == "resolved" and before.state != "resolved" and started is not None:
            resolution = (at - started).total_seconds()
        elif after.state != "resolved":
            resolution = None
    if not folded:
        return progress
    return SlaProgress(
        started=started,
        waiting_since=waiting_since,
        answered=_waits(progress.answered).extended(answered),
        resolution=resolution,
        waits=progress.waits if waits is None else waits,
        staff_acted=staff_acted,
        takeovers=progress.takeovers if takeovers is None else tuple(takeovers),
        called=progress.called if called is None else tuple(called),
        last_at=last_at,
    )


def finish(progress: SlaProgress, state: desk_state.ConversationState, sla: SlaSettings, now: datetime) -> SlaClock:
    """The clocks of a conversation whose log folded to `progress` and `state`, as of `now`."""
    waits = dict(progress.waits)
    if progress.last_at is not None and progress.last_at < now:
        on = waiting_on(state, progress.waiting_since is not None)
        if on is not None:
            waits[on] = waits.get(on, 0.0) + (now - progress.last_at).total_seconds()
    # a resolved conversation keeps nobody waiting
    waiting_since = None if state.state == "resolved" else progress.waiting_since
    answered = progress.answered
    result = SlaClock(
        started=progress.started,
        first_response=answered[0] if answered else None,
        next_responses=tuple(answered[1:]),
        resolution=progress.resolution,
        waiting_since=waiting_since,
        waiting_for=None if waiting_since is None else ("first_response" if not answered else "next_response"),
        waits={on: round(seconds, 3) for on, seconds in waits.items()},
        state=state,
        staff_acted=progress.staff_acted,
        takeover_reasons=progress.takeovers,
        needs_staff_reasons=progress.called,
    )
    return _with_breaches(result, sla, now)


def clock(items: Iterable[k.Item], sla: SlaSettings, now: datetime) -> SlaClock:
    """The clocks of a session whose log is `items`, as of `now`: the fold of `advance`."""
    state = desk_state.ConversationState()
    progress = SlaProgress()
    for item in items:
        after = desk_state.advance(state, item)
        progress = advance(progress, state, after, item)
        state = after
    return finish(progress, state, sla, now)


def _with_breaches(c: SlaClock, sla: SlaSettings, now: datetime) -> SlaClock:
    breaches: Counter[Target] = Counter()
    if sla.first_response is not None and c.first_response is not None and c.first_response > sla.first_response:
        breaches["first_response"] += 1
    if sla.next_response is not None:
        breaches["next_response"] += sum(1 for s in c.next_responses if s > sla.next_response)
    left = c.remaining(sla, now)
    if left is not None and left < 0 and c.waiting_for is not None:
        breaches[c.waiting_for] += 1  # still waiting, past the target
    if sla.resolution is not None and c.started is not None:
        took = c.resolution if c.resolution is not None else (now - c.started).total_seconds()
        if took > sla.resolution:
            breaches["resolution"] += 1
    return replace(c, breaches={target: n for target, n in breaches.items() if n})


# --- across conversations (`supportdesk stats`) ----------------------------------------------------


@dataclass(frozen=True)
class SlaFigures:
    """The desk's SLA figures over a range: breaches, waits and the response times."""

    targets: SlaSettings
    conversations: int  # conversations with a customer message
    breaches: dict[Target, int]
    breached_conversations: int
    waits: dict[WaitingOn, float]  # seconds, summed over the conversations
    first_responses: tuple[float, ...]  # each conversation's first response, seconds
    next_responses: tuple[float, ...]
    resolutions: tuple[float, ...]
    resolved: int
    contained: int  # resolved or idle with no staff action (the AI settled it alone)
    takeovers: int
    takeover_reasons: dict[str, int]
    needs_staff_reasons: dict[str, int]

    @property
    def containment(self) -> float | None:
        return self.contained / self.conversations if self.conversations else None


def figures(clocks: Sequence[SlaClock], sla: SlaSettings) -> SlaFigures:
    counted = [c for c in clocks if c.started is not None]
    breaches: Counter[Target] = Counter()
    waits: dict[WaitingOn, float] = {}
    reasons: Counter[str] = Counter()
    called: Counter[str] = Counter()
    for c in counted:
        breaches.update(c.breaches)
        for on, seconds in c.waits.items():
            waits[on] = waits.get(on, 0.0) + seconds
        reasons.update(r or "(no reason given)" for r in c.takeover_reasons)
        called.update(c.needs_staff_reasons)
    return SlaFigures(
        targets=sla,
        conversations=len(counted),
        breaches={t: breaches.get(t, 0) for t in TARGETS},
        breached_conversations=sum(1 for c in counted if any(c.breaches.values())),
        waits={on: round(waits.get(on, 0.0), 3) for on in ("ai", "staff", "customer")},
        first_responses=tuple(c.first_response for c in counted if c.first_response is not None),
        next_responses=tuple(s for c in counted for s in c.next_responses),
        resolutions=tuple(c.resolution for c in counted if c.resolution is not None),
        resolved=sum(1 for c in counted if c.resolved),
        contained=sum(1 for c in counted if c.contained),
        takeovers=sum(len(c.takeover_reasons) for c in counted),
        takeover_reasons=dict(sorted(reasons.items())),
        needs_staff_reasons=dict(sorted(called.items())),
    )


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def figures_json(f: SlaFigures) -> dict[str, object]:
    def summary(values: Sequence[float]) -> dict[str, object]:
        return {
            "count": len(values),
            "mean_s": round(sum(values) / len(values), 3) if values else None,
            "median_s": _median(values),
            "max_s": max(values) if values else None,
        }

    return {
        "targets_s": {t: getattr(f.targets, t) for t in TARGETS},
        "conversations": f.conversations,
        "breaches": f.breaches,
        "breached_conversations": f.breached_conversations,
        "waits_s": f.waits,
        "first_response": summary(f.first_responses),
        "next_response": summary(f.next_responses),
        "resolution": summary(f.resolutions),
        "resolved": f.resolved,
        "ai_containment": {
            "contained": f.contained,
            "conversations": f.conversations,
            "rate": round(f.containment, 4) if f.containment is not None else None,
        },
        "takeovers": f.takeovers,
        "takeover_reasons": f.takeover_reasons,
        "needs_staff_reasons": f.needs_staff_reasons,
    }
